//! Custom resources, after upstream's `pkg/registry/customresource` and the serving info
//! `crdHandler` builds per CRD: one descriptor and strategy per served version, all over
//! one storage (`/registry/<group>/<plural>`), whose objects are stored in the storage
//! version. With conversion `None` only `apiVersion` differs between versions, and stored
//! objects carry none, so every version serves the stored bytes as they are.
//!
//! Descriptors are `&'static` (the router, discovery and the handlers hold them). A CRD's
//! are built when it starts being served or its spec or accepted names change, and leaked:
//! a few hundred bytes per such change, strings interned, so a CRD that is rewritten with
//! the same names costs nothing more.

pub mod conversion;
pub mod fields;
pub mod jsonpath;
mod openapi;
pub mod schema;
pub mod strategy;
pub mod table;
mod validator;

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use kas_registry::{ResourceDescriptor, ScaleSelector, ScaleSpec, Scope, Subresource, Verb};
use serde_json::Value;

/// `s` as a `&'static str`, leaked once per distinct string.
pub fn intern(s: &str) -> &'static str {
    static STRINGS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut strings = STRINGS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(found) = strings.get(s) {
        return found;
    }
    let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
    strings.insert(leaked);
    leaked
}

fn interned_list(v: Option<&Value>) -> &'static [&'static str] {
    let items: Vec<&'static str> = v
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(intern)
        .collect();
    if items.is_empty() {
        &[]
    } else {
        Box::leak(items.into_boxed_slice())
    }
}

fn str_at<'v>(v: &'v Value, pointer: &str) -> &'v str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The version's entry of `spec.versions`.
pub fn version<'v>(crd: &'v Value, name: &str) -> Option<&'v Value> {
    crate::crd::versions(crd).find(|v| v.get("name").and_then(Value::as_str) == Some(name))
}

/// The names a CRD is served under: its accepted names (upstream serves
/// `status.acceptedNames`, which the naming controller settles).
pub struct Names {
    pub plural: &'static str,
    pub singular: &'static str,
    pub kind: &'static str,
    pub list_kind: &'static str,
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
}

impl Names {
    pub fn accepted(crd: &Value) -> Names {
        let names = crd.pointer("/status/acceptedNames").unwrap_or(&Value::Null);
        let at = |k: &str| intern(names.get(k).and_then(Value::as_str).unwrap_or(""));
        Names {
            plural: at("plural"),
            singular: at("singular"),
            kind: at("kind"),
            list_kind: at("listKind"),
            short_names: interned_list(names.get("shortNames")),
            categories: interned_list(names.get("categories")),
        }
    }
}

/// The descriptor of one served version of `crd`.
pub fn descriptor(crd: &Value, version_name: &str) -> &'static ResourceDescriptor {
    let group = intern(str_at(crd, "/spec/group"));
    let names = Names::accepted(crd);
    let scope = match str_at(crd, "/spec/scope") {
        "Cluster" => Scope::Cluster,
        _ => Scope::Namespaced,
    };
    let v = version(crd, version_name).unwrap_or(&Value::Null);
    let mut subresources = Vec::new();
    if v.pointer("/subresources/status")
        .is_some_and(|s| !s.is_null())
    {
        subresources.push(Subresource::STATUS);
    }
    if let Some(scale) = v.pointer("/subresources/scale").filter(|s| !s.is_null()) {
        let path = |k: &str| {
            scale
                .get(k)
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
                .map(intern)
        };
        subresources.push(Subresource::scale(ScaleSpec {
            spec_replicas: path("specReplicasPath").unwrap_or(""),
            status_replicas: path("statusReplicasPath").unwrap_or(""),
            label_selector: path("labelSelectorPath").map(ScaleSelector::String),
        }));
    }
    let columns = table::columns(v);
    Box::leak(Box::new(ResourceDescriptor {
        group,
        version: intern(version_name),
        kind: names.kind,
        list_kind: names.list_kind,
        plural: names.plural,
        singular: names.singular,
        short_names: names.short_names,
        categories: names.categories,
        scope,
        verbs: Verb::CUSTOM_RESOURCE,
        subresources: Box::leak(subresources.into_boxed_slice()),
        table_columns: Box::leak(columns.into_boxed_slice()),
        table_name_and_age: false,
        storage_resource: intern(&format!("{group}/{}", names.plural)),
        schema: None,
        list_schema: None,
    }))
}

/// The versions `crd` serves, highest priority first (`v2`, `v1`, `v1beta1`, ...): the
/// order upstream's discovery lists them in, the first being the preferred one.
pub fn served_versions(crd: &Value) -> Vec<&str> {
    let mut served: Vec<&str> = crate::crd::versions(crd)
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .collect();
    served.sort_by(|a, b| kas_apimachinery::version::compare_kube_aware(b, a));
    served
}

/// The warning every request to a deprecated version gets: its `deprecationWarning`, else
/// upstream's `defaultDeprecationWarning` (naming the highest served version that is not
/// deprecated and ranks above it).
pub fn deprecation_warning(crd: &Value, version_name: &str) -> Option<String> {
    let v = version(crd, version_name)?;
    if v.get("deprecated").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    if let Some(warning) = v.get("deprecationWarning").and_then(Value::as_str) {
        return Some(warning.to_owned());
    }
    let group = str_at(crd, "/spec/group");
    let kind = str_at(crd, "/spec/names/kind");
    let mut message = format!("{group}/{version_name} {kind} is deprecated");
    let better = crate::crd::versions(crd)
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
        .filter(|v| v.get("deprecated").and_then(Value::as_bool) != Some(true))
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .filter(|name| kas_apimachinery::version::compare_kube_aware(version_name, name).is_lt())
        .max_by(|a, b| kas_apimachinery::version::compare_kube_aware(a, b));
    if let Some(better) = better {
        message.push_str(&format!("; use {group}/{better} {kind}"));
    }
    Some(message)
}
