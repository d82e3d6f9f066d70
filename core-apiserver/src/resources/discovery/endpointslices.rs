//! discovery.k8s.io/v1 EndpointSlice, after upstream's `pkg/registry/discovery/endpointslice`,
//! `SetDefaults_EndpointPort`, `ValidateEndpointSliceCreate`, `ValidateEndpointSliceUpdate`
//! and `printEndpointSlice`.
//!
//! Feature gates as 1.33 ships them: `PreferSameTrafficDistribution` (alpha) is off, so
//! `hints.forNodes` is dropped unless the stored slice already used it. Requests are all
//! v1, so `deprecatedTopology` is cleared whenever the endpoints change
//! (`dropTopologyOnV1`).

use std::collections::{BTreeMap, BTreeSet};

use kas_api::discovery::v1::ENDPOINT_SLICE;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_labels};
use kas_apimachinery::validation::{
    is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_ip_for_legacy_field,
    is_valid_label_value, parse_ip_sloppy,
};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

use crate::resources::apps::common::causes;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "discovery.k8s.io",
    version: "v1",
    kind: "EndpointSlice",
    list_kind: "EndpointSliceList",
    plural: "endpointslices",
    singular: "endpointslice",
    short_names: &[],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        TableColumn {
            name: "AddressType",
            type_: "string",
            format: "",
            description: ENDPOINT_SLICE.doc("addressType"),
            priority: 0,
        },
        TableColumn {
            name: "Ports",
            type_: "string",
            format: "",
            description: ENDPOINT_SLICE.doc("ports"),
            priority: 0,
        },
        TableColumn {
            name: "Endpoints",
            type_: "string",
            format: "",
            description: ENDPOINT_SLICE.doc("endpoints"),
            priority: 0,
        },
    ],
    table_name_and_age: true,
    storage_resource: "endpointslices",
    schema: Some(&kas_api::discovery::v1::ENDPOINT_SLICE),
    list_schema: Some(&kas_api::discovery::v1::ENDPOINT_SLICE_LIST),
};

/// Upstream `supportedAddressTypes`, sorted as `sets.String.List` gives them.
const SUPPORTED_ADDRESS_TYPES: [&str; 3] = ["FQDN", "IPv4", "IPv6"];
/// Upstream `supportedPortProtocols`, sorted.
const SUPPORTED_PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
const MAX_TOPOLOGY_LABELS: usize = 16;
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 20000;
const MAX_ENDPOINTS: usize = 1000;
const MAX_ZONE_HINTS: usize = 8;
const MAX_NODE_HINTS: usize = 8;
/// `corev1.LabelTopologyZone`, which conversion moves out of `deprecatedTopology`.
const LABEL_TOPOLOGY_ZONE: &str = "topology.kubernetes.io/zone";

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A pointer field: `None` when absent or null.
fn opt_str<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)
        .filter(|x| !x.is_null())
        .map(|x| x.as_str().unwrap_or(""))
}

fn dns1123_label_errors(value: &str, path: &Path) -> Vec<field::Error> {
    is_dns1123_label(value)
        .iter()
        .map(|m| field::invalid(path, value, m))
        .collect()
}

