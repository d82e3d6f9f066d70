//! apps/v1 Deployment, after upstream's `pkg/registry/apps/deployment` (strategy, status
//! strategy, `GetResetFields`, the scale subresource), `SetDefaults_Deployment`,
//! `ValidateDeployment`, `ValidateDeploymentUpdate`, `ValidateDeploymentStatusUpdate` and
//! `printDeployment`.

use kas_api::apps::v1::{DEPLOYMENT_SPEC, DEPLOYMENT_STATUS};
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_nonnegative_field};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::descriptor::{ScaleSelector, ScaleSpec};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Value, json};

use super::common::{
    causes, default_template, int, int_or_percent_value, is_not_more_than_100_percent, is_set,
    keep_status_and_bump_generation, label_selector_string, name_warnings,
    reset_status_and_generation, validate_pod_template_spec_for_replica_set,
    validate_positive_int_or_percent, validate_selector_immutable, validate_workload_selector,
};
use crate::podspec::container_cells;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    list_kind: "DeploymentList",
    plural: "deployments",
    singular: "deployment",
    short_names: &["deploy"],
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
        TableColumn {
            name: "Up-to-date",
            type_: "string",
            format: "",
            description: DEPLOYMENT_STATUS.doc("updatedReplicas"),
            priority: 0,
        },
        TableColumn {
            name: "Available",
            type_: "string",
            format: "",
            description: DEPLOYMENT_STATUS.doc("availableReplicas"),
            priority: 0,
        },
        AGE_COLUMN,
        crate::podspec::CONTAINERS_COLUMN,
        crate::podspec::IMAGES_COLUMN,
        TableColumn {
            name: "Selector",
            type_: "string",
            format: "",
            description: DEPLOYMENT_SPEC.doc("selector"),
            priority: 1,
        },
    ],
    table_name_and_age: false,
    storage_resource: "deployments",
    schema: Some(&kas_api::apps::v1::DEPLOYMENT),
    list_schema: Some(&kas_api::apps::v1::DEPLOYMENT_LIST),
};

/// Upstream `appsv1.DeprecatedRollbackTo`: the annotation apps/v1 carries the internal
/// `spec.rollbackTo` in.
const DEPRECATED_ROLLBACK_TO: &str = "deprecated.deployment.rollback.to";

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `ValidateRollingUpdateDeployment`.
fn validate_rolling_update(ru: &Value, path: &Path) -> Vec<field::Error> {
    let zero = json!(0);
    let max_unavailable = ru.get("maxUnavailable").filter(|v| !v.is_null());
    let max_surge = ru.get("maxSurge").filter(|v| !v.is_null());
    let unavailable = max_unavailable.unwrap_or(&zero);
    let surge = max_surge.unwrap_or(&zero);
    let unavailable_path = path.child("maxUnavailable");
    let mut errs = validate_positive_int_or_percent(unavailable, &unavailable_path);
    errs.extend(validate_positive_int_or_percent(
        surge,
        &path.child("maxSurge"),
    ));
    if int_or_percent_value(unavailable) == 0 && int_or_percent_value(surge) == 0 {
        errs.push(field::invalid(
            &unavailable_path,
            super::common::go_int_or_string(unavailable),
            "may not be 0 when `maxSurge` is 0",
        ));
    }
    errs.extend(is_not_more_than_100_percent(unavailable, &unavailable_path));
    errs
}

/// An `apps.DeploymentStrategy` as upstream's `field.Error` prints it (`%#v`). A set
/// `rollingUpdate` prints as a pointer, whose address upstream shows and this cannot.
fn go_strategy(strategy: &Value) -> BadValue {
    let kind = strategy.get("type").and_then(Value::as_str).unwrap_or("");
    let rolling = if is_set(strategy, "/rollingUpdate") {
        "(*apps.RollingUpdateDeployment)(0xc000000000)"
    } else {
        "(*apps.RollingUpdateDeployment)(nil)"
    };
    BadValue::Raw(format!(
        "apps.DeploymentStrategy{{Type:{}, RollingUpdate:{rolling}}}",
        kas_apimachinery::golang::strconv::quote(kind)
    ))
}

