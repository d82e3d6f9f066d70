//! aggregator: the client-facing role. It authenticates and authorizes every request once,
//! serves what it owns (health, version, metrics; apiregistration.k8s.io later), keeps
//! the `kubernetes` Service pointing at its replicas (`kubernetes_service`), and
//! delegates everything else to core-apiserver over mTLS with the user in front-proxy
//! headers.

mod kubernetes_service;

use std::process::ExitCode;

use clap::Parser;
use kas_delegate::DelegationOptions;
use kas_server::healthz::named_check;
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
}

// mimalloc: glibc malloc was a quarter of the CPU time of a proxied request.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let options = Options::parse();
    kas_server::allocator::spawn_purger();
    // The aggregator keeps only its kubernetes-Service leases in etcd; it reports etcd's
    // health as upstream's does.
    let etcd = options.etcd.health_check();
    let role = Role {
        component: "aggregator",
        anonymous_by_default: true,
        readyz_checks: etcd
            .map(|etcd| named_check(etcd.name(), move || etcd.check()))
            .into_iter()
            .collect(),
    };
    let mut errors = options.delegation.validate(true);
    errors.extend(options.etcd.validate(false));
    errors.extend(options.kubernetes_service.validate());
    let delegation = options.delegation;
    let etcd = options.etcd;
    let service = options.kubernetes_service;
    kas_server::run::main(role, options.common, errors, move |common| async move {
        let delegate = delegation.build().map_err(|e| e.to_string())?;
        if service.endpoint_reconciler_type != "none" && !etcd.etcd_servers.is_empty() {
            start_kubernetes_service(&service, &etcd, &common, delegate.clone()).await?;
        }
        Ok(kas_server::Handler::new(delegate))
    })
}

/// The kubernetes Service and its endpoints, kept by this replica (see
/// `kubernetes_service`).
async fn start_kubernetes_service(
    service: &kubernetes_service::KubernetesServiceOptions,
    etcd: &EtcdOptions,
    common: &CommonOptions,
    delegate: kas_delegate::Delegate,
) -> Result<(), String> {
    let client = etcd
        .connect()
        .await
        .map_err(|e| format!("connecting to etcd: {e}"))?;
    let storage = std::sync::Arc::new(kas_storage_etcd::EtcdStore::new(client, &etcd.etcd_prefix));
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
