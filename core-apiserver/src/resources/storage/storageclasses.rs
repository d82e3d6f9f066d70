//! storage.k8s.io/v1 StorageClass, after upstream's `pkg/registry/storage/storageclass`,
//! `SetDefaults_StorageClass`, `ValidateStorageClass`, `ValidateStorageClassUpdate` and
//! `printStorageClass`.

use kas_api::storage::v1::STORAGE_CLASS;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::is_qualified_name;
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_label_name};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

use super::{causes, s};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "storage.k8s.io",
    version: "v1",
    kind: "StorageClass",
    list_kind: "StorageClassList",
    plural: "storageclasses",
    singular: "storageclass",
    short_names: &["sc"],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Provisioner",
            type_: "string",
            format: "",
            description: STORAGE_CLASS.doc("provisioner"),
            priority: 0,
        },
        TableColumn {
            name: "ReclaimPolicy",
            type_: "string",
            format: "",
            description: STORAGE_CLASS.doc("reclaimPolicy"),
            priority: 0,
        },
        TableColumn {
            name: "VolumeBindingMode",
            type_: "string",
            format: "",
            description: STORAGE_CLASS.doc("volumeBindingMode"),
            priority: 0,
        },
        TableColumn {
            name: "AllowVolumeExpansion",
            type_: "string",
            format: "",
            description: STORAGE_CLASS.doc("allowVolumeExpansion"),
            priority: 0,
        },
        AGE_COLUMN,
    ],
    table_name_and_age: false,
    storage_resource: "storageclasses",
    schema: Some(&kas_api::storage::v1::STORAGE_CLASS),
    list_schema: Some(&kas_api::storage::v1::STORAGE_CLASS_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `maxProvisionerParameterSize` and `maxProvisionerParameterLen`.
const MAX_PARAMETER_SIZE: i64 = 256 * (1 << 10);
const MAX_PARAMETER_LEN: i64 = 512;

/// Upstream `supportedReclaimPolicy` and `supportedVolumeBindingModes`, sorted.
const RECLAIM_POLICIES: [&str; 2] = ["Delete", "Retain"];
const BINDING_MODES: [&str; 2] = ["Immediate", "WaitForFirstConsumer"];

/// Upstream `IsDefaultStorageClassAnnotation` and its beta form.
const DEFAULT_ANNOTATIONS: [&str; 2] = [
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
];

/// Upstream `validateProvisioner` (also VolumeAttributesClass's driver name).
fn validate_provisioner(provisioner: &str, path: &Path) -> Vec<field::Error> {
    if provisioner.is_empty() {
        return vec![field::required(path, "")];
    }
    let lower = provisioner.to_lowercase();
    is_qualified_name(&lower)
        .iter()
        .map(|m| field::invalid(path, lower.as_str(), m))
        .collect()
}

/// Upstream `validateParameters` with empty maps allowed.
fn validate_parameters(params: Option<&Value>, path: &Path) -> Vec<field::Error> {
    let Some(params) = params.and_then(Value::as_object) else {
        return Vec::new();
    };
    if params.len() as i64 > MAX_PARAMETER_LEN {
        return vec![field::too_long(path, MAX_PARAMETER_LEN)];
    }
    let mut errs = Vec::new();
    let mut size = 0i64;
    for (k, v) in params {
        if k.is_empty() {
            errs.push(field::invalid(path, k.as_str(), "field can not be empty."));
        }
        size += (k.len() + v.as_str().map_or(0, str::len)) as i64;
    }
    if size > MAX_PARAMETER_SIZE {
        errs.push(field::too_long(path, MAX_PARAMETER_SIZE));
    }
    errs
}

/// Upstream `validateTopologySelectorLabelRequirement`: the requirement's values as a set.
fn validate_requirement(
    req: &Value,
    path: &Path,
) -> (std::collections::BTreeSet<String>, Vec<field::Error>) {
    let mut errs = Vec::new();
    let mut set = std::collections::BTreeSet::new();
    let values_path = path.child("values");
    let values = req.get("values").and_then(Value::as_array);
    if values.is_none_or(Vec::is_empty) {
        errs.push(field::required(&values_path, ""));
    }
    for (i, v) in values.into_iter().flatten().enumerate() {
        let v = v.as_str().unwrap_or("");
        if !set.insert(v.to_owned()) {
            errs.push(field::duplicate(&values_path.index(i), v));
        }
    }
    errs.extend(validate_label_name(s(req, "/key"), &path.child("key")));
    (set, errs)
}

type ExprMap = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;

/// Upstream `ValidateTopologySelectorTerm`.
fn validate_topology_term(term: &Value, path: &Path) -> (ExprMap, Vec<field::Error>) {
    let mut errs = Vec::new();
    let mut map = ExprMap::new();
    let exprs_path = path.child("matchLabelExpressions");
    let exprs = term.get("matchLabelExpressions").and_then(Value::as_array);
    for (i, req) in exprs.into_iter().flatten().enumerate() {
        let p = exprs_path.index(i);
        let (set, e) = validate_requirement(req, &p);
        errs.extend(e);
        let key = s(req, "/key");
        if map.contains_key(key) {
            errs.push(field::duplicate(&p.child("key"), key));
        }
        map.insert(key.to_owned(), set);
    }
    (map, errs)
}

/// Upstream `validateAllowedTopologies`. Upstream starts its list of seen terms with as
/// many nil maps as there are terms, which semantic equality takes for empty ones: a term
/// without expressions is reported that many times as a duplicate.
fn validate_allowed_topologies(topologies: Option<&Value>, path: &Path) -> Vec<field::Error> {
    let terms = topologies
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut errs = Vec::new();
    let mut seen: Vec<ExprMap> = vec![ExprMap::new(); terms.len()];
    for (i, term) in terms.iter().enumerate() {
        let (map, e) = validate_topology_term(term, &path.index(i));
        errs.extend(e);
        for t in &seen {
            if *t == map {
                errs.push(field::duplicate(
                    &path.index(i).child("matchLabelExpressions"),
                    "",
                ));
            }
        }
        seen.push(map);
    }
    errs
}

/// Upstream `ValidateStorageClass`.
fn validate_class(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
    let mut e = validate_provisioner(s(obj, "/provisioner"), &Path::new("provisioner"));
    e.extend(validate_parameters(
        obj.get("parameters"),
        &Path::new("parameters"),
    ));
    let policy = s(obj, "/reclaimPolicy");
    if !policy.is_empty() && !RECLAIM_POLICIES.contains(&policy) {
        e.push(field::not_supported(
            &Path::new("reclaimPolicy"),
            policy,
            &RECLAIM_POLICIES,
        ));
    }
    let mode_path = Path::new("volumeBindingMode");
    match obj.get("volumeBindingMode").filter(|v| !v.is_null()) {
        None => e.push(field::required(&mode_path, "")),
        Some(m) => {
            let m = m.as_str().unwrap_or("");
            if !BINDING_MODES.contains(&m) {
                e.push(field::not_supported(&mode_path, m, &BINDING_MODES));
            }
        }
    }
    e.extend(validate_allowed_topologies(
        obj.get("allowedTopologies"),
        &Path::new("allowedTopologies"),
    ));
    errs.extend(causes(e));
    errs
}

/// A `map[string]string` as `reflect.DeepEqual` compares it (nil is not empty).
fn params(obj: &Value) -> Option<&Value> {
    obj.get("parameters").filter(|v| !v.is_null())
}

/// Upstream `ValidateStorageClassUpdate` (without its metadata part).
fn validate_class_update(new: &Value, old: &Value) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if params(new) != params(old) {
        let msg = "updates to parameters are forbidden.";
        errs.push(field::forbidden(&Path::new("parameters"), msg));
    }
    if s(new, "/provisioner") != s(old, "/provisioner") {
        let msg = "updates to provisioner are forbidden.";
        errs.push(field::forbidden(&Path::new("provisioner"), msg));
    }
    if s(new, "/reclaimPolicy") != s(old, "/reclaimPolicy") {
        let msg = "updates to reclaimPolicy are forbidden.";
        errs.push(field::forbidden(&Path::new("reclaimPolicy"), msg));
    }
    let (n, o) = (new.get("volumeBindingMode"), old.get("volumeBindingMode"));
    if n.filter(|v| !v.is_null()) != o.filter(|v| !v.is_null()) {
        let value = match n.and_then(Value::as_str) {
            Some(m) => field::BadValue::String(m.to_owned()),
            None => field::BadValue::Null,
        };
        let path = Path::new("volumeBindingMode");
        errs.push(field::invalid(&path, value, "field is immutable"));
    }
    errs
}

