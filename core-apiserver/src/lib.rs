//! core-apiserver's resources: each a descriptor plus a strategy, served by the generic
//! store of kas-registry from etcd.

pub mod admission;
pub mod connect;
pub mod helper;
pub mod openidmetadata;
pub mod options;
pub mod podspec;
pub mod probe;
pub mod resources;

use kas_endpoints::installer::{ApiGroups, ApiService};
use kas_storage_etcd::EtcdOptions;

/// The role's API: its resources on etcd, in front of `next` (the delegate to
/// extensions-apiserver). Starts the etcd compactor, which lives as long as the process.
pub async fn api_service<S>(
    etcd: &EtcdOptions,
    resource_options: &resources::ResourceOptions,
    next: S,
) -> Result<ApiService<openidmetadata::OpenIdRoutes<S>>, String> {
    let (etcd, compactor) = etcd.storage().await?;
    // One watch cache per cached resource: one etcd watch each, LIST and WATCH from memory.
    let mut caches = Vec::new();
    let stores = resources::stores(resource_options, &etcd, &mut |d, get_attrs| {
        let mut config = kas_storage_cache::CacherConfig::new(format!("/{}", d.storage_resource));
        config.get_attrs = get_attrs;
        let cache = std::sync::Arc::new(kas_storage_cache::Cacher::new(etcd.clone(), config));
        caches.push(cache.clone());
        cache
    })?;
    for cache in &caches {
        if !cache.wait_ready(std::time::Duration::from_secs(30)).await {
            return Err("the watch cache did not become ready within 30s".to_owned());
        }
    }
    follow_compactions(compactor, caches);
    bootstrap(&stores, resource_options).await?;
    let stores = with_disruption_budgets(stores);
    let chain = admission::chain(&resource_options.admission_plugins, &stores);
    let stores = stores
        .into_iter()
        .map(|s| s.with_admission(chain.clone()))
        .collect::<Vec<_>>();
    resources::rbac::aggregation::start(&stores);
    let connect_stores = stores.clone();
    let groups = ApiGroups::new(stores).with_features(resource_options.features);
    let groups = connect::install(groups, &connect_stores, &resource_options.kubelet)?;
    let groups =
        resources::serviceaccounts::token::install(groups, &connect_stores, resource_options);
    // The issuer's discovery documents are non-resource paths: served before the delegate.
    let next = openidmetadata::OpenIdRoutes::new(resource_options.openid_metadata.clone(), next);
    Ok(ApiService::new(groups, next))
}

/// Pods' evictions consult and charge PodDisruptionBudgets (upstream's `EvictionREST`).
fn with_disruption_budgets(
    stores: Vec<kas_registry::store::Store>,
) -> Vec<kas_registry::store::Store> {
    let Some(budgets) = admission::store(&stores, "policy", "poddisruptionbudgets") else {
        return stores;
    };
    stores
        .into_iter()
        .map(|s| {
            if (s.descriptor.group, s.descriptor.plural) == ("", "pods") {
                let guard = resources::pods::disruption::DisruptionGuard {
                    budgets: budgets.clone(),
                };
                s.with_delete_guard(std::sync::Arc::new(guard))
            } else {
                s
            }
        })
        .collect()
}

/// Tells every watch cache what etcd compacted (their watches from older revisions then
/// answer 410 Gone at once). The task owns the compactor, so both live as long as the
/// process.
fn follow_compactions(
    compactor: kas_storage_etcd::Compactor,
    caches: Vec<std::sync::Arc<kas_storage_cache::Cacher>>,
) {
    let mut compacted = compactor.subscribe();
    tokio::spawn(async move {
        let _compactor = compactor;
        while compacted.changed().await.is_ok() {
            let revision = *compacted.borrow_and_update();
            for cache in &caches {
                cache.compacted(revision);
            }
        }
    });
}

pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// What kube-apiserver creates at start when missing: the system namespaces (its
/// bootstrap controller) and the system PriorityClasses (the scheduling group's post-start
/// hook). Every replica tries; AlreadyExists means another one won.
async fn bootstrap(
    stores: &[kas_registry::store::Store],
    options: &resources::ResourceOptions,
) -> Result<(), String> {
    let namespaces = SYSTEM_NAMESPACES.iter().map(|name| {
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    });
    create_missing(stores, "", "namespaces", namespaces.collect()).await?;
    let classes = resources::scheduling::priorityclasses::system_priority_classes();
    create_missing(stores, "scheduling.k8s.io", "priorityclasses", classes).await?;
    // Priority levels first, so that the schemas that name them find them.
    let mut levels = Vec::new();
    let mut schemas = Vec::new();
    for (plural, object) in resources::flowcontrol::bootstrap_objects() {
        match plural {
            "flowschemas" => schemas.push(object),
            _ => levels.push(object),
        }
    }
    let schema_names: Vec<String> = schemas
        .iter()
        .map(|o| kas_registry::meta::name(o).to_owned())
        .collect();
    let group = "flowcontrol.apiserver.k8s.io";
    create_missing(stores, group, "prioritylevelconfigurations", levels).await?;
    create_missing(stores, group, "flowschemas", schemas).await?;
    resources::flowcontrol::mark_dangling(stores, &schema_names).await?;
    default_service_cidr(stores, &options.service_cluster_ip_range).await
}

/// Upstream's kubernetes-service-cidr-controller at start: the `kubernetes` ServiceCIDR
/// holds `--service-cluster-ip-range`, and is marked Ready once it matches them.
async fn default_service_cidr(
    stores: &[kas_registry::store::Store],
    ranges: &[String],
) -> Result<(), String> {
    use resources::networking::servicecidrs as cidrs;
    let default = cidrs::default_service_cidr(ranges);
    create_missing(stores, "networking.k8s.io", "servicecidrs", vec![default]).await?;
    let Some(store) = admission::store(stores, "networking.k8s.io", "servicecidrs") else {
        return Ok(());
    };
    let current = store
        .get("", cidrs::DEFAULT_NAME, None)
        .await
        .and_then(|o| o.value().map_err(Into::into))
        .map_err(|e| {
            let message = e.to_status().message.unwrap_or_default();
            format!("reading the default ServiceCIDR: {message}")
        })?;
    let ready = current
        .pointer("/status/conditions")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready"));
    let matches = current.pointer("/spec/cidrs") == Some(&serde_json::json!(ranges));
    if ready || !matches {
        return Ok(());
    }
    let mut updated = current;
    let now = kas_registry::meta::rfc3339(std::time::SystemTime::now());
    updated["status"] = serde_json::json!({"conditions": [cidrs::ready_condition(&now)]});
    let opts = kas_registry::rest::options::WriteOptions {
        manager: cidrs::CONTROLLER_NAME.to_owned(),
        ..Default::default()
    };
    match store
        .update_subresource("", cidrs::DEFAULT_NAME, "status", updated, &opts)
        .await
    {
        // Another replica marked it first.
        Err(e) if e.to_status().code == 409 => Ok(()),
        other => other.map(|_| ()).map_err(|e| {
            format!(
                "marking the default ServiceCIDR ready: {}",
                e.to_status().message.unwrap_or_default()
            )
        }),
    }
}

/// Creates each of `objects` (cluster-scoped) unless it exists.
async fn create_missing(
    stores: &[kas_registry::store::Store],
    group: &str,
    plural: &str,
    objects: Vec<serde_json::Value>,
) -> Result<(), String> {
    let Some(store) = admission::store(stores, group, plural) else {
        return Ok(());
    };
    // What the cache already holds is not created again: a restart writes nothing.
    let cached = kas_registry::rest::options::ListOptions {
        resource_version: Some("0".into()),
        ..Default::default()
    };
    let existing: std::collections::HashSet<String> =
        match store.list("", &cached, Default::default()).await {
            Ok(listed) => listed
                .items
                .iter()
                .filter_map(|o| o.value().ok())
                .map(|o| kas_registry::meta::name(&o).to_owned())
                .collect(),
            Err(_) => Default::default(),
        };
    let opts = kas_registry::rest::options::WriteOptions {
        manager: "kube-apiserver".to_owned(),
        ..Default::default()
    };
    let creates = objects
        .into_iter()
        .filter(|o| !existing.contains(kas_registry::meta::name(o)))
        .map(|object| {
            let (store, opts) = (&store, &opts);
            async move {
                let name = kas_registry::meta::name(&object).to_owned();
                match store.create("", object, opts).await {
                    Err(e) if e.to_status().code != 409 => Err(format!(
                        "creating {plural} {name}: {}",
                        e.to_status().message.unwrap_or_default()
                    )),
                    _ => Ok(()),
                }
            }
        });
    futures_util::future::try_join_all(creates).await?;
    Ok(())
}
