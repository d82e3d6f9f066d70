//! Upstream's `k8s.io/kube-aggregator/pkg/apis/apiregistration/validation`:
//! `ValidateAPIService` and `ValidateAPIServiceStatus`, with their messages and field
//! paths, on the JSON object.

use base64::Engine;
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::validate_path_segment_name;
use kas_apimachinery::validation::{is_dns1035_label, is_dns1123_subdomain, is_valid_port_num};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::validate_object_meta;
use serde_json::Value;

use super::{group_version, priorities, service};

/// Upstream's `ValidateAPIService`.
pub fn validate_api_service(obj: &Value) -> FieldErrors {
    let (group, version) = group_version(obj);
    let mut errs = validate_object_meta(obj, false, validate_path_segment_name);
    let name = kas_registry::meta::name(obj);
    let name_path = "metadata.name";
    // Upstream's name function: a path segment, and exactly `version.group`.
    let required = format!("{version}.{group}");
    if !name.is_empty()
        && !errs.iter().any(|e| e.field.as_deref() == Some(name_path))
        && name != required
    {
        let at = errs
            .iter()
            .take_while(|e| e.field.as_deref() == Some("metadata.generateName"))
            .count();
        let msg = format!(
            "must be `spec.version+\".\"+spec.group`: {}",
            quote(&required)
        );
        errs.insert(
            at,
            field::invalid(&Path::new("metadata").child("name"), name, &msg).to_cause(),
        );
    }
    let spec = Path::new("spec");
    let mut push = |e: field::Error| errs.push(e.to_cause());
    if group.is_empty() && version != "v1" {
        push(field::required(
            &spec.child("group"),
            "only v1 may have an empty group and it better be legacy kube",
        ));
    }
    if !group.is_empty() {
        for msg in is_dns1123_subdomain(group) {
            push(field::invalid(&spec.child("group"), group, &msg));
        }
    }
    for msg in is_dns1035_label(version) {
        push(field::invalid(&spec.child("version"), version, &msg));
    }
    let (group_priority, version_priority) = priorities(obj);
    if group_priority <= 0 || group_priority > 20000 {
        push(field::invalid(
            &spec.child("groupPriorityMinimum"),
            group_priority,
            "must be positive and less than 20000",
        ));
    }
    if version_priority <= 0 || version_priority > 1000 {
        push(field::invalid(
            &spec.child("versionPriority"),
            version_priority,
            "must be positive and less than 1000",
        ));
    }
    let insecure = obj
        .pointer("/spec/insecureSkipTLSVerify")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let ca_bytes = ca_bundle_len(obj);
    let Some(svc) = service(obj) else {
        if ca_bytes != 0 {
            push(field::invalid(
                &spec.child("caBundle"),
                format!("{ca_bytes} bytes"),
                "local APIServices may not have a caBundle",
            ));
        }
        if insecure {
            push(field::invalid(
                &spec.child("insecureSkipTLSVerify"),
                insecure,
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return errs;
    };
    let service_path = spec.child("service");
    if svc.namespace.is_empty() {
        push(field::required(&service_path.child("namespace"), ""));
    }
    if svc.name.is_empty() {
        push(field::required(&service_path.child("name"), ""));
    }
    let port_errs = is_valid_port_num(svc.port);
    if !port_errs.is_empty() {
        push(field::invalid(
            &service_path.child("port"),
            svc.port,
            &format!("port is not valid: {}", port_errs.join(", ")),
        ));
    }
    if insecure && ca_bytes > 0 {
        push(field::invalid(
            &spec.child("insecureSkipTLSVerify"),
            insecure,
            "may not be true if caBundle is present",
        ));
    }
    errs
}

/// The decoded length of `spec.caBundle` (base64 in JSON; decoding already checked it).
fn ca_bundle_len(obj: &Value) -> usize {
    let Some(text) = obj.pointer("/spec/caBundle").and_then(Value::as_str) else {
        return 0;
    };
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_or(text.len(), |b| b.len())
}

/// Upstream's `ValidateAPIServiceStatus`.
pub fn validate_status(obj: &Value) -> FieldErrors {
    let path = Path::new("status").child("conditions");
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, c)| {
            let status = c.get("status").and_then(Value::as_str).unwrap_or("");
            (!matches!(status, "True" | "False" | "Unknown")).then(|| {
                field::not_supported(
                    &path.index(i).child("status"),
                    status,
                    &["True", "False", "Unknown"],
                )
                .to_cause()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(errs: &FieldErrors) -> Vec<String> {
        errs.iter()
            .map(|e| {
                format!(
                    "{}: {}",
                    e.field.as_deref().unwrap_or(""),
                    e.message.as_deref().unwrap_or("")
                )
            })
            .collect()
    }

    fn api_service(name: &str, spec: Value) -> Value {
        json!({"metadata": {"name": name}, "spec": spec})
    }

    #[test]
    fn a_valid_service_backed_api_service() {
        let obj = api_service(
            "v1alpha1.wardle.example.com",
            json!({"group": "wardle.example.com", "version": "v1alpha1",
                   "groupPriorityMinimum": 1000, "versionPriority": 15,
                   "service": {"namespace": "wardle", "name": "api", "port": 443},
                   "caBundle": "Y2E="}),
        );
        assert!(validate_api_service(&obj).is_empty());
    }

    #[test]
    fn the_name_must_be_version_dot_group() {
        let obj = api_service(
            "v1.wrong",
            json!({"group": "example.com", "version": "v1",
                   "groupPriorityMinimum": 1, "versionPriority": 1}),
        );
        assert_eq!(
            messages(&validate_api_service(&obj)),
            [
                "metadata.name: Invalid value: \"v1.wrong\": must be `spec.version+\".\"+spec.group`: \"v1.example.com\""
            ]
        );
    }

    #[test]
    fn upstream_messages_for_each_rule() {
        let obj = api_service(
            "V1.",
            json!({"group": "", "version": "V1", "groupPriorityMinimum": 0,
                   "versionPriority": 1001, "insecureSkipTLSVerify": true, "caBundle": "Y2E="}),
        );
        assert_eq!(
            messages(&validate_api_service(&obj)),
            [
                "spec.group: Required value: only v1 may have an empty group and it better be legacy kube",
                "spec.version: Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
                "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
                "spec.caBundle: Invalid value: \"2 bytes\": local APIServices may not have a caBundle",
                "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
            ]
        );
        let obj = api_service(
            "v1.example.com",
            json!({"group": "example.com", "version": "v1", "groupPriorityMinimum": 1,
                   "versionPriority": 1, "insecureSkipTLSVerify": true, "caBundle": "Y2E=",
                   "service": {"namespace": "", "name": "", "port": 70000}}),
        );
        assert_eq!(
            messages(&validate_api_service(&obj)),
            [
                "spec.service.namespace: Required value",
                "spec.service.name: Required value",
                "spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive",
                "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present",
            ]
        );
    }

    #[test]
    fn condition_statuses_are_checked() {
        let obj = json!({"status": {"conditions": [
            {"type": "Available", "status": "True"}, {"type": "Available", "status": "Maybe"}]}});
        assert_eq!(
            messages(&validate_status(&obj)),
            [
                "status.conditions[1].status: Unsupported value: \"Maybe\": supported values: \"True\", \"False\", \"Unknown\""
            ]
        );
    }
}