fn is_default(obj: &Value) -> bool {
    DEFAULT_ANNOTATIONS.iter().any(|a| {
        obj.pointer(&format!("/metadata/annotations/{}", a.replace('/', "~1")))
            == Some(&json!("true"))
    })
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's store sets `ReturnDeletedObject`.
    fn return_deleted_object(&self) -> bool {
        true
    }

    /// `SetDefaults_StorageClass`: the Delete policy and Immediate binding.
    fn default(&self, obj: &mut Value) {
        let Some(map) = obj.as_object_mut() else {
            return;
        };
        for (k, v) in [
            ("reclaimPolicy", "Delete"),
            ("volumeBindingMode", "Immediate"),
        ] {
            if map.get(k).is_none_or(Value::is_null) {
                map.insert(k.into(), json!(v));
            }
        }
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_class(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(validate_class(new));
        errs.extend(causes(validate_class_update(new, old)));
        errs
    }

    /// Upstream `printStorageClass`: the name marked when the class is the default.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let policy = obj
            .get("reclaimPolicy")
            .and_then(Value::as_str)
            .unwrap_or("Delete");
        let mode = obj
            .get("volumeBindingMode")
            .and_then(Value::as_str)
            .unwrap_or("Immediate");
        let expansion = obj
            .get("allowVolumeExpansion")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let mut name = kas_registry::meta::name(obj).to_owned();
        if is_default(obj) {
            name.push_str(" (default)");
        }
        vec![
            json!(name),
            json!(s(obj, "/provisioner")),
            json!(policy),
            json!(mode),
            json!(expansion),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn class(extra: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "fast"}, "provisioner": "ebs.csi.aws.com"});
        if let (Some(o), Some(e)) = (obj.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        Strategy.default(&mut obj);
        obj
    }

    #[test]
    fn defaults_and_a_valid_class() {
        let obj = class(json!({}));
        assert_eq!(obj["reclaimPolicy"], "Delete");
        assert_eq!(obj["volumeBindingMode"], "Immediate");
        assert!(Strategy.validate(&obj).is_empty());
        let kept =
            class(json!({"reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"}));
        assert_eq!(kept["reclaimPolicy"], "Retain");
        assert_eq!(kept["volumeBindingMode"], "WaitForFirstConsumer");
    }

    #[test]
    fn fields_are_checked_like_upstream() {
        let bad = class(json!({"provisioner": "", "reclaimPolicy": "Recycle",
            "volumeBindingMode": "Later", "parameters": {"": "x"}}));
        assert_eq!(
            messages(&Strategy.validate(&bad)),
            vec![
                "provisioner: Required value",
                "parameters: Invalid value: \"\": field can not be empty.",
                "reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\"",
                "volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\"",
            ]
        );
        let bad = class(json!({"provisioner": "Bad Name"}));
        let msgs = messages(&Strategy.validate(&bad));
        assert_eq!(msgs.len(), 1);
        assert!(
            msgs[0]
                .starts_with("provisioner: Invalid value: \"bad name\": name part must consist of"),
            "{msgs:?}"
        );
    }

    #[test]
    fn allowed_topologies() {
        let obj = class(json!({"allowedTopologies": [
            {"matchLabelExpressions": [{"key": "zone", "values": ["a", "a"]}, {"key": "zone", "values": []}]},
            {"matchLabelExpressions": []},
        ]}));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            vec![
                "allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: \"a\"",
                "allowedTopologies[0].matchLabelExpressions[1].values: Required value",
                "allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: \"zone\"",
                "allowedTopologies[1].matchLabelExpressions: Duplicate value: \"\"",
                "allowedTopologies[1].matchLabelExpressions: Duplicate value: \"\"",
            ]
        );
    }

    #[test]
    fn updates_may_not_change_the_class() {
        let old = class(json!({"parameters": {"type": "gp2"}}));
        let new = class(
            json!({"parameters": {"type": "gp3"}, "provisioner": "other.example.com",
            "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"}),
        );
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            vec![
                "parameters: Forbidden: updates to parameters are forbidden.",
                "provisioner: Forbidden: updates to provisioner are forbidden.",
                "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
                "volumeBindingMode: Invalid value: \"WaitForFirstConsumer\": field is immutable",
            ]
        );
        let same = class(json!({"parameters": {"type": "gp2"}, "allowVolumeExpansion": true}));
        assert!(Strategy.validate_update(&same, &old).is_empty());
    }

    #[test]
    fn printer_marks_the_default_class() {
        let mut obj = class(json!({"allowVolumeExpansion": true}));
        obj["metadata"]["annotations"] =
            json!({"storageclass.kubernetes.io/is-default-class": "true"});
        let cells = Strategy.table_cells(&obj);
        assert_eq!(
            cells[..5],
            [
                json!("fast (default)"),
                json!("ebs.csi.aws.com"),
                json!("Delete"),
                json!("Immediate"),
                json!(true)
            ]
        );
        let plain = class(json!({}));
        assert_eq!(Strategy.table_cells(&plain)[0], json!("fast"));
        assert_eq!(Strategy.table_cells(&plain)[4], json!(false));
    }
}
