//! Upstream's CRD registration controller (`pkg/controlplane/controller/crdregistration`):
//! one continuously managed Local APIService per group version that a CRD serves
//! (`served: true`, Established or not, as upstream's), with `groupPriorityMinimum` 1000
//! and `versionPriority` 100, removed when no CRD serves it any more. The CRDs are followed
//! from etcd (extensions-apiserver's `/apiextensions.k8s.io/customresourcedefinitions`),
//! read only; the registrations go to the autoregister controller's wanted set.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, PoisonError, RwLock};

use kas_storage::reflector::Reflect;
use kas_storage::{ListOptions, ObjectRef, Storage, WatchEvent};
use serde_json::Value;
use tokio::sync::watch;

use super::autoregister::{self, AutoRegistration, Confirm};

const CRDS_KEY: &str = "/apiextensions.k8s.io/customresourcedefinitions";
/// Upstream's priorities of a CRD's APIService: "CRDs should have relatively low
/// priority", and sort by kube-like versions among themselves. Its CRD discovery
/// controller gives aggregated discovery the same.
pub const GROUP_PRIORITY_MINIMUM: i64 = 1000;
pub const VERSION_PRIORITY: i64 = 100;

type GroupVersion = (String, String);

/// The CRDs by name, and what their changes register.
struct Crds {
    crds: RwLock<BTreeMap<String, Value>>,
    registration: AutoRegistration,
    synced: watch::Sender<bool>,
}

/// Starts following the CRDs in `etcd`; the receiver turns true once the first list's
/// group versions are registered (upstream's `WaitForInitialSync`).
pub fn start(etcd: Arc<dyn Storage>, registration: AutoRegistration) -> watch::Receiver<bool> {
    let (synced, rx) = watch::channel(false);
    let crds = Arc::new(Crds {
        crds: RwLock::default(),
        registration,
        synced,
    });
    let weak = Arc::downgrade(&crds);
    tokio::spawn(async move {
        let _keep = crds;
        let replace = |c: &Crds, items: &[ObjectRef]| c.replace(items);
        let apply = |c: &Crds, event: &WatchEvent| c.apply(event);
        let reflect = Reflect {
            what: "CustomResourceDefinitions",
            replace: &replace,
            apply: &apply,
        };
        kas_storage::reflector::run(weak, &*etcd, CRDS_KEY, reflect).await;
    });
    rx
}

/// What confirms a CRD group version's APIService before it is created or deleted: a
/// fresh list of the CRDs in `etcd`.
pub fn confirm(etcd: Arc<dyn Storage>) -> Confirm {
    Arc::new(move |name: String| {
        let etcd = etcd.clone();
        Box::pin(async move {
            let opts = ListOptions {
                recursive: true,
                ..ListOptions::default()
            };
            let list = etcd
                .list(CRDS_KEY, &opts)
                .await
                .map_err(|e| e.to_string())?;
            let crds: Vec<Value> = list.items.iter().filter_map(|o| o.value().ok()).collect();
            let (version, group) = name.split_once('.').unwrap_or((&name, ""));
            Ok(served(crds.iter(), group, version))
        })
    })
}

/// Whether one of `crds` serves `group`/`version`.
fn served<'a>(crds: impl Iterator<Item = &'a Value>, group: &str, version: &str) -> bool {
    crds.filter(|crd| crd.pointer("/spec/group").and_then(Value::as_str) == Some(group))
        .flat_map(versions)
        .any(|v| {
            v.get("name").and_then(Value::as_str) == Some(version)
                && v.get("served").and_then(Value::as_bool) == Some(true)
        })
}

fn versions(crd: &Value) -> impl Iterator<Item = &Value> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// Every group version a CRD names, served or not (upstream's `enqueueCRD`).
fn group_versions(crd: &Value) -> impl Iterator<Item = GroupVersion> + '_ {
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("");
    versions(crd)
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .map(move |v| (group.to_owned(), v.to_owned()))
}

