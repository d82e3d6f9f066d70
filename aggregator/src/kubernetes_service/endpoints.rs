//! What the kubernetes Endpoints and EndpointSlice should hold, as upstream's lease
//! reconciler (`checkEndpointSubsetFormatWithLease`, `RepackSubsets`) and endpoints adapter
//! (`endpointSliceFromEndpoints`) compute them.

use serde_json::{Value, json};

use super::{NAME, NAMESPACE};

const SKIP_MIRROR: &str = "endpointslice.kubernetes.io/skip-mirror";

/// Upstream's `createEndpointPortSpec(port, "https")`.
pub fn ports(port: u16) -> Value {
    json!([{"protocol": "TCP", "port": port, "name": "https"}])
}

/// The Endpoints to write, or `None` when `current` already is right. Ports are only set
/// when the subsets are rewritten (upstream reconciles with `reconcilePorts` false).
pub fn reconciled(current: Option<&Value>, ips: &[String], ports: &Value) -> Option<Value> {
    let mut e = current
        .cloned()
        .unwrap_or_else(|| json!({"metadata": {"name": NAME, "namespace": NAMESPACE}}));
    let skip_mirror_changed = {
        let labels = &mut e["metadata"]["labels"];
        if !labels.is_object() {
            *labels = json!({});
        }
        let changed = labels.get(SKIP_MIRROR).and_then(Value::as_str) != Some("true");
        labels[SKIP_MIRROR] = json!("true");
        changed
    };
    let subsets = e
        .get("subsets")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let format_correct = subsets.len() == 1;
    let ips_correct = format_correct && {
        let addresses = subsets[0]
            .get("addresses")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut seen: Vec<&str> = Vec::new();
        addresses.len() == ips.len()
            && addresses.iter().all(|a| {
                let ip = a.get("ip").and_then(Value::as_str).unwrap_or("");
                let fresh = ips.iter().any(|i| i == ip) && !seen.contains(&ip);
                seen.push(ip);
                fresh
            })
    };
    if current.is_some() && !skip_mirror_changed && format_correct && ips_correct {
        return None;
    }
    let mut sorted: Vec<&String> = ips.iter().collect();
    sorted.sort();
    sorted.dedup();
    let addresses: Vec<Value> = sorted.iter().map(|ip| json!({"ip": ip})).collect();
    if format_correct {
        e["subsets"][0]["addresses"] = json!(addresses);
    } else {
        e["subsets"] = json!([{"addresses": addresses, "ports": ports}]);
    }
    e["apiVersion"] = json!("v1");
    e["kind"] = json!("Endpoints");
    Some(e)
}

/// Upstream's `endpointSliceFromEndpoints`.
pub fn slice_from_endpoints(endpoints: &Value) -> Value {
    let subset = endpoints.pointer("/subsets/0");
    let addresses = |key: &str| -> Vec<String> {
        subset
            .and_then(|s| s.get(key))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.get("ip").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let ready = addresses("addresses");
    let not_ready = addresses("notReadyAddresses");
    let all_v6 = !ready.is_empty() || !not_ready.is_empty();
    let all_v6 = all_v6 && ready.iter().chain(&not_ready).all(|ip| ip.contains(':'));
    let mut eps: Vec<Value> = ready
        .iter()
        .map(|ip| json!({"addresses": [ip], "conditions": {"ready": true}}))
        .collect();
    eps.extend(
        not_ready
            .iter()
            .map(|ip| json!({"addresses": [ip], "conditions": {"ready": false}})),
    );
    let ports: Vec<Value> = subset
        .and_then(|s| s.get("ports"))
        .and_then(Value::as_array)
        .map(|ps| {
            ps.iter()
                .map(|p| json!({"port": p["port"], "name": p["name"], "protocol": p["protocol"]}))
                .collect()
        })
        .unwrap_or_default();
    json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {"kubernetes.io/service-name": NAME},
        },
        "addressType": if all_v6 { "IPv6" } else { "IPv4" },
        "endpoints": eps,
        "ports": ports,
    })
}

/// Whether the stored slice already holds what `desired` does (upstream compares the
/// endpoints, ports and labels semantically).
pub fn slice_matches(current: &Value, desired: &Value) -> bool {
    let same = |pointer: &str| {
        let empty = |v: Option<&Value>| {
            v.is_none_or(|v| v.is_null() || v.as_array().is_some_and(Vec::is_empty))
        };
        let (a, b) = (current.pointer(pointer), desired.pointer(pointer));
        (empty(a) && empty(b)) || a == b
    };
    same("/endpoints") && same("/ports") && same("/addressType") && same("/metadata/labels")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ips(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn missing_endpoints_are_made_from_the_leases() {
        let e = reconciled(None, &ips(&["10.1.0.9", "10.1.0.10"]), &ports(6443)).unwrap();
        assert_eq!(e["metadata"]["labels"][SKIP_MIRROR], "true");
        assert_eq!(
            e["subsets"],
            json!([{"addresses": [{"ip": "10.1.0.10"}, {"ip": "10.1.0.9"}],
                    "ports": [{"protocol": "TCP", "port": 6443, "name": "https"}]}])
        );
    }

    #[test]
    fn right_endpoints_are_left_alone_and_stale_addresses_replaced() {
        let e = reconciled(None, &ips(&["10.1.0.9"]), &ports(6443)).unwrap();
        assert!(reconciled(Some(&e), &ips(&["10.1.0.9"]), &ports(6443)).is_none());
        // Ports are not reconciled once the format is right.
        assert!(reconciled(Some(&e), &ips(&["10.1.0.9"]), &ports(443)).is_none());
        let grown = reconciled(Some(&e), &ips(&["10.1.0.9", "10.1.0.8"]), &ports(6443)).unwrap();
        assert_eq!(grown["subsets"][0]["addresses"][0]["ip"], "10.1.0.8");
        assert_eq!(grown["subsets"][0]["ports"][0]["port"], 6443);
    }

    #[test]
    fn the_slice_mirrors_the_endpoints() {
        let e = reconciled(None, &ips(&["10.1.0.9"]), &ports(6443)).unwrap();
        let slice = slice_from_endpoints(&e);
        assert_eq!(slice["addressType"], "IPv4");
        assert_eq!(
            slice["endpoints"],
            json!([{"addresses": ["10.1.0.9"], "conditions": {"ready": true}}])
        );
        assert_eq!(
            slice["ports"],
            json!([{"port": 6443, "name": "https", "protocol": "TCP"}])
        );
        assert!(slice_matches(&slice, &slice_from_endpoints(&e)));
        let v6 = reconciled(None, &ips(&["fd00::5"]), &ports(6443)).unwrap();
        assert_eq!(slice_from_endpoints(&v6)["addressType"], "IPv6");
    }
}
