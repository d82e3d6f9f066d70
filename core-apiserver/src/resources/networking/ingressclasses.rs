//! networking.k8s.io/v1 IngressClass, after upstream's `pkg/registry/networking/ingressclass`,
//! `SetDefaults_IngressClass`, `ValidateIngressClass`, `ValidateIngressClassUpdate` and
//! `printIngressClass`.

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::is_dns1123_subdomain;
use kas_apimachinery::validation::meta::{
    name_is_dns_subdomain, validate_namespace_name, validate_path_segment_name,
};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

use super::is_domain_prefixed_path;
use crate::resources::apps::common::causes;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "networking.k8s.io",
    version: "v1",
    kind: "IngressClass",
    list_kind: "IngressClassList",
    plural: "ingressclasses",
    singular: "ingressclass",
    short_names: &[],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        TableColumn {
            name: "Controller",
            type_: "string",
            format: "",
            description: "Controller that is responsible for handling this class",
            priority: 0,
        },
        TableColumn {
            name: "Parameters",
            type_: "string",
            format: "",
            description: "A reference to a resource with additional parameters",
            priority: 0,
        },
    ],
    table_name_and_age: true,
    storage_resource: "ingressclasses",
    schema: Some(&kas_api::networking::v1::INGRESS_CLASS),
    list_schema: Some(&kas_api::networking::v1::INGRESS_CLASS_LIST),
};

/// Upstream `maxLenIngressClassController`.
const MAX_LEN_CONTROLLER: usize = 250;

/// Upstream `supportedIngressClassParametersReferenceScopes`, sorted.
const SCOPES: &[&str] = &["Cluster", "Namespace"];

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

/// Upstream `validateIngressClassParametersReference`.
fn validate_parameters(params: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if let Some(group) = str_at(params, "/apiGroup") {
        for msg in is_dns1123_subdomain(group) {
            errs.push(field::invalid(&path.child("apiGroup"), group, &msg));
        }
    }
    for f in ["kind", "name"] {
        let v = str_at(params, &format!("/{f}")).unwrap_or("");
        if v.is_empty() {
            errs.push(field::required(&path.child(f), ""));
        } else {
            for msg in validate_path_segment_name(v, false) {
                errs.push(field::invalid(&path.child(f), v, &msg));
            }
        }
    }
    let Some(scope) = str_at(params, "/scope") else {
        errs.push(field::required(&path.child("scope"), ""));
        return errs;
    };
    let namespace = str_at(params, "/namespace");
    match scope {
        "Namespace" => match namespace {
            None => errs.push(field::required(
                &path.child("namespace"),
                "`parameters.scope` is set to 'Namespace'",
            )),
            Some(ns) => {
                for msg in validate_namespace_name(ns, false) {
                    errs.push(field::invalid(&path.child("namespace"), ns, &msg));
                }
            }
        },
        "Cluster" => {
            if namespace.is_some() {
                errs.push(field::forbidden(
                    &path.child("namespace"),
                    "`parameters.scope` is set to 'Cluster'",
                ));
            }
        }
        other => errs.push(field::not_supported(&path.child("scope"), other, SCOPES)),
    }
    errs
}

/// Upstream `validateIngressClassSpec`.
fn validate_spec(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("spec");
    let controller = str_at(obj, "/spec/controller").unwrap_or("");
    let mut errs = Vec::new();
    if controller.is_empty() {
        errs.push(field::required(&path.child("controller"), ""));
    } else {
        if controller.len() > MAX_LEN_CONTROLLER {
            errs.push(field::too_long(
                &path.child("controller"),
                MAX_LEN_CONTROLLER as i64,
            ));
        }
        errs.extend(is_domain_prefixed_path(
            &path.child("controller"),
            controller,
        ));
    }
    if let Some(params) = obj.pointer("/spec/parameters").filter(|p| !p.is_null()) {
        errs.extend(validate_parameters(params, &path.child("parameters")));
    }
    errs
}

/// Upstream `ValidateIngressClass`.
fn validate_ingress_class(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
    errs.extend(causes(validate_spec(obj)));
    errs
}

