//! core-apiserver's resources: each a descriptor plus a strategy, served by the generic
//! store of kas-registry from etcd.

pub mod admission;
pub mod connect;
pub mod helper;
pub mod identity;
pub mod openidmetadata;
pub mod options;
pub mod podspec;
pub mod probe;
pub mod resources;

use kas_auth::authorization::ModeAuthorizers;
use kas_endpoints::installer::{ApiGroups, ApiService};
use kas_server::healthz::{PostStartHook, mark_done};
use kas_storage_etcd::EtcdOptions;

/// The post-start hooks of kube-apiserver whose work this role does at start (see
/// [`bootstrap`]), in upstream's registration order: `main` registers them as health checks
/// and [`api_service`] marks each done when its work is.
pub const POST_START_HOOKS: &[&str] = &[
    "start-system-namespaces-controller",
    "start-kube-apiserver-identity-lease-controller",
    "start-kube-apiserver-identity-lease-garbage-collector",
    "start-legacy-token-tracking-controller",
    "rbac/bootstrap-roles",
    "scheduling/bootstrap-system-priority-classes",
    "priority-and-fairness-config-producer",
    "start-kubernetes-service-cidr-controller",
];

/// The role's API: its resources on etcd, in front of `next` (the delegate to
/// extensions-apiserver), and the authorizers of `--authorization-mode` that it keeps (see
/// `kas_server::run::Serving`); `common` are its authentication and authorization flags. Starts the etcd compactor, which lives as long as the
/// process. Marks each of `hooks` (named as in [`POST_START_HOOKS`]) done when its work is.
pub async fn api_service<S>(
    etcd: &EtcdOptions,
    resource_options: &resources::ResourceOptions,
    common: &kas_server::options::CommonOptions,
    hooks: &[PostStartHook],
    next: S,
) -> Result<
    (
        ApiService<openidmetadata::OpenIdRoutes<S>>,
        ModeAuthorizers,
        kas_server::run::FlowControlSource,
    ),
    String,
