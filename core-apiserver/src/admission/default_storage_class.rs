//! Upstream's `DefaultStorageClass` plugin
//! (`plugin/pkg/admission/storage/storageclass/setdefault`): a PersistentVolumeClaim
//! created without a class (no `spec.storageClassName` and no beta class annotation; an
//! empty name is a choice of no class) gets the default StorageClass, the one annotated
//! `storageclass.kubernetes.io/is-default-class: "true"` (or the beta annotation); among
//! several, the newest, then the first by name (`volumeutil.GetDefaultClass`).

use futures_util::future::BoxFuture;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::Mutate;
use kas_registry::store::Store;
use serde_json::Value;

#[cfg(test)]
use super::default_class::newest_default;
use super::default_class::{annotation, assign_default};

/// Upstream `v1.BetaStorageClassAnnotation`, which names a claim's class.
pub const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";
const DEFAULT_CLASS: &str = "storageclass.kubernetes.io/is-default-class";
const BETA_DEFAULT_CLASS: &str = "storageclass.beta.kubernetes.io/is-default-class";

/// The plugin, reading StorageClasses from their store (through its watch cache).
pub struct DefaultStorageClass {
    pub classes: Option<Store>,
}

/// Upstream `PersistentVolumeClaimHasClass`.
fn has_class(claim: &Value) -> bool {
    annotation(claim, BETA_CLASS_ANNOTATION).is_some()
        || claim
            .pointer("/spec/storageClassName")
            .is_some_and(|c| !c.is_null())
}

/// Upstream `IsDefaultAnnotation`.
fn is_default(class: &Value) -> bool {
    annotation(class, DEFAULT_CLASS) == Some("true")
        || annotation(class, BETA_DEFAULT_CLASS) == Some("true")
}

impl DefaultStorageClass {
    async fn admit_claim(&self, name: &str, claim: &mut Value) -> kas_registry::Result<()> {
        let Some(store) = self.classes.as_ref().filter(|_| !has_class(claim)) else {
            return Ok(());
        };
        let resource = ("", "persistentvolumeclaims", name);
        assign_default(store, is_default, resource, claim, "storageClassName").await
    }
}

impl Mutate for DefaultStorageClass {
    fn mutate<'a>(
        &'a self,
        descriptor: &'static ResourceDescriptor,
        name: &'a str,
        claim: &'a mut Value,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            if (descriptor.group, descriptor.plural) != ("", "persistentvolumeclaims") {
                return Ok(());
            }
            self.admit_claim(name, claim).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Upstream's default-class choice over `classes`.
    fn default_class(classes: &[Value]) -> Option<&Value> {
        newest_default(classes, is_default)
    }

    fn class(name: &str, created: &str, annotations: Value) -> Value {
        json!({"metadata": {"name": name, "creationTimestamp": created, "annotations": annotations}})
    }

    #[test]
    fn the_newest_default_class_then_the_first_name_wins() {
        let on = json!({DEFAULT_CLASS: "true"});
        let beta = json!({BETA_DEFAULT_CLASS: "true"});
        let classes = [
            class("old", "2024-01-01T00:00:00Z", on.clone()),
            class(
                "newest-not-default",
                "2025-01-01T00:00:00Z",
                json!({DEFAULT_CLASS: "True"}),
            ),
            class("b", "2024-06-01T00:00:00Z", beta),
            class("a", "2024-06-01T00:00:00Z", on.clone()),
        ];
        let found = default_class(&classes).map(kas_registry::meta::name);
        assert_eq!(found, Some("a"));
        assert!(default_class(&classes[1..2]).is_none());
        assert_eq!(
            default_class(&classes[..1]).map(kas_registry::meta::name),
            Some("old")
        );
    }

    #[test]
    fn a_claim_names_a_class_by_field_or_beta_annotation() {
        assert!(!has_class(&json!({"spec": {}})));
        assert!(!has_class(&json!({"spec": {"storageClassName": null}})));
        assert!(has_class(&json!({"spec": {"storageClassName": ""}})));
        assert!(has_class(
            &json!({"metadata": {"annotations": {BETA_CLASS_ANNOTATION: ""}}, "spec": {}})
        ));
    }
}
