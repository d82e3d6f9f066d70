//! Discovery at the aggregator, after upstream's kube-aggregator (`handler_apis.go`,
//! `handler_discovery.go`) and the aggregated discovery `ResourceManager` it shares with
//! the servers behind it:
//!
//! - `/apis` (legacy): the aggregator's own group, then every APIService's group by
//!   `groupPriorityMinimum` and each group's versions by `versionPriority` (`legacy`);
//! - `/apis/<group>`: the `APIGroup` of a group that has APIServices (others pass on to
//!   core, which serves its own);
//! - `/apis` as aggregated discovery (`apidiscovery.k8s.io/v2` and `v2beta1`, with an
//!   ETag): the local groups (the aggregator's own; core's with extensions' merged in,
//!   followed from core's `Peer` stream and ordered by upstream's priority table) and the
//!   group versions of service-backed APIServices, fetched from their servers (`fetch`)
//!   and refreshed as upstream refreshes them (`manager`); a server that fails leaves its
//!   group version listed as `Stale`, and nothing else changes (`aggregated`).
//!
//! The documents are built when something they are made of changes (`documents`); a
//! request reads the current ones.

mod aggregated;
mod documents;
mod fetch;
mod legacy;
mod manager;

use std::sync::Arc;

use http::{Request, Response};
use kas_endpoints::Body;
use kas_endpoints::discovery::aggregated::Version;
use kas_endpoints::discovery::delegated::Delegated;
use kas_registry::store::informer::Objects;
use serde_json::Value;
use tokio::sync::watch;

use crate::backend::Backends;
use documents::Documents;

/// The aggregator's discovery documents, kept current by a task of their own.
#[derive(Clone)]
pub struct Discovery {
    documents: watch::Receiver<Arc<Documents>>,
    synced: watch::Receiver<bool>,
}

impl Discovery {
    /// Starts keeping the documents of `api_services` (the APIService informer; pass a
    /// receiver that has not seen its first list, so that the first round waits for it)
    /// and `local` (core's discovery), fetching service-backed ones through `backends`.
    pub fn start(
        api_services: watch::Receiver<Objects>,
        local: watch::Receiver<Arc<Delegated>>,
        backends: Backends,
    ) -> Discovery {
        let (documents_tx, documents) = watch::channel(Arc::new(Documents::default()));
        let (synced_tx, synced) = watch::channel(false);
        let manager = manager::Manager {
            backends,
            api_services,
            local,
            own: own_items(),
            documents: documents_tx,
            synced: synced_tx,
        };
        tokio::spawn(manager.run());
        Discovery { documents, synced }
    }

    /// Becomes true once every APIService was synced once, as upstream's
    /// `apiservice-discovery-controller` hook waits for, and the documents hold the local
    /// groups.
    pub fn synced(&self) -> watch::Receiver<bool> {
        self.synced.clone()
    }

    /// The answer to `/apis`, `/apis/` and `/apis/<group>[/]` of a group that has
    /// APIServices, for any method as upstream's handlers; `None` for any other request.
    pub fn serve(&self, req: &Request<Body>) -> Option<Response<Body>> {
        let path = req.uri().path();
        let rest = path.strip_prefix("/apis")?;
        // `/apis`, `/apis/` and `/apis/<group>[/]` only: resource requests take no lock.
        if !rest.is_empty() && !rest.starts_with('/') || rest.trim_matches('/').contains('/') {
            return None;
        }
        self.documents.borrow().serve(req)
    }
}

/// The aggregator's own group (apiregistration.k8s.io) as aggregated discovery items.
fn own_items() -> Vec<Value> {
    let descriptors = [&crate::apiservice::DESCRIPTOR];
    let doc = kas_endpoints::discovery::aggregated::document(&descriptors, false, Version::V2);
    serde_json::from_slice::<Value>(&doc)
        .ok()
        .and_then(|d| d.get("items")?.as_array().cloned())
        .unwrap_or_default()
}
