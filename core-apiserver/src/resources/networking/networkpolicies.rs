//! networking.k8s.io/v1 NetworkPolicy, after upstream's
//! `pkg/registry/networking/networkpolicy`, `SetDefaults_NetworkPolicy`,
//! `SetDefaults_NetworkPolicyPort`, `ValidateNetworkPolicy`, `ValidateNetworkPolicyUpdate`
//! and `printNetworkPolicy`.

use std::net::IpAddr;

use kas_api::networking::v1::NETWORK_POLICY_SPEC;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_apimachinery::validation::{
    is_valid_cidr_for_legacy_field, is_valid_port_name, is_valid_port_num, parse_cidr_sloppy,
};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

use crate::resources::apps::common::{causes, format_label_selector, validate_label_selector};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "networking.k8s.io",
    version: "v1",
    kind: "NetworkPolicy",
    list_kind: "NetworkPolicyList",
    plural: "networkpolicies",
    singular: "networkpolicy",
    short_names: &["netpol"],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[TableColumn {
        name: "Pod-Selector",
        type_: "string",
        format: "",
        description: NETWORK_POLICY_SPEC.doc("podSelector"),
        priority: 0,
    }],
    table_name_and_age: true,
    storage_resource: "networkpolicies",
    schema: Some(&kas_api::networking::v1::NETWORK_POLICY),
    list_schema: Some(&kas_api::networking::v1::NETWORK_POLICY_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

const PROTOCOLS: &[&str] = &["TCP", "UDP", "SCTP"];
const POLICY_TYPES: &[&str] = &["Ingress", "Egress"];

fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// A value Go would hold in an int32 field, as a BadValue.
fn int_value(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// Upstream `ValidateNetworkPolicyPort`.
fn validate_port(port: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if let Some(proto) = port.get("protocol").and_then(Value::as_str)
        && !PROTOCOLS.contains(&proto)
    {
        errs.push(field::not_supported(
            &path.child("protocol"),
            proto,
            PROTOCOLS,
        ));
    }
    let end_port = port.get("endPort").filter(|v| !v.is_null()).map(int_value);
    match port.get("port").filter(|v| !v.is_null()) {
        Some(Value::String(name)) => {
            if let Some(end) = end_port {
                errs.push(field::invalid(
                    &path.child("endPort"),
                    end,
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for msg in is_valid_port_name(name) {
                errs.push(field::invalid(&path.child("port"), name.as_str(), &msg));
            }
        }
        Some(num) => {
            let n = int_value(num);
            for msg in is_valid_port_num(n) {
                errs.push(field::invalid(&path.child("port"), n, &msg));
            }
            if let Some(end) = end_port {
                if end < n {
                    errs.push(field::invalid(
                        &path.child("endPort"),
                        end,
                        "must be greater than or equal to `port`",
                    ));
                }
                for msg in is_valid_port_num(end) {
                    errs.push(field::invalid(&path.child("endPort"), end, &msg));
                }
            }
        }
        None => {
            if let Some(end) = end_port {
                errs.push(field::invalid(
                    &path.child("endPort"),
                    end,
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    errs
}

/// The network of a CIDR (its address masked), as Go's `ParseCIDR` answers it: the
/// address (IPv4 as 4 bytes) and the prefix length.
fn network(cidr: &str) -> Option<(Vec<u8>, u8)> {
    let (ip, bits) = parse_cidr_sloppy(cidr)?;
    let mut bytes = match ip {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets().to_vec(),
    };
    for (i, b) in bytes.iter_mut().enumerate() {
        let keep = usize::from(bits).saturating_sub(i * 8).min(8);
        *b &= if keep == 0 { 0 } else { 0xffu8 << (8 - keep) };
    }
    Some((bytes, bits))
}

/// Go's `IPNet.Contains(ip)` for a masked network and a network address of the same text
/// family.
fn contains(net: &(Vec<u8>, u8), ip: &[u8]) -> bool {
    net.0.len() == ip.len()
        && net.0.iter().zip(ip).enumerate().all(|(i, (n, x))| {
            let keep = usize::from(net.1).saturating_sub(i * 8).min(8);
            let mask = if keep == 0 { 0 } else { 0xffu8 << (8 - keep) };
            n & mask == x & mask
        })
}

/// Upstream `ValidateIPBlock` (CIDRs the old object held are not re-checked upstream; with
/// `StrictIPCIDRValidation` off every parsable CIDR passes anyway).
fn validate_ip_block(block: &Value, path: &Path) -> Vec<field::Error> {
    let cidr = block.get("cidr").and_then(Value::as_str).unwrap_or("");
    if cidr.is_empty() {
        return vec![field::required(&path.child("cidr"), "")];
    }
    let mut errs = is_valid_cidr_for_legacy_field(&path.child("cidr"), cidr);
    let Some(net) = network(cidr) else {
        return errs;
    };
    for (i, except) in items(block, "except").iter().enumerate() {
        let except = except.as_str().unwrap_or("");
        let p = path.child("except").index(i);
        errs.extend(is_valid_cidr_for_legacy_field(&p, except));
        let Some((ip, bits)) = network(except) else {
            continue;
        };
        if !contains(&net, &ip) || net.1 >= bits {
            errs.push(field::invalid(
                &p,
                except,
                "must be a strict subset of `cidr`",
            ));
        }
    }
    errs
}

/// Upstream `ValidateNetworkPolicyPeer`.
fn validate_peer(peer: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut peers = 0;
    for f in ["podSelector", "namespaceSelector"] {
        if let Some(sel) = peer.get(f).filter(|s| !s.is_null()) {
            peers += 1;
            errs.extend(validate_label_selector(Some(sel), &path.child(f)));
        }
    }
    let ip_block = peer.get("ipBlock").filter(|b| !b.is_null());
    if let Some(block) = ip_block {
        peers += 1;
        errs.extend(validate_ip_block(block, &path.child("ipBlock")));
    }
    if peers == 0 {
        errs.push(field::required(path, "must specify a peer"));
    } else if peers > 1 && ip_block.is_some() {
        errs.push(field::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
    errs
}

/// Go's `%#v` of a `[]networking.PolicyType`.
fn go_policy_types(types: &[Value]) -> BadValue {
    let quoted: Vec<String> = types
        .iter()
        .map(|t| kas_apimachinery::golang::strconv::quote(t.as_str().unwrap_or("")))
        .collect();
    BadValue::Raw(format!("[]networking.PolicyType{{{}}}", quoted.join(", ")))
}

/// Upstream `ValidateNetworkPolicySpec`.
fn validate_spec(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("spec");
    let empty = json!({});
    let spec = obj.get("spec").filter(|s| s.is_object()).unwrap_or(&empty);
    let selector = spec
        .get("podSelector")
        .filter(|s| !s.is_null())
        .unwrap_or(&empty);
    let mut errs = validate_label_selector(Some(selector), &path.child("podSelector"));
    for (direction, peers_key) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in items(spec, direction).iter().enumerate() {
            let rule_path = path.child(direction).index(i);
            for (j, port) in items(rule, "ports").iter().enumerate() {
                errs.extend(validate_port(port, &rule_path.child("ports").index(j)));
            }
            for (j, peer) in items(rule, peers_key).iter().enumerate() {
                errs.extend(validate_peer(peer, &rule_path.child(peers_key).index(j)));
            }
        }
    }
    let types = items(spec, "policyTypes");
    if types.len() > POLICY_TYPES.len() {
        errs.push(field::invalid(
            &path.child("policyTypes"),
            go_policy_types(types),
            "may not specify more than two policyTypes",
        ));
        return errs;
    }
    for (i, t) in types.iter().enumerate() {
        let t = t.as_str().unwrap_or("");
        if !POLICY_TYPES.contains(&t) {
            errs.push(field::not_supported(
                &path.child("policyTypes").index(i),
                t,
                POLICY_TYPES,
            ));
        }
    }
    errs
}

fn validate_network_policy(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
    errs.extend(causes(validate_spec(obj)));
    errs
}

impl kas_registry::Strategy for Strategy {
    /// `SetDefaults_NetworkPolicy` and `SetDefaults_NetworkPolicyPort`.
    fn default(&self, obj: &mut Value) {
        let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        for direction in ["ingress", "egress"] {
            let rules = spec.get_mut(direction).and_then(Value::as_array_mut);
            for rule in rules.into_iter().flatten() {
                let ports = rule.get_mut("ports").and_then(Value::as_array_mut);
                for port in ports.into_iter().flatten() {
                    if let Some(port) = port.as_object_mut()
                        && port.get("protocol").is_none_or(Value::is_null)
                    {
                        port.insert("protocol".into(), json!("TCP"));
                    }
                }
            }
        }
        let has = |k: &str| {
            spec.get(k)
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
        };
        if !has("policyTypes") {
            let mut types = vec![json!("Ingress")];
            if has("egress") {
                types.push(json!("Egress"));
            }
            spec.insert("policyTypes".into(), Value::Array(types));
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        kas_registry::meta::first_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = new.get("spec") != old.get("spec");
        kas_registry::meta::next_generation(new, old, changed);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_network_policy(obj)
    }

    /// Upstream's strategy runs `ValidateNetworkPolicy`, then `ValidateNetworkPolicyUpdate`
    /// (the metadata update and the spec again).
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_network_policy(new);
        errs.extend(validate_object_meta_update(new, old));
        errs.extend(causes(validate_spec(new)));
        errs
    }

    /// `printNetworkPolicy`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        vec![json!(format_label_selector(
            obj.pointer("/spec/podSelector")
        ))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn policy(spec: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "deny", "namespace": "ns"}, "spec": spec});
        Strategy.default(&mut obj);
        obj
    }

    #[test]
    fn protocol_and_policy_types_default() {
        let obj = policy(json!({"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}]}));
        assert_eq!(obj["spec"]["ingress"][0]["ports"][0]["protocol"], "TCP");
        assert_eq!(obj["spec"]["policyTypes"], json!(["Ingress"]));
        let obj = policy(json!({"podSelector": {}, "egress": [{}]}));
        assert_eq!(obj["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        let obj = policy(json!({"podSelector": {}, "egress": [{}], "policyTypes": ["Egress"]}));
        assert_eq!(obj["spec"]["policyTypes"], json!(["Egress"]));
        assert!(Strategy.validate(&obj).is_empty());
    }

    #[test]
    fn ports_peers_and_ip_blocks() {
        let obj = policy(json!({
            "podSelector": {"matchLabels": {"app": "db"}},
            "ingress": [{
                "ports": [{"protocol": "ICMP", "port": 70000}, {"port": "http", "endPort": 90},
                    {"port": 100, "endPort": 90}],
                "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16", "11.0.0.0/16", "10.0.0.0/8"]},
                    "podSelector": {}}]
            }],
            "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/33"}}, {"ipBlock": {}}]}],
            "policyTypes": ["Ingress", "Sideways"]
        }));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "spec.ingress[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\"",
                "spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.ingress[0].ports[1].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
                "spec.ingress[0].ports[2].endPort: Invalid value: 90: must be greater than or equal to `port`",
                "spec.ingress[0].from[0]: Required value: must specify a peer",
                "spec.ingress[0].from[1].ipBlock.except[1]: Invalid value: \"11.0.0.0/16\": must be a strict subset of `cidr`",
                "spec.ingress[0].from[1].ipBlock.except[2]: Invalid value: \"10.0.0.0/8\": must be a strict subset of `cidr`",
                "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer",
                "spec.egress[0].to[0].ipBlock.cidr: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                "spec.egress[0].to[1].ipBlock.cidr: Required value",
                "spec.policyTypes[1]: Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\"",
            ]
        );
        let obj =
            policy(json!({"podSelector": {}, "policyTypes": ["Ingress", "Egress", "Ingress"]}));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "spec.policyTypes: Invalid value: []networking.PolicyType{\"Ingress\", \"Egress\", \"Ingress\"}: may not specify more than two policyTypes"
            ]
        );
        let obj =
            policy(json!({"podSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}));
        assert_eq!(Strategy.validate(&obj).len(), 1);
    }

    #[test]
    fn generation_and_pod_selector_column() {
        let mut old = policy(json!({"podSelector": {}}));
        Strategy.prepare_for_create(&mut old);
        assert_eq!(old["metadata"]["generation"], 1);
        assert_eq!(Strategy.table_cells(&old), vec![json!("<none>")]);
        let mut new = policy(json!({"podSelector": {"matchLabels": {"app": "web"}}}));
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(Strategy.table_cells(&new), vec![json!("app=web")]);
        assert!(Strategy.validate_update(&new, &old).is_empty());
    }
}