/// Upstream `IsFullyQualifiedDomainName`: a DNS subdomain (a trailing dot allowed) of at
/// least two labels.
fn is_fully_qualified_domain_name(path: &Path, name: &str) -> Vec<field::Error> {
    if name.is_empty() {
        return vec![field::required(path, "")];
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let errs = is_dns1123_subdomain(name);
    if !errs.is_empty() {
        return vec![field::invalid(path, name, &errs.join(","))];
    }
    if name.split('.').count() < 2 {
        return vec![field::invalid(
            path,
            name,
            "should be a domain with at least two segments separated by dots",
        )];
    }
    for label in name.split('.') {
        let errs = is_dns1123_label(label);
        if !errs.is_empty() {
            return vec![field::invalid(path, label, &errs.join(","))];
        }
    }
    Vec::new()
}

/// The IPv4 and IPv6 cases of upstream's address switch: an IP as legacy fields take them
/// (`StrictIPCIDRValidation` off), of the slice's family as Go's `net.IP.To4` sees it,
/// and not a special address.
fn validate_ip_address(address: &str, ipv4: bool, path: &Path) -> Vec<field::Error> {
    let errs = is_valid_ip_for_legacy_field(path, address);
    if !errs.is_empty() {
        return errs;
    }
    let mut errs = Vec::new();
    let is_v4 = parse_ip_sloppy(address)
        .map(crate::helper::unmapped)
        .is_some_and(|ip| ip.is_ipv4());
    if ipv4 && !is_v4 {
        errs.push(field::invalid(path, address, "must be an IPv4 address"));
    } else if !ipv4 && is_v4 {
        errs.push(field::invalid(path, address, "must be an IPv6 address"));
    }
    errs.extend(crate::helper::validate_non_special_ip(address, path));
    errs
}

fn string_map(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// Upstream `validateHints`.
fn validate_hints(hints: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let fz_path = path.child("forZones");
    let zones = array(hints, "forZones");
    if zones.len() > MAX_ZONE_HINTS {
        errs.push(field::too_many(
            &fz_path,
            zones.len() as i64,
            MAX_ZONE_HINTS as i64,
        ));
        return errs;
    }
    let mut seen = BTreeSet::new();
    for (i, zone) in zones.iter().enumerate() {
        let zone_path = fz_path.index(i).child("name");
        let name = str_of(zone, "name");
        if !seen.insert(name) {
            errs.push(field::duplicate(&zone_path, name));
        }
        for msg in is_valid_label_value(name) {
            errs.push(field::invalid(&zone_path, name, &msg));
        }
    }
    let fn_path = path.child("forNodes");
    let nodes = array(hints, "forNodes");
    if nodes.len() > MAX_NODE_HINTS {
        errs.push(field::too_many(
            &fn_path,
            nodes.len() as i64,
            MAX_NODE_HINTS as i64,
        ));
        return errs;
    }
    let mut seen = BTreeSet::new();
    for (i, node) in nodes.iter().enumerate() {
        let node_path = fn_path.index(i).child("name");
        let name = str_of(node, "name");
        if !seen.insert(name) {
            errs.push(field::duplicate(&node_path, name));
        }
        for msg in name_is_dns_subdomain(name, false) {
            errs.push(field::invalid(&node_path, name, &msg));
        }
    }
    errs
}

#[derive(Debug)]
struct ReservedKey;

impl std::fmt::Display for ReservedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("reserved key was not removed in conversion")
    }
}

impl std::error::Error for ReservedKey {}

/// Upstream `validateEndpoints`.
fn validate_endpoints(obj: &Value, address_type: &str) -> Vec<field::Error> {
    let path = Path::new("endpoints");
    let endpoints = array(obj, "endpoints");
    if endpoints.len() > MAX_ENDPOINTS {
        return vec![field::too_many(
            &path,
            endpoints.len() as i64,
            MAX_ENDPOINTS as i64,
        )];
    }
    let mut errs = Vec::new();
    for (i, endpoint) in endpoints.iter().enumerate() {
        let at = path.index(i);
        let address_path = at.child("addresses");
        let addresses = array(endpoint, "addresses");
        if addresses.is_empty() {
            errs.push(field::required(
                &address_path,
                "must contain at least 1 address",
            ));
        } else if addresses.len() > MAX_ADDRESSES {
            errs.push(field::too_many(
                &address_path,
                addresses.len() as i64,
                MAX_ADDRESSES as i64,
            ));
        }
        for (j, address) in addresses.iter().enumerate() {
            let address = address.as_str().unwrap_or("");
            let p = address_path.index(j);
            // Unknown address types fall through unvalidated.
            match address_type {
                "IPv4" => errs.extend(validate_ip_address(address, true, &p)),
                "IPv6" => errs.extend(validate_ip_address(address, false, &p)),
                "FQDN" => errs.extend(is_fully_qualified_domain_name(&p, address)),
                _ => {}
            }
        }
        if let Some(node) = opt_str(endpoint, "nodeName") {
            for msg in name_is_dns_subdomain(node, false) {
                errs.push(field::invalid(&at.child("nodeName"), node, &msg));
            }
        }
        let topology_path = at.child("deprecatedTopology");
        let topology = endpoint
            .get("deprecatedTopology")
            .map(string_map)
            .unwrap_or_default();
        if topology.len() > MAX_TOPOLOGY_LABELS {
            errs.push(field::too_many(
                &topology_path,
                topology.len() as i64,
                MAX_TOPOLOGY_LABELS as i64,
            ));
        }
        errs.extend(validate_labels(&topology, &topology_path));
        if topology.contains_key(LABEL_TOPOLOGY_ZONE) {
            errs.push(field::internal_error(
                &topology_path.key(LABEL_TOPOLOGY_ZONE),
                &ReservedKey,
            ));
        }
        if let Some(hostname) = opt_str(endpoint, "hostname") {
            errs.extend(dns1123_label_errors(hostname, &at.child("hostname")));
        }
        if let Some(hints) = endpoint.get("hints").filter(|h| !h.is_null()) {
            errs.extend(validate_hints(hints, &at.child("hints")));
        }
    }
    errs
}

