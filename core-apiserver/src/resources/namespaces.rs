//! core/v1 Namespace, after upstream's `pkg/registry/core/namespace`, `ValidateNamespace`
//! and the v1 defaults (`SetDefaults_Namespace`, `SetDefaults_NamespaceStatus`).
//!
//! Deleting a namespace (upstream's `namespace/storage.go`) sets `status.phase: Terminating`
//! with the deletionTimestamp; the namespace stays while `spec.finalizers` is non-empty.
//! Deleting its contents and clearing `spec.finalizers` through the `finalize`
//! subresource is the namespace controller's job (kube-controller-manager), as upstream.

use std::collections::BTreeMap;

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::is_qualified_name;
use kas_apimachinery::validation::meta::validate_namespace_name;
use kas_registry::rest::options::{DeletionPropagation, WriteOptions};
use kas_registry::store::gc::{self, FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Map, Value, json};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "Namespace",
    list_kind: "NamespaceList",
    plural: "namespaces",
    singular: "namespace",
    short_names: &["ns"],
    categories: &[],
    scope: Scope::Cluster,
    // Upstream serves no deletecollection for namespaces.
    verbs: &[
        Verb::Create,
        Verb::Delete,
        Verb::Get,
        Verb::List,
        Verb::Patch,
        Verb::Update,
        Verb::Watch,
    ],
    subresources: &[Subresource::STATUS, Subresource::FINALIZE],
    table_columns: &[TableColumn {
        name: "Status",
        type_: "string",
        format: "",
        description: "The status of the namespace",
        priority: 0,
    }],
    table_name_and_age: true,
    storage_resource: "namespaces",
    schema: Some(&kas_api::core::v1::NAMESPACE),
    list_schema: Some(&kas_api::core::v1::NAMESPACE_LIST),
};

/// Upstream `FinalizerKubernetes`.
pub const FINALIZER_KUBERNETES: &str = "kubernetes";
/// Upstream `v1.LabelMetadataName`.
pub const LABEL_METADATA_NAME: &str = "kubernetes.io/metadata.name";
/// Upstream `standardFinalizers`.
const STANDARD_FINALIZERS: [&str; 3] = [FINALIZER_KUBERNETES, "orphan", "foregroundDeletion"];

/// How the role installs this resource.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn object_mut<'a>(obj: &'a mut Value, key: &str) -> &'a mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let map = obj.as_object_mut().expect("just made an object");
    let child = map.entry(key).or_insert_with(|| Value::Object(Map::new()));
    if !child.is_object() {
        *child = Value::Object(Map::new());
    }
    child.as_object_mut().expect("just made an object")
}

/// The `kubernetes.io/metadata.name` label, kept equal to the name (upstream sets it in
/// defaulting and again in `Canonicalize`, for names made from `generateName`).
fn set_name_label(obj: &mut Value) {
    let name = kas_registry::meta::name(obj).to_owned();
    if name.is_empty() {
        return;
    }
    let meta = kas_registry::meta::metadata_mut(obj);
    let labels = meta.entry("labels").or_insert_with(|| json!({}));
    if !labels.is_object() {
        *labels = json!({});
    }
    if let Some(labels) = labels.as_object_mut() {
        labels.insert(LABEL_METADATA_NAME.to_owned(), Value::String(name));
    }
}

fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .map(|f| {
            f.iter()
                .map(|v| v.as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Upstream `validateFinalizerName`: a qualified name, and either fully qualified or one
/// of the standard names. Upstream reports these on `spec.finalizers`, without an index.
fn validate_finalizer_name(name: &str, path: &Path) -> Vec<field::Error> {
    let mut errs: Vec<field::Error> = is_qualified_name(name)
        .iter()
        .map(|msg| field::invalid(path, name, msg))
        .collect();
    if !name.contains('/') && !STANDARD_FINALIZERS.contains(&name) {
        errs.push(field::invalid(
            path,
            name,
            "name is neither a standard finalizer name nor is it fully qualified",
        ));
    }
    errs
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's store sets `ReturnDeletedObject`.
    fn return_deleted_object(&self) -> bool {
        true
    }

    /// Writes to the namespace reset its status, writes to `status` its spec, and
    /// `finalize` resets the status (upstream's `GetResetFields` of the three strategies).
    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    /// `SetDefaults_NamespaceStatus` and `SetDefaults_Namespace`.
    fn default(&self, obj: &mut Value) {
        let status = object_mut(obj, "status");
        let phase_set = status
            .get("phase")
            .and_then(Value::as_str)
            .is_some_and(|p| !p.is_empty());
        if !phase_set {
            status.insert("phase".into(), json!("Active"));
        }
        set_name_label(obj);
    }

    /// Status is always Active on create; the `kubernetes` finalizer is required.
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), json!({"phase": "Active"}));
        }
        let spec = object_mut(obj, "spec");
        let list = spec.entry("finalizers").or_insert_with(|| json!([]));
        if !list.is_array() {
            *list = json!([]);
        }
        if let Some(list) = list.as_array_mut()
            && !list
                .iter()
                .any(|f| f.as_str() == Some(FINALIZER_KUBERNETES))
        {
            list.push(json!(FINALIZER_KUBERNETES));
        }
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, false, validate_namespace_name);
        let path = Path::new("spec").child("finalizers");
        for name in finalizers(obj) {
            errs.extend(
                validate_finalizer_name(&name, &path)
                    .iter()
                    .map(field::Error::to_cause),
            );
        }
        errs
    }

    fn canonicalize(&self, obj: &mut Value) {
        set_name_label(obj);
    }

    /// `spec.finalizers` changes only through `/finalize`, `status` only through
    /// `/status`.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let old_finalizers = old.pointer("/spec/finalizers").cloned();
        let spec = object_mut(new, "spec");
        match old_finalizers {
            Some(f) => spec.insert("finalizers".into(), f),
            None => spec.remove("finalizers"),
        };
        kas_registry::meta::keep_status(new, old);
    }

    /// Also upstream's `ValidateNamespaceStatusUpdate`: the phase is Active until the
    /// namespace is being deleted, then Terminating.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = self.validate(new);
        errs.extend(validate_object_meta_update(new, old));
        let deleting = new
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|t| !t.is_null());
        let phase = new
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or("");
        let (want, detail) = if deleting {
            (
                "Terminating",
                "may only be 'Terminating' if `deletionTimestamp` is not empty",
            )
        } else {
            (
                "Active",
                "may only be 'Active' if `deletionTimestamp` is empty",
            )
        };
        if phase != want {
            let path = Path::new("status").child("Phase");
            errs.push(field::invalid(&path, phase, detail).to_cause());
        }
        errs
    }

    /// Upstream registers a field label conversion function for this kind.
    fn field_label_conversion(&self) -> bool {
        true
    }

    /// Upstream's v1 field label conversion allows only these two.
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        let phase = obj
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or("");
        BTreeMap::from([
            (
                "metadata.name".to_owned(),
                kas_registry::meta::name(obj).to_owned(),
            ),
            ("status.phase".to_owned(), phase.to_owned()),
        ])
    }

    fn holds_deletion(&self, obj: &Value) -> bool {
        !finalizers(obj).is_empty()
    }

    /// Upstream's namespace `REST.Delete` on the first delete: Terminating, with the
    /// garbage collector's finalizers as the options ask.
    fn prepare_for_deletion(&self, obj: &mut Value, opts: &WriteOptions) {
        object_mut(obj, "status").insert("phase".into(), json!("Terminating"));
        gc_finalizers(obj, opts);
    }

    /// Upstream's namespace `REST.Delete`: preconditions checked as storage checks them;
    /// the first delete sets the deletionTimestamp, the phase and the garbage collector's
    /// finalizers only; later ones wait for `spec.finalizers` to empty, then delete as the
    /// generic store does.
    fn custom_delete(&self) -> bool {
        true
    }

    /// `finalize` changes the spec (its finalizers) and metadata, not the status.
    fn subresource_update(&self, subresource: &str, new: &Value, old: &Value) -> Option<Value> {
        if subresource != "finalize" {
            return None;
        }
        // Upstream's `namespaceFinalizeStrategy`: the namespace as sent (metadata
        // changes too), with the stored status.
        let mut merged = new.clone();
        kas_registry::meta::keep_status(&mut merged, old);
        Some(merged)
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let phase = obj
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or("");
        vec![json!(phase)]
    }
}

