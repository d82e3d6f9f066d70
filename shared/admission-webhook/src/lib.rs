//! Upstream's `MutatingAdmissionWebhook` and `ValidatingAdmissionWebhook` plugins
//! (`k8s.io/apiserver/pkg/admission/plugin/webhook`) for the resources this role serves:
//! the webhooks of the Mutating/ValidatingWebhookConfigurations (`source`, kept from a
//! watch) whose rules (`rules`) and namespace and object selectors match a write are sent
//! an AdmissionReview (`review`) through kas-webhook's client, and their answers admit,
//! patch (mutating) or refuse it with upstream's errors (`errors`, `dispatch`).
//!
//! Mutating webhooks run on creates and updates of a resource (a `Mutate` plugin; an
//! update's runs inside the store's compare-and-swap loop and blocks its worker thread
//! meanwhile) and on deletes (an `Admit` check, with the stored object as `oldObject`);
//! validating webhooks on creates, updates and subresource writes (a `Validate` plugin)
//! and on deletes. `matchConditions` are CEL (`matchconditions`).

mod audit;
pub mod dispatch;
pub mod errors;
pub mod matchconditions;
pub mod review;
pub mod rules;
pub mod source;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Admit, Attributes, Mutate, Operation, Validate};
use kas_registry::rest::options::Warnings;
use kas_registry::store::Store;
use serde_json::Value;

use source::Source;

/// How long a request waits for the first list of configurations (upstream's
/// `WaitForReady`).
const READY_WAIT: Duration = Duration::from_secs(10);

/// A request as the webhooks see it (upstream's `admission.Attributes`).
pub struct Request<'a> {
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'static str,
    pub descriptor: &'static ResourceDescriptor,
    /// The group, version and kind of what is written: the resource's, or its
    /// subresource's (a pod's `eviction` is a policy/v1 Eviction).
    pub kind: (&'static str, &'static str, &'static str),
    /// Upstream's: for a namespace's own update or delete, its name.
    pub namespace: &'a str,
    pub name: &'a str,
    pub subresource: &'a str,
    pub old_object: Option<&'a Value>,
    pub dry_run: bool,
    pub user: Option<&'a kas_auth::UserInfo>,
    pub warnings: Option<&'a Warnings>,
    /// The request's audit event, for the webhooks' annotations.
    pub audit: Option<&'a kas_registry::rest::options::AuditAnnotations>,
}

fn operation_name(operation: Operation) -> &'static str {
    match operation {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
    }
}

impl<'a> Request<'a> {
    pub fn new(attributes: &Attributes<'a>) -> Request<'a> {
        let d = attributes.descriptor;
        let kind = d
            .subresources
            .iter()
            .find(|s| !attributes.subresource.is_empty() && s.name == attributes.subresource)
            .and_then(|s| s.kind.as_ref())
            .map_or((d.group, d.version, d.kind), |k| {
                (k.group, k.version, k.kind)
            });
        let own_namespace = d.group.is_empty()
            && d.plural == "namespaces"
            && attributes.operation != Operation::Create;
        Request {
            operation: operation_name(attributes.operation),
            descriptor: d,
            kind,
            namespace: if own_namespace {
                attributes.name
            } else {
                attributes.namespace
            },
            name: attributes.name,
            subresource: attributes.subresource,
            old_object: attributes.old_object,
            dry_run: attributes.dry_run,
            user: attributes.user,
            warnings: attributes.warnings,
            audit: attributes.audit,
        }
    }

    /// Upstream `admission.NewForbidden(attr, err)`'s name: the object's, else its
    /// `generateName`, else "Unknown".
    fn forbidden(&self, object: Option<&Value>, message: &str) -> Status {
        let generate = object
            .map(|o| kas_registry::meta::str_field(o, "generateName"))
            .unwrap_or("");
        let name = match (self.name, generate) {
            ("", "") => "Unknown",
            ("", g) => g,
            (n, _) => n,
        };
        let d = self.descriptor;
        Status::forbidden(d.group, d.plural, name, message)
    }
}

/// One of the two plugins: the webhooks of one configuration kind.
pub struct Webhooks {
    source: Arc<Source>,
    /// Where the namespaces' labels are read for `namespaceSelector`.
    namespaces: Option<Store>,
    /// The role's stores: a deleted object is read from its own, and a patched one
    /// defaulted by its strategy.
    stores: Vec<Store>,
}

impl Webhooks {
    /// The plugin over the configurations of `configurations` (followed from now on).
    pub fn new(configurations: Store, stores: &[Store]) -> Webhooks {
        let source = Arc::new(Source::default());
        source.follow(configurations);
        Webhooks::with_source(source, stores)
    }

    /// The plugin over a given `source` (tests fill one by hand).
    pub fn with_source(source: Arc<Source>, stores: &[Store]) -> Webhooks {
        Webhooks {
            source,
            namespaces: stores
                .iter()
                .find(|s| s.descriptor.group.is_empty() && s.descriptor.plural == "namespaces")
                .cloned(),
            stores: stores.to_vec(),
        }
    }