/// Upstream `validatePorts`.
fn validate_ports(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("ports");
    let ports = array(obj, "ports");
    if ports.len() > MAX_PORTS {
        return vec![field::too_many(&path, ports.len() as i64, MAX_PORTS as i64)];
    }
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let at = path.index(i);
        let name = str_of(port, "name");
        if !name.is_empty() {
            errs.extend(dns1123_label_errors(name, &at.child("name")));
        }
        if !names.insert(name) {
            errs.push(field::duplicate(&at.child("name"), name));
        }
        match opt_str(port, "protocol") {
            None => errs.push(field::required(&at.child("protocol"), "")),
            Some(p) if !SUPPORTED_PROTOCOLS.contains(&p) => errs.push(field::not_supported(
                &at.child("protocol"),
                p,
                &SUPPORTED_PROTOCOLS,
            )),
            Some(_) => {}
        }
        if let Some(app) = opt_str(port, "appProtocol") {
            for msg in is_qualified_name(app) {
                errs.push(field::invalid(&at.child("appProtocol"), app, &msg));
            }
        }
    }
    errs
}

/// Upstream `validateAddressType`.
fn validate_address_type(address_type: &str) -> Vec<field::Error> {
    let path = Path::new("addressType");
    if address_type.is_empty() {
        vec![field::required(&path, "")]
    } else if !SUPPORTED_ADDRESS_TYPES.contains(&address_type) {
        vec![field::not_supported(
            &path,
            address_type,
            &SUPPORTED_ADDRESS_TYPES,
        )]
    } else {
        Vec::new()
    }
}

/// Upstream `ValidateEndpointSlice`.
fn validate_endpoint_slice(obj: &Value) -> FieldErrors {
    let address_type = str_of(obj, "addressType");
    let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
    let mut rest = validate_address_type(address_type);
    rest.extend(validate_endpoints(obj, address_type));
    rest.extend(validate_ports(obj));
    errs.extend(causes(rest));
    errs
}

/// Whether any endpoint of `obj` has `hints.forNodes`.
fn uses_for_nodes(obj: &Value) -> bool {
    array(obj, "endpoints")
        .iter()
        .any(|e| e.pointer("/hints/forNodes").is_some_and(|f| !f.is_null()))
}

/// `dropDisabledFields`: `hints.forNodes` while `PreferSameTrafficDistribution` is off.
fn drop_for_nodes(obj: &mut Value) {
    let endpoints = obj.get_mut("endpoints").and_then(Value::as_array_mut);
    for endpoint in endpoints.into_iter().flatten() {
        if let Some(hints) = endpoint.get_mut("hints").and_then(Value::as_object_mut) {
            hints.remove("forNodes");
        }
    }
}

/// `dropTopologyOnV1`: `deprecatedTopology` is silently cleared.
fn drop_topology(obj: &mut Value) {
    let endpoints = obj.get_mut("endpoints").and_then(Value::as_array_mut);
    for endpoint in endpoints.into_iter().flatten() {
        if let Some(endpoint) = endpoint.as_object_mut() {
            endpoint.remove("deprecatedTopology");
        }
    }
}

/// Everything but metadata, for upstream's generation check.
fn without_metadata(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
    }
    v
}

/// `listWithMoreString`: at most three, then `+ N more...`; `<unset>` for none.
fn list_with_more(list: &[String], more: bool, count: usize, max: usize) -> String {
    let joined = list.join(",");
    if more {
        return format!("{joined} + {} more...", count - max);
    }
    if joined.is_empty() {
        "<unset>".to_owned()
    } else {
        joined
    }
}

/// Upstream `formatDiscoveryPorts`: the numbers (or names of ports without one, `*` for
/// neither).
pub fn format_ports(obj: &Value) -> String {
    const MAX: usize = 3;
    let mut list = Vec::new();
    let mut more = false;
    let ports = array(obj, "ports");
    for port in ports {
        if list.len() < MAX {
            let num = match port.get("port").and_then(Value::as_i64) {
                Some(n) => n.to_string(),
                None => opt_str(port, "name").unwrap_or("*").to_owned(),
            };
            list.push(num);
        } else if list.len() == MAX {
            more = true;
        }
    }
    list_with_more(&list, more, ports.len(), MAX)
}