/// Upstream `ValidateDeploymentStrategy`.
fn validate_strategy(strategy: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let rolling_update = strategy.get("rollingUpdate").filter(|v| !v.is_null());
    match strategy.get("type").and_then(Value::as_str).unwrap_or("") {
        "Recreate" => {
            if rolling_update.is_some() {
                errs.push(field::forbidden(
                    &path.child("rollingUpdate"),
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        "RollingUpdate" => match rolling_update {
            None => errs.push(field::required(
                &path.child("rollingUpdate"),
                "this should be defaulted and never be nil",
            )),
            Some(ru) => errs.extend(validate_rolling_update(ru, &path.child("rollingUpdate"))),
        },
        _ => errs.push(field::not_supported(
            path,
            go_strategy(strategy),
            &["Recreate", "RollingUpdate"],
        )),
    }
    errs
}

/// Upstream `ValidateDeploymentSpec`, with `ValidateRollback` of the rollback the
/// `deprecated.deployment.rollback.to` annotation carries.
fn validate_spec(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("spec");
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let mut errs = validate_nonnegative_field(int(spec, "/replicas"), &path.child("replicas"));
    if let Some(selector) = validate_workload_selector(spec, &path, &mut errs) {
        let empty = json!({});
        let template = spec.get("template").unwrap_or(&empty);
        errs.extend(validate_pod_template_spec_for_replica_set(
            template,
            &selector,
            &path.child("template"),
        ));
    }
    errs.extend(validate_strategy(
        spec.get("strategy").unwrap_or(&null),
        &path.child("strategy"),
    ));
    let min_ready = int(spec, "/minReadySeconds");
    errs.extend(validate_nonnegative_field(
        min_ready,
        &path.child("minReadySeconds"),
    ));
    if is_set(spec, "/revisionHistoryLimit") {
        errs.extend(validate_nonnegative_field(
            int(spec, "/revisionHistoryLimit"),
            &path.child("revisionHistoryLimit"),
        ));
    }
    if let Some(revision) = rollback_revision(obj) {
        errs.extend(validate_nonnegative_field(
            revision,
            &path.child("rollback").child("version"),
        ));
    }
    if is_set(spec, "/progressDeadlineSeconds") {
        let deadline = int(spec, "/progressDeadlineSeconds");
        let deadline_path = path.child("progressDeadlineSeconds");
        errs.extend(validate_nonnegative_field(deadline, &deadline_path));
        if deadline <= min_ready {
            errs.push(field::invalid(
                &deadline_path,
                deadline,
                "must be greater than minReadySeconds",
            ));
        }
    }
    errs
}

/// The revision of upstream's internal `spec.rollbackTo`, which apps/v1 converts from the
/// `deprecated.deployment.rollback.to` annotation when it is a non-empty integer.
fn rollback_revision(obj: &Value) -> Option<i64> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(DEPRECATED_ROLLBACK_TO))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .and_then(|s| s.parse().ok())
}

/// Upstream `ValidateDeploymentStatus`.
fn validate_status(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("status");
    let get = |k: &str| int(obj, &format!("/status/{k}"));
    let mut errs = Vec::new();
    for k in [
        "observedGeneration",
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
    ] {
        errs.extend(validate_nonnegative_field(get(k), &path.child(k)));
    }
    if is_set(obj, "/status/collisionCount") {
        errs.extend(validate_nonnegative_field(
            get("collisionCount"),
            &path.child("collisionCount"),
        ));
    }
    let replicas = get("replicas");
    for k in ["updatedReplicas", "readyReplicas", "availableReplicas"] {
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
            "cannot be greater than readyReplicas",
        ));
    }
    errs
}

/// Upstream `ValidateDeploymentStatusUpdate`'s `IsDecremented` check of `collisionCount`.
fn validate_collision_count(new: &Value, old: &Value) -> Vec<field::Error> {
    let pointer = "/status/collisionCount";
    let decremented =
        is_set(old, pointer) && (!is_set(new, pointer) || int(new, pointer) < int(old, pointer));
    if !decremented {
        return Vec::new();
    }
    vec![field::invalid(
        &Path::new("status").child("collisionCount"),
        int(new, pointer),
        "cannot be decremented",
    )]
}

/// The annotations upstream's internal Deployment has: apps/v1's, less the one it converts
/// into `spec.rollbackTo` (when that is not empty).
fn annotations_without_rollback(obj: &Value) -> Option<Value> {
    let mut annotations = obj.pointer("/metadata/annotations")?.clone();
    if let Some(map) = annotations.as_object_mut()
        && map
            .get(DEPRECATED_ROLLBACK_TO)
            .and_then(Value::as_str)
            .is_some_and(|r| !r.is_empty())
    {
        map.remove(DEPRECATED_ROLLBACK_TO);
    }
    Some(annotations).filter(|a| a.as_object().is_none_or(|m| !m.is_empty()))
}

