//! The built-in group versions core-apiserver serves, registered on start (upstream's
//! `apiServicesToRegister` over its delegate's listed paths).

use std::sync::Arc;

use kas_endpoints::discovery::delegated::Delegated;
use kas_registry::store::informer::Objects;
use kas_server::healthz::PostStartHook;
use serde_json::Value;
use tokio::sync::watch;

use super::{AutoRegistration, api_service, watch_completion};

/// Upstream's `apiServicesToRegister` over what core serves: `/api/v1`, and the group
/// versions of its aggregated discovery `items`, those upstream's priorities name.
pub fn builtin_api_services(items: &[Value]) -> Vec<Value> {
    let mut wanted = vec![("".to_owned(), "v1".to_owned())];
    for group in items {
        let name = group.pointer("/metadata/name").and_then(Value::as_str);
        let versions = group.get("versions").and_then(Value::as_array);
        let (Some(name), Some(versions)) = (name, versions) else {
            continue;
        };
        for version in versions.iter().filter_map(|v| v.get("version")) {
            if let Some(version) = version.as_str() {
                wanted.push((name.to_owned(), version.to_owned()));
            }
        }
    }
    wanted
        .iter()
        .filter_map(|(g, v)| {
            let priorities = crate::apiservice::builtin::priority(g, v);
            if priorities.is_none() {
                tracing::info!("Skipping APIService creation for {g}/{v}");
            }
            Some(api_service(g, v, priorities?))
        })
        .collect()
}

/// Registers core's built-in group versions once its discovery (`delegated`) first lists
/// groups, and those that appear later; the receiver turns true after the first ones.
/// `completion` is marked once those first ones are available (`api_services`).
pub fn follow_builtins(
    mut delegated: watch::Receiver<Arc<Delegated>>,
    registration: AutoRegistration,
    api_services: watch::Receiver<Objects>,
    completion: PostStartHook,
) -> watch::Receiver<bool> {
    let (registered, rx) = watch::channel(false);
    tokio::spawn(async move {
        let Ok(first) = delegated
            .wait_for(|d| !d.items.is_empty())
            .await
            .map(|d| d.clone())
        else {
            return;
        };
        let initial = builtin_api_services(&first.items);
        let names = initial
            .iter()
            .map(|a| kas_registry::meta::name(a).to_owned())
            .collect();
        initial
            .into_iter()
            .for_each(|a| registration.add_to_sync_on_start(a));
        registered.send_replace(true);
        watch_completion(api_services, names, completion);
        // Groups core serves later (extensions' merged in after core started).
        while delegated.changed().await.is_ok() {
            let items = delegated.borrow_and_update().items.clone();
            for a in builtin_api_services(&items) {
                if registration.get(kas_registry::meta::name(&a)).is_none() {
                    registration.add_to_sync_on_start(a);
                }
            }
        }
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn core_serves_the_legacy_group_and_what_its_discovery_lists() {
        let items = vec![
            json!({"metadata": {"name": "apps"}, "versions": [{"version": "v1"}]}),
            json!({"metadata": {"name": "autoscaling"},
                   "versions": [{"version": "v2"}, {"version": "v1"}]}),
            json!({"metadata": {"name": "stable.example.com"}, "versions": [{"version": "v1"}]}),
        ];
        let names: Vec<String> = builtin_api_services(&items)
            .iter()
            .map(|a| kas_registry::meta::name(a).to_owned())
            .collect();
        assert_eq!(
            names,
            ["v1.", "v1.apps", "v2.autoscaling", "v1.autoscaling"]
        );
        let legacy = &builtin_api_services(&[])[0];
        assert_eq!(
            legacy["spec"],
            json!({"version": "v1", "groupPriorityMinimum": 18000, "versionPriority": 1})
        );
    }
}
