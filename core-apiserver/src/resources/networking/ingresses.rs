//! networking.k8s.io/v1 Ingress, after upstream's `pkg/registry/networking/ingress`
//! (strategy, status strategy, the `kubernetes.io/ingress.class` warning),
//! `ValidateIngressCreate`, `ValidateIngressUpdate`, `ValidateIngressStatusUpdate` and
//! `printIngress`.

use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::{
    name_is_dns_subdomain, name_is_dns1035_label, validate_path_segment_name,
};
use kas_apimachinery::validation::{
    is_dns1123_subdomain, is_valid_ip_for_legacy_field, is_valid_port_name, is_valid_port_num,
    parse_ip_sloppy,
};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Value, json};

use super::is_wildcard_dns1123_subdomain;
use crate::resources::apps::common::{
    causes, keep_status_and_bump_generation, reset_status_and_generation,
};
use crate::resources::services::printer::load_balancer_ips;

const fn column(name: &'static str, description: &'static str) -> TableColumn {
    TableColumn {
        name,
        type_: "string",
        format: "",
        description,
        priority: 0,
    }
}

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "networking.k8s.io",
    version: "v1",
    kind: "Ingress",
    list_kind: "IngressList",
    plural: "ingresses",
    singular: "ingress",
    short_names: &["ing"],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: &[
        NAME_COLUMN,
        column(
            "Class",
            "The name of the IngressClass resource that should be used for additional configuration",
        ),
        column(
            "Hosts",
            "Hosts that incoming requests are matched against before the ingress rule",
        ),
        column(
            "Address",
            "Address is a list containing ingress points for the load-balancer",
        ),
        column("Ports", "Ports of TLS configurations that open"),
        AGE_COLUMN,
    ],
    table_name_and_age: false,
    storage_resource: "ingresses",
    schema: Some(&kas_api::networking::v1::INGRESS),
    list_schema: Some(&kas_api::networking::v1::INGRESS_LIST),
};

/// Upstream `annotationIngressClass`.
const ANNOTATION_INGRESS_CLASS: &str = "kubernetes.io/ingress.class";

/// Upstream `supportedPathTypes`, sorted.
const PATH_TYPES: &[&str] = &["Exact", "ImplementationSpecific", "Prefix"];
const INVALID_PATH_SEQUENCES: &[&str] = &["//", "/./", "/../", "%2f", "%2F"];
const INVALID_PATH_SUFFIXES: &[&str] = &["/..", "/."];

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `IngressValidationOptions`.
#[derive(Clone, Copy, Default)]
struct Options {
    allow_invalid_secret_name: bool,
    allow_invalid_wildcard_host_rule: bool,
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn items<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn set<'a>(v: &'a Value, pointer: &str) -> Option<&'a Value> {
    v.pointer(pointer).filter(|x| !x.is_null())
}

/// Upstream `validateIngressBackend`.
fn validate_backend(backend: &Value, path: &Path) -> Vec<field::Error> {
    let resource = set(backend, "/resource");
    let service = set(backend, "/service");
    let mut errs = Vec::new();
    match (resource, service) {
        (Some(_), Some(_)) => {
            errs.push(field::invalid(
                path,
                "",
                "cannot set both resource and service backends",
            ));
        }
        (Some(res), None) => {
            let p = path.child("resource");
            if let Some(group) = res.get("apiGroup").and_then(Value::as_str) {
                for msg in is_dns1123_subdomain(group) {
                    errs.push(field::invalid(&p.child("apiGroup"), group, &msg));
                }
            }
            for f in ["kind", "name"] {
                let v = str_at(res, &format!("/{f}"));
                if v.is_empty() {
                    errs.push(field::required(&p.child(f), ""));
                } else {
                    for msg in validate_path_segment_name(v, false) {
                        errs.push(field::invalid(&p.child(f), v, &msg));
                    }
                }
            }
        }
        (None, Some(svc)) => {
            let name = str_at(svc, "/name");
            let name_path = path.child("service").child("name");
            if name.is_empty() {
                errs.push(field::required(&name_path, ""));
            } else {
                for msg in name_is_dns1035_label(name, false) {
                    errs.push(field::invalid(&name_path, name, &msg));
                }
            }
            let port_name = str_at(svc, "/port/name");
            let port_number = svc
                .pointer("/port/number")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let port_path = path.child("service").child("port");
            match (port_name.is_empty(), port_number == 0) {
                (false, false) => errs.push(field::invalid(
                    path,
                    "",
                    "cannot set both port name & port number",
                )),
                (false, true) => {
                    for msg in is_valid_port_name(port_name) {
                        errs.push(field::invalid(&port_path.child("name"), port_name, &msg));
                    }
                }
                (true, false) => {
                    for msg in is_valid_port_num(port_number) {
                        errs.push(field::invalid(
                            &port_path.child("number"),
                            port_number,
                            &msg,
                        ));
                    }
                }
                (true, true) => errs.push(field::required(path, "port name or number is required")),
            }
        }
        (None, None) => errs.push(field::invalid(
            path,
            "",
            "resource or service backend is required",
        )),
    }
    errs
}

