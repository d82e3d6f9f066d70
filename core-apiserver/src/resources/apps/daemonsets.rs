//! apps/v1 DaemonSet, after upstream's `pkg/registry/apps/daemonset` (strategy and status
//! strategy), `SetObjectDefaults_DaemonSet`, `ValidateDaemonSet`, `ValidateDaemonSetUpdate`,
//! `ValidateDaemonSetStatusUpdate` and `printDaemonSet`.
//!
//! Upstream's internal `spec.templateGeneration` is, in apps/v1, the annotation
//! `deprecated.daemonset.template.generation` (`Convert_v1_DaemonSet_To_apps_DaemonSet`),
//! which every stored set carries: here the annotation is that field.

use kas_api::apps::v1::{DAEMON_SET_SPEC, DAEMON_SET_STATUS};
use kas_api::core::v1::POD_SPEC;
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::labels::{format_labels, from_label_selector};
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_nonnegative_field};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Value, json};

use super::common::{
    causes, format_label_selector, go_int_or_string, go_label_selector, go_string_map,
    int_or_percent_value, is_not_more_than_100_percent, keep_status_and_bump_generation,
    reset_status_and_generation, selector_is_empty, validate_label_selector,
    validate_positive_int_or_percent, validate_selector_immutable,
};
use super::statefulsets::{collision_count_decremented, go_pointer, object_entry};
use crate::podspec::container_cells;
use crate::podspec::defaults::default_pod_template_spec;
use crate::podspec::validation::json::{int_of, int0, obj, str_map, str_of};
use crate::podspec::validation::validate_pod_template_spec;
use crate::resources::persistentvolumes::validation::semantic;