/// The namespace's own rule for the garbage collector's finalizers on its first delete
/// (upstream's `shouldHaveOrphanFinalizer` and `shouldHaveDeleteDependentsFinalizer`):
/// `orphanDependents`, else `propagationPolicy`, else what it has; unlike the generic
/// store, `orphanDependents: false` asks for foreground deletion. Upstream rebuilds the
/// list from a map (in no order); here the others keep theirs and these two follow.
fn gc_finalizers(obj: &mut Value, opts: &WriteOptions) {
    let mut finalizers: Vec<String> = gc::finalizers(obj).into_iter().map(str::to_owned).collect();
    let has = |f: &str| finalizers.iter().any(|x| x == f);
    let (orphan, foreground) = match (opts.orphan_dependents, opts.propagation_policy) {
        (Some(orphan), _) => (orphan, !orphan),
        (None, Some(p)) => (
            p == DeletionPropagation::Orphan,
            p == DeletionPropagation::Foreground,
        ),
        (None, None) => (
            has(FINALIZER_ORPHAN_DEPENDENTS),
            has(FINALIZER_DELETE_DEPENDENTS),
        ),
    };
    if orphan == has(FINALIZER_ORPHAN_DEPENDENTS) && foreground == has(FINALIZER_DELETE_DEPENDENTS)
    {
        return;
    }
    finalizers.retain(|f| f != FINALIZER_ORPHAN_DEPENDENTS && f != FINALIZER_DELETE_DEPENDENTS);
    if orphan {
        finalizers.push(FINALIZER_ORPHAN_DEPENDENTS.to_owned());
    }
    if foreground {
        finalizers.push(FINALIZER_DELETE_DEPENDENTS.to_owned());
    }
    gc::set_finalizers(obj, finalizers);
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::Strategy as _;

    fn ns(name: &str) -> Value {
        json!({"metadata": {"name": name}})
    }

    #[test]
    fn create_sets_phase_finalizer_and_name_label() {
        let mut obj = ns("team-a");
        obj["status"] = json!({"phase": "Terminating", "conditions": []});
        obj["spec"] = json!({"finalizers": ["example.com/x"]});
        Strategy.default(&mut obj);
        Strategy.prepare_for_create(&mut obj);
        Strategy.canonicalize(&mut obj);
        assert_eq!(obj["status"], json!({"phase": "Active"}));
        assert_eq!(
            obj["spec"]["finalizers"],
            json!(["example.com/x", "kubernetes"])
        );
        assert_eq!(
            obj["metadata"]["labels"][LABEL_METADATA_NAME],
            json!("team-a")
        );
        assert!(Strategy.validate(&obj).is_empty());
        assert_eq!(Strategy.table_cells(&obj), vec![json!("Active")]);
    }

    #[test]
    fn names_are_dns_labels() {
        let errs = Strategy.validate(&ns("a.b"));
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field.as_deref(), Some("metadata.name"));
    }

    #[test]
    fn finalizer_names_must_be_standard_or_qualified() {
        let mut obj = ns("a");
        obj["spec"] = json!({"finalizers": ["kubernetes", "custom", "example.com/ok"]});
        let errs = Strategy.validate(&obj);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field.as_deref(), Some("spec.finalizers"));
        assert_eq!(
            errs[0].message.as_deref(),
            Some(
                "Invalid value: \"custom\": name is neither a standard finalizer name nor is it fully qualified"
            )
        );
    }

    #[test]
    fn update_keeps_status_and_spec_finalizers() {
        let mut old = ns("a");
        Strategy.default(&mut old);
        Strategy.prepare_for_create(&mut old);
        let mut new = ns("a");
        new["spec"] = json!({"finalizers": []});
        new["status"] = json!({"phase": "Terminating"});
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["status"], json!({"phase": "Active"}));
        assert_eq!(new["spec"]["finalizers"], json!(["kubernetes"]));
        assert!(Strategy.validate_update(&new, &old).is_empty());
    }

    #[test]
    fn field_labels_are_name_and_phase() {
        let keys: Vec<String> = Strategy.field_set(&json!({})).into_keys().collect();
        assert_eq!(keys, vec!["metadata.name", "status.phase"]);
    }
}