/// Upstream `validateHTTPIngressPath`.
fn validate_http_path(p: &Value, path: &Path) -> Vec<field::Error> {
    let Some(path_type) = set(p, "/pathType") else {
        return vec![field::required(
            &path.child("pathType"),
            "pathType must be specified",
        )];
    };
    let path_type = path_type.as_str().unwrap_or("");
    let value = str_at(p, "/path");
    let path_path = path.child("path");
    let mut errs = Vec::new();
    match path_type {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errs.push(field::invalid(
                    &path_path,
                    value,
                    "must be an absolute path",
                ));
            }
            if !value.is_empty() {
                for seq in INVALID_PATH_SEQUENCES {
                    if value.contains(seq) {
                        let msg = format!("must not contain '{seq}'");
                        errs.push(field::invalid(&path_path, value, &msg));
                    }
                }
                for suffix in INVALID_PATH_SUFFIXES {
                    if value.ends_with(suffix) {
                        let msg = format!("cannot end with '{suffix}'");
                        errs.push(field::invalid(&path_path, value, &msg));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errs.push(field::invalid(
                    &path_path,
                    value,
                    "must be an absolute path",
                ));
            }
        }
        other => errs.push(field::not_supported(
            &path.child("pathType"),
            other,
            PATH_TYPES,
        )),
    }
    let empty = json!({});
    let backend = set(p, "/backend").unwrap_or(&empty);
    errs.extend(validate_backend(backend, &path.child("backend")));
    errs
}

/// Upstream `validateIngressRuleValue`.
fn validate_rule_value(rule: &Value, path: &Path) -> Vec<field::Error> {
    let Some(http) = set(rule, "/http") else {
        return Vec::new();
    };
    let path = path.child("http");
    let paths = items(http, "/paths");
    let mut errs = Vec::new();
    if paths.is_empty() {
        errs.push(field::required(&path.child("paths"), ""));
    }
    for (i, p) in paths.iter().enumerate() {
        errs.extend(validate_http_path(p, &path.child("paths").index(i)));
    }
    errs
}

/// Upstream `validateIngressRules`.
fn validate_rules(rules: &[Value], path: &Path, opts: Options) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let host = str_at(rule, "/host");
        let host_path = path.index(i).child("host");
        let mut wildcard = false;
        if !host.is_empty() {
            if parse_ip_sloppy(host).is_some() {
                errs.push(field::invalid(
                    &host_path,
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
            let msgs = if host.contains('*') {
                wildcard = true;
                is_wildcard_dns1123_subdomain(host)
            } else {
                is_dns1123_subdomain(host)
            };
            for msg in msgs {
                errs.push(field::invalid(&host_path, host, &msg));
            }
        }
        if !wildcard || !opts.allow_invalid_wildcard_host_rule {
            errs.extend(validate_rule_value(rule, &path.index(i)));
        }
    }
    errs
}

/// Upstream `validateTLSSecretName`.
fn tls_secret_name_errors(name: &str) -> Vec<String> {
    if name.is_empty() {
        return Vec::new();
    }
    name_is_dns_subdomain(name, false)
}

/// Upstream `validateIngressTLS`.
fn validate_tls(tls: &[Value], path: &Path, opts: Options) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for (t, item) in tls.iter().enumerate() {
        for (i, host) in items(item, "/hosts").iter().enumerate() {
            let host = host.as_str().unwrap_or("");
            let msgs = if host.contains('*') {
                is_wildcard_dns1123_subdomain(host)
            } else {
                is_dns1123_subdomain(host)
            };
            for msg in msgs {
                errs.push(field::invalid(
                    &path.index(t).child("hosts").index(i),
                    host,
                    &msg,
                ));
            }
        }
        if !opts.allow_invalid_secret_name {
            let secret = str_at(item, "/secretName");
            for msg in tls_secret_name_errors(secret) {
                errs.push(field::invalid(
                    &path.index(t).child("secretName"),
                    secret,
                    &msg,
                ));
            }
        }
    }
    errs
}

