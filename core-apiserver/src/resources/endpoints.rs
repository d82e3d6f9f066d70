//! core/v1 Endpoints, after upstream's `pkg/registry/core/endpoint` (the strategy and its
//! `endpointsWarnings`), `SetDefaults_Endpoints`, `ValidateEndpointsCreate`,
//! `ValidateEndpointsUpdate` and `printEndpoints`.
//!
//! Upstream's strategy no longer repacks subsets (its `Canonicalize` is empty since 1.20),
//! so neither does this one: subsets are stored as written.

use std::net::IpAddr;

use kas_api::core::v1::ENDPOINTS;
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_apimachinery::validation::{
    is_dns1123_label, is_qualified_name, is_valid_port_num, parse_ip_sloppy,
};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::strategy::FieldErrors;
use kas_registry::strategy::causes;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "Endpoints",
    list_kind: "EndpointsList",
    plural: "endpoints",
    singular: "endpoints",
    short_names: &["ep"],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Endpoints",
            type_: "string",
            format: "",
            description: ENDPOINTS.doc("subsets"),
            priority: 0,
        },
        AGE_COLUMN,
    ],
    table_name_and_age: false,
    // Upstream's `specialDefaultResourcePrefixes`: Endpoints live under
    // `/registry/services/endpoints/`.
    storage_resource: "services/endpoints",
    schema: Some(&kas_api::core::v1::ENDPOINTS),
    list_schema: Some(&kas_api::core::v1::ENDPOINTS_LIST),
};

/// The warning upstream's installer adds to every request on v1 Endpoints since 1.33
/// (`deprecation.WarningMessage` from the type's prerelease-lifecycle: deprecated in 1.33,
/// replaced by discovery.k8s.io/v1 EndpointSlice).
pub const DEPRECATION_WARNING: &str =
    "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice";

/// `endpointscontroller.LabelManagedBy` and `ControllerName`: Endpoints the controller
/// writes are not checked for non-standard IPs.
const LABEL_MANAGED_BY: &str = "endpoints.kubernetes.io/managed-by";
const CONTROLLER_NAME: &str = "endpoint-controller";

/// Upstream `supportedPortProtocols`, sorted as `sets.List` gives them.
const SUPPORTED_PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

/// How the role installs this resource.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
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

/// Whether `netip.ParseAddr` accepts what `ParseIPSloppy` did: no IPv4 part with a
/// leading zero.
fn is_strict(value: &str, ip: IpAddr) -> bool {
    match ip {
        IpAddr::V6(_) => true,
        IpAddr::V4(_) => value
            .split('.')
            .all(|p| p.len() == 1 || !p.starts_with('0')),
    }
}

/// Upstream `IsValidIPForLegacyField` with `StrictIPCIDRValidation` off (alpha and off
/// by default in 1.33): anything `ParseIPSloppy` parses.
fn validate_legacy_ip(value: &str, path: &Path) -> Vec<field::Error> {
    if parse_ip_sloppy(value).is_some() {
        return Vec::new();
    }
    vec![field::invalid(
        path,
        value,
        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
    )]
}

/// Upstream `GetWarningsForIP`: IPv4 parts with leading zeros and IPv4-mapped IPv6
/// addresses will be refused some day; IPv6 addresses should be canonical.
fn ip_warnings(path: &Path, value: &str) -> Vec<String> {
    let Some(ip) = parse_ip_sloppy(value) else {
        return Vec::new();
    };
    let mapped = matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some());
    if !is_strict(value, ip) || mapped {
        return vec![format!(
            "{path}: non-standard IP address {} will be considered invalid in a future Kubernetes release: use {}",
            quote(value),
            quote(&kas_apimachinery::validation::go_ip_string(ip))
        )];
    }
    if let IpAddr::V6(v6) = ip
        && v6.to_string() != value
    {
        return vec![format!(
            "{path}: IPv6 address {} should be in RFC 5952 canonical format ({})",
            quote(value),
            quote(&v6.to_string())
        )];
    }
    Vec::new()
}

