//! The metric sources and statuses of autoscaling/v1's round-trip annotations (the
//! v2beta1 shape) ↔ autoscaling/v2's, after upstream's per-source conversion functions in
//! `pkg/apis/autoscaling/v1/conversion.go`.

use serde_json::{Map, Value, json};
pub(super) fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|v| !v.is_null())
}

/// A Go non-pointer `resource.Quantity`: its zero value writes `"0"`.
pub(super) fn quantity(v: &Value, key: &str) -> Value {
    get(v, key).cloned().unwrap_or_else(|| json!("0"))
}

pub(super) fn put(out: &mut Map<String, Value>, key: &str, v: Option<&Value>) {
    if let Some(v) = v.filter(|v| !v.is_null()) {
        out.insert(key.to_owned(), v.clone());
    }
}

pub(super) fn is_cpu_resource(m: &Value) -> bool {
    m.get("type").and_then(Value::as_str) == Some("Resource")
        && m.pointer("/resource/name").and_then(Value::as_str) == Some("cpu")
}

pub(super) fn cross_ref(r: Option<&Value>) -> Value {
    let r = r.cloned().unwrap_or_else(|| json!({}));
    let mut out = Map::new();
    out.insert("kind".into(), r.get("kind").cloned().unwrap_or(json!("")));
    out.insert("name".into(), r.get("name").cloned().unwrap_or(json!("")));
    put(&mut out, "apiVersion", r.get("apiVersion"));
    Value::Object(out)
}

/// The v2 `metric` identifier of a v1 source: its name and selector under their v1 keys.
fn identifier(src: &Value, selector_key: &str) -> Value {
    let mut id = Map::new();
    id.insert(
        "name".into(),
        src.get("metricName").cloned().unwrap_or(json!("")),
    );
    put(&mut id, "selector", src.get(selector_key));
    Value::Object(id)
}

/// A v2 source's metric name and selector, under v1's keys.
fn put_identifier(out: &mut Map<String, Value>, src: &Value, selector_key: &str) {
    let name = src.pointer("/metric/name").cloned().unwrap_or(json!(""));
    out.insert("metricName".into(), name);
    put(out, selector_key, src.pointer("/metric/selector"));
}

/// `Convert_autoscaling_MetricSpec_To_v1_MetricSpec` and its per-source functions.
pub(super) fn metric_spec_to_v1(m: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), m.get("type").cloned().unwrap_or(json!("")));
    let empty = json!({});
    if let Some(o) = get(m, "object") {
        let t = o.get("target").unwrap_or(&empty);
        let mut v = Map::new();
        v.insert("target".into(), cross_ref(o.get("describedObject")));
        put_identifier(&mut v, o, "selector");
        v.insert("targetValue".into(), quantity(t, "value"));
        put(&mut v, "averageValue", t.get("averageValue"));
        out.insert("object".into(), Value::Object(v));
    }
    if let Some(p) = get(m, "pods") {
        let t = p.get("target").unwrap_or(&empty);
        let mut v = Map::new();
        put_identifier(&mut v, p, "selector");
        v.insert("targetAverageValue".into(), quantity(t, "averageValue"));
        out.insert("pods".into(), Value::Object(v));
    }
    for key in ["resource", "containerResource"] {
        if let Some(r) = get(m, key) {
            let t = r.get("target").unwrap_or(&empty);
            let mut v = Map::new();
            v.insert("name".into(), r.get("name").cloned().unwrap_or(json!("")));
            put(
                &mut v,
                "targetAverageUtilization",
                t.get("averageUtilization"),
            );
            put(&mut v, "targetAverageValue", t.get("averageValue"));
            if key == "containerResource" {
                v.insert(
                    "container".into(),
                    r.get("container").cloned().unwrap_or(json!("")),
                );
            }
            out.insert(key.into(), Value::Object(v));
        }
    }
    if let Some(e) = get(m, "external") {
        let t = e.get("target").unwrap_or(&empty);
        let mut v = Map::new();
        put_identifier(&mut v, e, "metricSelector");
        put(&mut v, "targetValue", t.get("value"));
        put(&mut v, "targetAverageValue", t.get("averageValue"));
        out.insert("external".into(), Value::Object(v));
    }
    Value::Object(out)
}

