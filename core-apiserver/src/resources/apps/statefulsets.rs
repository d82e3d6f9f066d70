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
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn sts() -> Value {
        let mut sts = json!({"metadata": {"name": "web", "namespace": "ns"},
            "spec": {"serviceName": "web",
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}}}}]}});
        Strategy.default(&mut sts);
        sts
    }

    fn created() -> Value {
        let mut s = sts();
        Strategy.prepare_for_create(&mut s);
        s
    }

    #[test]
    fn upstream_defaults_fill_the_spec_and_its_claim_templates() {
        let s = sts();
        let spec = &s["spec"];
        assert_eq!(spec["podManagementPolicy"], "OrderedReady");
        assert_eq!(
            spec["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        );
        assert_eq!(spec["replicas"], 1);
        assert_eq!(spec["revisionHistoryLimit"], 10);
        assert_eq!(
            spec["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
        );
        assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");
        assert_eq!(spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
        let claim = &spec["volumeClaimTemplates"][0];
        assert_eq!(claim["status"], json!({"phase": "Pending"}));
        assert_eq!(claim["spec"]["volumeMode"], "Filesystem");
        assert!(
            Strategy.validate(&s).is_empty(),
            "{:?}",
            messages(&Strategy.validate(&s))
        );
    }

    #[test]
    fn an_explicit_strategy_keeps_its_shape() {
        let mut s = json!({"spec": {"updateStrategy": {"type": "OnDelete"}}});
        Strategy.default(&mut s);
        assert_eq!(s["spec"]["updateStrategy"], json!({"type": "OnDelete"}));
        let mut s = json!({"spec": {"updateStrategy": {"type": "RollingUpdate"}}});
        Strategy.default(&mut s);
        assert_eq!(
            s["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate"})
        );
        let mut s = json!({"spec": {"updateStrategy": {"type": "RollingUpdate",
            "rollingUpdate": {"partition": 2}}, "replicas": 0}});
        Strategy.default(&mut s);
        assert_eq!(s["spec"]["updateStrategy"]["rollingUpdate"]["partition"], 2);
        assert_eq!(s["spec"]["replicas"], 0);
    }

    #[test]
    fn spec_rules_and_their_messages() {
        let mut bad = sts();
        bad["metadata"]["name"] = json!("web.v1");
        let spec = &mut bad["spec"];
        spec["podManagementPolicy"] = json!("Random");
        spec["persistentVolumeClaimRetentionPolicy"]["whenScaled"] = json!("Keep");
        spec["replicas"] = json!(-1);
        spec["minReadySeconds"] = json!(-2);
        spec["ordinals"] = json!({"start": -3});
        spec["serviceName"] = json!("Web_1");
        spec["selector"] = json!({"matchLabels": {"app": "db"}});
        spec["template"]["spec"]["restartPolicy"] = json!("Never");
        spec["template"]["spec"]["activeDeadlineSeconds"] = json!(5);
        let label = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
        assert_eq!(
            messages(&Strategy.validate(&bad)),
            [
                "metadata.name: Invalid value: \"web.v1\": must not contain dots".into(),
                "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'".into(),
                "spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: \"Keep\": supported values: \"Retain\", \"Delete\"".into(),
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0".into(),
                "spec.minReadySeconds: Invalid value: -2: must be greater than or equal to 0".into(),
                "spec.ordinals.start: Invalid value: -3: must be greater than or equal to 0".into(),
                format!("spec.serviceName: Invalid value: \"Web_1\": {label}"),
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`".into(),
                "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"".into(),
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported".into(),
            ]
        );
    }

    #[test]
    fn the_pod_spec_is_not_validated_as_in_1_33() {
        let mut s = sts();
        s["spec"]["template"]["spec"]["containers"][0]["image"] = json!("");
        s["spec"]["volumeClaimTemplates"][0]["spec"] = json!({});
        assert!(Strategy.validate(&s).is_empty());
        s["spec"]["template"]["metadata"]["labels"]["bad key!"] = json!("x");
        assert_eq!(
            messages(&Strategy.validate(&s))[0].split(':').next(),
            Some("spec.template.labels")
        );
    }

    #[test]
    fn update_strategies_are_checked() {
        let mut s = sts();
        s["spec"]["updateStrategy"] = json!({"type": "OnDelete", "rollingUpdate": {}});
        assert_eq!(
            messages(&Strategy.validate(&s)),
            [
                "spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:0, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'"
            ]
        );
        s["spec"]["updateStrategy"] = json!({"type": "Sometimes"});
        assert_eq!(
            messages(&Strategy.validate(&s)),
            [
                "spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:\"Sometimes\", RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'"
            ]
        );
        s["spec"]["updateStrategy"] =
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": -1}});
        assert_eq!(
            messages(&Strategy.validate(&s)),
            [
                "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0"
            ]
        );
        s["spec"]["updateStrategy"] = json!({});
        assert_eq!(
            messages(&Strategy.validate(&s)),
            ["spec.updateStrategy: Required value"]
        );
    }

    #[test]
    fn selectors_are_required_and_not_empty() {
        let mut s = sts();
        if let Some(spec) = s["spec"].as_object_mut() {
            spec.remove("selector");
        }
        assert_eq!(
            messages(&Strategy.validate(&s)),
            [
                "spec.selector: Required value",
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
            ]
        );
        s["spec"]["selector"] = json!({});
        assert_eq!(
            messages(&Strategy.validate(&s)),
            [
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset"
            ]
        );
        s["spec"]["selector"] =
            json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]});
        assert!(Strategy.validate(&s).is_empty());
    }

    #[test]
    fn only_some_spec_fields_change() {
        let old = created();
        let mut new = old.clone();
        new["spec"]["replicas"] = json!(3);
        new["spec"]["minReadySeconds"] = json!(5);
        new["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
        new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
        new["spec"]["persistentVolumeClaimRetentionPolicy"]["whenDeleted"] = json!("Delete");
        Strategy.prepare_for_update(&mut new, &old);
        assert!(
            Strategy.validate_update(&new, &old).is_empty(),
            "{:?}",
            messages(&Strategy.validate_update(&new, &old))
        );
        assert_eq!(new["metadata"]["generation"], 2);

        for (field, value) in [
            ("serviceName", json!("other")),
            ("podManagementPolicy", json!("Parallel")),
            ("revisionHistoryLimit", json!(3)),
            ("volumeClaimTemplates", json!([])),
        ] {
            let mut new = old.clone();
            new["spec"][field] = value;
            Strategy.prepare_for_update(&mut new, &old);
            assert_eq!(
                messages(&Strategy.validate_update(&new, &old)),
                [
                    "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
                ],
                "{field}"
            );
        }
    }

    #[test]
    fn a_stored_invalid_service_name_does_not_block_updates() {
        let mut old = created();
        old["spec"]["serviceName"] = json!("Bad_Name");
        assert!(!Strategy.validate(&old).is_empty());
        let mut new = old.clone();
        new["spec"]["replicas"] = json!(2);
        Strategy.prepare_for_update(&mut new, &old);
        assert!(Strategy.validate_update(&new, &old).is_empty());
    }

    #[test]
    fn writes_keep_the_status_and_drop_max_unavailable() {
        let mut s = sts();
        s["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = json!(2);
        s["status"] = json!({"replicas": 5});
        Strategy.prepare_for_create(&mut s);
        assert_eq!(s["status"], json!({}));
        assert_eq!(s["metadata"]["generation"], 1);
        assert_eq!(
            s["spec"]["updateStrategy"]["rollingUpdate"],
            json!({"partition": 0})
        );
        let mut new = s.clone();
        new["status"] = json!({"replicas": 7});
        new["metadata"]["generation"] = json!(9);
        Strategy.prepare_for_update(&mut new, &s);
        assert_eq!(new["status"], s["status"]);
        assert_eq!(new["metadata"]["generation"], 1);
        // A set that already has maxUnavailable keeps it, and it is checked.
        let mut old = s.clone();
        old["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = json!(1);
        let mut new = old.clone();
        new["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = json!("0%");
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            [
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"0%\"}: cannot be 0"
            ]
        );
    }

    #[test]
    fn status_counts_are_bounded_and_collisions_only_grow() {
        let mut old = created();
        old["status"] = json!({"replicas": 2, "collisionCount": 3});
        let mut new = old.clone();
        new["status"] = json!({"replicas": 1, "readyReplicas": 1, "availableReplicas": 2,
            "currentReplicas": -1, "collisionCount": 1});
        assert_eq!(
            messages(&Strategy.validate_status_update(&new, &old)),
            [
                "status.currentReplicas: Invalid value: -1: must be greater than or equal to 0",
                "status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 2: cannot be greater than status.readyReplicas",
                "status.collisionCount: Invalid value: 1: cannot be decremented",
            ]
        );
    }

    #[test]
    fn the_printer_shows_ready_over_desired() {
        let mut s = created();
        s["spec"]["replicas"] = json!(3);
        s["status"]["readyReplicas"] = json!(1);
        let cells = Strategy.table_cells(&s);
        assert_eq!(cells[0], "web");
        assert_eq!(cells[1], "1/3");
        assert_eq!(cells[2], "<unknown>");
        assert_eq!(cells[3..], [json!("c"), json!("nginx")]);
        assert_eq!(cells.len(), DESCRIPTOR.table_columns.len());
    }
}
