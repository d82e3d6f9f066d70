//! HorizontalPodAutoscalers, after upstream's `pkg/registry/autoscaling/horizontalpodautoscaler`
//! (strategy, status strategy, `GetResetFields`), `pkg/apis/autoscaling/v2/defaults.go`,
//! `pkg/apis/autoscaling/validation` and `printHorizontalPodAutoscaler`.
//!
//! One resource served in two versions from one store, `/horizontalpodautoscalers/<ns>/<name>`:
//! autoscaling/v2 (here) is the storage version, as upstream's in 1.33, and autoscaling/v1
//! ([`v1`]) converts on the way in and out ([`convert`]), as events.k8s.io/v1 does over
//! core/v1 events. v2 is registered first, so discovery prefers it, as upstream does.

mod convert;
mod gojson;
mod printer;
pub mod v1;
mod validation;

use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::{FieldErrors, causes};
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Map, Value, json};

const fn column(name: &'static str, type_: &'static str, description: &'static str) -> TableColumn {
    TableColumn {
        name,
        type_,
        format: "",
        description,
        priority: 0,
    }
}

/// `printHorizontalPodAutoscaler`'s columns between Name and Age, described by the v2
/// spec's and status's field docs.
const TABLE_COLUMNS: &[TableColumn] = &[
    column(
        "Reference",
        "string",
        "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.",
    ),
    column(
        "Targets",
        "string",
        "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization.",
    ),
    column(
        "MinPods",
        "string",
        "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.",
    ),
    column(
        "MaxPods",
        "integer",
        "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.",
    ),
    column(
        "Replicas",
        "integer",
        "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.",
    ),
];

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "autoscaling",
    version: "v2",
    kind: "HorizontalPodAutoscaler",
    list_kind: "HorizontalPodAutoscalerList",
    plural: "horizontalpodautoscalers",
    singular: "horizontalpodautoscaler",
    short_names: &["hpa"],
    categories: &["all"],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: TABLE_COLUMNS,
    table_name_and_age: true,
    storage_resource: "horizontalpodautoscalers",
    schema: Some(&kas_api::autoscaling::v2::HORIZONTAL_POD_AUTOSCALER),
    list_schema: Some(&kas_api::autoscaling::v2::HORIZONTAL_POD_AUTOSCALER_LIST),
};

/// How the role installs this resource: read through a watch cache.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
}

/// The autoscaling/v2 strategy, which also holds the rules of the stored form that
/// autoscaling/v1 shares.
pub struct Strategy;

/// Stored autoscalers are also served as autoscaling/v1.
static OTHER_VERSIONS: [kas_registry::strategy::OtherVersion; 1] = [(
    "autoscaling/v1",
    &convert::AutoscalingV1,
    &kas_api::autoscaling::v1::HORIZONTAL_POD_AUTOSCALER,
)];

/// Upstream's `defaultHPAScaleUpRules`.
fn default_scale_up() -> Value {
    json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ]})
}

/// Upstream's `defaultHPAScaleDownRules` (no stabilization window: the controller's flag).
fn default_scale_down() -> Value {
    json!({"selectPolicy": "Max", "policies": [
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ]})
}

/// `copyHPAScalingRules` over the defaults: each field set in `rules` wins.
fn scaling_rules(rules: Option<&Value>, defaults: Value) -> Value {
    let mut out = defaults;
    if let (Some(Value::Object(rules)), Some(out)) = (rules, out.as_object_mut()) {
        for (k, v) in rules {
            if !v.is_null() {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// Upstream v2 `SetDefaults_HorizontalPodAutoscaler`: minReplicas 1, CPU at 80% when no
/// metric is given, and a set behavior's missing rules filled in.
fn set_defaults(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let spec = map.entry("spec").or_insert_with(|| json!({}));
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    if spec.get("minReplicas").is_none_or(Value::is_null) {
        spec.insert("minReplicas".into(), json!(1));
    }
    if spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu", "target":
                {"type": "Utilization", "averageUtilization": convert::DEFAULT_CPU_UTILIZATION}}}]),
        );
    }
    if let Some(behavior) = spec.get_mut("behavior").and_then(Value::as_object_mut) {
        let up = scaling_rules(behavior.get("scaleUp"), default_scale_up());
        let down = scaling_rules(behavior.get("scaleDown"), default_scale_down());
        behavior.insert("scaleUp".into(), up);
        behavior.insert("scaleDown".into(), down);
    }
}

/// Whether a scaling rule of the behavior sets a tolerance (upstream `toleranceInUse`).
fn tolerance_in_use(obj: &Value) -> bool {
    ["scaleUp", "scaleDown"].iter().any(|dir| {
        obj.pointer(&format!("/spec/behavior/{dir}/tolerance"))
            .is_some_and(|t| !t.is_null())
    })
}

/// Upstream `dropDisabledFields`: HPAConfigurableTolerance is off (alpha in 1.33), so a
/// tolerance is dropped unless the old object already uses one.
fn drop_disabled_fields(new: &mut Value, old: Option<&Value>) {
    if old.is_some_and(tolerance_in_use) {
        return;
    }
    for dir in ["scaleUp", "scaleDown"] {
        if let Some(rules) = new
            .pointer_mut(&format!("/spec/behavior/{dir}"))
            .and_then(Value::as_object_mut)
        {
            rules.remove("tolerance");
        }
    }
}

fn min_replicas(obj: &Value) -> Option<i64> {
    obj.pointer("/spec/minReplicas").and_then(Value::as_i64)
}

impl kas_registry::Strategy for Strategy {
    fn other_versions(&self) -> &'static [kas_registry::strategy::OtherVersion] {
        &OTHER_VERSIONS
    }

    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    fn default(&self, obj: &mut Value) {
        set_defaults(obj);
    }

    /// Create cannot set status.
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), Value::Object(Map::new()));
        }
        drop_disabled_fields(obj, None);
    }

    /// Update is not allowed to set status.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if let Some(map) = new.as_object_mut() {
            match old.get("status") {
                Some(s) => map.insert("status".into(), s.clone()),
                None => map.remove("status"),
            };
        }
        drop_disabled_fields(new, Some(old));
    }

    /// `ValidateHorizontalPodAutoscaler` (HPAScaleToZero off: minReplicas at least 1).
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        errs.extend(causes(validation::validate_spec(obj, 1)));
        errs
    }

    /// `ValidateHorizontalPodAutoscalerUpdate`: an autoscaler already at zero may stay.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let lower = if min_replicas(old) == Some(0) { 0 } else { 1 };
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validation::validate_spec(new, lower)));
        errs
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validation::validate_status(new)));
        errs
    }

    /// `printHorizontalPodAutoscaler`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        printer::cells(obj)
    }
}

#[cfg(test)]
mod tests;
