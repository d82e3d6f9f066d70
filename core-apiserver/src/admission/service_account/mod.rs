//! Upstream's `ServiceAccount` plugin (`plugin/pkg/admission/serviceaccount`), mutating
//! and validating. On pod creation it names the `default` account when the pod names
//! none, refuses a pod whose account does not exist, mounts the account's token (a
//! projected `kube-api-access-*` volume at `/var/run/secrets/kubernetes.io/serviceaccount`
//! in every init container and container) unless the pod or account opts out, and copies
//! the account's image pull secrets to a pod without any. Mirror pods are left alone but
//! may reference no account, secret or token. An account annotated
//! `kubernetes.io/enforce-mountable-secrets` limits the pod's secrets to its own, also for
//! ephemeral containers added through `pods/ephemeralcontainers`.

pub(crate) mod rules;
#[cfg(test)]
mod tests;

use std::time::Duration;

use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Attributes, Mutate, Operation, Validate};
use kas_registry::meta;
use kas_registry::rest::object_meta::generate_name;
use kas_registry::store::Store;
use serde_json::{Value, json};

pub use rules::TOKEN_MOUNT_PATH;

/// Upstream `DefaultServiceAccountName`.
const DEFAULT_ACCOUNT: &str = "default";

/// The plugin, reading ServiceAccounts from their store.
pub struct ServiceAccount {
    pub accounts: Store,
}

fn is_pods(descriptor: &ResourceDescriptor) -> bool {
    (descriptor.group, descriptor.plural) == ("", "pods")
}

fn forbidden(name: &str, message: &str) -> kas_registry::Error {
    Status::forbidden("", "pods", name, message).into()
}

fn account_name(pod: &Value) -> &str {
    pod.pointer("/spec/serviceAccountName")
        .and_then(Value::as_str)
        .unwrap_or("")
}

impl ServiceAccount {
    /// Upstream `getServiceAccount`: the watch cache, then live reads (ten for `default`,
    /// which a controller may be about to create, 100 to 200 ms apart). The error is the
    /// text upstream wraps.
    async fn account(&self, namespace: &str, name: &str) -> Result<Value, String> {
        let message = |e: kas_registry::Error| e.to_status().message.unwrap_or_default();
        match self.accounts.get(namespace, name, Some("0".into())).await {
            Ok(found) => return found.value().map_err(|e| e.to_string()),
            Err(e) if e.to_status().code == 404 => {}
            Err(e) => return Err(message(e)),
        }
        let attempts = if name == DEFAULT_ACCOUNT { 10 } else { 1 };
        let jitter = u64::from(uuid::Uuid::new_v4().as_bytes()[0]) % 100;
        let interval = Duration::from_millis(100 + jitter);
        for attempt in 0..attempts {
            if attempt != 0 {
                tokio::time::sleep(interval).await;
            }
            match self.accounts.get(namespace, name, None).await {
                Ok(found) => return found.value().map_err(|e| e.to_string()),
                Err(e) if e.to_status().code == 404 => {}
                Err(e) => return Err(message(e)),
            }
        }
        Err(format!("serviceaccount \"{name}\" not found"))
    }

    /// The pod's account, or upstream's Forbidden for a failed lookup.
    async fn pod_account(
        &self,
        name: &str,
        namespace: &str,
        pod: &Value,
    ) -> kas_registry::Result<Value> {
        let account = account_name(pod);
        self.account(namespace, account).await.map_err(|err| {
            forbidden(
                name,
                &format!("error looking up service account {namespace}/{account}: {err}"),
            )
        })
    }

    /// Upstream `Admit` on a pod being created.
    async fn admit_pod(&self, name: &str, pod: &mut Value) -> kas_registry::Result<()> {
        let namespace = meta::namespace(pod).to_owned();
        if rules::is_mirror(pod) {
            return self.validate_pod(name, &namespace, pod).await;
        }
        if account_name(pod).is_empty()
            && let Some(object) = pod.as_object_mut()
        {
            let spec = object.entry("spec").or_insert_with(|| json!({}));
            if let Some(spec) = spec.as_object_mut() {
                spec.insert("serviceAccountName".into(), json!(DEFAULT_ACCOUNT));
            }
        }
        let account = self.pod_account(name, &namespace, pod).await?;
        if rules::should_automount(&account, pod) {
            rules::mount_token(pod, || generate_name(rules::VOLUME_PREFIX));
        }
        rules::copy_image_pull_secrets(&account, pod);
        self.validate_pod(name, &namespace, pod).await
    }

    /// Upstream `Validate` on a pod being created.
    async fn validate_pod(
        &self,
        name: &str,
        namespace: &str,
        pod: &Value,
    ) -> kas_registry::Result<()> {
        if rules::is_mirror(pod) {
            return match rules::mirror_refusal(pod) {
                Some(message) => Err(forbidden(name, message)),
                None => Ok(()),
            };
        }
        self.require_account(name, namespace, pod)?;
        let account = self.pod_account(name, namespace, pod).await?;
        if rules::enforce_mountable_secrets(&account) {
            rules::limit_secret_references(&account, pod).map_err(|m| forbidden(name, &m))?;
        }
        Ok(())
    }

    fn require_account(
        &self,
        name: &str,
        namespace: &str,
        pod: &Value,
    ) -> kas_registry::Result<()> {
        if account_name(pod).is_empty() {
            let pod_name = meta::name(pod);
            return Err(forbidden(
                name,
                &format!("no service account specified for pod {namespace}/{pod_name}"),
            ));
        }
        Ok(())
    }

    /// Upstream `limitEphemeralContainerSecretReferences`, on a write of
    /// `pods/ephemeralcontainers`. Its refusal of a secret is a plain error upstream (not
    /// wrapped in a Forbidden), which the server answers as a 500.
    async fn validate_ephemeral(
        &self,
        name: &str,
        namespace: &str,
        pod: &Value,
    ) -> kas_registry::Result<()> {
        self.require_account(name, namespace, pod)?;
        let account = self.pod_account(name, namespace, pod).await?;
        if !rules::enforce_mountable_secrets(&account) {
            return Ok(());
        }
        rules::limit_ephemeral_secret_references(&account, pod)
            .map_err(|m| Status::from_plain_error(m).into())
    }
}

impl Mutate for ServiceAccount {
    fn mutate<'a>(
        &'a self,
        descriptor: &'static ResourceDescriptor,
        name: &'a str,
        pod: &'a mut Value,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            if !is_pods(descriptor) {
                return Ok(());
            }
            self.admit_pod(name, pod).await
        })
    }
}

impl Validate for ServiceAccount {
    fn handles(
        &self,
        descriptor: &'static ResourceDescriptor,
        _namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool {
        is_pods(descriptor)
            && matches!(
                (operation, subresource),
                (Operation::Create, "") | (Operation::Update, "ephemeralcontainers")
            )
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            let Some(pod) = attributes.object else {
                return Ok(());
            };
            let name = attributes.resource_name();
            match attributes.operation {
                Operation::Create => self.validate_pod(name, attributes.namespace, pod).await,
                Operation::Update => {
                    self.validate_ephemeral(name, attributes.namespace, pod)
                        .await
                }
                Operation::Delete => Ok(()),
            }
        })
    }
}
