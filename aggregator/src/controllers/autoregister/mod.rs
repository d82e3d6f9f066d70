//! Upstream's autoregister controller (`k8s.io/kube-aggregator/pkg/controllers/
//! autoregister`) and kube-apiserver's use of it (`apiServicesToRegister`,
//! `makeAPIServiceAvailableHealthCheck` in pkg/controlplane/apiserver/aggregator.go): a set
//! of wanted APIServices, each labelled `kube-aggregator.kubernetes.io/automanaged`
//! (`onstart`: synced once when the controller starts; `true`: kept in sync), made to exist
//! in the store. APIServices without the label are never touched.
//!
//! The built-in group versions are those core-apiserver serves, as its aggregated discovery
//! (extensions' merged in) and `/api/v1` list them, kept when upstream's priorities have
//! them (`apiservice::builtin`): upstream reads the same from its delegate's listed paths.
//! The CRDs' group versions come from `crd_registration`.
//!
//! Every aggregator replica runs it: creates tolerate AlreadyExists, updates are
//! conditioned on the resourceVersion read and deletes on the uid, and a conflict or a
//! missing object is left for the next event, as upstream's. A CRD's group version is
//! created or deleted only when a fresh read of etcd agrees (`Confirm`), so a replica
//! whose CRD watch lags does not undo another's write.

mod builtins;
mod check;
mod completion;
mod run;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::mpsc;

pub use builtins::{builtin_api_services, follow_builtins};
pub use completion::watch_completion;
pub use run::start;

/// Upstream's `AutoRegisterManagedLabel`.
pub const MANAGED_LABEL: &str = "kube-aggregator.kubernetes.io/automanaged";
/// The APIService is synced once when the controller starts.
pub const MANAGE_ON_START: &str = "onstart";
/// The APIService is kept in sync.
pub const MANAGE_CONTINUOUSLY: &str = "true";

/// Whether a fresh read agrees that the continuously managed APIService `name` is wanted.
pub type Confirm = Arc<dyn Fn(String) -> BoxFuture<'static, Result<bool, String>> + Send + Sync>;

/// Upstream's `AutoAPIServiceRegistration`: the wanted APIServices, by name. Clones share
/// the set; each change queues the name for the controller.
#[derive(Clone)]
pub struct AutoRegistration {
    desired: Arc<Mutex<BTreeMap<String, Value>>>,
    queue: mpsc::UnboundedSender<String>,
    confirm: Option<Confirm>,
}

impl AutoRegistration {
    /// The set, and the receiver of the names it queues (the controller's).
    pub fn new(confirm: Option<Confirm>) -> (AutoRegistration, mpsc::UnboundedReceiver<String>) {
        let (queue, names) = mpsc::unbounded_channel();
        let registration = AutoRegistration {
            desired: Arc::default(),
            queue,
            confirm,
        };
        (registration, names)
    }

    /// Upstream's `AddAPIServiceToSyncOnStart`.
    pub fn add_to_sync_on_start(&self, api_service: Value) {
        self.add(api_service, MANAGE_ON_START);
    }

    /// Upstream's `AddAPIServiceToSync`.
    pub fn add_to_sync(&self, api_service: Value) {
        self.add(api_service, MANAGE_CONTINUOUSLY);
    }

    fn add(&self, mut api_service: Value, sync_type: &str) {
        let name = kas_registry::meta::name(&api_service).to_owned();
        let metadata = &mut api_service["metadata"];
        if !metadata.get("labels").is_some_and(Value::is_object) {
            metadata["labels"] = json!({});
        }
        metadata["labels"][MANAGED_LABEL] = json!(sync_type);
        self.lock().insert(name.clone(), api_service);
        let _ = self.queue.send(name);
    }

    /// Upstream's `RemoveAPIServiceToSync`.
    pub fn remove_to_sync(&self, name: &str) {
        self.lock().remove(name);
        let _ = self.queue.send(name.to_owned());
    }

    /// The wanted APIService `name`, labelled.
    pub fn get(&self, name: &str) -> Option<Value> {
        self.lock().get(name).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Value>> {
        self.desired.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Upstream's `makeAPIService`: a Local APIService for `group`/`version` with the given
/// priorities (the group is left out of the spec when empty, as Go's `omitempty`).
pub fn api_service(group: &str, version: &str, priorities: (i64, i64)) -> Value {
    let mut spec = json!({
        "version": version,
        "groupPriorityMinimum": priorities.0,
        "versionPriority": priorities.1,
    });
    if !group.is_empty() {
        spec["group"] = json!(group);
    }
    json!({
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": format!("{version}.{group}")},
        "spec": spec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_says_how_it_is_managed() {
        let (r, mut names) = AutoRegistration::new(None);
        r.add_to_sync_on_start(api_service("apps", "v1", (17800, 15)));
        r.add_to_sync(api_service("stable.example.com", "v1", (1000, 100)));
        assert_eq!(
            r.get("v1.apps").unwrap()["metadata"]["labels"][MANAGED_LABEL],
            "onstart"
        );
        assert_eq!(
            r.get("v1.stable.example.com").unwrap()["metadata"]["labels"][MANAGED_LABEL],
            "true"
        );
        r.remove_to_sync("v1.apps");
        assert!(r.get("v1.apps").is_none());
        let queued: Vec<String> = std::iter::from_fn(|| names.try_recv().ok()).collect();
        assert_eq!(queued, ["v1.apps", "v1.stable.example.com", "v1.apps"]);
    }
}
