//! Upstream `ValidateService`, `ValidateServiceUpdate` and `ValidateServiceStatusUpdate`
//! (`pkg/apis/core/validation`), over the v1 JSON of a defaulted Service whose cluster IPs,
//! IP families and node ports are already allocated. Object metadata is checked by the
//! strategy, not here.
//!
//! Feature gates are those of a default 1.33 server: `StrictIPCIDRValidation` and
//! `PreferSameTrafficDistribution` off, `LoadBalancerIPMode` on (GA),
//! `AllowServiceLBStatusOnNonLB` off. A missing JSON field is Go's zero value (`""`, `0`,
//! nil).

pub(super) mod ips;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::validate_labels;
use kas_apimachinery::validation::{
    is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_cidr_for_legacy_field,
    is_valid_ip_for_legacy_field, is_valid_port_name, is_valid_port_num, parse_ip_sloppy,
};
use serde_json::Value;

use crate::podspec::validation::json::{
    arr, has, int_of, int0, invalid_each, obj, opt_str, str_map, str_of,
};

use ips::{
    is_headless, validate_cluster_ips_related_fields, validate_upgrade_downgrade_cluster_ips,
    validate_upgrade_downgrade_ip_families,
};

const SESSION_AFFINITIES: [&str; 2] = ["ClientIP", "None"];
const SERVICE_TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const PORT_PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
const TRAFFIC_POLICIES: [&str; 2] = ["Cluster", "Local"];
const IP_MODES: [&str; 2] = ["Proxy", "VIP"];
/// Upstream `core.MaxClientIPServiceAffinitySeconds`.
const MAX_CLIENT_IP_AFFINITY_SECONDS: i64 = 86400;

/// Upstream `core.AnnotationTopologyMode`.
const ANNOTATION_TOPOLOGY_MODE: &str = "service.kubernetes.io/topology-mode";
/// Upstream `core.DeprecatedAnnotationTopologyAwareHints`.
const ANNOTATION_TOPOLOGY_AWARE_HINTS: &str = "service.kubernetes.io/topology-aware-hints";
/// Upstream `core.AnnotationLoadBalancerSourceRangesKey`.
const ANNOTATION_LB_SOURCE_RANGES: &str = "service.beta.kubernetes.io/load-balancer-source-ranges";

const ONLY_LOAD_BALANCER: &str = "may only be used when `type` is 'LoadBalancer'";

static NULL: Value = Value::Null;

/// The `spec` of a Service (Go's zero `ServiceSpec` when missing).
fn spec_of(svc: &Value) -> &Value {
    svc.get("spec").unwrap_or(&NULL)
}

fn spec_path() -> Path {
    Path::new("spec")
}

/// Upstream `apiservice.ExternallyAccessible`.
fn externally_accessible(spec: &Value) -> bool {
    match str_of(spec, "type") {
        "LoadBalancer" | "NodePort" => true,
        "ClusterIP" => !arr(spec, "externalIPs").is_empty(),
        _ => false,
    }
}

/// Upstream `apiservice.NeedsHealthCheck`: a LoadBalancer with `externalTrafficPolicy`
/// Local.
fn needs_health_check(spec: &Value) -> bool {
    str_of(spec, "type") == "LoadBalancer" && str_of(spec, "externalTrafficPolicy") == "Local"
}