/// `Convert_v1_MetricSpec_To_autoscaling_MetricSpec` and its per-source functions.
pub(super) fn metric_spec_to_v2(m: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), m.get("type").cloned().unwrap_or(json!("")));
    if let Some(o) = get(m, "object") {
        let kind = if get(o, "averageValue").is_none() {
            "Value"
        } else {
            "AverageValue"
        };
        let mut t = Map::new();
        t.insert("type".into(), json!(kind));
        t.insert("value".into(), quantity(o, "targetValue"));
        put(&mut t, "averageValue", o.get("averageValue"));
        out.insert(
            "object".into(),
            json!({"describedObject": cross_ref(o.get("target")),
                   "metric": identifier(o, "selector"), "target": t}),
        );
    }
    if let Some(p) = get(m, "pods") {
        out.insert(
            "pods".into(),
            json!({"metric": identifier(p, "selector"),
                   "target": {"type": "AverageValue", "averageValue": quantity(p, "targetAverageValue")}}),
        );
    }
    for key in ["resource", "containerResource"] {
        if let Some(r) = get(m, key) {
            let utilization = get(r, "targetAverageUtilization");
            let kind = if utilization.is_none() {
                "AverageValue"
            } else {
                "Utilization"
            };
            let mut t = Map::new();
            t.insert("type".into(), json!(kind));
            put(&mut t, "averageUtilization", utilization);
            put(&mut t, "averageValue", r.get("targetAverageValue"));
            let mut v = Map::new();
            v.insert("name".into(), r.get("name").cloned().unwrap_or(json!("")));
            if key == "containerResource" {
                v.insert(
                    "container".into(),
                    r.get("container").cloned().unwrap_or(json!("")),
                );
            }
            v.insert("target".into(), Value::Object(t));
            out.insert(key.into(), Value::Object(v));
        }
    }
    if let Some(e) = get(m, "external") {
        let kind = if get(e, "targetValue").is_none() {
            "AverageValue"
        } else {
            "Value"
        };
        let mut t = Map::new();
        t.insert("type".into(), json!(kind));
        put(&mut t, "value", e.get("targetValue"));
        put(&mut t, "averageValue", e.get("targetAverageValue"));
        out.insert(
            "external".into(),
            json!({"metric": identifier(e, "metricSelector"), "target": t}),
        );
    }
    Value::Object(out)
}

/// `Convert_autoscaling_MetricStatus_To_v1_MetricStatus`.
pub(super) fn metric_status_to_v1(m: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), m.get("type").cloned().unwrap_or(json!("")));
    let empty = json!({});
    if let Some(o) = get(m, "object") {
        let c = o.get("current").unwrap_or(&empty);
        let mut v = Map::new();
        v.insert("target".into(), cross_ref(o.get("describedObject")));
        put_identifier(&mut v, o, "selector");
        v.insert("currentValue".into(), quantity(c, "value"));
        put(&mut v, "averageValue", c.get("averageValue"));
        out.insert("object".into(), Value::Object(v));
    }
    if let Some(p) = get(m, "pods") {
        let c = p.get("current").unwrap_or(&empty);
        let mut v = Map::new();
        put_identifier(&mut v, p, "selector");
        v.insert("currentAverageValue".into(), quantity(c, "averageValue"));
        out.insert("pods".into(), Value::Object(v));
    }
    for key in ["resource", "containerResource"] {
        if let Some(r) = get(m, key) {
            let c = r.get("current").unwrap_or(&empty);
            let mut v = Map::new();
            v.insert("name".into(), r.get("name").cloned().unwrap_or(json!("")));
            put(
                &mut v,
                "currentAverageUtilization",
                c.get("averageUtilization"),
            );
            v.insert("currentAverageValue".into(), quantity(c, "averageValue"));
            if key == "containerResource" {
                v.insert(
                    "container".into(),
                    r.get("container").cloned().unwrap_or(json!("")),
                );
            }
            out.insert(key.into(), Value::Object(v));
        }
    }
    if let Some(e) = get(m, "external") {
        let c = e.get("current").unwrap_or(&empty);
        let mut v = Map::new();
        put_identifier(&mut v, e, "metricSelector");
        v.insert("currentValue".into(), quantity(c, "value"));
        put(&mut v, "currentAverageValue", c.get("averageValue"));
        out.insert("external".into(), Value::Object(v));
    }
    Value::Object(out)
}

/// `Convert_v1_MetricStatus_To_autoscaling_MetricStatus`.
pub(super) fn metric_status_to_v2(m: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), m.get("type").cloned().unwrap_or(json!("")));
    if let Some(o) = get(m, "object") {
        let mut c = Map::new();
        c.insert("value".into(), quantity(o, "currentValue"));
        put(&mut c, "averageValue", o.get("averageValue"));
        out.insert(
            "object".into(),
            json!({"describedObject": cross_ref(o.get("target")),
                   "metric": identifier(o, "selector"), "current": c}),
        );
    }
    if let Some(p) = get(m, "pods") {
        out.insert(
            "pods".into(),
            json!({"metric": identifier(p, "selector"),
                   "current": {"averageValue": quantity(p, "currentAverageValue")}}),
        );
    }
    for key in ["resource", "containerResource"] {
        if let Some(r) = get(m, key) {
            let mut c = Map::new();
            c.insert("averageValue".into(), quantity(r, "currentAverageValue"));
            put(
                &mut c,
                "averageUtilization",
                r.get("currentAverageUtilization"),
            );
            let mut v = Map::new();
            v.insert("name".into(), r.get("name").cloned().unwrap_or(json!("")));
            if key == "containerResource" {
                v.insert(
                    "container".into(),
                    r.get("container").cloned().unwrap_or(json!("")),
                );
            }
            v.insert("current".into(), Value::Object(c));
            out.insert(key.into(), Value::Object(v));
        }
    }
    if let Some(e) = get(m, "external") {
        let mut c = Map::new();
        c.insert("value".into(), quantity(e, "currentValue"));
        put(&mut c, "averageValue", e.get("currentAverageValue"));
        out.insert(
            "external".into(),
            json!({"metric": identifier(e, "metricSelector"), "current": c}),
        );
    }
    Value::Object(out)
}
