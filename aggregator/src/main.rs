//! aggregator: the client-facing role. It authenticates and authorizes every request once,
//! serves what it owns (health, version, metrics, apiregistration.k8s.io, discovery and
//! OpenAPI merged from its APIServices), proxies service-backed APIServices, keeps the
//! `kubernetes` Service pointing at its replicas, and delegates everything else to
//! core-apiserver over mTLS with the user in front-proxy headers, except the groups
//! extensions-apiserver serves, which go to it straight with `--extensions-endpoints`.
//! The parts are the library's (`aggregator::...`).

use std::process::ExitCode;

use std::sync::Arc;

use aggregator::proxy_cert::ProxyCertFiles;
use aggregator::{apiserver, kubernetes_service, routing};
use clap::Parser;
use kas_auth::authorization::{MODE_NODE, MODE_RBAC, ModeAuthorizers};
use kas_delegate::DelegationOptions;
use kas_server::healthz::PostStartHook;
use kas_server::options::CommonOptions;
use kas_server::run::Role;
use kas_storage_etcd::EtcdOptions;

#[derive(Parser, Debug)]
#[command(
    args_override_self = true,
    name = "aggregator",
    version,
    about = "The client-facing role of the Kubernetes API server: aggregation and delegation to core-apiserver."
)]
struct Options {
    #[command(flatten)]
    common: CommonOptions,
    #[command(flatten)]
    etcd: EtcdOptions,
    #[command(flatten)]
    delegation: DelegationOptions,
    #[command(flatten)]
    kubernetes_service: kubernetes_service::KubernetesServiceOptions,
    #[command(flatten)]
    service_accounts: kas_server::options::ServiceAccountOptions,
    /// extensions-apiserver's endpoints (as --delegate-endpoints takes them, with its CA
    /// and proxy client certificate): requests for the groups it serves go there straight
    /// instead of through core-apiserver. Empty: everything goes to core.
    #[arg(long, value_delimiter = ',')]
    extensions_endpoints: Vec<String>,
    /// Turns on aggregator routing requests to endpoints IP rather than cluster IP.
    #[arg(long, num_args = 0..=1, default_value = "false", default_missing_value = "true", value_parser = kas_apimachinery::golang::strconv::parse_bool)]
    enable_aggregator_routing: bool,
    /// Aggregator reject forwarding redirect response back to client.
    #[arg(long, num_args = 0..=1, default_value = "true", default_missing_value = "true", value_parser = kas_apimachinery::golang::strconv::parse_bool)]
    aggregator_reject_forwarding_redirect: bool,
}