impl kas_registry::Strategy for Strategy {
    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec", "metadata.labels"],
            _ => &["status"],
        }
    }

    /// `SetDefaults_Deployment` and the template's defaults.
    fn default(&self, obj: &mut Value) {
        // The spec is a value, not a pointer: a missing one is defaulted too.
        if let Some(map) = obj.as_object_mut()
            && map.get("spec").is_none_or(Value::is_null)
        {
            map.insert("spec".into(), json!({}));
        }
        let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        if spec.get("replicas").is_none_or(Value::is_null) {
            spec.insert("replicas".into(), json!(1));
        }
        let strategy = spec.entry("strategy").or_insert_with(|| json!({}));
        if strategy.is_null() {
            *strategy = json!({});
        }
        if let Some(strategy) = strategy.as_object_mut() {
            let kind = strategy.get("type").and_then(Value::as_str).unwrap_or("");
            if kind.is_empty() {
                strategy.insert("type".into(), json!("RollingUpdate"));
            }
            if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                let ru = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
                if ru.is_null() {
                    *ru = json!({});
                }
                if let Some(ru) = ru.as_object_mut() {
                    for key in ["maxUnavailable", "maxSurge"] {
                        if ru.get(key).is_none_or(Value::is_null) {
                            ru.insert(key.into(), json!("25%"));
                        }
                    }
                }
            }
        }
        if spec.get("revisionHistoryLimit").is_none_or(Value::is_null) {
            spec.insert("revisionHistoryLimit".into(), json!(10));
        }
        if spec
            .get("progressDeadlineSeconds")
            .is_none_or(Value::is_null)
        {
            spec.insert("progressDeadlineSeconds".into(), json!(600));
        }
        default_template(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        reset_status_and_generation(obj);
    }

    /// The status stays; a changed spec or changed annotations are a new generation
    /// (annotations are copied to the deployment's replica sets).
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = new.get("spec") != old.get("spec")
            || annotations_without_rollback(new) != annotations_without_rollback(old)
            || rollback_revision(new) != rollback_revision(old);
        keep_status_and_bump_generation(new, old, changed);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        errs.extend(causes(validate_spec(obj)));
        errs
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        name_warnings(obj)
    }

    /// `ValidateDeploymentUpdate`, and the strategy's immutable selector for apps/v1.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        let mut spec_errs = validate_spec(new);
        spec_errs.extend(validate_selector_immutable(new, old));
        errs.extend(causes(spec_errs));
        errs
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        let mut status_errs = validate_status(new);
        status_errs.extend(validate_collision_count(new, old));
        errs.extend(causes(status_errs));
        errs
    }

    /// `printDeployment`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let (names, images) = container_cells(obj.pointer("/spec/template/spec"));
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(format!(
                "{}/{}",
                int(obj, "/status/readyReplicas"),
                int(obj, "/spec/replicas")
            )),
            json!(int(obj, "/status/updatedReplicas")),
            json!(int(obj, "/status/availableReplicas")),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
            json!(names),
            json!(images),
            json!(label_selector_string(
                obj.pointer("/spec/selector"),
                "<invalid>"
            )),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn deployment() -> Value {
        let mut d = json!({"metadata": {"name": "web", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}});
        Strategy.default(&mut d);
        d
    }

    #[test]
    fn upstream_defaults() {
        let d = deployment();
        let spec = &d["spec"];
        assert_eq!(spec["replicas"], 1);
        assert_eq!(
            spec["strategy"],
            json!({"type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        assert_eq!(spec["revisionHistoryLimit"], 10);
        assert_eq!(spec["progressDeadlineSeconds"], 600);
        assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");
        assert_eq!(spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
        let errs = Strategy.validate(&d);
        assert!(errs.is_empty(), "{:?}", messages(&errs));

        // Recreate gets no rolling update.
        let mut r = json!({"spec": {"strategy": {"type": "Recreate"}}});
        Strategy.default(&mut r);
        assert_eq!(r["spec"]["strategy"], json!({"type": "Recreate"}));
    }

    #[test]
    fn spec_rules_and_messages() {
        let mut bad = deployment();
        bad["spec"]["replicas"] = json!(-1);
        bad["spec"]["selector"] = json!({"matchLabels": {"app": "db"}});
        bad["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure");
        bad["spec"]["template"]["spec"]["activeDeadlineSeconds"] = json!(5);
        bad["spec"]["strategy"]["rollingUpdate"] = json!({"maxUnavailable": 0, "maxSurge": "0%"});
        bad["spec"]["minReadySeconds"] = json!(700);
        bad["spec"]["revisionHistoryLimit"] = json!(-2);
        assert_eq!(
            messages(&Strategy.validate(&bad)),
            [
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
                "spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported values: \"Always\"",
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported",
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0",
                "spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0",
                "spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds",
            ]
        );
    }

    #[test]
    fn selector_is_required_and_not_empty() {
        let mut d = deployment();
        d["spec"]["selector"] = json!({});
        assert_eq!(
            messages(&Strategy.validate(&d)),
            [
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"
            ]
        );
        d["spec"].as_object_mut().unwrap().remove("selector");
        assert_eq!(
            messages(&Strategy.validate(&d)),
            [
                "spec.selector: Required value",
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
            ]
        );
        d["spec"]["selector"] = json!({"matchExpressions": [{"key": "app", "operator": "Is"}]});
        assert_eq!(
            messages(&Strategy.validate(&d)),
            [
                "spec.selector.matchExpressions[0].operator: Invalid value: \"Is\": not a valid selector operator",
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:\"app\", Operator:\"Is\", Values:[]string(nil)}}}: invalid label selector",
            ]
        );
    }

    #[test]
    fn strategy_rules() {
        let mut d = deployment();
        d["spec"]["strategy"]["type"] = json!("Recreate");
        assert_eq!(
            messages(&Strategy.validate(&d)),
            [
                "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"
            ]
        );
        d["spec"]["strategy"] = json!({"type": "Canary"});
        assert_eq!(
            messages(&Strategy.validate(&d)),
            [
                "spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:\"Canary\", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: \"Recreate\", \"RollingUpdate\""
            ]
        );
        d["spec"]["strategy"] = json!({"type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": "150%", "maxSurge": "x"}});
        assert_eq!(
            messages(&Strategy.validate(&d)),
            [
                "spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"x\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%",
            ]
        );
    }

    #[test]
    fn the_selector_is_immutable_and_spec_changes_are_generations() {
        let mut old = deployment();
        Strategy.prepare_for_create(&mut old);
        assert_eq!(old["metadata"]["generation"], 1);
        assert_eq!(old["status"], json!({}));

        let mut new = old.clone();
        new["spec"]["replicas"] = json!(3);
        new["status"] = json!({"replicas": 9});
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(new["status"], json!({}));

        let mut same = old.clone();
        Strategy.prepare_for_update(&mut same, &old);
        assert_eq!(same["metadata"]["generation"], 1);

        let mut annotated = old.clone();
        annotated["metadata"]["annotations"] = json!({"note": "x"});
        Strategy.prepare_for_update(&mut annotated, &old);
        assert_eq!(annotated["metadata"]["generation"], 2);

        let mut moved = old.clone();
        moved["spec"]["selector"] = json!({"matchLabels": {"app": "web", "tier": "x"}});
        moved["spec"]["template"]["metadata"]["labels"] = json!({"app": "web", "tier": "x"});
        assert_eq!(
            messages(&Strategy.validate_update(&moved, &old)),
            [
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\", \"tier\":\"x\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
            ]
        );
        assert!(Strategy.validate_update(&new, &old).is_empty());
    }

    #[test]
    fn status_rules() {
        let old = deployment();
        let mut new = old.clone();
        new["status"] = json!({"replicas": 1, "updatedReplicas": 2, "readyReplicas": 1,
            "availableReplicas": 2, "collisionCount": 1});
        let mut older = old.clone();
        older["status"] = json!({"collisionCount": 3});
        assert_eq!(
            messages(&Strategy.validate_status_update(&new, &older)),
            [
                "status.updatedReplicas: Invalid value: 2: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas",
                "status.collisionCount: Invalid value: 1: cannot be decremented",
            ]
        );
    }

    #[test]
    fn rollback_annotation_is_validated() {
        let mut d = deployment();
        d["metadata"]["annotations"] = json!({DEPRECATED_ROLLBACK_TO: "-1"});
        assert_eq!(
            messages(&Strategy.validate(&d)),
            ["spec.rollback.version: Invalid value: -1: must be greater than or equal to 0"]
        );
    }

    #[test]
    fn printer_cells() {
        let mut d = deployment();
        d["spec"]["replicas"] = json!(2);
        d["status"] = json!({"readyReplicas": 1, "updatedReplicas": 2, "availableReplicas": 1});
        let cells = Strategy.table_cells(&d);
        assert_eq!(cells[..4], [json!("web"), json!("1/2"), json!(2), json!(1)]);
        assert_eq!(
            cells[5..],
            [json!("nginx"), json!("nginx:1.27"), json!("app=web")]
        );
        assert_eq!(cells.len(), DESCRIPTOR.table_columns.len());
        assert!(Strategy.warnings_on_create(&d).is_empty());
    }
}