/// Upstream `formatDiscoveryEndpoints`: the addresses of all endpoints.
pub fn format_endpoints(obj: &Value) -> String {
    const MAX: usize = 3;
    let mut list = Vec::new();
    let mut more = false;
    let mut count = 0;
    for endpoint in array(obj, "endpoints") {
        for address in array(endpoint, "addresses") {
            if list.len() < MAX {
                list.push(address.as_str().unwrap_or("").to_owned());
            } else if list.len() == MAX {
                more = true;
            }
            count += 1;
        }
    }
    list_with_more(&list, more, count, MAX)
}

impl kas_registry::Strategy for Strategy {
    /// Upstream `SetDefaults_EndpointPort`: a port without a name is named `""`, one
    /// without a protocol is TCP.
    fn default(&self, obj: &mut Value) {
        let ports = obj.get_mut("ports").and_then(Value::as_array_mut);
        for port in ports.into_iter().flatten() {
            if let Some(port) = port.as_object_mut() {
                if port.get("name").is_none_or(Value::is_null) {
                    port.insert("name".into(), json!(""));
                }
                if port.get("protocol").is_none_or(Value::is_null) {
                    port.insert("protocol".into(), json!("TCP"));
                }
            }
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        kas_registry::meta::first_generation(obj);
        drop_for_nodes(obj);
        drop_topology(obj);
    }

    /// A new generation when anything but metadata, or the labels, changed; disabled
    /// fields the stored slice does not use are dropped, and `deprecatedTopology` when
    /// the endpoints changed.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = without_metadata(new) != without_metadata(old)
            || kas_registry::meta::labels(new) != kas_registry::meta::labels(old);
        kas_registry::meta::next_generation(new, old, changed);
        if !uses_for_nodes(old) {
            drop_for_nodes(new);
        }
        if new.get("endpoints") != old.get("endpoints") {
            drop_topology(new);
        }
    }

