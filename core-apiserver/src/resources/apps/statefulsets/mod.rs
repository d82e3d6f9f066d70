//! apps/v1 StatefulSet, after upstream's `pkg/registry/apps/statefulset` (strategy, status
//! strategy, the scale subresource's `scaleFromStatefulSet`), `SetObjectDefaults_StatefulSet`,
//! `ValidateStatefulSet`, `ValidateStatefulSetUpdate`, `ValidateStatefulSetStatusUpdate` and
//! `printStatefulSet`, with the gates of a default 1.33 server (StatefulSetAutoDeletePVC GA,
//! MaxUnavailableStatefulSet off).
//!
//! As in 1.33, the pod template is checked for its labels and annotations only, and the
//! volume claim templates not at all (upstream validates both from 1.34).

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::labels::from_label_selector;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::is_dns1123_label;
use kas_apimachinery::validation::meta::{
    name_is_dns_label, validate_annotations, validate_labels, validate_nonnegative_field,
};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::descriptor::{ScaleSelector, ScaleSpec};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Map, Value, json};

use super::common::{
    causes, go_int_or_string, go_label_selector, go_string_map, int_or_percent_value,
    is_not_more_than_100_percent, keep_status_and_bump_generation, reset_status_and_generation,
    selector_is_empty, validate_label_selector, validate_positive_int_or_percent,
};
use crate::podspec::container_cells;
use crate::podspec::defaults::default_pod_template_spec;
use crate::podspec::validation::json::{int_of, int0, invalid_each, obj, str_map, str_of};
use crate::resources::persistentvolumes::validation::semantic;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "apps",
    version: "v1",
    kind: "StatefulSet",
    list_kind: "StatefulSetList",
    plural: "statefulsets",
    singular: "statefulset",
    short_names: &["sts"],
    categories: &["all"],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[
        Subresource::STATUS,
        Subresource::scale(ScaleSpec {
            spec_replicas: ".spec.replicas",
            status_replicas: ".status.replicas",
            label_selector: Some(ScaleSelector::LabelSelector(".spec.selector")),
        }),
    ],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Ready",
            type_: "string",
            format: "",
            description: "Number of the pod with ready state",
            priority: 0,
        },
        AGE_COLUMN,
        crate::podspec::CONTAINERS_COLUMN,
        crate::podspec::IMAGES_COLUMN,
    ],
    table_name_and_age: false,
    storage_resource: "statefulsets",
    schema: Some(&kas_api::apps::v1::STATEFUL_SET),
    list_schema: Some(&kas_api::apps::v1::STATEFUL_SET_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream's message when an update changes an immutable part of the spec.
const FORBIDDEN_UPDATE: &str = "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";

/// The spec fields `ValidateStatefulSetUpdate` lets an update change.
const MUTABLE_SPEC_FIELDS: [&str; 6] = [
    "replicas",
    "template",
    "updateStrategy",
    "minReadySeconds",
    "ordinals",
    "persistentVolumeClaimRetentionPolicy",
];

/// `map[key]` as an object, made one when absent or not an object (Go's zero struct).
pub(super) fn object_entry<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Value {
    let v = map.entry(key).or_insert_with(|| json!({}));
    if !v.is_object() {
        *v = json!({});
    }
    v
}

/// What Go's `%#v` prints of a non-nil pointer inside a struct: its address, which no
/// client can predict; this is a stand-in.
pub(super) fn go_pointer(type_name: &str, v: Option<&Value>) -> String {
    match v.filter(|x| !x.is_null()) {
        None => format!("(*{type_name})(nil)"),
        Some(_) => format!("(*{type_name})(0xc000000000)"),
    }
}

/// `apps.RollingUpdateStatefulSetStrategy` as Go's `%#v` prints it.
fn go_rolling_update(r: &Value) -> String {
    format!(
        "apps.RollingUpdateStatefulSetStrategy{{Partition:{}, MaxUnavailable:{}}}",
        int0(r, "partition"),
        go_pointer("intstr.IntOrString", r.get("maxUnavailable"))
    )
}

/// `apps.StatefulSetUpdateStrategy` as Go's `%#v` prints it.
fn go_update_strategy(s: Option<&Value>) -> String {
    let null = Value::Null;
    let s = s.unwrap_or(&null);
    format!(
        "apps.StatefulSetUpdateStrategy{{Type:{}, RollingUpdate:{}}}",
        quote(str_of(s, "type")),
        go_pointer(
            "apps.RollingUpdateStatefulSetStrategy",
            s.get("rollingUpdate")
        )
    )
}

/// `validateRollingUpdateStatefulSet`.
fn validate_rolling_update(r: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = validate_nonnegative_field(int0(r, "partition"), &path.child("partition"));
    if let Some(mu) = r.get("maxUnavailable").filter(|v| !v.is_null()) {
        let p = path.child("maxUnavailable");
        errs.extend(validate_positive_int_or_percent(mu, &p));
        if int_or_percent_value(mu) == 0 {
            errs.push(field::invalid(&p, go_int_or_string(mu), "cannot be 0"));
        }
        errs.extend(is_not_more_than_100_percent(mu, &p));
    }
    errs
}

/// `ValidatePersistentVolumeClaimRetentionPolicy`.
fn validate_retention_policy(policy: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for key in ["whenDeleted", "whenScaled"] {
        let v = str_of(policy, key);
        if v != "Retain" && v != "Delete" {
            errs.push(field::not_supported(
                &path.child(key),
                v,
                &["Retain", "Delete"],
            ));
        }
    }
    errs
}

/// Upstream `ValidateStatefulSetSpec` (with `ValidatePodTemplateSpecForStatefulSet`); an
/// update allows the service name it already has (`AllowInvalidServiceName`).
fn validate_spec(spec: &Value, allow_invalid_service_name: bool) -> Vec<field::Error> {
    let path = Path::new("spec");
    let mut errs = Vec::new();

    let pmp_path = path.child("podManagementPolicy");
    match str_of(spec, "podManagementPolicy") {
        "" => errs.push(field::required(&pmp_path, "")),
        "OrderedReady" | "Parallel" => {}
        other => errs.push(field::invalid(
            &pmp_path,
            other,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }

    let strategy = obj(spec, "updateStrategy");
    let strategy_path = path.child("updateStrategy");
    let rolling = strategy.and_then(|s| obj(s, "rollingUpdate"));
    match strategy.map_or("", |s| str_of(s, "type")) {
        "" => errs.push(field::required(&strategy_path, "")),
        "OnDelete" => {
            if let Some(r) = rolling {
                errs.push(field::invalid(
                    &strategy_path.child("rollingUpdate"),
                    BadValue::Raw(go_rolling_update(r)),
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "RollingUpdate" => {
            if let Some(r) = rolling {
                errs.extend(validate_rolling_update(
                    r,
                    &strategy_path.child("rollingUpdate"),
                ));
            }
        }
        _ => errs.push(field::invalid(
            &strategy_path,
            BadValue::Raw(go_update_strategy(strategy)),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }

    if let Some(policy) = obj(spec, "persistentVolumeClaimRetentionPolicy") {
        errs.extend(validate_retention_policy(
            policy,
            &path.child("persistentVolumeClaimRetentionPolicy"),
        ));
    }
    errs.extend(validate_nonnegative_field(
        int0(spec, "replicas"),
        &path.child("replicas"),
    ));
    errs.extend(validate_nonnegative_field(
        int0(spec, "minReadySeconds"),
        &path.child("minReadySeconds"),
    ));
    if let Some(ordinals) = obj(spec, "ordinals") {
        errs.extend(validate_nonnegative_field(
            int0(ordinals, "start"),
            &path.child("ordinals").child("start"),
        ));
    }
    let service = str_of(spec, "serviceName");
    if !allow_invalid_service_name && !service.is_empty() {
        errs.extend(invalid_each(
            &path.child("serviceName"),
            service,
            is_dns1123_label(service),
        ));
    }

    let selector_path = path.child("selector");
    let selector = obj(spec, "selector");
    match selector {
        None => errs.push(field::required(&selector_path, "")),
        Some(sel) => {
            errs.extend(validate_label_selector(Some(sel), &selector_path));
            if selector_is_empty(sel) {
                errs.push(field::invalid(
                    &selector_path,
                    go_label_selector(Some(sel)),
                    "empty selector is invalid for statefulset",
                ));
            }
        }
    }

    let null = Value::Null;
    let template = spec.get("template").unwrap_or(&null);
    let template_path = path.child("template");
    match from_label_selector(selector.unwrap_or(&null)) {
        Err(_) => errs.push(field::invalid(
            &selector_path,
            go_label_selector(selector),
            "",
        )),
        Ok(sel) => {
            let meta = template.get("metadata").unwrap_or(&null);
            if !sel.is_empty() && !sel.matches_json(template) {
                errs.push(field::invalid(
                    &template_path.child("metadata").child("labels"),
                    BadValue::Raw(go_string_map(meta.get("labels"))),
                    "`selector` does not match template `labels`",
                ));
            }
            errs.extend(validate_labels(
                &str_map(meta, "labels"),
                &template_path.child("labels"),
            ));
            errs.extend(validate_annotations(
                &str_map(meta, "annotations"),
                &template_path.child("annotations"),
            ));
        }
    }

    errs.extend(crate::podspec::validate_controller_template(
        template,
        &template_path,
        "StatefulSet",
    ));
    errs
}

/// The rest of upstream `ValidateStatefulSetUpdate`: only the mutable fields may change.
fn validate_spec_update(new_spec: &Value, old_spec: &Value) -> Vec<field::Error> {
    let mut clone = new_spec.clone();
    if let Some(map) = clone.as_object_mut() {
        for key in MUTABLE_SPEC_FIELDS {
            match old_spec.get(key) {
                Some(v) => map.insert(key.to_owned(), v.clone()),
                None => map.remove(key),
            };
        }
    }
    if semantic(&clone) != semantic(old_spec) {
        return vec![field::forbidden(&Path::new("spec"), FORBIDDEN_UPDATE)];
    }
    Vec::new()
}

/// Upstream `ValidateStatefulSetStatus`.
fn validate_status(status: &Value) -> Vec<field::Error> {
    let path = Path::new("status");
    let get = |k: &str| int0(status, k);
    let mut errs = Vec::new();
    for k in [
        "replicas",
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
    ] {
        errs.extend(validate_nonnegative_field(get(k), &path.child(k)));
    }
    for k in ["observedGeneration", "collisionCount"] {
        if let Some(v) = int_of(status, k) {
            errs.extend(validate_nonnegative_field(v, &path.child(k)));
        }
    }
    let replicas = get("replicas");
    for k in [
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
    ] {
        if get(k) > replicas {
            errs.push(field::invalid(
                &path.child(k),
                get(k),
                "cannot be greater than status.replicas",
            ));
        }
    }
    if get("availableReplicas") > get("readyReplicas") {
        errs.push(field::invalid(
            &path.child("availableReplicas"),
            get("availableReplicas"),
            "cannot be greater than status.readyReplicas",
        ));
    }
    errs
}

/// Upstream `IsDecremented` of `status.collisionCount`, with its error.
// TODO: move to common.rs
pub(super) fn collision_count_decremented(new: &Value, old: &Value) -> Vec<field::Error> {
    let count = |v: &Value| v.pointer("/status/collisionCount").and_then(Value::as_i64);
    let (new_count, old_count) = (count(new), count(old));
    let decremented = match (new_count, old_count) {
        (None, Some(_)) => true,
        (Some(n), Some(o)) => n < o,
        _ => false,
    };
    if !decremented {
        return Vec::new();
    }
    vec![field::invalid(
        &Path::new("status").child("collisionCount"),
        new_count.unwrap_or(0),
        "cannot be decremented",
    )]
}

/// Upstream `dropStatefulSetDisabledFields`: MaxUnavailableStatefulSet is off in 1.33, so
/// `maxUnavailable` goes unless the stored set already has it.
fn drop_disabled_fields(new: &mut Value, old: Option<&Value>) {
    let in_use = old
        .and_then(|o| o.pointer("/spec/updateStrategy/rollingUpdate/maxUnavailable"))
        .is_some_and(|v| !v.is_null());
    if in_use {
        return;
    }
    if let Some(r) = new
        .pointer_mut("/spec/updateStrategy/rollingUpdate")
        .and_then(Value::as_object_mut)
    {
        r.remove("maxUnavailable");
    }
}

/// `SetDefaults_StatefulSet` (StatefulSetAutoDeletePVC is GA in 1.33).
fn default_spec(spec: &mut Map<String, Value>) {
    if spec
        .get("podManagementPolicy")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        spec.insert("podManagementPolicy".into(), json!("OrderedReady"));
    }
    if let Some(strategy) = object_entry(spec, "updateStrategy").as_object_mut() {
        if strategy
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            strategy.insert("type".into(), json!("RollingUpdate"));
            if strategy.get("rollingUpdate").is_none_or(Value::is_null) {
                strategy.insert("rollingUpdate".into(), json!({}));
            }
        }
        let rolling = strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate");
        if rolling
            && let Some(r) = strategy
                .get_mut("rollingUpdate")
                .and_then(Value::as_object_mut)
            && r.get("partition").is_none_or(Value::is_null)
        {
            r.insert("partition".into(), json!(0));
        }
    }
    if let Some(policy) = object_entry(spec, "persistentVolumeClaimRetentionPolicy").as_object_mut()
    {
        for key in ["whenDeleted", "whenScaled"] {
            if policy
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                policy.insert(key.into(), json!("Retain"));
            }
        }
    }
    for (key, value) in [("replicas", 1), ("revisionHistoryLimit", 10)] {
        if spec.get(key).is_none_or(Value::is_null) {
            spec.insert(key.into(), json!(value));
        }
    }
}

impl kas_registry::Strategy for Strategy {
    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    /// `SetObjectDefaults_StatefulSet`: the set's defaults, the pod template's, and each
    /// volume claim template's as a PersistentVolumeClaim's (a Pending phase, the
    /// Filesystem mode).
    fn default(&self, obj: &mut Value) {
        let Some(map) = obj.as_object_mut() else {
            return;
        };
        let Some(spec) = object_entry(map, "spec").as_object_mut() else {
            return;
        };
        default_spec(spec);
        default_pod_template_spec(object_entry(spec, "template"));
        if let Some(claims) = spec
            .get_mut("volumeClaimTemplates")
            .and_then(Value::as_array_mut)
        {
            for claim in claims.iter_mut().filter(|c| c.is_object()) {
                kas_registry::Strategy::default(
                    &crate::resources::persistentvolumeclaims::Strategy,
                    claim,
                );
            }
        }
    }

    /// A new set has an empty status and generation 1.
    fn prepare_for_create(&self, obj: &mut Value) {
        reset_status_and_generation(obj);
        drop_disabled_fields(obj, None);
    }

    /// The status stays; a changed spec is a new generation.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        drop_disabled_fields(new, Some(old));
        let null = Value::Null;
        let changed = semantic(new.get("spec").unwrap_or(&null))
            != semantic(old.get("spec").unwrap_or(&null));
        keep_status_and_bump_generation(new, old, changed);
    }

    /// Upstream `ValidateStatefulSet`.
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_label);
        let null = Value::Null;
        errs.extend(causes(validate_spec(
            obj.get("spec").unwrap_or(&null),
            false,
        )));
        errs
    }

    /// Upstream `ValidateStatefulSetUpdate`, which does not check the name again.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        let null = Value::Null;
        let new_spec = new.get("spec").unwrap_or(&null);
        errs.extend(causes(validate_spec(new_spec, true)));
        errs.extend(causes(validate_spec_update(
            new_spec,
            old.get("spec").unwrap_or(&null),
        )));
        errs
    }

    /// Upstream `ValidateStatefulSetStatusUpdate`.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let null = Value::Null;
        let mut errs = causes(validate_status(new.get("status").unwrap_or(&null)));
        errs.extend(validate_object_meta_update(new, old));
        errs.extend(causes(collision_count_decremented(new, old)));
        errs
    }

    /// Upstream `printStatefulSet`: Name, Ready (`ready/desired`), Age, Containers, Images.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let (names, images) = container_cells(obj.pointer("/spec/template/spec"));
        let int = |p: &str| obj.pointer(p).and_then(Value::as_i64).unwrap_or(0);
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(format!(
                "{}/{}",
                int("/status/readyReplicas"),
                int("/spec/replicas")
            )),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
            json!(names),
            json!(images),
        ]
    }
}

#[cfg(test)]
mod tests;
