//! Upstream `printHorizontalPodAutoscaler` and `formatHPAMetrics`, over the stored v2 form.

use kas_apimachinery::resource::canonical;
use serde_json::{Value, json};

const UNKNOWN: &str = "<unknown>";

/// A quantity as its `String()` prints it; `0` when unset (Go's zero value).
fn quantity(v: Option<&Value>) -> String {
    match v.and_then(Value::as_str) {
        Some(s) => canonical(s).unwrap_or_else(|| s.to_owned()),
        None => "0".to_owned(),
    }
}

fn set<'a>(v: &'a Value, pointer: &str) -> Option<&'a Value> {
    v.pointer(pointer).filter(|v| !v.is_null())
}

/// The status of the metric at the same index, when it has the given source.
fn status_source<'a>(statuses: &'a [Value], i: usize, source: &str) -> Option<&'a Value> {
    statuses
        .get(i)
        .and_then(|s| s.get(source))
        .filter(|s| !s.is_null())
}

/// `formatHPAMetrics`: at most two metrics, then `+ N more...`.
pub fn format_metrics(spec: &[Value], statuses: &[Value]) -> String {
    if spec.is_empty() {
        return "<none>".to_owned();
    }
    let mut list = Vec::new();
    for (i, m) in spec.iter().enumerate() {
        let ty = m.get("type").and_then(Value::as_str).unwrap_or("");
        let entry = match ty {
            "External" | "Object" => {
                let source = if ty == "External" {
                    "external"
                } else {
                    "object"
                };
                let status = status_source(statuses, i, source);
                if let Some(avg) = set(m, &format!("/{source}/target/averageValue")) {
                    let current = status
                        .and_then(|s| set(s, "/current/averageValue"))
                        .map_or(UNKNOWN.to_owned(), |q| quantity(Some(q)));
                    format!("{current}/{} (avg)", quantity(Some(avg)))
                } else {
                    let current = status.map_or(UNKNOWN.to_owned(), |s| {
                        quantity(s.pointer("/current/value"))
                    });
                    format!(
                        "{current}/{}",
                        quantity(m.pointer(&format!("/{source}/target/value")))
                    )
                }
            }
            "Pods" => {
                let current = status_source(statuses, i, "pods").map_or(UNKNOWN.to_owned(), |s| {
                    quantity(s.pointer("/current/averageValue"))
                });
                format!(
                    "{current}/{}",
                    quantity(m.pointer("/pods/target/averageValue"))
                )
            }
            "Resource" | "ContainerResource" => {
                let source = if ty == "Resource" {
                    "resource"
                } else {
                    "containerResource"
                };
                let name = m
                    .pointer(&format!("/{source}/name"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let status = status_source(statuses, i, source);
                if let Some(avg) = set(m, &format!("/{source}/target/averageValue")) {
                    let current = status.map_or(UNKNOWN.to_owned(), |s| {
                        quantity(s.pointer("/current/averageValue"))
                    });
                    format!("{name}: {current}/{}", quantity(Some(avg)))
                } else {
                    let current = status
                        .and_then(|s| set(s, "/current/averageUtilization"))
                        .and_then(Value::as_i64)
                        .map_or(UNKNOWN.to_owned(), |u| format!("{u}%"));
                    let target = set(m, &format!("/{source}/target/averageUtilization"))
                        .and_then(Value::as_i64)
                        .map_or("<auto>".to_owned(), |u| format!("{u}%"));
                    format!("{name}: {current}/{target}")
                }
            }
            _ => "<unknown type>".to_owned(),
        };
        list.push(entry);
    }
    const MAX: usize = 2;
    let count = list.len();
    if count > MAX {
        list.truncate(MAX);
        return format!("{} + {} more...", list.join(", "), count - MAX);
    }
    list.join(", ")
}

/// `printHorizontalPodAutoscaler`'s cells between Name and Age.
pub fn cells(obj: &Value) -> Vec<Value> {
    let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
    let array = |p: &str| {
        obj.pointer(p)
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
    };
    let reference = format!(
        "{}/{}",
        s("/spec/scaleTargetRef/kind"),
        s("/spec/scaleTargetRef/name")
    );
    let min = set(obj, "/spec/minReplicas")
        .and_then(Value::as_i64)
        .map_or("<unset>".to_owned(), |m| m.to_string());
    let int = |p: &str| obj.pointer(p).and_then(Value::as_i64).unwrap_or(0);
    vec![
        json!(reference),
        json!(format_metrics(
            array("/spec/metrics"),
            array("/status/currentMetrics")
        )),
        json!(min),
        json!(int("/spec/maxReplicas")),
        json!(int("/status/currentReplicas")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(target: i64) -> Value {
        json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": target}}})
    }

    #[test]
    fn targets_follow_format_hpa_metrics() {
        assert_eq!(format_metrics(&[], &[]), "<none>");
        assert_eq!(format_metrics(&[cpu(80)], &[]), "cpu: <unknown>/80%");
        let status = json!({"type": "Resource", "resource": {"name": "cpu",
            "current": {"averageUtilization": 42, "averageValue": "100m"}}});
        assert_eq!(format_metrics(&[cpu(80)], &[status]), "cpu: 42%/80%");
        let pods = json!({"type": "Pods", "pods": {"metric": {"name": "qps"},
            "target": {"type": "AverageValue", "averageValue": "1k"}}});
        let mem = json!({"type": "Resource", "resource": {"name": "memory",
            "target": {"type": "AverageValue", "averageValue": "1Gi"}}});
        assert_eq!(
            format_metrics(&[cpu(70), pods, mem], &[]),
            "cpu: <unknown>/70%, <unknown>/1k + 1 more..."
        );
        let ext = json!({"type": "External", "external": {"metric": {"name": "q"},
            "target": {"type": "AverageValue", "averageValue": "30"}}});
        assert_eq!(format_metrics(&[ext], &[]), "<unknown>/30 (avg)");
    }

    #[test]
    fn cells_print_reference_and_replicas() {
        let obj = json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "minReplicas": 2, "maxReplicas": 5, "metrics": [cpu(70)]},
            "status": {"currentReplicas": 3}});
        assert_eq!(
            cells(&obj),
            [
                json!("Deployment/web"),
                json!("cpu: <unknown>/70%"),
                json!("2"),
                json!(5),
                json!(3)
            ]
        );
        assert_eq!(cells(&json!({}))[2], json!("<unset>"));
    }
}
