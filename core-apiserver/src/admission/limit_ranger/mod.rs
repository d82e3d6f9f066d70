//! Upstream's `LimitRanger` admission plugin (plugin/pkg/admission/limitranger): the
//! LimitRanges of the request's namespace give the containers of a created pod the
//! default requests and limits they lack (with the `kubernetes.io/limit-ranger`
//! annotation), then pods (on create and on a `resize`) and PersistentVolumeClaims (on
//! create and update) outside a range's min, max or limit-to-request ratio are refused
//! (403) with upstream's aggregated message. Pod updates and other subresources are not
//! looked at, nor are objects being deleted.

pub mod defaults;
pub mod rules;

use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Attributes, Mutate, Operation, Validate};
use kas_registry::rest::options::ListOptions;
use kas_registry::store::Store;
use serde_json::Value;

/// The plugin, reading LimitRanges from their store (through its watch cache).
pub struct LimitRanger {
    pub ranges: Store,
}

impl LimitRanger {
    /// The LimitRanges of `namespace`; a failed read refuses as upstream's
    /// `GetLimitRanges` does.
    async fn ranges(
        &self,
        namespace: &str,
        operation: &str,
        plural: &str,
        name: &str,
    ) -> kas_registry::Result<Vec<Value>> {
        let opts = ListOptions {
            resource_version: Some("0".into()),
            ..Default::default()
        };
        let listed = match self.ranges.list(namespace, &opts, Default::default()).await {
            Ok(listed) => listed,
            Err(_) => {
                return Err(Status::forbidden(
                    "",
                    plural,
                    name,
                    &format!(
                        "unable to {operation} /v1, Resource={plural} at this time because there was an error enforcing limit ranges"
                    ),
                )
                .into());
            }
        };
        listed
            .items
            .iter()
            .map(|item| item.value().map_err(Into::into))
            .collect()
    }
}

fn is(descriptor: &ResourceDescriptor, plural: &str) -> bool {
    descriptor.group.is_empty() && descriptor.plural == plural
}

/// Upstream `SupportsAttributes`: pods on create and on their `resize` update, claims on
/// create and update, no other subresource.
pub fn supports(descriptor: &ResourceDescriptor, subresource: &str, operation: Operation) -> bool {
    if is(descriptor, "pods") {
        return match subresource {
            "" => operation == Operation::Create,
            "resize" => operation == Operation::Update,
            _ => false,
        };
    }
    is(descriptor, "persistentvolumeclaims")
        && subresource.is_empty()
        && matches!(operation, Operation::Create | Operation::Update)
}

impl Mutate for LimitRanger {
    /// Upstream `Admit` on a pod's create (`SupportsAttributes` leaves out pod updates).
    fn mutate<'a>(
        &'a self,
        descriptor: &'static ResourceDescriptor,
        name: &'a str,
        pod: &'a mut Value,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            if !is(descriptor, "pods") {
                return Ok(());
            }
            let namespace = kas_registry::meta::namespace(pod).to_owned();
            let name = if name.is_empty() { "Unknown" } else { name };
            for range in self.ranges(&namespace, "CREATE", "pods", name).await? {
                defaults::mutate_pod(&range, pod);
            }
            Ok(())
        })
    }
}

impl Validate for LimitRanger {
    /// Upstream `SupportsAttributes`: pods on create and on their `resize` update,
    /// claims on create and update, no other subresource.
    fn handles(
        &self,
        descriptor: &'static ResourceDescriptor,
        _namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool {
        supports(descriptor, subresource, operation)
    }

    fn validate<'a>(&'a self, a: &'a Attributes<'a>) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            if !self.handles(a.descriptor, a.namespace, a.subresource, a.operation) {
                return Ok(());
            }
            let Some(object) = a.object else {
                return Ok(());
            };
            // Objects being deleted are left alone.
            if a.old_object
                .and_then(|o| o.pointer("/metadata/deletionTimestamp"))
                .is_some_and(|t| !t.is_null())
            {
                return Ok(());
            }
            let plural = a.descriptor.plural;
            let operation = match a.operation {
                Operation::Create => "CREATE",
                Operation::Update => "UPDATE",
                Operation::Delete => "DELETE",
            };
            let name = a.resource_name();
            for range in self.ranges(a.namespace, operation, plural, name).await? {
                let errs = if plural == "pods" {
                    rules::validate_pod(&range, object)
                } else {
                    rules::validate_claim(&range, object)
                };
                if let Some(message) = rules::aggregate(&errs) {
                    return Err(Status::forbidden("", plural, name, &message).into());
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests;
