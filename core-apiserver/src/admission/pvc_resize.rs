//! Upstream's `PersistentVolumeClaimResize` plugin
//! (`plugin/pkg/admission/storage/persistentvolume/resize`), a validating one: an update
//! that grows a claim's storage request is refused unless the claim is bound and its
//! StorageClass (the same before and after) sets `allowVolumeExpansion: true`.

use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_apimachinery::resource::Quantity;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Attributes, Operation, Validate};
use kas_registry::store::Store;
use serde_json::Value;

use super::default_storage_class::BETA_CLASS_ANNOTATION;

/// The plugin, reading StorageClasses from their store (through its watch cache).
pub struct PersistentVolumeClaimResize {
    pub classes: Option<Store>,
}

/// The claim's storage request; absent or unparsable counts as zero, as a missing map
/// entry does upstream.
fn requested(claim: &Value) -> Quantity {
    claim
        .pointer("/spec/resources/requests/storage")
        .and_then(Value::as_str)
        .and_then(|s| Quantity::parse(s).ok())
        .unwrap_or_else(|| Quantity::parse("0").expect("zero parses"))
}

/// Upstream `GetPersistentVolumeClaimClass`: the beta annotation, else the field.
fn claim_class(claim: &Value) -> &str {
    if let Some(class) = claim
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(BETA_CLASS_ANNOTATION))
        .and_then(Value::as_str)
    {
        return class;
    }
    claim
        .pointer("/spec/storageClassName")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// What the plugin decides before it reads the class: `Err(message)` to refuse, `Ok(None)`
/// to admit, `Ok(Some(class))` when the class must allow expansion.
fn check(new: &Value, old: &Value) -> Result<Option<String>, &'static str> {
    if requested(new).cmp_value(&requested(old)).is_le() {
        return Ok(None);
    }
    if old.pointer("/status/phase").and_then(Value::as_str) != Some("Bound") {
        return Err("Only bound persistent volume claims can be expanded");
    }
    let (class, old_class) = (claim_class(new), claim_class(old));
    if class.is_empty() || old_class.is_empty() || class != old_class {
        return Err(NOT_EXPANDABLE);
    }
    Ok(Some(class.to_owned()))
}

const NOT_EXPANDABLE: &str = "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize";

impl PersistentVolumeClaimResize {
    /// Upstream `allowResize`'s read of the class: a missing class allows nothing.
    async fn allows_expansion(&self, class: &str) -> bool {
        let Some(store) = &self.classes else {
            return false;
        };
        match store.get("", class, Some("0".into())).await {
            Ok(found) => found.value().ok().is_some_and(|c| {
                c.get("allowVolumeExpansion").and_then(Value::as_bool) == Some(true)
            }),
            Err(_) => false,
        }
    }
}

impl Validate for PersistentVolumeClaimResize {
    fn handles(
        &self,
        descriptor: &'static ResourceDescriptor,
        _namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool {
        (descriptor.group, descriptor.plural) == ("", "persistentvolumeclaims")
            && subresource.is_empty()
            && operation == Operation::Update
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            let (Some(new), Some(old)) = (attributes.object, attributes.old_object) else {
                return Ok(());
            };
            let forbidden = |message: &str| -> kas_registry::Error {
                let name = attributes.resource_name();
                Status::forbidden("", "persistentvolumeclaims", name, message).into()
            };
            match check(new, old) {
                Ok(None) => Ok(()),
                Err(message) => Err(forbidden(message)),
                Ok(Some(class)) if self.allows_expansion(&class).await => Ok(()),
                Ok(Some(_)) => Err(forbidden(NOT_EXPANDABLE)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claim(size: &str, class: Value, phase: &str) -> Value {
        json!({"spec": {"storageClassName": class, "resources": {"requests": {"storage": size}}},
               "status": {"phase": phase}})
    }

    #[test]
    fn only_growing_a_bound_claim_of_the_same_class_asks_the_class() {
        let old = claim("1Gi", json!("fast"), "Bound");
        assert_eq!(
            check(&claim("1024Mi", json!("fast"), "Bound"), &old),
            Ok(None)
        );
        assert_eq!(
            check(&claim("512Mi", json!("slow"), "Bound"), &old),
            Ok(None)
        );
        assert_eq!(
            check(&claim("2Gi", json!("fast"), "Bound"), &old),
            Ok(Some("fast".to_owned()))
        );
        let pending = claim("1Gi", json!("fast"), "Pending");
        assert_eq!(
            check(&claim("2Gi", json!("fast"), "Pending"), &pending),
            Err("Only bound persistent volume claims can be expanded")
        );
        for class in [json!("slow"), json!(""), Value::Null] {
            assert_eq!(
                check(&claim("2Gi", class, "Bound"), &old),
                Err(NOT_EXPANDABLE)
            );
        }
        // The beta annotation names the class first.
        let mut annotated = claim("2Gi", json!("other"), "Bound");
        annotated["metadata"] = json!({"annotations": {BETA_CLASS_ANNOTATION: "fast"}});
        assert_eq!(check(&annotated, &old), Ok(Some("fast".to_owned())));
    }

    #[test]
    fn the_refusal_is_upstreams_forbidden() {
        let status = Status::forbidden("", "persistentvolumeclaims", "data", NOT_EXPANDABLE);
        assert_eq!(
            status.message.as_deref(),
            Some(
                "persistentvolumeclaims \"data\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"
            )
        );
    }
}
