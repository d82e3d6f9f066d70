//! Upstream's `autoregister-completion` check (`makeAPIServiceAvailableHealthCheck`):
//! healthy once every APIService registered at start has been seen available, and from
//! then on.

use std::collections::BTreeSet;

use kas_registry::store::informer::Objects;
use kas_server::healthz::PostStartHook;
use tokio::sync::watch;

use crate::apiservice::conditions;

/// Marks `check` done once each of `names` is stored with `Available` true.
pub fn watch_completion(
    mut api_services: watch::Receiver<Objects>,
    names: Vec<String>,
    check: PostStartHook,
) {
    tokio::spawn(async move {
        let mut pending: BTreeSet<String> = names.into_iter().collect();
        loop {
            {
                let objects = api_services.borrow_and_update();
                pending.retain(|name| !objects.get(name).is_some_and(conditions::is_available));
            }
            if pending.is_empty() {
                check.done();
                return;
            }
            tracing::debug!(missing = ?pending, "missing APIService");
            if api_services.changed().await.is_err() {
                return;
            }
        }
    });
}