    fn store_of(&self, descriptor: &'static ResourceDescriptor) -> Option<&Store> {
        self.stores.iter().find(|s| {
            s.descriptor.group == descriptor.group && s.descriptor.plural == descriptor.plural
        })
    }

    /// Whether a webhook may look at `request`: its rules match (selectors aside), or the
    /// configurations are not known yet. Cheap: one snapshot read.
    fn may_match(&self, request: &Request<'_>) -> bool {
        let d = request.descriptor;
        if rules::is_exempt(d.group, request.kind.2) {
            return false;
        }
        if !self.source.has_synced() {
            return true;
        }
        let hooks = self.source.hooks();
        !hooks.is_empty() && dispatch::any_rule_matches(&hooks, request)
    }

    /// Upstream's `WaitForReady` before dispatching.
    async fn ready(&self, request: &Request<'_>, object: Option<&Value>) -> Result<(), Status> {
        if self.source.wait_synced(READY_WAIT).await {
            return Ok(());
        }
        Err(request.forbidden(object, "not yet ready to handle request"))
    }

    /// The object a delete removes, read from its store (`None` when it is gone: the
    /// store answers the delete).
    async fn deleted_object(
        &self,
        request: &Request<'_>,
        namespace: &str,
    ) -> Result<Option<Value>, Status> {
        let Some(store) = self.store_of(request.descriptor) else {
            return Ok(None);
        };
        match store.get_if_exists(namespace, request.name, None).await {
            Ok(Some(found)) => found
                .value()
                .map(Some)
                .map_err(|e| Status::internal_error(&e.to_string())),
            Ok(None) => Ok(None),
            Err(e) => Err(e.to_status()),
        }
    }
}

/// Upstream `MutatingAdmissionWebhook`.
pub struct MutatingAdmissionWebhook(pub Webhooks);

/// Upstream `ValidatingAdmissionWebhook`.
pub struct ValidatingAdmissionWebhook(pub Webhooks);

impl Mutate for MutatingAdmissionWebhook {
    fn mutate<'a>(
        &'a self,
        _descriptor: &'static ResourceDescriptor,
        _name: &'a str,
        _object: &'a mut Value,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        // Creates come through `mutate_with`, which has the write's attributes.
        Box::pin(async { Ok(()) })
    }

    fn mutate_with<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
        object: &'a mut Value,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            let request = Request::new(attributes);
            if !self.0.may_match(&request) {
                return Ok(());
            }
            self.0.ready(&request, Some(object)).await?;
            self.0.admit(&request, Some(object)).await?;
            Ok(())
        })
    }

    fn mutate_update_with(
        &self,
        attributes: &Attributes<'_>,
        new: &mut Value,
    ) -> kas_registry::Result<()> {
        let request = Request::new(attributes);
        if !self.0.may_match(&request) {
            return Ok(());
        }
        let run = async {
            self.0.ready(&request, Some(new)).await?;
            self.0.admit(&request, Some(new)).await
        };
        block_on(run)??;
        Ok(())
    }
}

impl Validate for ValidatingAdmissionWebhook {
    fn handles(
        &self,
        descriptor: &'static ResourceDescriptor,
        namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool {
        let attributes = Attributes {
            subresource,
            ..Attributes::new(operation, descriptor, namespace, "", None)
        };
        self.0.may_match(&Request::new(&attributes))
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            let request = Request::new(attributes);
            self.0.ready(&request, attributes.object).await?;
            self.0.validate(&request, attributes.object).await?;
            Ok(())
        })
    }
}

/// Deletes: the webhooks see the stored object as `oldObject` and no object.
async fn admit_delete(
    webhooks: &Webhooks,
    attributes: &Attributes<'_>,
    mutating: bool,
) -> kas_registry::Result<()> {
    if attributes.operation != Operation::Delete {
        return Ok(());
    }
    let request = Request::new(attributes);
    if !webhooks.may_match(&request) {
        return Ok(());
    }
    let Some(old) = webhooks
        .deleted_object(&request, attributes.namespace)
        .await?
    else {
        return Ok(());
    };
    let request = Request {
        old_object: Some(&old),
        ..request
    };
    webhooks.ready(&request, None).await?;
    if mutating {
        webhooks.admit(&request, None).await?;
    } else {
        webhooks.validate(&request, None).await?;
    }
    Ok(())
}

impl Admit for MutatingAdmissionWebhook {
    fn admit<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(admit_delete(&self.0, attributes, true))
    }
}

impl Admit for ValidatingAdmissionWebhook {
    fn admit<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(admit_delete(&self.0, attributes, false))
    }
}

/// Runs `fut` to completion from the synchronous update callback.
fn block_on<F: std::future::Future>(fut: F) -> kas_registry::Result<F::Output> {
    kas_webhook::block_on(fut).map_err(|e| Status::internal_error(&e).into())
}

#[cfg(test)]
mod tests;