/// Upstream `ValidateService` (as `ValidateServiceCreate` calls it), without the metadata.
pub fn validate_service(svc: &Value) -> Vec<field::Error> {
    let spec = spec_of(svc);
    let sp = spec_path();
    let ty = str_of(spec, "type");
    let mut errs = Vec::new();

    let annotations = svc
        .get("metadata")
        .map(|m| str_map(m, "annotations"))
        .unwrap_or_default();
    if let (Some(mode), Some(hints)) = (
        annotations.get(ANNOTATION_TOPOLOGY_MODE),
        annotations.get(ANNOTATION_TOPOLOGY_AWARE_HINTS),
    ) && mode != hints
    {
        let path = Path::new("metadata")
            .child("annotations")
            .key(ANNOTATION_TOPOLOGY_MODE);
        let msg = format!(
            "must match annotations[{ANNOTATION_TOPOLOGY_AWARE_HINTS}] when both are specified"
        );
        errs.push(field::invalid(&path, mode.as_str(), &msg));
    }

    let ports = arr(spec, "ports");
    let headless = is_headless(spec);
    if ports.is_empty() && !headless && ty != "ExternalName" {
        errs.push(field::required(&sp.child("ports"), ""));
    }

    match ty {
        "LoadBalancer" | "NodePort" if headless => {
            let msg = format!("may not be set to 'None' for {ty} services");
            errs.push(field::invalid(
                &sp.child("clusterIPs").index(0),
                "None",
                &msg,
            ));
        }
        "ExternalName" => errs.extend(validate_external_name(spec)),
        _ => {}
    }

    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let path = sp.child("ports").index(i);
        errs.extend(validate_service_port(
            port,
            ports.len() > 1,
            &mut names,
            &path,
        ));
    }

    if has(spec, "selector") {
        errs.extend(validate_labels(
            &str_map(spec, "selector"),
            &sp.child("selector"),
        ));
    }

    let affinity = str_of(spec, "sessionAffinity");
    if affinity.is_empty() {
        errs.push(field::required(&sp.child("sessionAffinity"), ""));
    } else if !SESSION_AFFINITIES.contains(&affinity) {
        errs.push(field::not_supported(
            &sp.child("sessionAffinity"),
            affinity,
            &SESSION_AFFINITIES,
        ));
    }
    if affinity == "ClientIP" {
        errs.extend(validate_client_ip_affinity_config(
            obj(spec, "sessionAffinityConfig"),
            &sp.child("sessionAffinityConfig"),
        ));
    } else if affinity == "None" && has(spec, "sessionAffinityConfig") {
        errs.push(field::forbidden(
            &sp.child("sessionAffinityConfig"),
            "must not be set when session affinity is None",
        ));
    }

    errs.extend(validate_cluster_ips_related_fields(spec));

    for (i, ip) in arr(spec, "externalIPs").iter().enumerate() {
        let path = sp.child("externalIPs").index(i);
        let ip = ip.as_str().unwrap_or("");
        let ip_errs = is_valid_ip_for_legacy_field(&path, ip);
        if ip_errs.is_empty() {
            errs.extend(crate::helper::validate_non_special_ip(ip, &path));
        } else {
            errs.extend(ip_errs);
        }
    }

    if ty.is_empty() {
        errs.push(field::required(&sp.child("type"), ""));
    } else if !SERVICE_TYPES.contains(&ty) {
        errs.push(field::not_supported(&sp.child("type"), ty, &SERVICE_TYPES));
    }

    if ty == "ClusterIP" {
        for (i, port) in ports.iter().enumerate() {
            if int0(port, "nodePort") != 0 {
                errs.push(field::forbidden(
                    &sp.child("ports").index(i).child("nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }

    errs.extend(validate_duplicate_ports(ports));
    errs.extend(validate_source_ranges(spec, &annotations));

    let allocate = has(spec, "allocateLoadBalancerNodePorts");
    if allocate && ty != "LoadBalancer" {
        errs.push(field::forbidden(
            &sp.child("allocateLoadBalancerNodePorts"),
            ONLY_LOAD_BALANCER,
        ));
    }
    if ty == "LoadBalancer" && !allocate {
        // Upstream's path lacks the `spec` prefix.
        errs.push(field::required(
            &Path::new("allocateLoadBalancerNodePorts"),
            "",
        ));
    }

    errs.extend(validate_load_balancer_class(None, spec));
    errs.extend(validate_external_traffic_policy(spec));
    errs.extend(validate_internal_traffic_policy(spec));
    errs.extend(validate_traffic_distribution(spec));
    errs
}

/// The `ExternalName` case of `ValidateService`'s switch on the type.
fn validate_external_name(spec: &Value) -> Vec<field::Error> {
    let sp = spec_path();
    let mut errs = Vec::new();
    if !arr(spec, "clusterIPs").is_empty() {
        errs.push(field::forbidden(
            &sp.child("clusterIPs"),
            "may not be set for ExternalName services",
        ));
    }
    if !arr(spec, "ipFamilies").is_empty() {
        errs.push(field::forbidden(
            &sp.child("ipFamilies"),
            "may not be set for ExternalName services",
        ));
    }
    if has(spec, "ipFamilyPolicy") {
        errs.push(field::forbidden(
            &sp.child("ipFamilyPolicy"),
            "may not be set for ExternalName services",
        ));
    }
    // The value (a CNAME) may have a trailing dot to denote it as fully qualified.
    let name = str_of(spec, "externalName");
    let cname = name.strip_suffix('.').unwrap_or(name);
    let path = sp.child("externalName");
    if cname.is_empty() {
        errs.push(field::required(&path, ""));
    } else {
        errs.extend(invalid_each(&path, cname, is_dns1123_subdomain(cname)));
    }
    errs
}

/// Upstream `validateServicePort`.
fn validate_service_port(
    port: &Value,
    require_name: bool,
    names: &mut BTreeSet<String>,
    path: &Path,
) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let name = str_of(port, "name");
    if require_name && name.is_empty() {
        errs.push(field::required(&path.child("name"), ""));
    } else if !name.is_empty() {
        let name_path = path.child("name");
        errs.extend(invalid_each(&name_path, name, is_dns1123_label(name)));
        if !names.insert(name.to_owned()) {
            errs.push(field::duplicate(&name_path, name));
        }
    }

    let number = int0(port, "port");
    for msg in is_valid_port_num(number) {
        errs.push(field::invalid(&path.child("port"), number, &msg));
    }

    let protocol = str_of(port, "protocol");
    if protocol.is_empty() {
        errs.push(field::required(&path.child("protocol"), ""));
    } else if !PORT_PROTOCOLS.contains(&protocol) {
        errs.push(field::not_supported(
            &path.child("protocol"),
            protocol,
            &PORT_PROTOCOLS,
        ));
    }

    // Upstream `ValidatePortNumOrName`.
    let target_path = path.child("targetPort");
    match port.get("targetPort") {
        Some(Value::String(s)) => errs.extend(invalid_each(&target_path, s, is_valid_port_name(s))),
        other => {
            let n = other.and_then(Value::as_i64).unwrap_or(0);
            for msg in is_valid_port_num(n) {
                errs.push(field::invalid(&target_path, n, &msg));
            }
        }
    }

    if let Some(app) = opt_str(port, "appProtocol") {
        errs.extend(invalid_each(
            &path.child("appProtocol"),
            app,
            is_qualified_name(app),
        ));
    }
    errs
}

/// Go's `%#v` of the `core.ServicePort{Protocol: protocol, Port: port}` upstream reports
/// duplicate ports with.
fn service_port_key(protocol: &str, port: i64) -> BadValue {
    BadValue::Raw(format!(
        "core.ServicePort{{Name:\"\", Protocol:{}, AppProtocol:(*string)(nil), Port:{port}, \
         TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}",
        quote(protocol)
    ))
}

/// `ValidateService`'s checks for duplicate node ports and ports, each keyed with the
/// protocol.
fn validate_duplicate_ports(ports: &[Value]) -> Vec<field::Error> {
    let sp = spec_path().child("ports");
    let mut errs = Vec::new();
    let mut node_ports = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let node_port = int0(port, "nodePort");
        if node_port == 0 {
            continue;
        }
        if !node_ports.insert((str_of(port, "protocol"), node_port)) {
            errs.push(field::duplicate(&sp.index(i).child("nodePort"), node_port));
        }
    }
    let mut seen = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let key = (str_of(port, "protocol"), int0(port, "port"));
        if !seen.insert(key) {
            errs.push(field::duplicate(
                &sp.index(i),
                service_port_key(key.0, key.1),
            ));
        }
    }
    errs
}

/// `ValidateService`'s checks of `loadBalancerSourceRanges`, or of the annotation
/// when the field is empty.
fn validate_source_ranges(
    spec: &Value,
    annotations: &BTreeMap<String, String>,
) -> Vec<field::Error> {
    let is_lb = str_of(spec, "type") == "LoadBalancer";
    let mut errs = Vec::new();
    let ranges = arr(spec, "loadBalancerSourceRanges");
    if !ranges.is_empty() {
        // Upstream's path is capitalized.
        let path = spec_path().child("LoadBalancerSourceRanges");
        if !is_lb {
            errs.push(field::forbidden(&path, ONLY_LOAD_BALANCER));
        }
        for (i, value) in ranges.iter().enumerate() {
            // Historically these may be space-padded.
            let value = value.as_str().unwrap_or("").trim();
            errs.extend(is_valid_cidr_for_legacy_field(&path.index(i), value));
        }
    } else if let Some(val) = annotations.get(ANNOTATION_LB_SOURCE_RANGES) {
        let path = Path::new("metadata")
            .child("annotations")
            .key(ANNOTATION_LB_SOURCE_RANGES);
        if !is_lb {
            errs.push(field::forbidden(&path, ONLY_LOAD_BALANCER));
        }
        let val = val.trim();
        if !val.is_empty() {
            for value in val.split(',') {
                errs.extend(is_valid_cidr_for_legacy_field(&path, value.trim()));
            }
        }
    }
    errs
}

/// Upstream `validateClientIPAffinityConfig` and `validateAffinityTimeout`.
fn validate_client_ip_affinity_config(config: Option<&Value>, path: &Path) -> Vec<field::Error> {
    let detail = "when session affinity type is ClientIP";
    let Some(config) = config else {
        return vec![field::required(path, detail)];
    };
    let client_path = path.child("clientIP");
    let Some(client) = obj(config, "clientIP") else {
        return vec![field::required(&client_path, detail)];
    };
    let timeout_path = client_path.child("timeoutSeconds");
    let Some(timeout) = int_of(client, "timeoutSeconds") else {
        return vec![field::required(&timeout_path, detail)];
    };
    if timeout <= 0 || timeout > MAX_CLIENT_IP_AFFINITY_SECONDS {
        let msg = format!("must be greater than 0 and less than {MAX_CLIENT_IP_AFFINITY_SECONDS}");
        return vec![field::invalid(&timeout_path, timeout, &msg)];
    }
    Vec::new()
}

/// Upstream `validateLoadBalancerClassField`: `old` is the old spec on update.
fn validate_load_balancer_class(old: Option<&Value>, spec: &Value) -> Vec<field::Error> {
    let path = spec_path().child("loadBalancerClass");
    let class = opt_str(spec, "loadBalancerClass");
    let is_lb = |s: &Value| str_of(s, "type") == "LoadBalancer";
    let mut errs = Vec::new();
    if let Some(old) = old
        && is_lb(old)
        && is_lb(spec)
        && opt_str(old, "loadBalancerClass") != class
    {
        let value = class.map_or(BadValue::Null, BadValue::from);
        errs.push(field::invalid(&path, value, "may not change once set"));
    }
    match class {
        Some(class) if is_lb(spec) => {
            errs.extend(invalid_each(&path, class, is_qualified_name(class)));
        }
        Some(_) => errs.push(field::forbidden(&path, ONLY_LOAD_BALANCER)),
        None => {}
    }
    errs
}

/// Upstream `validateServiceExternalTrafficPolicy` (with `healthCheckNodePort`).
fn validate_external_traffic_policy(spec: &Value) -> Vec<field::Error> {
    let sp = spec_path();
    let mut errs = Vec::new();
    let policy = str_of(spec, "externalTrafficPolicy");
    let policy_path = sp.child("externalTrafficPolicy");
    if !externally_accessible(spec) {
        if !policy.is_empty() {
            errs.push(field::invalid(
                &policy_path,
                policy,
                "may only be set for externally-accessible services",
            ));
        }
    } else if policy.is_empty() {
        errs.push(field::required(&policy_path, ""));
    } else if !TRAFFIC_POLICIES.contains(&policy) {
        errs.push(field::not_supported(
            &policy_path,
            policy,
            &TRAFFIC_POLICIES,
        ));
    }

    let port = int0(spec, "healthCheckNodePort");
    let port_path = sp.child("healthCheckNodePort");
    if !needs_health_check(spec) {
        if port != 0 {
            errs.push(field::invalid(
                &port_path,
                port,
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ));
        }
    } else if port == 0 {
        errs.push(field::required(&port_path, ""));
    } else {
        for msg in is_valid_port_num(port) {
            errs.push(field::invalid(&port_path, port, &msg));
        }
    }
    errs
}

/// Upstream `validateServiceInternalTrafficFieldsValue`.
fn validate_internal_traffic_policy(spec: &Value) -> Vec<field::Error> {
    let path = spec_path().child("internalTrafficPolicy");
    match opt_str(spec, "internalTrafficPolicy") {
        // Other types are not forbidden for historical reasons.
        None if matches!(
            str_of(spec, "type"),
            "NodePort" | "LoadBalancer" | "ClusterIP"
        ) =>
        {
            vec![field::required(&path, "")]
        }
        Some(policy) if !TRAFFIC_POLICIES.contains(&policy) => {
            vec![field::not_supported(&path, policy, &TRAFFIC_POLICIES)]
        }
        _ => Vec::new(),
    }
}

/// Upstream `validateServiceTrafficDistribution`, `PreferSameTrafficDistribution` off.
fn validate_traffic_distribution(spec: &Value) -> Vec<field::Error> {
    match opt_str(spec, "trafficDistribution") {
        Some(td) if td != "PreferClose" => vec![field::not_supported(
            &spec_path().child("trafficDistribution"),
            td,
            &["PreferClose"],
        )],
        _ => Vec::new(),
    }
}

/// Upstream `validateServiceExternalTrafficFieldsUpdate`.
fn validate_external_traffic_fields_update(old: &Value, new: &Value) -> Vec<field::Error> {
    if needs_health_check(old)
        && needs_health_check(new)
        && int0(old, "healthCheckNodePort") != int0(new, "healthCheckNodePort")
    {
        return vec![field::forbidden(
            &spec_path().child("healthCheckNodePort"),
            "field is immutable",
        )];
    }
    Vec::new()
}

/// Upstream `ValidateServiceUpdate`, without the metadata.
pub fn validate_service_update(new: &Value, old: &Value) -> Vec<field::Error> {
    let (new_spec, old_spec) = (spec_of(new), spec_of(old));
    let mut errs = validate_upgrade_downgrade_cluster_ips(old_spec, new_spec);
    errs.extend(validate_upgrade_downgrade_ip_families(old_spec, new_spec));
    errs.extend(validate_load_balancer_class(Some(old_spec), new_spec));
    errs.extend(validate_external_traffic_fields_update(old_spec, new_spec));
    errs.extend(validate_service(new));
    errs
}

/// Upstream `ValidateServiceStatusUpdate`, without the metadata: upstream
/// `ValidateLoadBalancerStatus` against the new spec.
pub fn validate_service_status_update(new: &Value, old: &Value) -> Vec<field::Error> {
    let _ = old;
    let spec = spec_of(new);
    let status = new.pointer("/status/loadBalancer").unwrap_or(&NULL);
    let ingress_path = Path::new("status").child("loadBalancer").child("ingress");
    let ingress = arr(status, "ingress");
    if str_of(spec, "type") != "LoadBalancer" && !ingress.is_empty() {
        return vec![field::forbidden(
            &ingress_path,
            "may only be used when `spec.type` is 'LoadBalancer'",
        )];
    }
    let mut errs = Vec::new();
    for (i, ing) in ingress.iter().enumerate() {
        let path = ingress_path.index(i);
        let ip = str_of(ing, "ip");
        if !ip.is_empty() {
            errs.extend(is_valid_ip_for_legacy_field(&path.child("ip"), ip));
        }
        let mode_path = path.child("ipMode");
        match opt_str(ing, "ipMode") {
            None if !ip.is_empty() => errs.push(field::required(
                &mode_path,
                "must be specified when `ip` is set",
            )),
            None => {}
            Some(_) if ip.is_empty() => errs.push(field::forbidden(
                &mode_path,
                "may not be specified when `ip` is not set",
            )),
            Some(mode) if !IP_MODES.contains(&mode) => {
                errs.push(field::not_supported(&mode_path, mode, &IP_MODES));
            }
            Some(_) => {}
        }
        let hostname = str_of(ing, "hostname");
        if !hostname.is_empty() {
            let host_path = path.child("hostname");
            errs.extend(invalid_each(
                &host_path,
                hostname,
                is_dns1123_subdomain(hostname),
            ));
            if parse_ip_sloppy(hostname).is_some() {
                errs.push(field::invalid(
                    &host_path,
                    hostname,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errs
}