const fn integer_column(name: &'static str, description: &'static str) -> TableColumn {
    TableColumn {
        name,
        type_: "integer",
        format: "",
        description,
        priority: 0,
    }
}

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "apps",
    version: "v1",
    kind: "DaemonSet",
    list_kind: "DaemonSetList",
    plural: "daemonsets",
    singular: "daemonset",
    short_names: &["ds"],
    categories: &["all"],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: &[
        NAME_COLUMN,
        integer_column("Desired", DAEMON_SET_STATUS.doc("desiredNumberScheduled")),
        integer_column("Current", DAEMON_SET_STATUS.doc("currentNumberScheduled")),
        integer_column("Ready", DAEMON_SET_STATUS.doc("numberReady")),
        integer_column(
            "Up-to-date",
            DAEMON_SET_STATUS.doc("updatedNumberScheduled"),
        ),
        integer_column("Available", DAEMON_SET_STATUS.doc("numberAvailable")),
        TableColumn {
            name: "Node Selector",
            type_: "string",
            format: "",
            description: POD_SPEC.doc("nodeSelector"),
            priority: 0,
        },
        AGE_COLUMN,
        crate::podspec::CONTAINERS_COLUMN,
        crate::podspec::IMAGES_COLUMN,
        TableColumn {
            name: "Selector",
            type_: "string",
            format: "",
            description: DAEMON_SET_SPEC.doc("selector"),
            priority: 1,
        },
    ],
    table_name_and_age: false,
    storage_resource: "daemonsets",
    schema: Some(&kas_api::apps::v1::DAEMON_SET),
    list_schema: Some(&kas_api::apps::v1::DAEMON_SET_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// `appsv1.DeprecatedTemplateGeneration`: where apps/v1 keeps `spec.templateGeneration`.
pub const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// The set's template generation: its annotation, 0 when absent (upstream refuses to
/// decode a set whose annotation is no integer; this reads it as 0).
pub fn template_generation(obj: &Value) -> i64 {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(TEMPLATE_GENERATION))
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn set_template_generation(obj: &mut Value, value: i64) {
    let meta = kas_registry::meta::metadata_mut(obj);
    if let Some(annotations) = object_entry(meta, "annotations").as_object_mut() {
        annotations.insert(TEMPLATE_GENERATION.into(), json!(value.to_string()));
    }
}

/// Upstream `ValidateRollingUpdateDaemonSet`.
fn validate_rolling_update(r: &Value, path: &Path) -> Vec<field::Error> {
    let null = Value::Null;
    let unavailable = r.get("maxUnavailable").unwrap_or(&null);
    let surge = r.get("maxSurge").unwrap_or(&null);
    let (mu_path, ms_path) = (path.child("maxUnavailable"), path.child("maxSurge"));
    let mut errs = validate_positive_int_or_percent(unavailable, &mu_path);
    errs.extend(validate_positive_int_or_percent(surge, &ms_path));
    errs.extend(is_not_more_than_100_percent(unavailable, &mu_path));
    errs.extend(is_not_more_than_100_percent(surge, &ms_path));
    let has_unavailable = int_or_percent_value(unavailable) != 0;
    let has_surge = int_or_percent_value(surge) != 0;
    if has_unavailable && has_surge {
        errs.push(field::invalid(
            &ms_path,
            go_int_or_string(surge),
            "may not be set when maxUnavailable is non-zero",
        ));
    } else if !has_unavailable && !has_surge {
        errs.push(field::required(&mu_path, "cannot be 0 when maxSurge is 0"));
    }
    errs
}

/// Upstream `ValidateDaemonSetUpdateStrategy`.
fn validate_update_strategy(strategy: &Value, path: &Path) -> Vec<field::Error> {
    match str_of(strategy, "type") {
        "OnDelete" => Vec::new(),
        "RollingUpdate" => match obj(strategy, "rollingUpdate") {
            None => vec![field::required(&path.child("rollingUpdate"), "")],
            Some(r) => validate_rolling_update(r, &path.child("rollingUpdate")),
        },
        other => {
            let value = format!(
                "apps.DaemonSetUpdateStrategy{{Type:{}, RollingUpdate:{}}}",
                quote(other),
                go_pointer("apps.RollingUpdateDaemonSet", strategy.get("rollingUpdate"))
            );
            vec![field::not_supported(
                path,
                BadValue::Raw(value),
                &["RollingUpdate", "OnDelete"],
            )]
        }
    }
}

/// Upstream `ValidateDaemonSetSpec`; `tg` is the set's template generation.
fn validate_spec(spec: &Value, tg: i64) -> Vec<field::Error> {
    let path = Path::new("spec");
    let null = Value::Null;
    let selector = obj(spec, "selector");
    let selector_path = path.child("selector");
    let template = spec.get("template").unwrap_or(&null);
    let template_path = path.child("template");
    let mut errs = validate_label_selector(selector, &selector_path);
    if let Ok(sel) = from_label_selector(selector.unwrap_or(&null))
        && !sel.matches_json(template)
    {
        errs.push(field::invalid(
            &template_path.child("metadata").child("labels"),
            BadValue::Raw(go_string_map(template.pointer("/metadata/labels"))),
            "`selector` does not match template `labels`",
        ));
    }
    if let Some(sel) = selector
        && selector_is_empty(sel)
    {
        errs.push(field::invalid(
            &selector_path,
            go_label_selector(Some(sel)),
            "empty selector is invalid for daemonset",
        ));
    }
    errs.extend(validate_pod_template_spec(template, &template_path));
    errs.extend(crate::podspec::validate_controller_template(
        template,
        &template_path,
        "DaemonSet",
    ));
    errs.extend(validate_nonnegative_field(
        int0(spec, "minReadySeconds"),
        &path.child("minReadySeconds"),
    ));
    errs.extend(validate_nonnegative_field(
        tg,
        &path.child("templateGeneration"),
    ));
    errs.extend(validate_update_strategy(
        spec.get("updateStrategy").unwrap_or(&null),
        &path.child("updateStrategy"),
    ));
    if let Some(limit) = int_of(spec, "revisionHistoryLimit") {
        errs.extend(validate_nonnegative_field(
            limit,
            &path.child("revisionHistoryLimit"),
        ));
    }
    errs
}

/// Upstream `ValidateDaemonSetSpecUpdate`: the template generation moves with the template.
fn validate_spec_update(new: &Value, old: &Value) -> Vec<field::Error> {
    let path = Path::new("spec").child("templateGeneration");
    let (new_tg, old_tg) = (template_generation(new), template_generation(old));
    let mut errs = Vec::new();
    if new_tg < old_tg {
        errs.push(field::invalid(&path, new_tg, "must not be decremented"));
    }
    let null = Value::Null;
    let template = |o: &Value| semantic(o.pointer("/spec/template").unwrap_or(&null));
    let template_updated = template(new) != template(old);
    if new_tg == old_tg && template_updated {
        errs.push(field::invalid(
            &path,
            new_tg,
            "must be incremented upon template update",
        ));
    } else if new_tg > old_tg && !template_updated {
        errs.push(field::invalid(
            &path,
            new_tg,
            "must not be incremented without template update",
        ));
    }
    errs
}

/// Upstream `validateDaemonSetStatus`.
fn validate_status(status: &Value) -> Vec<field::Error> {
    let path = Path::new("status");
    let mut errs = Vec::new();
    for k in [
        "currentNumberScheduled",
        "numberMisscheduled",
        "desiredNumberScheduled",
        "numberReady",
        "observedGeneration",
        "updatedNumberScheduled",
        "numberAvailable",
        "numberUnavailable",
    ] {
        errs.extend(validate_nonnegative_field(int0(status, k), &path.child(k)));
    }
    if let Some(c) = int_of(status, "collisionCount") {
        errs.extend(validate_nonnegative_field(c, &path.child("collisionCount")));
    }
    errs
}

impl kas_registry::Strategy for Strategy {
    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    /// `SetDefaults_DaemonSet` (a RollingUpdate strategy with maxUnavailable 1 and maxSurge
    /// 0, 10 revisions kept) and the pod template's defaults. A set decoded without the
    /// template generation annotation has generation 0, which upstream's conversion back
    /// to v1 writes before its field manager compares: the writer owns the annotation.
    fn default(&self, obj: &mut Value) {
        if obj.is_object()
            && obj
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(TEMPLATE_GENERATION))
                .is_none()
        {
            set_template_generation(obj, template_generation(obj));
        }
        let Some(map) = obj.as_object_mut() else {
            return;
        };
        let Some(spec) = object_entry(map, "spec").as_object_mut() else {
            return;
        };
        if let Some(strategy) = object_entry(spec, "updateStrategy").as_object_mut() {
            if strategy
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                strategy.insert("type".into(), json!("RollingUpdate"));
            }
            if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate")
                && let Some(r) = object_entry(strategy, "rollingUpdate").as_object_mut()
            {
                for (key, value) in [("maxUnavailable", 1), ("maxSurge", 0)] {
                    if r.get(key).is_none_or(Value::is_null) {
                        r.insert(key.into(), json!(value));
                    }
                }
            }
        }
        if spec.get("revisionHistoryLimit").is_none_or(Value::is_null) {
            spec.insert("revisionHistoryLimit".into(), json!(10));
        }
        default_pod_template_spec(object_entry(spec, "template"));
    }

    /// A new set has an empty status, generation 1 and template generation at least 1.
    fn prepare_for_create(&self, obj: &mut Value) {
        reset_status_and_generation(obj);
        let tg = template_generation(obj).max(1);
        set_template_generation(obj, tg);
    }

    /// The status and template generation stay; a changed template is a new template
    /// generation and generation, any other spec change a new generation.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let null = Value::Null;
        let part = |o: &Value, p: &str| semantic(o.pointer(p).unwrap_or(&null));
        let old_tg = template_generation(old);
        let (tg, gen_bump) = if part(new, "/spec/template") != part(old, "/spec/template") {
            (old_tg + 1, true)
        } else {
            (old_tg, part(new, "/spec") != part(old, "/spec"))
        };
        set_template_generation(new, tg);
        keep_status_and_bump_generation(new, old, gen_bump);
    }

    /// Upstream `ValidateDaemonSet`.
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        let null = Value::Null;
        errs.extend(causes(validate_spec(
            obj.get("spec").unwrap_or(&null),
            template_generation(obj),
        )));
        errs
    }

    /// Upstream's strategy: `ValidateDaemonSet`, `ValidateDaemonSetUpdate` (which checks
    /// the spec once more), and the selector, immutable in apps/v1.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let null = Value::Null;
        let spec = new.get("spec").unwrap_or(&null);
        let mut errs = self.validate(new);
        errs.extend(validate_object_meta_update(new, old));
        errs.extend(causes(validate_spec_update(new, old)));
        errs.extend(causes(validate_spec(spec, template_generation(new))));
        errs.extend(causes(validate_selector_immutable(new, old)));
        errs
    }

    /// Upstream `ValidateDaemonSetStatusUpdate`.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let null = Value::Null;
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validate_status(new.get("status").unwrap_or(&null))));
        errs.extend(causes(collision_count_decremented(new, old)));
        errs
    }

    /// Upstream `printDaemonSet`: Name, Desired, Current, Ready, Up-to-date, Available,
    /// Node Selector, Age, and wide Containers, Images, Selector.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let pod_spec = obj.pointer("/spec/template/spec");
        let (names, images) = container_cells(pod_spec);
        let int = |k: &str| {
            obj.pointer(&format!("/status/{k}"))
                .and_then(Value::as_i64)
                .unwrap_or(0)
        };
        let node_selector = pod_spec
            .map(|s| str_map(s, "nodeSelector"))
            .unwrap_or_default();
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(int("desiredNumberScheduled")),
            json!(int("currentNumberScheduled")),
            json!(int("numberReady")),
            json!(int("updatedNumberScheduled")),
            json!(int("numberAvailable")),
            json!(format_labels(&node_selector)),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
            json!(names),
            json!(images),
            json!(format_label_selector(obj.pointer("/spec/selector"))),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn ds() -> Value {
        let mut ds = json!({"metadata": {"name": "agent", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                "template": {"metadata": {"labels": {"app": "agent"}},
                    "spec": {"nodeSelector": {"disk": "ssd"},
                        "containers": [{"name": "a", "image": "agent:1"}]}}}});
        Strategy.default(&mut ds);
        ds
    }

    fn created() -> Value {
        let mut d = ds();
        Strategy.prepare_for_create(&mut d);
        d
    }

    #[test]
    fn upstream_defaults_and_a_template_generation() {
        let d = ds();
        assert_eq!(
            d["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
        );
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(d["spec"]["template"]["spec"]["restartPolicy"], "Always");
        let mut on_delete = json!({"spec": {"updateStrategy": {"type": "OnDelete"}}});
        Strategy.default(&mut on_delete);
        assert_eq!(
            on_delete["spec"]["updateStrategy"],
            json!({"type": "OnDelete"})
        );
        let d = created();
        assert_eq!(d["metadata"]["generation"], 1);
        assert_eq!(d["metadata"]["annotations"][TEMPLATE_GENERATION], "1");
        assert_eq!(d["status"], json!({}));
        assert!(
            Strategy.validate(&d).is_empty(),
            "{:?}",
            messages(&Strategy.validate(&d))
        );
    }

    #[test]
    fn template_changes_bump_the_template_generation() {
        let old = created();
        let mut new = old.clone();
        new["spec"]["minReadySeconds"] = json!(4);
        new["metadata"]["annotations"][TEMPLATE_GENERATION] = json!("7");
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(new["metadata"]["annotations"][TEMPLATE_GENERATION], "1");
        let mut newer = new.clone();
        newer["spec"]["template"]["spec"]["containers"][0]["image"] = json!("agent:2");
        Strategy.prepare_for_update(&mut newer, &new);
        assert_eq!(newer["metadata"]["generation"], 3);
        assert_eq!(newer["metadata"]["annotations"][TEMPLATE_GENERATION], "2");
        assert!(Strategy.validate_update(&newer, &new).is_empty());
        // Without the strategy, upstream's spec update rules refuse a stale generation.
        let mut stale = newer.clone();
        stale["metadata"]["annotations"][TEMPLATE_GENERATION] = json!("1");
        assert_eq!(
            messages(&Strategy.validate_update(&stale, &new)),
            ["spec.templateGeneration: Invalid value: 1: must be incremented upon template update"]
        );
    }

    #[test]
    fn spec_rules_and_their_messages() {
        let mut bad = ds();
        let spec = &mut bad["spec"];
        spec["selector"] = json!({"matchLabels": {"app": "other"}});
        spec["template"]["spec"]["restartPolicy"] = json!("OnFailure");
        spec["template"]["spec"]["activeDeadlineSeconds"] = json!(3);
        spec["minReadySeconds"] = json!(-1);
        spec["revisionHistoryLimit"] = json!(-2);
        spec["updateStrategy"]["rollingUpdate"] = json!({"maxUnavailable": "150%", "maxSurge": 1});
        assert_eq!(
            messages(&Strategy.validate(&bad)),
            [
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"agent\"}: `selector` does not match template `labels`",
                "spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported values: \"Always\"",
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported",
                "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%",
                "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:\"\"}: may not be set when maxUnavailable is non-zero",
                "spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0",
            ]
        );
    }

    #[test]
    fn the_pod_template_is_validated() {
        let mut d = ds();
        d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("");
        assert_eq!(
            messages(&Strategy.validate(&d)),
            ["spec.template.spec.containers[0].image: Required value"]
        );
    }

    #[test]
    fn strategies_and_selectors() {
        let mut d = ds();
        d["spec"]["updateStrategy"] = json!({"type": "Surge"});
        assert_eq!(
            messages(&Strategy.validate(&d)),
            [
                "spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:\"Surge\", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: \"RollingUpdate\", \"OnDelete\""
            ]
        );
        d["spec"]["updateStrategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "0%"}});
        assert_eq!(
            messages(&Strategy.validate(&d)),
            [
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"
            ]
        );
        d["spec"]["updateStrategy"] = json!({"type": "RollingUpdate"});
        assert_eq!(
            messages(&Strategy.validate(&d)),
            ["spec.updateStrategy.rollingUpdate: Required value"]
        );
        let mut d = ds();
        d["spec"]["selector"] = json!({});
        assert_eq!(
            messages(&Strategy.validate(&d)),
            [
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset"
            ]
        );
        if let Some(spec) = d["spec"].as_object_mut() {
            spec.remove("selector");
        }
        assert_eq!(
            messages(&Strategy.validate(&d)),
            [
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"agent\"}: `selector` does not match template `labels`"
            ]
        );
    }

    #[test]
    fn the_selector_is_immutable() {
        let old = created();
        let mut new = old.clone();
        new["spec"]["selector"] = json!({"matchLabels": {"app": "agent", "x": "y"}});
        new["spec"]["template"]["metadata"]["labels"]["x"] = json!("y");
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            [
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"agent\", \"x\":\"y\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
            ]
        );
    }

    #[test]
    fn status_counts_are_not_negative() {
        let mut old = created();
        old["status"] = json!({"collisionCount": 2});
        let mut new = old.clone();
        new["status"] = json!({"numberReady": -1, "observedGeneration": -1});
        assert_eq!(
            messages(&Strategy.validate_status_update(&new, &old)),
            [
                "status.numberReady: Invalid value: -1: must be greater than or equal to 0",
                "status.observedGeneration: Invalid value: -1: must be greater than or equal to 0",
                "status.collisionCount: Invalid value: 0: cannot be decremented",
            ]
        );
    }

    #[test]
    fn the_printer_cells() {
        let mut d = created();
        d["status"] = json!({"desiredNumberScheduled": 3, "currentNumberScheduled": 2,
            "numberReady": 1, "updatedNumberScheduled": 2, "numberAvailable": 1});
        let cells = Strategy.table_cells(&d);
        assert_eq!(cells.len(), DESCRIPTOR.table_columns.len());
        assert_eq!(
            cells,
            [
                json!("agent"),
                json!(3),
                json!(2),
                json!(1),
                json!(2),
                json!(1),
                json!("disk=ssd"),
                json!("<unknown>"),
                json!("a"),
                json!("agent:1"),
                json!("app=agent"),
            ]
        );
    }
}
