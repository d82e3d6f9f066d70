//! apps/v1 ControllerRevision, after upstream's `pkg/registry/apps/controllerrevision`,
//! `ValidateControllerRevision`, `ValidateControllerRevisionUpdate` and
//! `printControllerRevision`.

use kas_api::apps::v1::CONTROLLER_REVISION;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_nonnegative_field};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::strategy::FieldErrors;
use kas_registry::strategy::causes;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "apps",
    version: "v1",
    kind: "ControllerRevision",
    list_kind: "ControllerRevisionList",
    plural: "controllerrevisions",
    singular: "controllerrevision",
    short_names: &[],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Controller",
            type_: "string",
            format: "",
            description: "Controller of the object",
            priority: 0,
        },
        TableColumn {
            name: "Revision",
            type_: "string",
            format: "",
            description: CONTROLLER_REVISION.doc("revision"),
            priority: 0,
        },
        AGE_COLUMN,
    ],
    table_name_and_age: false,
    storage_resource: "controllerrevisions",
    schema: Some(&kas_api::apps::v1::CONTROLLER_REVISION),
    list_schema: Some(&kas_api::apps::v1::CONTROLLER_REVISION_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// The revision's data as upstream holds it (`runtime.Unknown` over the raw JSON); `None`
/// for absent or `null` data, which converts to a nil object.
fn data(obj: &Value) -> Option<&Value> {
    obj.get("data").filter(|d| !d.is_null())
}

/// A `*runtime.Unknown` as Go's `%#v` prints it: the raw JSON as bytes.
fn go_unknown(data: &Value) -> String {
    let raw = serde_json::to_string(data).unwrap_or_default();
    let bytes: Vec<String> = raw.bytes().map(|b| format!("{b:#x}")).collect();
    format!(
        "runtime.Unknown{{TypeMeta:runtime.TypeMeta{{APIVersion:\"\", Kind:\"\"}}, Raw:[]uint8{{{}}}, ContentEncoding:\"\", ContentType:\"application/json\"}}",
        bytes.join(", ")
    )
}

/// The rules of upstream `ValidateControllerRevision` past the metadata.
fn validate_revision(obj: &Value) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if data(obj).is_none() {
        errs.push(field::required(&Path::new("data"), "data is mandatory"));
    }
    let revision = obj.get("revision").and_then(Value::as_i64).unwrap_or(0);
    errs.extend(validate_nonnegative_field(revision, &Path::new("revision")));
    errs
}

/// Upstream `metav1.GetControllerOf` and the printer's `formatResourceName`: the
/// controlling owner as `kind.group/name` in lower case, `<none>` without one.
fn controller_name(obj: &Value) -> String {
    let owners = obj
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array);
    let Some(owner) = owners
        .into_iter()
        .flatten()
        .find(|o| o.get("controller").and_then(Value::as_bool) == Some(true))
    else {
        return "<none>".to_owned();
    };
    let s = |k: &str| owner.get(k).and_then(Value::as_str).unwrap_or("");
    let api_version = s("apiVersion");
    // Upstream `schema.ParseGroupVersion`: the group is what comes before the one slash.
    let group = match api_version.split_once('/') {
        Some((group, _)) => group,
        None => "",
    };
    let kind = s("kind");
    let name = s("name");
    if kind.is_empty() && group.is_empty() {
        return name.to_owned();
    }
    let group_kind = if group.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}.{group}")
    };
    format!("{}/{name}", group_kind.to_lowercase())
}

impl kas_registry::Strategy for Strategy {
    /// Upstream `ValidateControllerRevision`.
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        errs.extend(causes(validate_revision(obj)));
        errs
    }

    /// Upstream `ValidateControllerRevisionUpdate`: the revision is valid, and its data
    /// does not change.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(self.validate(new));
        if data(new) != data(old) {
            let value = data(new).map_or(BadValue::Null, |d| BadValue::Raw(go_unknown(d)));
            errs.push(field::invalid(&Path::new("data"), value, "field is immutable").to_cause());
        }
        errs
    }

    /// Upstream `printControllerRevision`: Name, Controller, Revision, Age.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(controller_name(obj)),
            json!(obj.get("revision").and_then(Value::as_i64).unwrap_or(0)),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn revision() -> Value {
        json!({"metadata": {"name": "web-7b9f", "namespace": "ns",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "1"},
                {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                    "uid": "2", "controller": true}]},
            "data": {"spec": {"template": {}}}, "revision": 2})
    }

    #[test]
    fn data_is_required_and_the_revision_not_negative() {
        assert!(Strategy.validate(&revision()).is_empty());
        let mut bad = revision();
        bad["data"] = Value::Null;
        bad["revision"] = json!(-1);
        assert_eq!(
            messages(&Strategy.validate(&bad)),
            [
                "data: Required value: data is mandatory",
                "revision: Invalid value: -1: must be greater than or equal to 0",
            ]
        );
    }

    #[test]
    fn data_is_immutable() {
        let old = revision();
        let mut new = old.clone();
        new["revision"] = json!(3);
        assert!(Strategy.validate_update(&new, &old).is_empty());
        new["data"] = json!({"a": 1});
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            [
                "data: Invalid value: runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:\"\", Kind:\"\"}, Raw:[]uint8{0x7b, 0x22, 0x61, 0x22, 0x3a, 0x31, 0x7d}, ContentEncoding:\"\", ContentType:\"application/json\"}: field is immutable"
            ]
        );
    }

    #[test]
    fn the_printer_names_the_controller() {
        let cells = Strategy.table_cells(&revision());
        assert_eq!(
            cells,
            [
                json!("web-7b9f"),
                json!("statefulset.apps/web"),
                json!(2),
                json!("<unknown>")
            ]
        );
        let mut core = revision();
        core["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ReplicationController", "name": "rc", "controller": true}]);
        assert_eq!(controller_name(&core), "replicationcontroller/rc");
        core["metadata"]["ownerReferences"] = json!([]);
        assert_eq!(controller_name(&core), "<none>");
    }
}