    /// Upstream `ValidateEndpointSliceCreate`.
    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_endpoint_slice(obj)
    }

    /// The metadata update rules, upstream `ValidateEndpointSliceUpdate`: the whole slice
    /// again, with its address type unchanged.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(validate_endpoint_slice(new));
        let address_type = str_of(new, "addressType");
        if address_type != str_of(old, "addressType") {
            errs.extend(causes(vec![field::invalid(
                &Path::new("addressType"),
                address_type,
                "field is immutable",
            )]));
        }
        errs
    }

    /// `printEndpointSlice`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        vec![
            json!(str_of(obj, "addressType")),
            json!(format_ports(obj)),
            json!(format_endpoints(obj)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn slice(address_type: &str, endpoints: Value, ports: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "web-abc", "namespace": "default"},
            "addressType": address_type, "endpoints": endpoints, "ports": ports});
        Strategy.default(&mut obj);
        obj
    }

    #[test]
    fn ports_default_name_and_protocol() {
        let obj = slice(
            "IPv4",
            json!([{"addresses": ["10.0.0.1"]}]),
            json!([{"port": 80}, {"name": "dns", "port": 53, "protocol": "UDP"}]),
        );
        assert_eq!(
            obj["ports"][0],
            json!({"name": "", "port": 80, "protocol": "TCP"})
        );
        assert_eq!(obj["ports"][1]["protocol"], "UDP");
        assert!(
            Strategy.validate(&obj).is_empty(),
            "{:?}",
            messages(&Strategy.validate(&obj))
        );
    }

    #[test]
    fn address_type_and_addresses_are_validated_like_upstream() {
        let obj = slice("IP", json!([]), json!([]));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "addressType: Unsupported value: \"IP\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""
            ]
        );
        let obj = slice("", json!([]), json!([]));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            ["addressType: Required value"]
        );
        let obj = slice(
            "IPv4",
            json!([{"addresses": []},
                {"addresses": ["bad", "fd00::1", "127.0.0.1"], "hostname": "Host_1",
                 "nodeName": "Node_1"}]),
            json!([]),
        );
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "endpoints[0].addresses: Required value: must contain at least 1 address",
                "endpoints[1].addresses[0]: Invalid value: \"bad\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "endpoints[1].addresses[1]: Invalid value: \"fd00::1\": must be an IPv4 address",
                "endpoints[1].addresses[2]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                "endpoints[1].nodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "endpoints[1].hostname: Invalid value: \"Host_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ]
        );
        let obj = slice(
            "IPv6",
            json!([{"addresses": ["10.0.0.1", "fd00::1"]}]),
            json!([]),
        );
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            ["endpoints[0].addresses[0]: Invalid value: \"10.0.0.1\": must be an IPv6 address"]
        );
        let obj = slice(
            "FQDN",
            json!([{"addresses": ["example.com.", "localhost", ""]}]),
            json!([]),
        );
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "endpoints[0].addresses[1]: Invalid value: \"localhost\": should be a domain with at least two segments separated by dots",
                "endpoints[0].addresses[2]: Required value",
            ]
        );
        let many: Vec<Value> = (0..101)
            .map(|i| json!(format!("10.0.1.{}", i % 250 + 1)))
            .collect();
        let obj = slice("IPv4", json!([{"addresses": many}]), json!([]));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            ["endpoints[0].addresses: Too many: 101: must have at most 100 items"]
        );
        let endpoints: Vec<Value> = (0..1001)
            .map(|_| json!({"addresses": ["10.0.0.1"]}))
            .collect();
        let obj = slice("IPv4", json!(endpoints), json!([]));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            ["endpoints: Too many: 1001: must have at most 1000 items"]
        );
    }

    #[test]
    fn ports_and_hints_are_validated_like_upstream() {
        let obj = slice(
            "IPv4",
            json!([{"addresses": ["10.0.0.1"],
                "hints": {"forZones": [{"name": "a"}, {"name": "a"}, {"name": "-b"}]}}]),
            json!([{"name": "http", "port": 80}, {"name": "http", "port": 81, "protocol": "",
                "appProtocol": "-x"}, {"name": "Bad_Name"}]),
        );
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "endpoints[0].hints.forZones[1].name: Duplicate value: \"a\"",
                "endpoints[0].hints.forZones[2].name: Invalid value: \"-b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                "ports[1].name: Duplicate value: \"http\"",
                "ports[1].protocol: Unsupported value: \"\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "ports[1].appProtocol: Invalid value: \"-x\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "ports[2].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ]
        );
    }

    #[test]
    fn create_drops_disabled_fields_and_update_bumps_generation() {
        let mut old = slice(
            "IPv4",
            json!([{"addresses": ["10.0.0.1"], "deprecatedTopology": {"a": "b"},
                "hints": {"forZones": [{"name": "z"}], "forNodes": [{"name": "n"}]}}]),
            json!([]),
        );
        Strategy.prepare_for_create(&mut old);
        assert_eq!(old["metadata"]["generation"], 1);
        assert_eq!(
            old["endpoints"][0],
            json!({"addresses": ["10.0.0.1"], "hints": {"forZones": [{"name": "z"}]}})
        );
        let mut same = old.clone();
        same["metadata"]["annotations"] = json!({"a": "b"});
        Strategy.prepare_for_update(&mut same, &old);
        assert_eq!(same["metadata"]["generation"], 1);
        let mut labelled = old.clone();
        labelled["metadata"]["labels"] = json!({"a": "b"});
        Strategy.prepare_for_update(&mut labelled, &old);
        assert_eq!(labelled["metadata"]["generation"], 2);
        let mut new = old.clone();
        new["addressType"] = json!("IPv6");
        new["endpoints"] = json!([{"addresses": ["fd00::1"]}]);
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            ["addressType: Invalid value: \"IPv6\": field is immutable"]
        );
    }

    #[test]
    fn the_printer_lists_three_and_counts_the_rest() {
        let obj = slice(
            "IPv4",
            json!([{"addresses": ["10.0.0.1", "10.0.0.2"]}, {"addresses": ["10.0.0.3", "10.0.0.4"]}]),
            json!([{"port": 80}, {"name": "named"}, {"port": 443}, {"port": 8080}]),
        );
        assert_eq!(
            Strategy.table_cells(&obj),
            [
                json!("IPv4"),
                json!("80,named,443 + 1 more..."),
                json!("10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...")
            ]
        );
        let empty = slice("FQDN", json!([]), json!([]));
        assert_eq!(
            Strategy.table_cells(&empty),
            [json!("FQDN"), json!("<unset>"), json!("<unset>")]
        );
        assert_eq!(DESCRIPTOR.table_columns.len(), 3);
        assert_eq!(
            DESCRIPTOR.table_columns[0].description,
            ENDPOINT_SLICE.doc("addressType")
        );
    }
}
