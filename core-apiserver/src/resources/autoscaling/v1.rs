//! autoscaling/v1 HorizontalPodAutoscaler: the autoscaling/v2 resource in its older shape,
//! after upstream's autoscaling/v1 REST storage (the same store served in a second
//! version). It reads and writes the same `/horizontalpodautoscalers/<ns>/<name>` keys in
//! the v2 form; [`super::convert`] turns v1's CPU target into a v2 metric and back, the
//! rest of v2 riding in annotations. v1's own defaulting (`minReplicas` 1) runs on the v1
//! form, upstream's v2 defaulting then sees the converted object as the internal one does.

use kas_registry::strategy::{Conversion, FieldErrors};
use kas_registry::{ResourceDescriptor, Scope, Subresource, Verb};
use serde_json::{Value, json};

use super::{TABLE_COLUMNS, convert};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "autoscaling",
    version: "v1",
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
    schema: Some(&kas_api::autoscaling::v1::HORIZONTAL_POD_AUTOSCALER),
    list_schema: Some(&kas_api::autoscaling::v1::HORIZONTAL_POD_AUTOSCALER_LIST),
};

/// How the role installs this resource: read through its own watch cache of the shared
/// keys (upstream builds one store, and one cacher, per served version).
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

impl kas_registry::Strategy for Strategy {
    fn conversion(&self) -> Option<&dyn Conversion> {
        Some(&convert::AutoscalingV1)
    }

    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        kas_registry::Strategy::reset_fields(&super::Strategy, subresource)
    }

    /// Upstream v1 `SetDefaults_HorizontalPodAutoscaler`: minReplicas 1. v2's defaults do
    /// not run on a v1 write, as upstream defaults only the version decoded; the
    /// conversion supplies v1's implicit CPU metric.
    fn default(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            if spec.get("minReplicas").is_none_or(Value::is_null) {
                spec.insert("minReplicas".into(), json!(1));
            }
        } else if let Some(map) = obj.as_object_mut() {
            map.insert("spec".into(), json!({"minReplicas": 1}));
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        kas_registry::Strategy::prepare_for_create(&super::Strategy, obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        kas_registry::Strategy::prepare_for_update(&super::Strategy, new, old);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        kas_registry::Strategy::validate(&super::Strategy, obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        kas_registry::Strategy::validate_update(&super::Strategy, new, old)
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        kas_registry::Strategy::validate_status_update(&super::Strategy, new, old)
    }

    /// Upstream prints the internal (v2-shaped) autoscaler whichever version was asked.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        super::printer::cells(&convert::AutoscalingV1.to_stored(obj.clone()))
    }
}