> {
    // The modes of the flags, or the types the configuration file names.
    let authorization_modes = &common.authorization.modes()?;
    let etcd_options = etcd;
    let kinds = resources::stored_kinds(resource_options, etcd_options.storage_media_type);
    let (etcd, compactor) = etcd_options.storage(&kinds).await?;
    // RBAC's index of roles and bindings, for the RBAC mode, the review APIs and the
    // escalation checks of RBAC writes (upstream's rule resolver reads the RBAC objects
    // whatever the mode). It syncs on its own list; the bootstrap below reaches it by watch.
    let rbac_index = kas_rbac::start(etcd.clone()).await?;
    let rbac = std::sync::Arc::new(kas_rbac::RbacAuthorizer::new(rbac_index.clone()));
    let mut provided = ModeAuthorizers {
        rbac: Some(rbac.clone()),
        rbac_rules: Some(rbac),
        ..ModeAuthorizers::default()
    };
    // The Node authorizer's graph, when the mode is on: core checks the aggregator's
    // decisions with the same modes.
    if authorization_modes
        .iter()
        .any(|m| m == kas_auth::authorization::MODE_NODE)
    {
        let node = std::sync::Arc::new(kas_node_authorizer::start(etcd.clone()).await?);
        provided.node = Some(node.clone());
        provided.node_rules = Some(node);
    }
    if common.authorization.authorization_config.is_none() {
        common
            .authorization
            .webhook
            .add_to(authorization_modes, &mut provided)?;
    }
    // The authorizer of --authorization-mode or --authorization-config, for the decisions
    // made inside requests (admission plugins asking whether the user may approve, sign,
    // bind; the reviews).
    let (authorizer, rule_resolver) = common
        .authorization
        .authorizer(&provided)
        .map_err(|e| e.to_string())?;
    let mut resource_options = resource_options.clone();
    resource_options.delete_collection_workers =
        usize::try_from(etcd_options.delete_collection_workers.max(1)).unwrap_or(1);
    resource_options.count_metric_poll_period = etcd_options.etcd_count_metric_poll_period;
    resource_options.reviewers = resources::Reviewers {
        authenticator: token_review_authenticator(
            &resource_options.service_accounts,
            &common.authentication,
            &etcd,
        )?,
        api_audiences: resource_options.service_accounts.api_audiences(),
        authorizer: Some(authorizer.clone()),
        rule_resolver: Some(rule_resolver),
    };
    let resource_options = &resource_options;
    // One watch cache per cached resource: one etcd watch each, LIST and WATCH from memory.
    let mut caches = Vec::new();
    let stores = resources::stores(resource_options, &etcd, &mut |d, strategy, by_default| {
        if !etcd_options.watch_cached(d.group, d.plural, by_default) {
            tracing::info!(
                resource = d.plural,
                group = d.group,
                "Not using watch cache"
            );
            return etcd.clone();
        }
        let mut config = kas_storage_cache::CacherConfig::new(format!("/{}", d.storage_resource));
        config.get_attrs = kas_registry::store::get_attrs(strategy);
        config.index_field = strategy
            .index_field()
            .filter(|_| resource_options.watch_cache_index)
            .map(str::to_owned);
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
    bootstrap(&stores, resource_options, hooks).await?;
    let stores = with_disruption_budgets(stores);
    let chain = admission::chain(&resource_options.admission_plugins, &stores, &authorizer);
    let escalation = std::sync::Arc::new(resources::rbac::escalation::EscalationCheck {
        resolver: kas_rbac::DefaultRuleResolver::new(rbac_index),
        authorizer: authorizer.clone(),
    });
    let stores = stores
        .into_iter()
        .map(|s| match s.descriptor.group {
            "rbac.authorization.k8s.io" => {
                s.with_admission(chain.clone().with_first_validator(escalation.clone()))
            }
            _ => s.with_admission(chain.clone()),
        })
        .collect::<Vec<_>>();
    resources::rbac::aggregation::start(&stores);
    if let Some(leases) = admission::store(&stores, "coordination.k8s.io", "leases") {
        identity::start(
            leases,
            identity::hostname()?,
            resource_options.identity_lease,
        );
    }
    mark_done(hooks, "start-kube-apiserver-identity-lease-controller");
    mark_done(
        hooks,
        "start-kube-apiserver-identity-lease-garbage-collector",
    );
    if let Some(configmaps) = admission::store(&stores, "", "configmaps") {
        resources::serviceaccounts::legacy_token_tracking::start(configmaps);
    }
    mark_done(hooks, "start-legacy-token-tracking-controller");
    let connect_stores = stores.clone();
    let groups = ApiGroups::new(stores).with_features(resource_options.features);
    let groups = connect::install(
        groups,
        &connect_stores,
        &resource_options.kubelet,
        resource_options.features,
    )?;
    let groups =
        resources::serviceaccounts::token::install(groups, &connect_stores, resource_options);
    // The issuer's discovery documents are non-resource paths: served before the delegate.
    let next = openidmetadata::OpenIdRoutes::new(resource_options.openid_metadata.clone(), next);
    let flow_control = kas_server::run::FlowControlSource {
        storage: etcd,
        status_writer: resources::flowcontrol::status::writer(&connect_stores),
    };
    Ok((ApiService::new(groups, next), provided, flow_control))
}

/// What TokenReviews authenticate with: what the aggregator authenticates bearer tokens
/// with, in upstream's order: the static token file (`--token-auth-file`, a map lookup
/// outside the cache), then the storage-backed, OIDC and webhook authenticators behind
/// upstream's token cache; as upstream's reviews use the server's authenticator, the users
/// they find are in `system:authenticated`.
fn token_review_authenticator(
    options: &kas_server::options::ServiceAccountOptions,
    authentication: &kas_server::options::AuthenticationOptions,
    etcd: &std::sync::Arc<dyn kas_storage::Storage>,
) -> Result<Option<kas_auth::authentication::DynAuthenticator>, String> {
    use kas_auth::authentication::audiences::AudienceAgnostic;
    use kas_auth::authentication::token_cache::CachedTokenAuthenticator;
    use kas_auth::authentication::{AuthenticatedGroupAdder, DynAuthenticator, Union};
    use std::sync::Arc;
    let tokens = options.token_authenticators(authentication, Some(etcd.clone()))?;
    let mut all: Vec<DynAuthenticator> = Vec::new();
    if let Some(file) = &authentication.token_auth_file {
        let static_tokens =
            kas_auth::authentication::token_file::TokenFileAuthenticator::from_file(file)
                .map_err(|e| e.to_string())?;
        all.push(Arc::new(AudienceAgnostic::new(
            options.api_audiences(),
            Arc::new(static_tokens),
        )));
    }
    if !tokens.is_empty() {
        let union: DynAuthenticator = Arc::new(Union::new(tokens));
        all.push(Arc::new(CachedTokenAuthenticator::new(union)));
    }
    let union: DynAuthenticator = match all.len() {
        0 => return Ok(None),
        1 => all.remove(0),
        _ => Arc::new(Union::new(all)),
    };
    Ok(Some(Arc::new(AuthenticatedGroupAdder::new(union))))
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

/// Tells every watch cache what etcd compacted.
fn follow_compactions(
    compactor: kas_storage_etcd::Compactor,
    caches: Vec<std::sync::Arc<kas_storage_cache::Cacher>>,
) {
    compactor.follow(move |revision| {
        for cache in &caches {
            cache.compacted(revision);
        }
    });
}

pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// What kube-apiserver's post-start hooks create at start when missing: the system
/// namespaces (its system namespaces controller), the default RBAC policy (reconciled, as
/// `rbac/bootstrap-roles`), the system PriorityClasses, the APF configuration and the
/// default ServiceCIDR. Every replica tries; AlreadyExists means another one won.
async fn bootstrap(
    stores: &[kas_registry::store::Store],
    options: &resources::ResourceOptions,
    hooks: &[PostStartHook],
) -> Result<(), String> {
    let namespaces = SYSTEM_NAMESPACES.iter().map(|name| {
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    });
    create_missing(stores, "", "namespaces", namespaces.collect()).await?;
    mark_done(hooks, "start-system-namespaces-controller");
    // After the namespaces: the policy has Roles in kube-system and kube-public.
    let policy = resources::rbac::bootstrap::policy_data();
    resources::rbac::bootstrap::ensure_rbac_policy(stores, &policy).await?;
    mark_done(hooks, "rbac/bootstrap-roles");
    let classes = resources::scheduling::priorityclasses::system_priority_classes();
    create_missing(stores, "scheduling.k8s.io", "priorityclasses", classes).await?;
    mark_done(hooks, "scheduling/bootstrap-system-priority-classes");
    // Priority levels first, so that the schemas that name them find them.
    let mut levels = Vec::new();
    let mut schemas = Vec::new();
    for (plural, object) in resources::flowcontrol::bootstrap_objects() {
        match plural {
            "flowschemas" => schemas.push(object),
            _ => levels.push(object),
        }
    }
    let group = "flowcontrol.apiserver.k8s.io";
    create_missing(stores, group, "prioritylevelconfigurations", levels).await?;
    create_missing(stores, group, "flowschemas", schemas).await?;
    mark_done(hooks, "priority-and-fairness-config-producer");
    default_service_cidr(stores, &options.service_cluster_ip_range).await?;
    mark_done(hooks, "start-kubernetes-service-cidr-controller");
    Ok(())
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
