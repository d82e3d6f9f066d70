//! Upstream's `ResourceQuota` admission plugin
//! (`k8s.io/apiserver/pkg/admission/plugin/resourcequota`, with the evaluators of
//! `pkg/quota/v1/evaluator/core`), a validating one: a write in a namespace with
//! ResourceQuotas is charged against every quota whose `status.hard` names a resource it
//! uses; a quota without `status.used` for such a resource refuses it (`status unknown`),
//! one it would exceed refuses it (`exceeded quota`), and otherwise the quotas'
//! `status.used` are updated through the `status` subresource, re-read and checked again
//! on a conflict (three retries, as upstream). Dry runs are checked but not charged.
//!
//! Upstream's quota controller (kube-controller-manager) fills `status.hard` and
//! recomputes `status.used`; without it a new quota constrains nothing until a client
//! writes its status.

mod check;
mod evaluator;
mod pods;
mod resources;

use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Attributes, Operation, Validate};
use kas_registry::rest::options::{ListOptions, WriteOptions};
use kas_registry::store::Store;
use serde_json::Value;

use check::{Request, check_request};
use evaluator::{Evaluator, Quota};

/// How often a conflicting status write is re-read and retried (upstream's `checkQuotas`
/// is called with 3 remaining retries).
const RETRIES: usize = 3;

/// The plugin, reading and charging ResourceQuotas through their store.
pub struct ResourceQuota {
    pub quotas: Store,
}

impl ResourceQuota {
    /// The namespace's quotas: from the watch cache first, then (on a retry) a consistent
    /// read.
    async fn quotas(&self, namespace: &str, cached: bool) -> kas_registry::Result<Vec<Quota>> {
        let opts = ListOptions {
            resource_version: cached.then(|| "0".to_owned()),
            ..Default::default()
        };
        let listed = self
            .quotas
            .list(namespace, &opts, Default::default())
            .await?;
        listed
            .items
            .iter()
            .map(|item| Ok(Quota::new(item.value()?)))
            .collect()
    }

    /// Upstream `UpdateQuotaStatus`: the quota read, with its new `status.used`, written
    /// on the condition that it did not change since.
    async fn write_used(
        &self,
        namespace: &str,
        quota: &Quota,
        used: &resources::ResourceList,
    ) -> kas_registry::Result<()> {
        let mut object = quota.object.clone();
        let Some(map) = object.as_object_mut() else {
            return Ok(());
        };
        let status = map
            .entry("status")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(status) = status.as_object_mut() {
            status.insert("used".into(), resources::to_json(used));
        }
        let opts = WriteOptions {
            manager: "kube-apiserver".into(),
            ..WriteOptions::default()
        };
        self.quotas
            .update_subresource(namespace, &quota.name, "status", object, &opts)
            .await?;
        Ok(())
    }

    async fn evaluate(
        &self,
        evaluator: &Evaluator,
        attributes: &Attributes<'_>,
    ) -> kas_registry::Result<()> {
        let Some(object) = attributes.object else {
            return Ok(());
        };
        let namespace = attributes.namespace;
        let mut quotas = self.quotas(namespace, true).await?;
        if quotas.is_empty() {
            return Ok(());
        }
        let request = Request {
            operation: attributes.operation,
            subresource: attributes.subresource,
            object,
            old_object: attributes.old_object,
        };
        let descriptor = attributes.descriptor;
        let mut retries = RETRIES;
        loop {
            let charged = check_request(evaluator, &quotas, &request).map_err(|message| {
                Status::forbidden(
                    descriptor.group,
                    descriptor.plural,
                    attributes.resource_name(),
                    &message,
                )
            })?;
            if attributes.dry_run {
                return Ok(());
            }
            let mut failed = Vec::new();
            let mut last_error = None;
            for (i, used) in charged {
                let quota = &quotas[i];
                if resources::equals(&quota.used, &used) {
                    continue;
                }
                if let Err(e) = self.write_used(namespace, quota, &used).await {
                    failed.push(quota.name.clone());
                    last_error = Some(e);
                }
            }
            let Some(error) = last_error else {
                return Ok(());
            };
            if retries == 0 {
                return Err(error);
            }
            retries -= 1;
            quotas = self
                .quotas(namespace, false)
                .await?
                .into_iter()
                .filter(|q| failed.contains(&q.name))
                .collect();
        }
    }
}

impl Validate for ResourceQuota {
    fn handles(
        &self,
        descriptor: &'static ResourceDescriptor,
        _namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool {
        descriptor.namespaced()
            && Evaluator::of(descriptor).is_some_and(|e| e.handles(subresource, operation))
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            if attributes.namespace.is_empty() {
                return Ok(());
            }
            let Some(evaluator) = Evaluator::of(attributes.descriptor) else {
                return Ok(());
            };
            if !evaluator.handles(attributes.subresource, attributes.operation) {
                return Ok(());
            }
            self.evaluate(&evaluator, attributes).await
        })
    }
}