impl Crds {
    fn replace(&self, items: &[ObjectRef]) {
        let new: BTreeMap<String, Value> = items
            .iter()
            .filter_map(|o| o.value().ok())
            .map(|crd| (kas_registry::meta::name(&crd).to_owned(), crd))
            .collect();
        let old = std::mem::replace(&mut *self.write(), new.clone());
        let affected: BTreeSet<GroupVersion> = old
            .values()
            .chain(new.values())
            .flat_map(group_versions)
            .collect();
        affected
            .iter()
            .for_each(|gv| self.handle_version_update(gv));
        self.synced.send_replace(true);
    }

    fn apply(&self, event: &WatchEvent) -> Result<(), String> {
        let (object, deleted) = match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => (o, false),
            WatchEvent::Deleted(o) => (o, true),
            _ => return Ok(()),
        };
        let crd = object.value().map_err(|e| e.to_string())?;
        let name = kas_registry::meta::name(&crd).to_owned();
        let old = match deleted {
            true => self.write().remove(&name),
            false => self.write().insert(name, crd.clone()),
        };
        let affected: BTreeSet<GroupVersion> = old
            .iter()
            .chain(std::iter::once(&crd))
            .flat_map(group_versions)
            .collect();
        affected
            .iter()
            .for_each(|gv| self.handle_version_update(gv));
        Ok(())
    }

    /// Upstream's `handleVersionUpdate`.
    fn handle_version_update(&self, (group, version): &GroupVersion) {
        let is_served = {
            let crds = self.crds.read().unwrap_or_else(PoisonError::into_inner);
            served(crds.values(), group, version)
        };
        if is_served {
            let priorities = (GROUP_PRIORITY_MINIMUM, VERSION_PRIORITY);
            let api_service = autoregister::api_service(group, version, priorities);
            self.registration.add_to_sync(api_service);
        } else {
            self.registration
                .remove_to_sync(&format!("{version}.{group}"));
        }
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Value>> {
        self.crds.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(name: &str, group: &str, versions: &[(&str, bool)]) -> Value {
        let versions: Vec<Value> = versions
            .iter()
            .map(|(v, served)| json!({"name": v, "served": served, "storage": true}))
            .collect();
        json!({"metadata": {"name": name}, "spec": {"group": group, "versions": versions}})
    }

    fn crds(registration: AutoRegistration) -> Crds {
        Crds {
            crds: RwLock::default(),
            registration,
            synced: watch::channel(false).0,
        }
    }

    #[test]
    fn a_group_version_is_registered_while_a_crd_serves_it() {
        let (r, _names) = AutoRegistration::new(None);
        let c = crds(r.clone());
        let a = crd(
            "as.example.com",
            "example.com",
            &[("v1", true), ("v2", false)],
        );
        let b = crd("bs.example.com", "example.com", &[("v1", true)]);
        c.write().insert("as.example.com".into(), a.clone());
        c.handle_version_update(&("example.com".into(), "v1".into()));
        c.handle_version_update(&("example.com".into(), "v2".into()));
        let v1 = r.get("v1.example.com").expect("v1 registered");
        assert_eq!(v1["spec"]["groupPriorityMinimum"], 1000);
        assert_eq!(v1["spec"]["versionPriority"], 100);
        assert_eq!(
            v1["metadata"]["labels"][autoregister::MANAGED_LABEL],
            "true"
        );
        assert!(r.get("v2.example.com").is_none(), "not served");

        // Another CRD of the group version: removing the first keeps it.
        c.write().insert("bs.example.com".into(), b);
        c.write().remove("as.example.com");
        c.handle_version_update(&("example.com".into(), "v1".into()));
        assert!(r.get("v1.example.com").is_some());
        c.write().clear();
        c.handle_version_update(&("example.com".into(), "v1".into()));
        assert!(r.get("v1.example.com").is_none());
        assert_eq!(group_versions(&a).count(), 2);
    }
}
