//! networking.k8s.io/v1 IPAddress, after upstream's `pkg/registry/networking/ipaddress`,
//! `ValidateIPAddress`, `ValidateIPAddressUpdate` and `printIPAddress`. The Services'
//! allocator (`services::alloc`) keeps each cluster IP as one of these objects under the
//! same key, so an IPAddress created here reserves its IP, and a Service's shows here.

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::path::is_valid_path_segment_name;
use kas_apimachinery::validation::{is_dns1123_subdomain, is_valid_ip};
use kas_registry::strategy::{FieldErrors, causes};
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "networking.k8s.io",
    version: "v1",
    kind: "IPAddress",
    list_kind: "IPAddressList",
    plural: "ipaddresses",
    singular: "ipaddress",
    short_names: &["ip"],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[TableColumn {
        name: "ParentRef",
        type_: "string",
        format: "",
        description: kas_api::networking::v1::IP_ADDRESS_SPEC.doc("parentRef"),
        priority: 0,
    }],
    table_name_and_age: true,
    storage_resource: "ipaddresses",
    schema: Some(&kas_api::networking::v1::IP_ADDRESS),
    list_schema: Some(&kas_api::networking::v1::IP_ADDRESS_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `ValidateIPAddressName`: the name is the IP, strictly.
fn validate_name(name: &str, _prefix: bool) -> Vec<String> {
    is_valid_ip(&Path::new(""), name)
        .into_iter()
        .map(|e| e.detail)
        .collect()
}

/// Upstream `validateIPAddressParentReference`.
fn validate_parent_ref(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("spec").child("parentRef");
    let Some(parent) = obj.pointer("/spec/parentRef").filter(|p| !p.is_null()) else {
        return vec![field::required(&path, "")];
    };
    let s = |k: &str| parent.get(k).and_then(Value::as_str).unwrap_or("");
    let mut errs = Vec::new();
    if !s("group").is_empty() {
        for msg in is_dns1123_subdomain(s("group")) {
            errs.push(field::invalid(&path.child("group"), s("group"), &msg));
        }
    }
    for key in ["resource", "name"] {
        if s(key).is_empty() {
            errs.push(field::required(&path.child(key), ""));
        } else {
            for msg in is_valid_path_segment_name(s(key)) {
                errs.push(field::invalid(&path.child(key), s(key), &msg));
            }
        }
    }
    if !s("namespace").is_empty() {
        for msg in is_valid_path_segment_name(s("namespace")) {
            errs.push(field::invalid(
                &path.child("namespace"),
                s("namespace"),
                &msg,
            ));
        }
    }
    errs
}

impl kas_registry::Strategy for Strategy {
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, false, validate_name);
        errs.extend(causes(validate_parent_ref(obj)));
        errs
    }

    /// `ValidateIPAddressUpdate`: the metadata, and the parent reference unchanged.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        if new.pointer("/spec/parentRef") != old.pointer("/spec/parentRef") {
            let value = new
                .pointer("/spec/parentRef")
                .cloned()
                .unwrap_or(Value::Null);
            errs.extend(causes(vec![field::invalid(
                &Path::new("spec").child("parentRef"),
                field::BadValue::Raw(go_parent_ref(&value)),
                "field is immutable",
            )]));
        }
        errs
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// Upstream `printIPAddress`: `resource[.group]/[namespace/]name`, else `<none>`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        vec![json!(parent_ref_cell(obj))]
    }
}

/// How a field error prints the internal `*ParentReference` (Go's `%#v` of the struct it
/// points to; `null` for nil).
fn go_parent_ref(parent: &Value) -> String {
    if parent.is_null() {
        return "null".to_owned();
    }
    let s = |k: &str| parent.get(k).and_then(Value::as_str).unwrap_or("");
    format!(
        "networking.ParentReference{{Group:{:?}, Resource:{:?}, Namespace:{:?}, Name:{:?}}}",
        s("group"),
        s("resource"),
        s("namespace"),
        s("name")
    )
}

fn parent_ref_cell(obj: &Value) -> String {
    let Some(parent) = obj.pointer("/spec/parentRef").filter(|p| !p.is_null()) else {
        return "<none>".to_owned();
    };
    let s = |k: &str| parent.get(k).and_then(Value::as_str).unwrap_or("");
    let mut cell = if s("group").is_empty() {
        s("resource").to_lowercase()
    } else {
        format!("{}.{}", s("resource"), s("group")).to_lowercase()
    };
    if !s("namespace").is_empty() {
        cell.push('/');
        cell.push_str(s("namespace"));
    }
    cell.push('/');
    cell.push_str(s("name"));
    cell
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn ip(name: &str, parent: Value) -> Value {
        json!({"metadata": {"name": name}, "spec": {"parentRef": parent}})
    }

    #[test]
    fn names_are_canonical_ips_and_parents_required() {
        let parent =
            json!({"group": "", "resource": "services", "namespace": "default", "name": "web"});
        assert!(
            Strategy
                .validate(&ip("10.0.0.7", parent.clone()))
                .is_empty()
        );
        assert_eq!(
            messages(&Strategy.validate(&ip("2001:DB8::1", parent.clone()))),
            [
                "metadata.name: Invalid value: \"2001:DB8::1\": must be in canonical form (\"2001:db8::1\")"
            ]
        );
        assert_eq!(
            messages(&Strategy.validate(&ip("010.0.0.7", parent.clone()))),
            ["metadata.name: Invalid value: \"010.0.0.7\": must not have leading 0s"]
        );
        assert_eq!(
            messages(&Strategy.validate(&ip("10.0.0.7", json!({"resource": "services"})))),
            ["spec.parentRef.name: Required value"]
        );
        assert_eq!(
            parent_ref_cell(&ip("10.0.0.7", parent)),
            "services/default/web"
        );
    }
}
