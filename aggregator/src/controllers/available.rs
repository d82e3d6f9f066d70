//! The `Available` condition of APIServices, after upstream's
//! `pkg/controllers/status/local` (a local APIService is always available) and
//! `pkg/controllers/status/remote` (a service-backed one is available when its Service
//! exists and listens on the port, has endpoints with addresses, and answers its
//! discovery path).
//! An APIService is checked when it changes, when its Service or Endpoints change,
//! every 30 s (upstream's resync, which catches what no watch shows: a network that
//! stopped routing), and again with upstream's backoff after a failure. The status is
//! written only when it changed, conditioned on the revision read, so replicas converge.

use std::collections::BTreeSet;
use std::time::Duration;

use super::queue::{Queue, sleep_until};
use super::status_metrics::Metrics;
use futures_util::future::join_all;
use kas_registry::store::Store;
use kas_registry::store::informer::Objects;
use serde_json::Value;
use tokio::sync::{broadcast, mpsc, watch};

use crate::apiservice::conditions::{self, Condition};
use crate::apiservice::{self, ServiceReference};
use crate::backend::{BackendError, Backends, Verify};
use kas_proxy::resolve;

/// Upstream's resync period of the APIService informer.
const RESYNC: Duration = Duration::from_secs(30);
/// Upstream's rate limiter: 5 ms doubling to 30 s.
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// Upstream's discovery check: 5 attempts at once, each with a 5 s client timeout and a
/// 6 s guard.
const ATTEMPTS: usize = 5;
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);
const CHECK_GUARD: Duration = Duration::from_secs(6);

/// Starts the controller over `store` (the APIServices'), `api_services` (its informer)
/// and `backends`, reporting to `metrics`.
pub fn start(
    store: Store,
    api_services: watch::Receiver<Objects>,
    backends: Backends,
    metrics: Metrics,
) {
    tokio::spawn(run(Controller {
        store,
        api_services,
        backends,
        metrics,
    }));
}

#[derive(Clone)]
struct Controller {
    store: Store,
    api_services: watch::Receiver<Objects>,
    backends: Backends,
    metrics: Metrics,
}

async fn run(mut c: Controller) {
    let mut service_changes = c.backends.services().subscribe();
    while !c.backends.services().has_synced() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut queue: Queue<String> = Queue::with_max_backoff(BACKOFF_MAX);
    // Names being checked: one check of a name at a time.
    let mut running = BTreeSet::new();
    let mut last = Objects::default();
    let (done_tx, mut done) = mpsc::unbounded_channel::<(String, bool)>();
    let mut resync = tokio::time::interval(RESYNC);
    loop {
        for name in queue.take_ready() {
            if running.contains(&name) {
                // Again once its check ends.
                queue.add(name);
                continue;
            }
            running.insert(name.clone());
            let (c, tx) = (c.clone(), done_tx.clone());
            tokio::spawn(async move {
                let ok = match c.sync(&name).await {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::info!(apiservice = %name, error = %e, "availability check failed");
                        false
                    }
                };
                let _ = tx.send((name, ok));
            });
        }
        let retry = queue.next_retry();
        tokio::select! {
            changed = c.api_services.changed() => {
                if changed.is_err() {
                    return;
                }
                let now = c.api_services.borrow_and_update().clone();
                for (name, obj) in now.iter() {
                    if last.get(name) != Some(obj) {
                        queue.add(name.clone());
                    }
                }
                // Gone: their sync forgets their metrics.
                for name in last.keys().filter(|n| !now.contains_key(*n)) {
                    queue.add(name.clone());
                }
                last = now;
            }
            changed = service_changes.recv() => {
                let all = matches!(&changed, Err(broadcast::error::RecvError::Lagged(_)))
                    || matches!(&changed, Ok(k) if k.is_empty());
                let service = changed.unwrap_or_default();
                for (name, obj) in last.iter() {
                    let Some(svc) = apiservice::service(obj) else { continue };
                    if all || service == format!("{}/{}", svc.namespace, svc.name) {
                        queue.add(name.clone());
                    }
                }
            }
            _ = resync.tick() => {
                last = c.api_services.borrow().clone();
                for name in last.keys() {
                    queue.add(name.clone());
                }
            }
            Some((name, ok)) = done.recv() => {
                running.remove(&name);
                queue.done(name, ok);
            }
            () = sleep_until(retry) => {}
        }
    }
}