/// Upstream `ValidateDNS1123Label`.
fn validate_dns1123_label(value: &str, path: &Path) -> Vec<field::Error> {
    is_dns1123_label(value)
        .iter()
        .map(|m| field::invalid(path, value, m))
        .collect()
}

/// Upstream `validateEndpointAddress`.
fn validate_address(address: &Value, path: &Path) -> Vec<field::Error> {
    let ip = str_of(address, "ip");
    let ip_path = path.child("ip");
    let mut errs = validate_legacy_ip(ip, &ip_path);
    let hostname = str_of(address, "hostname");
    if !hostname.is_empty() {
        errs.extend(validate_dns1123_label(hostname, &path.child("hostname")));
    }
    if let Some(node) = opt_str(address, "nodeName") {
        for msg in name_is_dns_subdomain(node, false) {
            errs.push(field::invalid(&path.child("nodeName"), node, &msg));
        }
    }
    errs.extend(crate::helper::validate_non_special_ip(ip, &ip_path));
    errs
}

/// Upstream `validateEndpointPort`.
fn validate_port(port: &Value, require_name: bool, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let name = str_of(port, "name");
    if require_name && name.is_empty() {
        errs.push(field::required(&path.child("name"), ""));
    } else if !name.is_empty() {
        errs.extend(validate_dns1123_label(name, &path.child("name")));
    }
    let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
    for msg in is_valid_port_num(number) {
        errs.push(field::invalid(&path.child("port"), number, &msg));
    }
    let protocol = str_of(port, "protocol");
    if protocol.is_empty() {
        errs.push(field::required(&path.child("protocol"), ""));
    } else if !SUPPORTED_PROTOCOLS.contains(&protocol) {
        errs.push(field::not_supported(
            &path.child("protocol"),
            protocol,
            &SUPPORTED_PROTOCOLS,
        ));
    }
    if let Some(app) = opt_str(port, "appProtocol") {
        for msg in is_qualified_name(app) {
            errs.push(field::invalid(&path.child("appProtocol"), app, &msg));
        }
    }
    errs
}

