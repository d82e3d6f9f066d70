//! Upstream `printService`: Type, Cluster-IP, External-IP, Port(s) and the wide Selector.

use std::collections::BTreeMap;

use kas_api::core::v1::SERVICE_SPEC;
use kas_apimachinery::labels::format_labels;
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::TableColumn;
use serde_json::{Value, json};

const fn column(name: &'static str, doc: &'static str, priority: i32) -> TableColumn {
    TableColumn {
        name,
        type_: "string",
        format: "",
        description: doc,
        priority,
    }
}

pub const COLUMNS: &[TableColumn] = &[
    NAME_COLUMN,
    column("Type", SERVICE_SPEC.doc("type"), 0),
    column("Cluster-IP", SERVICE_SPEC.doc("clusterIP"), 0),
    column("External-IP", SERVICE_SPEC.doc("externalIPs"), 0),
    column("Port(s)", SERVICE_SPEC.doc("ports"), 0),
    AGE_COLUMN,
    column("Selector", SERVICE_SPEC.doc("selector"), 1),
];

fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn strings(v: &Value, pointer: &str) -> Vec<String> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_owned))
        .collect()
}

/// Upstream `loadBalancerStatusStringer` (wide: the server's tables are wide).
pub(crate) fn load_balancer_ips(svc: &Value) -> Vec<String> {
    let mut ips: Vec<String> = svc
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|i| {
            let ip = s(i, "/ip");
            let host = s(i, "/hostname");
            (!ip.is_empty())
                .then(|| ip.to_owned())
                .or_else(|| (!host.is_empty()).then(|| host.to_owned()))
        })
        .collect();
    ips.sort();
    ips.dedup();
    ips
}

/// Upstream `getServiceExternalIP`.
fn external_ip(svc: &Value) -> String {
    let external = strings(svc, "/spec/externalIPs");
    match s(svc, "/spec/type") {
        "ClusterIP" | "NodePort" => {
            if external.is_empty() {
                "<none>".into()
            } else {
                external.join(",")
            }
        }
        "LoadBalancer" => {
            let mut lb = load_balancer_ips(svc);
            if !external.is_empty() {
                lb.extend(external);
                return lb.join(",");
            }
            if lb.is_empty() {
                "<pending>".into()
            } else {
                lb.join(",")
            }
        }
        "ExternalName" => s(svc, "/spec/externalName").to_owned(),
        _ => "<unknown>".into(),
    }
}

/// Upstream `makePortString`.
fn ports(svc: &Value) -> String {
    let pieces: Vec<String> = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
            let protocol = s(p, "/protocol");
            match p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) {
                0 => format!("{port}/{protocol}"),
                node => format!("{port}:{node}/{protocol}"),
            }
        })
        .collect();
    if pieces.is_empty() {
        "<none>".into()
    } else {
        pieces.join(",")
    }
}

pub fn cells(svc: &Value) -> Vec<Value> {
    let cluster_ip = match s(svc, "/spec/clusterIP") {
        "" => "<none>",
        ip => ip,
    };
    let selector: BTreeMap<String, String> = svc
        .pointer("/spec/selector")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
        .collect();
    vec![
        json!(kas_registry::meta::name(svc)),
        json!(s(svc, "/spec/type")),
        json!(cluster_ip),
        json!(external_ip(svc)),
        json!(ports(svc)),
        json!(age(kas_registry::meta::str_field(svc, "creationTimestamp"))),
        json!(format_labels(&selector)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_as_kubectl_shows_them() {
        let svc = json!({"metadata": {"name": "web"}, "spec": {"type": "NodePort", "clusterIP": "10.0.0.12",
            "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
            "selector": {"app": "web"}}});
        let c = cells(&svc);
        assert_eq!(
            c[1..5],
            [
                json!("NodePort"),
                json!("10.0.0.12"),
                json!("<none>"),
                json!("80:30080/TCP,53/UDP")
            ]
        );
        assert_eq!(c[6], json!("app=web"));
        let lb = json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.2"}});
        assert_eq!(cells(&lb)[3], json!("<pending>"));
        assert_eq!(cells(&lb)[4], json!("<none>"));
        let ext = json!({"metadata": {"name": "x"}, "spec": {"type": "ExternalName", "externalName": "db.example.com"}});
        assert_eq!(
            cells(&ext)[2..4],
            [json!("<none>"), json!("db.example.com")]
        );
    }
}
