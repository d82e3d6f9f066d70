//! Upstream's `NamespaceLifecycle` admission plugin (enabled by default in kube-apiserver):
//!
//! - `default`, `kube-system` and `kube-public` may not be deleted (403);
//! - nothing is created in a namespace that does not exist (404 for the namespace);
//! - nothing is created in a namespace that is being terminated (403 with a
//!   `NamespaceTerminating` cause).
//!
//! Namespaces are read from the namespaces store's watch cache (`resourceVersion=0`), as
//! upstream reads its informer. A namespace the cache does not hold, or one deleted
//! through this process in the last 30 s that the cache still shows Active, is read again
//! from etcd (upstream's live lookup). Upstream first waits 50 ms for its informer before
//! the live lookup; the lookup here is cheaper than that wait, so it goes straight to it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_apimachinery::status::StatusCause;

use super::{Admit, Attributes, Operation};
use crate::Result;
use crate::store::Store;

/// Upstream `forceLiveLookupTTL`.
const FORCE_LIVE_LOOKUP_TTL: Duration = Duration::from_secs(30);

/// Upstream's immortal namespaces.
pub const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

/// Upstream `v1.NamespaceTerminatingCause`.
const NAMESPACE_TERMINATING_CAUSE: &str = "NamespaceTerminating";

/// The part of a namespace this plugin reads.
#[derive(serde::Deserialize)]
struct Phase {
    status: Option<PhaseStatus>,
}

#[derive(serde::Deserialize)]
struct PhaseStatus {
    phase: Option<String>,
}

pub struct NamespaceLifecycle {
    namespaces: Store,
    /// Namespaces deleted through this process, until when to read them live.
    force_live_lookup: Mutex<HashMap<String, Instant>>,
}

impl NamespaceLifecycle {
    /// `namespaces` is the namespaces store (without this plugin in its own chain).
    pub fn new(namespaces: Store) -> NamespaceLifecycle {
        NamespaceLifecycle {
            namespaces,
            force_live_lookup: Mutex::new(HashMap::new()),
        }
    }

    fn is_namespace(d: &crate::ResourceDescriptor) -> bool {
        d.group.is_empty() && d.kind == "Namespace"
    }

    fn remember_deletion(&self, name: &str) {
        let mut map = self
            .force_live_lookup
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        map.retain(|_, until| *until > now);
        map.insert(name.to_owned(), now + FORCE_LIVE_LOOKUP_TTL);
    }

    fn recently_deleted(&self, name: &str) -> bool {
        let map = self
            .force_live_lookup
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        map.get(name).is_some_and(|until| *until > Instant::now())
    }

    /// The namespace's `status.phase`; `None` when it does not exist.
    async fn phase(&self, namespace: &str) -> Result<Option<String>> {
        let cached = self.lookup(namespace, Some("0".to_owned())).await?;
        let live = match &cached {
            None => true,
            Some(phase) => phase != "Terminating" && self.recently_deleted(namespace),
        };
        if live {
            return self.lookup(namespace, None).await;
        }
        Ok(cached)
    }

    async fn lookup(&self, namespace: &str, rv: Option<String>) -> Result<Option<String>> {
        match self.namespaces.get("", namespace, rv).await {
            Ok(obj) => {
                // Only the phase is read; the rest of the namespace is skipped, not built.
                let phase: Phase = serde_json::from_slice(&obj.json).map_err(|e| {
                    crate::Error::from(Status::internal_error(&format!(
                        "reading namespace {namespace}: {e}"
                    )))
                })?;
                let phase = phase.status.and_then(|s| s.phase);
                Ok(Some(phase.unwrap_or_else(|| "Active".to_owned())))
            }
            Err(e) if e.to_status().code == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl Admit for NamespaceLifecycle {
    fn admit<'a>(&'a self, a: &'a Attributes<'a>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let d = a.descriptor;
            if Self::is_namespace(d) {
                if a.operation == Operation::Delete {
                    if IMMORTAL_NAMESPACES.contains(&a.name) {
                        return Err(Status::forbidden(
                            d.group,
                            d.plural,
                            a.name,
                            "this namespace may not be deleted",
                        )
                        .into());
                    }
                    self.remember_deletion(a.name);
                }
                return Ok(());
            }
            if a.namespace.is_empty() || a.operation == Operation::Delete {
                return Ok(());
            }
            // Upstream always lets access reviews through: answering about the namespace
            // would leak whether it exists.
            if (d.group, d.plural) == ("authorization.k8s.io", "localsubjectaccessreviews") {
                return Ok(());
            }
            let Some(phase) = self.phase(a.namespace).await? else {
                return Err(Status::not_found("", "namespaces", a.namespace).into());
            };
            if phase != "Terminating" {
                return Ok(());
            }
            let mut status = Status::forbidden(
                d.group,
                d.plural,
                a.resource_name(),
                &format!(
                    "unable to create new content in namespace {} because it is being terminated",
                    a.namespace
                ),
            );
            if let Some(details) = status.details.as_mut() {
                details.causes.push(StatusCause {
                    reason: Some(NAMESPACE_TERMINATING_CAUSE.to_owned()),
                    message: Some(format!("namespace {} is being terminated", a.namespace)),
                    field: Some("metadata.namespace".to_owned()),
                });
            }
            Err(status.into())
        })
    }
}