/// Upstream `ValidateIngressSpec`.
fn validate_spec(obj: &Value, opts: Options) -> Vec<field::Error> {
    let path = Path::new("spec");
    let rules = items(obj, "/spec/rules");
    let default_backend = set(obj, "/spec/defaultBackend");
    let mut errs = Vec::new();
    if rules.is_empty() && default_backend.is_none() {
        let shown = match set(obj, "/spec/rules") {
            Some(_) => "[]networking.IngressRule{}",
            None => "[]networking.IngressRule(nil)",
        };
        errs.push(field::invalid(
            &path,
            BadValue::Raw(shown.to_owned()),
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(backend) = default_backend {
        errs.extend(validate_backend(backend, &path.child("defaultBackend")));
    }
    if !rules.is_empty() {
        errs.extend(validate_rules(rules, &path.child("rules"), opts));
    }
    let tls = items(obj, "/spec/tls");
    if !tls.is_empty() {
        errs.extend(validate_tls(tls, &path.child("tls"), opts));
    }
    if let Some(class) = set(obj, "/spec/ingressClassName") {
        let class = class.as_str().unwrap_or("");
        for msg in name_is_dns_subdomain(class, false) {
            errs.push(field::invalid(&path.child("ingressClassName"), class, &msg));
        }
    }
    errs
}

/// Upstream `validateIngress`.
fn validate_ingress(obj: &Value, opts: Options) -> FieldErrors {
    let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
    errs.extend(causes(validate_spec(obj, opts)));
    errs
}

/// The options `ValidateIngressUpdate` derives from the stored ingress (1.33 has no
/// relaxed service names).
fn update_options(old: &Value) -> Options {
    let allow_invalid_secret_name = items(old, "/spec/tls")
        .iter()
        .any(|t| !tls_secret_name_errors(str_at(t, "/secretName")).is_empty());
    let allow_invalid_wildcard_host_rule = items(old, "/spec/rules").iter().any(|r| {
        str_at(r, "/host").contains('*') && !validate_rule_value(r, &Path::new("")).is_empty()
    });
    Options {
        allow_invalid_secret_name,
        allow_invalid_wildcard_host_rule,
    }
}

/// Upstream `ValidateIngressLoadBalancerStatus`.
fn validate_load_balancer_status(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("status").child("loadBalancer").child("ingress");
    let mut errs = Vec::new();
    for (i, ingress) in items(obj, "/status/loadBalancer/ingress")
        .iter()
        .enumerate()
    {
        let ip = str_at(ingress, "/ip");
        if !ip.is_empty() {
            errs.extend(is_valid_ip_for_legacy_field(&path.index(i).child("ip"), ip));
        }
        let hostname = str_at(ingress, "/hostname");
        if !hostname.is_empty() {
            let p = path.index(i).child("hostname");
            for msg in is_dns1123_subdomain(hostname) {
                errs.push(field::invalid(&p, hostname, &msg));
            }
            if parse_ip_sloppy(hostname).is_some() {
                errs.push(field::invalid(
                    &p,
                    hostname,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errs
}

/// Upstream `formatHosts`: up to three hosts, `*` when there are none.
fn format_hosts(rules: &[Value]) -> String {
    const MAX: usize = 3;
    let mut list = Vec::new();
    let mut more = false;
    for rule in rules {
        if list.len() == MAX {
            more = true;
        }
        let host = str_at(rule, "/host");
        if !more && !host.is_empty() {
            list.push(host);
        }
    }
    if list.is_empty() {
        return "*".to_owned();
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", rules.len().saturating_sub(MAX))
    } else {
        joined
    }
}

impl kas_registry::Strategy for Strategy {
    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        reset_status_and_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = new.get("spec") != old.get("spec");
        keep_status_and_bump_generation(new, old, changed);
    }

    /// `ValidateIngressCreate`.
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_ingress(obj, Options::default());
        let annotation = obj
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(ANNOTATION_INGRESS_CLASS))
            .and_then(Value::as_str);
        if let (Some(annotation), Some(class)) = (
            annotation,
            set(obj, "/spec/ingressClassName").and_then(Value::as_str),
        ) && annotation != class
        {
            errs.extend(causes(vec![field::invalid(
                &Path::new("annotations").child(ANNOTATION_INGRESS_CLASS),
                annotation,
                "must match `ingressClassName` when both are specified",
            )]));
        }
        errs
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        let annotated = obj
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(ANNOTATION_INGRESS_CLASS))
            .is_some();
        if annotated && set(obj, "/spec/ingressClassName").is_none() {
            return vec![format!(
                "annotation {:?} is deprecated, please use 'spec.ingressClassName' instead",
                ANNOTATION_INGRESS_CLASS
            )];
        }
        Vec::new()
    }

    /// `ValidateIngressUpdate`.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(validate_ingress(new, update_options(old)));
        errs
    }

    /// `ValidateIngressStatusUpdate`.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validate_load_balancer_status(new)));
        errs
    }

    /// `printIngress` (the server's tables are wide: the address is not clipped).
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let class = set(obj, "/spec/ingressClassName")
            .and_then(Value::as_str)
            .unwrap_or("<none>");
        let ports = if items(obj, "/spec/tls").is_empty() {
            "80"
        } else {
            "80, 443"
        };
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(class),
            json!(format_hosts(items(obj, "/spec/rules"))),
            json!(load_balancer_ips(obj).join(",")),
            json!(ports),
            json!(kas_endpoints::responsewriters::table::age(
                kas_registry::meta::str_field(obj, "creationTimestamp")
            )),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn ingress(spec: Value) -> Value {
        json!({"metadata": {"name": "web", "namespace": "ns"}, "spec": spec})
    }

    fn rule(host: &str, path: Value) -> Value {
        json!({"host": host, "http": {"paths": [path]}})
    }

    fn svc_path(path: &str) -> Value {
        json!({"path": path, "pathType": "Prefix",
            "backend": {"service": {"name": "svc1", "port": {"number": 8080}}}})
    }

    #[test]
    fn a_valid_ingress_and_its_row() {
        let mut obj = ingress(json!({"rules": [rule("foo.com", svc_path("/bar"))],
            "tls": [{"hosts": ["foo.com"], "secretName": "tls"}]}));
        assert!(Strategy.validate(&obj).is_empty());
        Strategy.prepare_for_create(&mut obj);
        assert_eq!(obj["metadata"]["generation"], 1);
        assert_eq!(obj["status"], json!({}));
        obj["status"] = json!({"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb.example.com"}]}});
        let cells = Strategy.table_cells(&obj);
        assert_eq!(
            cells[..5],
            [
                json!("web"),
                json!("<none>"),
                json!("foo.com"),
                json!("10.0.0.2,lb.example.com"),
                json!("80, 443")
            ]
        );
        assert_eq!(format_hosts(&[json!({}), json!({})]), "*");
        let many: Vec<Value> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|h| json!({"host": h}))
            .collect();
        assert_eq!(format_hosts(&many), "a,b,c + 2 more...");
    }

    #[test]
    fn rules_paths_and_backends() {
        let obj = ingress(json!({"rules": [
            rule("1.2.3.4", svc_path("bar")),
            rule("*.*.foo.com", json!({"path": "/a//b/..", "pathType": "Exact",
                "backend": {"service": {"name": "Svc", "port": {"name": "http", "number": 80}}}})),
            rule("foo.com", json!({"path": "/", "pathType": "Regex", "backend": {}})),
            rule("foo.com", json!({"path": "/", "backend": {}})),
            rule("foo.com", json!({"path": "/", "pathType": "ImplementationSpecific",
                "backend": {"service": {"name": "s"}, "resource": {"kind": "K", "name": "n"}}})),
            rule("foo.com", json!({"path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": "s", "port": {"number": 70000}}}})),
            rule("foo.com", json!({"path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": "s", "port": {}}}})),
        ]}));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "spec.rules[0].host: Invalid value: \"1.2.3.4\": must be a DNS name, not an IP address",
                "spec.rules[0].http.paths[0].path: Invalid value: \"bar\": must be an absolute path",
                "spec.rules[1].host: Invalid value: \"*.*.foo.com\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.rules[1].http.paths[0].path: Invalid value: \"/a//b/..\": must not contain '//'",
                "spec.rules[1].http.paths[0].path: Invalid value: \"/a//b/..\": cannot end with '/..'",
                "spec.rules[1].http.paths[0].backend.service.name: Invalid value: \"Svc\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                "spec.rules[1].http.paths[0].backend: Invalid value: \"\": cannot set both port name & port number",
                "spec.rules[2].http.paths[0].pathType: Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\"",
                "spec.rules[2].http.paths[0].backend: Invalid value: \"\": resource or service backend is required",
                "spec.rules[3].http.paths[0].pathType: Required value: pathType must be specified",
                "spec.rules[4].http.paths[0].backend: Invalid value: \"\": cannot set both resource and service backends",
                "spec.rules[5].http.paths[0].backend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.rules[6].http.paths[0].backend: Required value: port name or number is required",
            ]
        );
    }

    #[test]
    fn spec_class_tls_and_annotation() {
        assert_eq!(
            messages(&Strategy.validate(&ingress(json!({})))),
            [
                "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"
            ]
        );
        let mut obj = ingress(json!({"ingressClassName": "nginx",
            "defaultBackend": {"resource": {"apiGroup": "k8s.example.com", "kind": "Bucket", "name": "b"}},
            "tls": [{"hosts": ["*.foo.com", "Foo"], "secretName": "Bad_Name"}]}));
        obj["metadata"]["annotations"] = json!({"kubernetes.io/ingress.class": "other"});
        let msgs = messages(&Strategy.validate(&obj));
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert!(msgs[0].starts_with(
            "spec.tls[0].hosts[1]: Invalid value: \"Foo\": a lowercase RFC 1123 subdomain"
        ));
        assert!(msgs[1].starts_with("spec.tls[0].secretName: Invalid value: \"Bad_Name\""));
        assert_eq!(
            msgs[2],
            "annotations.kubernetes.io/ingress.class: Invalid value: \"other\": must match `ingressClassName` when both are specified"
        );
        assert!(Strategy.warnings_on_create(&obj).is_empty());
        obj["spec"]
            .as_object_mut()
            .unwrap()
            .remove("ingressClassName");
        assert_eq!(
            Strategy.warnings_on_create(&obj),
            [
                "annotation \"kubernetes.io/ingress.class\" is deprecated, please use 'spec.ingressClassName' instead"
            ]
        );
        // A stored invalid secret name may stay.
        let old = obj.clone();
        assert_eq!(Strategy.validate_update(&obj, &old).len(), 1);
    }

    #[test]
    fn stored_invalid_wildcard_rules_may_stay() {
        let obj = ingress(json!({"rules": [{"host": "*.foo.com", "http": {"paths": []}}]}));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            ["spec.rules[0].http.paths: Required value"]
        );
        assert!(Strategy.validate_update(&obj, &obj).is_empty());
        let fine = ingress(json!({"rules": [rule("*.foo.com", svc_path("/"))]}));
        assert_eq!(Strategy.validate_update(&obj, &fine).len(), 1);
    }

    #[test]
    fn updates_keep_status_and_status_is_checked() {
        let mut old = ingress(json!({"rules": [rule("foo.com", svc_path("/"))]}));
        Strategy.prepare_for_create(&mut old);
        old["status"] = json!({"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}});
        let mut new = ingress(json!({"rules": [rule("bar.com", svc_path("/"))]}));
        new["metadata"]["generation"] = json!(7);
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(new["status"], old["status"]);
        let mut status = old.clone();
        status["status"] =
            json!({"loadBalancer": {"ingress": [{"ip": "nope"}, {"hostname": "1.2.3.4"}]}});
        assert_eq!(
            messages(&Strategy.validate_status_update(&status, &old)),
            [
                "status.loadBalancer.ingress[0].ip: Invalid value: \"nope\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "status.loadBalancer.ingress[1].hostname: Invalid value: \"1.2.3.4\": must be a DNS name, not an IP address",
            ]
        );
    }
}
