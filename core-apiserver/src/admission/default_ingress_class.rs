//! Upstream's `DefaultIngressClass` plugin
//! (`plugin/pkg/admission/network/defaultingressclass`): an Ingress created without
//! `spec.ingressClassName` and without the legacy `kubernetes.io/ingress.class` annotation
//! (any value, even empty) gets the default IngressClass, the one annotated
//! `ingressclass.kubernetes.io/is-default-class: "true"`; among several, the newest, then
//! the first by name.

use futures_util::future::BoxFuture;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::Mutate;
use kas_registry::store::Store;
use serde_json::Value;

#[cfg(test)]
use super::default_class::newest_default;
use super::default_class::{annotation, assign_default};

/// Upstream `networkingv1beta1.AnnotationIngressClass`.
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";
/// Upstream `networkingv1.AnnotationIsDefaultIngressClass`.
const DEFAULT_CLASS: &str = "ingressclass.kubernetes.io/is-default-class";

/// The plugin, reading IngressClasses from their store (through its watch cache).
pub struct DefaultIngressClass {
    pub classes: Option<Store>,
}

/// Whether the Ingress already names a class, by field or by the legacy annotation.
fn has_class(ingress: &Value) -> bool {
    annotation(ingress, CLASS_ANNOTATION).is_some()
        || ingress
            .pointer("/spec/ingressClassName")
            .is_some_and(|c| !c.is_null())
}

/// Whether an IngressClass is marked the default.
fn is_default(class: &Value) -> bool {
    annotation(class, DEFAULT_CLASS) == Some("true")
}

impl DefaultIngressClass {
    async fn admit_ingress(&self, name: &str, ingress: &mut Value) -> kas_registry::Result<()> {
        let Some(store) = self.classes.as_ref().filter(|_| !has_class(ingress)) else {
            return Ok(());
        };
        let resource = ("networking.k8s.io", "ingresses", name);
        assign_default(store, is_default, resource, ingress, "ingressClassName").await
    }
}

impl Mutate for DefaultIngressClass {
    fn mutate<'a>(
        &'a self,
        descriptor: &'static ResourceDescriptor,
        name: &'a str,
        ingress: &'a mut Value,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            if (descriptor.group, descriptor.plural) != ("networking.k8s.io", "ingresses") {
                return Ok(());
            }
            self.admit_ingress(name, ingress).await
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
        let classes = [
            class("old", "2024-01-01T00:00:00Z", on.clone()),
            class(
                "newest-not-default",
                "2025-01-01T00:00:00Z",
                json!({DEFAULT_CLASS: "True"}),
            ),
            class("b", "2024-06-01T00:00:00Z", on.clone()),
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
    fn an_ingress_names_a_class_by_field_or_legacy_annotation() {
        assert!(!has_class(&json!({"spec": {}})));
        assert!(!has_class(&json!({"spec": {"ingressClassName": null}})));
        assert!(has_class(&json!({"spec": {"ingressClassName": ""}})));
        assert!(has_class(
            &json!({"metadata": {"annotations": {CLASS_ANNOTATION: ""}}, "spec": {}})
        ));
    }
}
