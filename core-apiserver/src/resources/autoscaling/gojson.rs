//! The round-trip annotations as Go's `encoding/json` writes them: each struct's fields in
//! declaration order (not sorted), and `<`, `>`, `&`, U+2028 and U+2029 escaped.

use serde_json::Value;

/// Every key the annotated types use, in an order that agrees with each struct's field
/// order: autoscaling/v1's `MetricSpec`/`MetricStatus` and their sources,
/// `CrossVersionObjectReference`, `LabelSelector`, `HorizontalPodAutoscalerCondition`, and
/// the internal behavior types (Go field names).
const KEY_ORDER: &[&str] = &[
    "type",
    "status",
    "lastTransitionTime",
    "reason",
    "message",
    "object",
    "pods",
    "resource",
    "containerResource",
    "external",
    "target",
    "kind",
    "name",
    "apiVersion",
    "metricName",
    "metricSelector",
    "currentAverageUtilization",
    "targetAverageUtilization",
    "targetValue",
    "currentValue",
    "targetAverageValue",
    "currentAverageValue",
    "selector",
    "averageValue",
    "container",
    "matchLabels",
    "matchExpressions",
    "key",
    "operator",
    "values",
    "ScaleUp",
    "ScaleDown",
    "StabilizationWindowSeconds",
    "SelectPolicy",
    "Policies",
    "Tolerance",
    "Type",
    "Value",
    "PeriodSeconds",
];

fn rank(key: &str) -> usize {
    KEY_ORDER
        .iter()
        .position(|k| *k == key)
        .unwrap_or(KEY_ORDER.len())
}

fn write_string(out: &mut String, s: &str) {
    let quoted = Value::String(s.to_owned()).to_string();
    for c in quoted.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
}

fn write(out: &mut String, v: &Value) {
    match v {
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            // Map keys (label selectors' matchLabels) are sorted, as Go sorts map keys.
            keys.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write(out, &map[k]);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// `json.Marshal` of a value whose objects are the annotated Go types.
pub fn marshal(v: &Value) -> String {
    let mut out = String::new();
    write(&mut out, v);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_in_declaration_order_and_html_escaped() {
        let v = json!([{"pods": {"selector": {"matchLabels": {"b": "1", "a": "<&>"}},
            "targetAverageValue": "1k", "metricName": "qps"}, "type": "Pods"}]);
        assert_eq!(
            marshal(&v),
            r#"[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1k","selector":{"matchLabels":{"a":"\u003c\u0026\u003e","b":"1"}}}}]"#
        );
        let b = json!({"ScaleDown": null, "ScaleUp": {"Policies": [{"PeriodSeconds": 15,
            "Value": 4, "Type": "Pods"}], "SelectPolicy": "Max", "StabilizationWindowSeconds": 0,
            "Tolerance": null}});
        assert_eq!(
            marshal(&b),
            r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":null}"#
        );
    }
}