// mimalloc: glibc malloc was a quarter of the CPU time of a proxied request.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let options = Options::parse();
    kas_server::allocator::spawn_purger();
    // The aggregator keeps only its kubernetes-Service leases in etcd; it reports etcd's
    // health as upstream's does.
    let role = Role {
        component: "aggregator",
        anonymous_by_default: true,
        storage_checks: options.etcd.health_checks(),
        delegates: true,
    };
    let mut errors = options.delegation.validate(true);
    // APIServices live in etcd, as upstream's aggregator keeps them.
    errors.extend(options.etcd.validate(true));
    errors.extend(options.kubernetes_service.validate());
    errors.extend(options.service_accounts.validate());
    let extensions = kas_delegate::DelegationOptions {
        delegate_endpoints: options.extensions_endpoints.clone(),
        ..options.delegation.clone()
    };
    errors.extend(extensions.validate(false));
    let delegation = options.delegation;
    let etcd = options.etcd;
    let service = options.kubernetes_service;
    let service_accounts = options.service_accounts;
    let reject_forwarding_redirects = options.aggregator_reject_forwarding_redirect;
    let routing = match options.enable_aggregator_routing {
        true => kas_proxy::resolve::Routing::Endpoints,
        false => kas_proxy::resolve::Routing::ClusterIp,
    };
    let reload_proxy_cert = ProxyCertFiles::from_options(&delegation).is_some();
    let hooks: Vec<PostStartHook> = apiserver::post_start_hooks(reload_proxy_cert);
    let marked = hooks.clone();
    let run = move |common: CommonOptions| async move {
        let delegate = delegation.build().map_err(|e| e.to_string())?;
        let kinds = apiserver::stored_kinds(etcd.storage_media_type);
        let (storage, compactor) = etcd.storage(&kinds).await?;
        if service.endpoint_reconciler_type != "none" {
            start_kubernetes_service(&service, storage.clone(), &common, delegate.clone())?;
        }
        let authorizers = mode_authorizers(&common, storage.clone()).await?;
        let token_authenticators =
            service_accounts.token_authenticators(&common.authentication, Some(storage.clone()))?;
        let api_services = apiserver::api_services(storage.clone(), compactor).await?;
        let descriptor = &aggregator::apiservice::DESCRIPTOR;
        kas_storage_etcd::metrics::observe_count_forever(
            (descriptor.group, descriptor.plural),
            storage.clone(),
            descriptor.storage_resource,
            etcd.etcd_count_metric_poll_period,
        );
        let proxy_cert_files = ProxyCertFiles::from_options(&delegation);
        let proxy_client_cert = proxy_cert_files.as_ref().map(ProxyCertFiles::load);
        let proxy_client_cert = proxy_client_cert.transpose()?;
        let informer = api_services.informer();
        let metrics =
            aggregator::controllers::status_metrics::Metrics::new().map_err(|e| e.to_string())?;
        let backends = apiserver::start_controllers(
            &api_services,
            informer.clone(),
            storage.clone(),
            routing,
            proxy_client_cert,
            metrics.clone(),
        );
        if let Some(files) = proxy_cert_files {
            files.reload_into(backends.clone(), aggregator::proxy_cert::RELOAD_INTERVAL);
            kas_server::healthz::mark_done(&marked, aggregator::proxy_cert::RELOAD_HOOK);
        }
        apiserver::mark_controllers_started(informer.clone(), marked.clone());
        // Discovery and OpenAPI: core's (with extensions' merged in), ours and the
        // service-backed APIServices'. Their receivers are cloned before the proxy reads
        // the informer, so that they see its first list.
        let delegated = kas_delegate::discovery::follow(delegate.clone(), true);
        let discovery = aggregator::discovery::Discovery::start(
            informer.clone(),
            delegated.clone(),
            backends.clone(),
        );
        let openapi = aggregator::openapi::OpenApi::start(
            &api_services,
            informer.clone(),
            delegated.clone(),
            backends.clone(),
        );
        let (synced, merged) = (discovery.synced(), openapi.synced());
        apiserver::mark_when_discovered(delegated.clone(), synced, merged, marked.clone());
        let auth = &common.authentication;
        apiserver::start_authentication_trust(auth, storage.clone(), delegate.clone(), &marked);
        let (listed, discovered) = (informer.clone(), delegated.clone());
        apiserver::start_registration(&api_services, listed, storage.clone(), discovered, &marked);
        // Unboxed: the handler's future holds the delegate's, and the server boxes it once.
        let next = if extensions.delegate_endpoints.is_empty() {
            tower::util::Either::Left(delegate)
        } else {
            let extensions = extensions.build().map_err(|e| e.to_string())?;
            tower::util::Either::Right(routing::Routed {
                core: delegate,
                groups: kas_delegate::discovery::follow(extensions.clone(), false),
                extensions,
            })
        };
        // Service-backed APIServices' group versions go to their servers.
        let first_list = informer.clone();
        let proxy = aggregator::proxy::AggregatedProxy::new(
            informer,
            backends,
            reject_forwarding_redirects,
        );
        apiserver::mark_when_proxied(first_list, proxy.clone(), marked.clone());
        let groups = kas_endpoints::installer::ApiGroups::new(vec![api_services]);
        let own = kas_endpoints::installer::ApiService::new(groups, next.clone());
        let api = aggregator::handler::Aggregator {
            discovery,
            openapi,
            own,
            proxy,
            next,
        };
        Ok(kas_server::run::Serving {
            handler: kas_server::Handler::new(api),
            authorizers,
            token_authenticators,
            collectors: metrics
                .collectors()
                .into_iter()
                .chain(kas_storage_etcd::metrics::collectors())
                .collect(),
            flow_control: kas_server::run::FlowControlSource::reader(storage),
        })
    };
    kas_server::run::main_with_hooks(role, hooks, options.common, errors, run)
}

/// The authorizers of `--authorization-mode` the role builds: the webhook's, and those
/// that follow etcd: RBAC's index of roles and bindings, the Node authorizer's graph of
/// pods and what they use. Each is synced before serving; every aggregator replica
/// enforces a change as soon as its watch delivers it, and a decision does no I/O. Without
/// etcd, building those modes fails with their message.
async fn mode_authorizers(
    common: &CommonOptions,
    storage: Arc<dyn kas_storage::Storage>,
) -> Result<ModeAuthorizers, String> {
    // The modes of the flags, or the types the configuration file names.
    let modes = &common.authorization.modes()?;
    let mut provided = ModeAuthorizers::default();
    if common.authorization.authorization_config.is_none() {
        common.authorization.webhook.add_to(modes, &mut provided)?;
    }
    if modes.iter().any(|m| m == MODE_RBAC) {
        let index = kas_rbac::start(storage.clone()).await?;
        provided.rbac = Some(Arc::new(kas_rbac::RbacAuthorizer::new(index)));
    }
    if modes.iter().any(|m| m == MODE_NODE) {
        provided.node = Some(Arc::new(kas_node_authorizer::start(storage).await?));
    }
    Ok(provided)
}

/// The kubernetes Service and its endpoints, kept by this replica (see
/// `kubernetes_service`).
fn start_kubernetes_service(
    service: &kubernetes_service::KubernetesServiceOptions,
    storage: Arc<dyn kas_storage::Storage>,
    common: &CommonOptions,
    delegate: kas_delegate::Delegate,
) -> Result<(), String> {
    let serving = &common.secure_serving;
    kubernetes_service::Controller {
        delegate,
        leases: kubernetes_service::Leases {
            storage,
            ttl_seconds: kubernetes_service::LEASE_TTL_SECONDS,
        },
        ip: kubernetes_service::advertise_address(service, serving.bind_address),
        port: serving.secure_port,
        service_ip: kubernetes_service::first_service_ip(&service.service_cluster_ip_range)?,
        node_port: service.kubernetes_service_node_port,
    }
    .spawn();
    Ok(())
}
