//! Upstream `SetDefaults_Service`.

use serde_json::{Value, json};

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Upstream `ExternallyAccessible`: a NodePort or LoadBalancer Service, or a ClusterIP one
/// with external IPs.
pub fn externally_accessible(spec: &Value) -> bool {
    match s(spec, "type") {
        "LoadBalancer" | "NodePort" => true,
        "ClusterIP" => spec
            .get("externalIPs")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.is_empty()),
        _ => false,
    }
}

pub fn default_service(svc: &mut Value) {
    let Some(spec) = svc.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if s(&Value::Object(spec.clone()), "sessionAffinity").is_empty() {
        spec.insert("sessionAffinity".into(), json!("None"));
    }
    let affinity = spec
        .get("sessionAffinity")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if affinity == "None" {
        spec.remove("sessionAffinityConfig");
    }
    if affinity == "ClientIP"
        && spec
            .get("sessionAffinityConfig")
            .and_then(|c| c.pointer("/clientIP/timeoutSeconds"))
            .is_none_or(Value::is_null)
    {
        spec.insert(
            "sessionAffinityConfig".into(),
            json!({"clientIP": {"timeoutSeconds": 10800}}),
        );
    }
    if spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        spec.insert("type".into(), json!("ClusterIP"));
    }
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            if port
                .get("protocol")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                port.insert("protocol".into(), json!("TCP"));
            }
            let unset = match port.get("targetPort") {
                None | Some(Value::Null) => true,
                Some(Value::Number(n)) => n.as_i64() == Some(0),
                Some(Value::String(t)) => t.is_empty(),
                _ => false,
            };
            if unset {
                let p = port.get("port").cloned().unwrap_or(json!(0));
                port.insert("targetPort".into(), p);
            }
        }
    }
    let spec_value = Value::Object(spec.clone());
    if externally_accessible(&spec_value) && s(&spec_value, "externalTrafficPolicy").is_empty() {
        spec.insert("externalTrafficPolicy".into(), json!("Cluster"));
    }
    let ty = s(&spec_value, "type").to_owned();
    if spec.get("internalTrafficPolicy").is_none_or(Value::is_null)
        && matches!(ty.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP")
    {
        spec.insert("internalTrafficPolicy".into(), json!("Cluster"));
    }
    if ty == "LoadBalancer"
        && spec
            .get("allocateLoadBalancerNodePorts")
            .is_none_or(Value::is_null)
    {
        spec.insert("allocateLoadBalancerNodePorts".into(), json!(true));
    }
    if ty == "LoadBalancer"
        && let Some(ingress) = svc
            .pointer_mut("/status/loadBalancer/ingress")
            .and_then(Value::as_array_mut)
    {
        for ing in ingress.iter_mut().filter_map(Value::as_object_mut) {
            let has_ip = ing
                .get("ip")
                .and_then(Value::as_str)
                .is_some_and(|ip| !ip.is_empty());
            if has_ip && ing.get("ipMode").is_none_or(Value::is_null) {
                ing.insert("ipMode".into(), json!("VIP"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_get_upstreams_defaults() {
        let mut svc = json!({"spec": {"ports": [{"port": 80}, {"port": 53, "protocol": "UDP", "targetPort": "dns"}]}});
        default_service(&mut svc);
        assert_eq!(
            svc["spec"],
            json!({"type": "ClusterIP", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80},
                          {"port": 53, "protocol": "UDP", "targetPort": "dns"}]})
        );
        let mut lb = json!({"spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP", "ports": [{"port": 80}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
        default_service(&mut lb);
        assert_eq!(lb["spec"]["externalTrafficPolicy"], "Cluster");
        assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
        assert_eq!(
            lb["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"],
            10800
        );
        assert_eq!(lb["status"]["loadBalancer"]["ingress"][0]["ipMode"], "VIP");
        let mut external =
            json!({"spec": {"type": "ExternalName", "externalName": "x.example.com"}});
        default_service(&mut external);
        assert!(external["spec"].get("internalTrafficPolicy").is_none());
    }
}