impl Controller {
    /// Upstream's `sync` of one APIService: its condition computed, written if changed.
    /// A failed discovery check is written and then reported as an error, so it is
    /// retried with backoff besides the resync.
    async fn sync(&self, name: &str) -> Result<(), String> {
        let Some(current) = self.api_services.borrow().get(name).cloned() else {
            self.metrics.forget(name);
            return Ok(());
        };
        let (condition, check_error) = match apiservice::service(&current) {
            None => (conditions::local_available(), None),
            Some(svc) => self.remote_condition(&current, &svc).await,
        };
        let mut updated = current.clone();
        conditions::set(&mut updated, condition);
        self.metrics.set_gauge(name, &updated);
        if updated.get("status") != current.get("status") {
            let opts = super::write_options();
            self.store
                .update_subresource("", name, "status", updated.clone(), &opts)
                .await
                .map_err(|e| e.to_status().message.unwrap_or_default())?;
            self.metrics.count_change(name, &current, &updated);
        }
        match check_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The condition of a service-backed APIService, and the discovery check's error.
    async fn remote_condition(
        &self,
        api_service: &Value,
        svc: &ServiceReference,
    ) -> (Condition, Option<String>) {
        let false_ =
            |reason: &str, message: String| (Condition::new("False", reason, &message), None);
        let services = self.backends.services();
        let Some(service) = services.service(&svc.namespace, &svc.name) else {
            return false_(
                "ServiceNotFound",
                format!("service/{} in {:?} is not present", svc.name, svc.namespace),
            );
        };
        if resolve::service_type(&service) == "ClusterIP" {
            let Ok(port_name) = resolve::find_service_port(&service, &svc.name, svc.port) else {
                return false_(
                    "ServicePortError",
                    format!(
                        "service/{} in {:?} is not listening on port {}",
                        svc.name, svc.namespace, svc.port
                    ),
                );
            };
            let Some(endpoints) = services.endpoints(&svc.namespace, &svc.name) else {
                return false_(
                    "EndpointsNotFound",
                    format!(
                        "cannot find endpoints for service/{} in {:?}",
                        svc.name, svc.namespace
                    ),
                );
            };
            if !resolve::has_active_endpoints(port_name, &endpoints) {
                return false_(
                    "MissingEndpoints",
                    format!(
                        "endpoints for service/{} in {:?} have no addresses with port name {:?}",
                        svc.name, svc.namespace, port_name
                    ),
                );
            }
        }
        match self.discovery_check(api_service).await {
            Ok(()) => (Condition::new("True", "Passed", "all checks passed"), None),
            Err(e) => (Condition::new("False", "FailedDiscoveryCheck", &e), Some(e)),
        }
    }

    /// Upstream's discovery check: five GETs of the group version's discovery path at
    /// once, each to an endpoint resolved for it; one success is enough.
    async fn discovery_check(&self, api_service: &Value) -> Result<(), String> {
        let path = match kas_registry::meta::name(api_service) {
            "v1." => "/api/v1".to_owned(),
            _ => {
                let (group, version) = apiservice::group_version(api_service);
                format!("/apis/{group}/{version}")
            }
        };
        let attempt = || async {
            let get = self.backends.get(
                api_service,
                &path,
                "application/json",
                Verify::No,
                CHECK_TIMEOUT,
            );
            match tokio::time::timeout(CHECK_GUARD, get).await {
                Err(_) => Err(format!("timed out waiting for {path}")),
                Ok(Err(BackendError::Request(url, e))) => {
                    Err(format!("failing or missing response from {url}: {e}"))
                }
                Ok(Err(e)) => Err(e.to_string()),
                Ok(Ok((url, resp))) if !(200..300).contains(&resp.status.as_u16()) => Err(format!(
                    "failing or missing response from {url}: bad status from {url}: {}",
                    resp.status.as_u16()
                )),
                Ok(Ok(_)) => Ok(()),
            }
        };
        let results = join_all((0..ATTEMPTS).map(|_| attempt())).await;
        let mut last = Ok(());
        for r in results {
            if r.is_ok() {
                return Ok(());
            }
            last = r;
        }
        last
    }
}