/// Upstream `printIngressClass`'s Parameters: `<kind>[.<apiGroup>]/<name>`.
fn parameters_cell(obj: &Value) -> String {
    let Some(params) = obj.pointer("/spec/parameters").filter(|p| !p.is_null()) else {
        return "<none>".to_owned();
    };
    let mut s = str_at(params, "/kind").unwrap_or("").to_owned();
    if let Some(group) = str_at(params, "/apiGroup") {
        s = format!("{s}.{group}");
    }
    format!("{s}/{}", str_at(params, "/name").unwrap_or(""))
}

impl kas_registry::Strategy for Strategy {
    /// `SetDefaults_IngressClass`: parameters without a scope are cluster-scoped.
    fn default(&self, obj: &mut Value) {
        if let Some(params) = obj
            .pointer_mut("/spec/parameters")
            .and_then(Value::as_object_mut)
            && params.get("scope").is_none_or(Value::is_null)
        {
            params.insert("scope".into(), json!("Cluster"));
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
        validate_ingress_class(obj)
    }

    /// `ValidateIngressClassUpdate`: the metadata update, the controller unchanged, then
    /// the whole class again.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        let controller = str_at(new, "/spec/controller").unwrap_or("");
        if controller != str_at(old, "/spec/controller").unwrap_or("") {
            errs.extend(causes(vec![field::invalid(
                &Path::new("spec").child("controller"),
                controller,
                "field is immutable",
            )]));
        }
        errs.extend(validate_ingress_class(new));
        errs
    }

    /// `printIngressClass`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        vec![
            json!(str_at(obj, "/spec/controller").unwrap_or("")),
            json!(parameters_cell(obj)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn class(spec: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "nginx"}, "spec": spec});
        Strategy.default(&mut obj);
        obj
    }

    #[test]
    fn parameters_scope_defaults_to_cluster() {
        let obj = class(json!({"controller": "example.com/ingress",
            "parameters": {"kind": "Params", "name": "p"}}));
        assert_eq!(obj["spec"]["parameters"]["scope"], "Cluster");
        assert!(Strategy.validate(&obj).is_empty());
        assert_eq!(
            Strategy.table_cells(&obj),
            vec![json!("example.com/ingress"), json!("Params/p")]
        );
        let obj = class(json!({"controller": "example.com/ingress",
            "parameters": {"apiGroup": "k8s.example.com", "kind": "Params", "name": "p"}}));
        assert_eq!(
            Strategy.table_cells(&obj)[1],
            json!("Params.k8s.example.com/p")
        );
        let obj = class(json!({"controller": "example.com/ingress"}));
        assert_eq!(Strategy.table_cells(&obj)[1], json!("<none>"));
    }

    #[test]
    fn controller_and_parameters_rules() {
        assert_eq!(
            messages(&Strategy.validate(&class(json!({})))),
            ["spec.controller: Required value"]
        );
        let obj = class(json!({"controller": "nginx",
            "parameters": {"kind": "", "name": "a/b", "scope": "Everywhere"}}));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "spec.controller: Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")",
                "spec.parameters.kind: Required value",
                "spec.parameters.name: Invalid value: \"a/b\": may not contain '/'",
                "spec.parameters.scope: Unsupported value: \"Everywhere\": supported values: \"Cluster\", \"Namespace\"",
            ]
        );
        let obj = class(json!({"controller": "example.com/x",
            "parameters": {"kind": "K", "name": "n", "scope": "Namespace"}}));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            ["spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"]
        );
        let obj = class(json!({"controller": "example.com/x",
            "parameters": {"kind": "K", "name": "n", "namespace": "ns"}}));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            ["spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"]
        );
        let long = format!("example.com/{}", "a".repeat(250));
        assert_eq!(
            messages(&Strategy.validate(&class(json!({"controller": long})))),
            ["spec.controller: Too long: may not be more than 250 bytes"]
        );
    }

    #[test]
    fn controller_is_immutable_and_generation_follows_spec() {
        let mut old = class(json!({"controller": "example.com/a"}));
        Strategy.prepare_for_create(&mut old);
        assert_eq!(old["metadata"]["generation"], 1);
        let mut new = class(json!({"controller": "example.com/b"}));
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            ["spec.controller: Invalid value: \"example.com/b\": field is immutable"]
        );
        let mut same = old.clone();
        Strategy.prepare_for_update(&mut same, &old);
        assert_eq!(same["metadata"]["generation"], 1);
    }
}