/// Upstream `validateEndpointSubsets`.
fn validate_subsets(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("subsets");
    let mut errs = Vec::new();
    for (i, subset) in array(obj, "subsets").iter().enumerate() {
        let at = path.index(i);
        let (ready, not_ready) = (
            array(subset, "addresses"),
            array(subset, "notReadyAddresses"),
        );
        if ready.is_empty() && not_ready.is_empty() {
            errs.push(field::required(
                &at,
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (j, address) in ready.iter().enumerate() {
            errs.extend(validate_address(address, &at.child("addresses").index(j)));
        }
        for (j, address) in not_ready.iter().enumerate() {
            errs.extend(validate_address(
                address,
                &at.child("notReadyAddresses").index(j),
            ));
        }
        let ports = array(subset, "ports");
        for (j, port) in ports.iter().enumerate() {
            errs.extend(validate_port(
                port,
                ports.len() > 1,
                &at.child("ports").index(j),
            ));
        }
    }
    errs
}

/// Upstream `endpointsWarnings` (the deprecation of the API itself comes first, from
/// `Strategy::deprecation`).
fn warnings(obj: &Value) -> Vec<String> {
    let mut found = Vec::new();
    if kas_registry::meta::labels(obj)
        .get(LABEL_MANAGED_BY)
        .is_some_and(|v| v == CONTROLLER_NAME)
    {
        return found;
    }
    let path = Path::new("subsets");
    for (i, subset) in array(obj, "subsets").iter().enumerate() {
        for list in ["addresses", "notReadyAddresses"] {
            for (j, address) in array(subset, list).iter().enumerate() {
                let at = path.index(i).child(list).index(j).child("ip");
                found.extend(ip_warnings(&at, str_of(address, "ip")));
            }
        }
    }
    found
}

/// Upstream `formatEndpoints` with all ports: `ip:port` of the ready addresses (bare IPs
/// for a subset without ports), three at most and then `+ N more...`.
pub fn format_endpoints(obj: &Value) -> String {
    const MAX: usize = 3;
    let subsets = array(obj, "subsets");
    if subsets.is_empty() {
        return "<none>".to_owned();
    }
    let mut list: Vec<String> = Vec::new();
    let mut more = false;
    let mut count = 0;
    for subset in subsets {
        let addresses = array(subset, "addresses");
        let ports = array(subset, "ports");
        if ports.is_empty() {
            count += addresses.len();
            for address in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(str_of(address, "ip").to_owned());
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
            for address in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                // Go's `net.JoinHostPort`: an address with a colon is bracketed.
                let ip = str_of(address, "ip");
                list.push(if ip.contains(':') {
                    format!("[{ip}]:{number}")
                } else {
                    format!("{ip}:{number}")
                });
            }
        }
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", count - MAX)
    } else {
        joined
    }
}

impl kas_registry::Strategy for Strategy {
    fn deprecation(&self) -> Option<&'static str> {
        Some(DEPRECATION_WARNING)
    }

    /// Upstream `SetDefaults_Endpoints`: a port without a protocol is TCP.
    fn default(&self, obj: &mut Value) {
        let subsets = obj.get_mut("subsets").and_then(Value::as_array_mut);
        for subset in subsets.into_iter().flatten() {
            let ports = subset.get_mut("ports").and_then(Value::as_array_mut);
            for port in ports.into_iter().flatten() {
                if let Some(port) = port.as_object_mut()
                    && port
                        .get("protocol")
                        .is_none_or(|p| p.is_null() || p.as_str() == Some(""))
                {
                    port.insert("protocol".into(), json!("TCP"));
                }
            }
        }
    }

    /// Upstream `ValidateEndpointsCreate`.
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        errs.extend(causes(validate_subsets(obj)));
        errs
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        warnings(obj)
    }

    /// Upstream `ValidateEndpointsUpdate`: the metadata update rules, then everything
    /// a create checks.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(self.validate(new));
        errs
    }

    fn warnings_on_update(&self, new: &Value, _old: &Value) -> Vec<String> {
        warnings(new)
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    /// Upstream `printEndpoints`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(format_endpoints(obj)),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn endpoints(subsets: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "web", "namespace": "default"},
            "subsets": subsets});
        Strategy.default(&mut obj);
        obj
    }

    #[test]
    fn ports_default_to_tcp() {
        let obj = endpoints(json!([{"addresses": [{"ip": "10.0.0.1"}],
            "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 53, "protocol": "UDP"},
                {"name": "c", "port": 81, "protocol": ""}]}]));
        let ports = &obj["subsets"][0]["ports"];
        assert_eq!(ports[0]["protocol"], "TCP");
        assert_eq!(ports[1]["protocol"], "UDP");
        assert_eq!(ports[2]["protocol"], "TCP");
        assert!(
            Strategy.validate(&obj).is_empty(),
            "{:?}",
            messages(&Strategy.validate(&obj))
        );
    }

    #[test]
    fn special_addresses_are_refused_with_upstreams_messages() {
        let obj = endpoints(json!([{"addresses": [
            {"ip": "127.0.0.1"}, {"ip": "0.0.0.0"}, {"ip": "169.254.1.1"}, {"ip": "224.0.0.5"},
            {"ip": "::1"}, {"ip": "fe80::1"}, {"ip": "ff02::1"}, {"ip": "::ffff:127.0.0.2"}],
            "ports": [{"port": 80}]}]));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                "subsets[0].addresses[1].ip: Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)",
                "subsets[0].addresses[2].ip: Invalid value: \"169.254.1.1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                "subsets[0].addresses[3].ip: Invalid value: \"224.0.0.5\": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
                "subsets[0].addresses[4].ip: Invalid value: \"::1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                "subsets[0].addresses[5].ip: Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                "subsets[0].addresses[6].ip: Invalid value: \"ff02::1\": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
                "subsets[0].addresses[7].ip: Invalid value: \"::ffff:127.0.0.2\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
            ]
        );
    }

    #[test]
    fn subsets_addresses_and_ports_are_validated_like_upstream() {
        let obj = endpoints(json!([
            {"ports": [{"port": 80}]},
            {"notReadyAddresses": [{"ip": "bad", "hostname": "Host_1", "nodeName": "Node_1"}],
             "ports": [{"port": 0, "protocol": "HTTP", "appProtocol": "-x"}, {"name": "b", "port": 81}]},
        ]));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`",
                "subsets[1].notReadyAddresses[0].ip: Invalid value: \"bad\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "subsets[1].notReadyAddresses[0].hostname: Invalid value: \"Host_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "subsets[1].notReadyAddresses[0].nodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "subsets[1].notReadyAddresses[0].ip: Invalid value: \"bad\": must be a valid IP address",
                "subsets[1].ports[0].name: Required value",
                "subsets[1].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "subsets[1].ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "subsets[1].ports[0].appProtocol: Invalid value: \"-x\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ]
        );
    }

    #[test]
    fn leading_zeros_are_accepted_with_a_warning() {
        let obj = endpoints(
            json!([{"addresses": [{"ip": "010.0.0.1"}, {"ip": "10.0.0.2"}],
            "notReadyAddresses": [{"ip": "::ffff:1.2.3.4"}, {"ip": "FD00:0::1"}]}]),
        );
        assert!(
            Strategy.validate(&obj).is_empty(),
            "{:?}",
            messages(&Strategy.validate(&obj))
        );
        assert_eq!(
            Strategy.warnings_on_create(&obj),
            [
                "subsets[0].addresses[0].ip: non-standard IP address \"010.0.0.1\" will be considered invalid in a future Kubernetes release: use \"10.0.0.1\"",
                "subsets[0].notReadyAddresses[0].ip: non-standard IP address \"::ffff:1.2.3.4\" will be considered invalid in a future Kubernetes release: use \"1.2.3.4\"",
                "subsets[0].notReadyAddresses[1].ip: IPv6 address \"FD00:0::1\" should be in RFC 5952 canonical format (\"fd00::1\")",
            ]
        );
        // The endpoints controller's own objects are trusted.
        let mut managed = obj.clone();
        managed["metadata"]["labels"] =
            json!({"endpoints.kubernetes.io/managed-by": "endpoint-controller"});
        assert!(Strategy.warnings_on_update(&managed, &obj).is_empty());
        assert_eq!(Strategy.deprecation(), Some(DEPRECATION_WARNING));
    }

    #[test]
    fn updates_check_metadata_and_allow_creation() {
        let old = endpoints(json!([]));
        let mut new = old.clone();
        new["metadata"]["name"] = json!("other");
        new["subsets"] = json!([{"addresses": [{"ip": "127.0.0.1"}]}]);
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            [
                "metadata.name: Invalid value: \"other\": field is immutable",
                "subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
            ]
        );
        assert!(Strategy.allow_create_on_update());
    }

    #[test]
    fn the_printer_shows_three_endpoints_and_counts_the_rest() {
        assert_eq!(format_endpoints(&endpoints(json!([]))), "<none>");
        let obj = endpoints(json!([
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "fd00::2"}], "ports": [{"port": 80}, {"port": 443}]},
            {"addresses": [{"ip": "10.0.0.3"}]},
        ]));
        assert_eq!(
            format_endpoints(&obj),
            "10.0.0.1:80,[fd00::2]:80,10.0.0.1:443 + 2 more..."
        );
        let headless = endpoints(json!([{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}]));
        assert_eq!(format_endpoints(&headless), "10.0.0.1,10.0.0.2");
        let cells = Strategy.table_cells(&headless);
        assert_eq!(cells[..2], [json!("web"), json!("10.0.0.1,10.0.0.2")]);
        assert_eq!(DESCRIPTOR.table_columns.len(), cells.len());
        assert_eq!(
            DESCRIPTOR.table_columns[1].description,
            ENDPOINTS.doc("subsets")
        );
    }
}
