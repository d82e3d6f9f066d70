//! core-apiserver: the built-in resources. It trusts the user only from a front-proxy peer
//! (the aggregator) and delegates what it does not serve to extensions-apiserver.

use std::process::ExitCode;

use clap::Parser;
use core_apiserver::options::CoreOptions;
use kas_delegate::DelegationOptions;
use kas_server::healthz::PostStartHook;
use kas_server::options::CommonOptions;
use kas_server::run::Role;
use kas_storage_etcd::EtcdOptions;

#[derive(Parser, Debug)]
#[command(
    args_override_self = true,
    name = "core-apiserver",
    version,
    about = "The built-in resources of the Kubernetes API server."
)]
struct Options {
    #[command(flatten)]
    common: CommonOptions,
    #[command(flatten)]
    etcd: EtcdOptions,
    #[command(flatten)]
    delegation: DelegationOptions,
    #[command(flatten)]
    core: CoreOptions,
}

// mimalloc: glibc malloc was a quarter of the CPU time of a proxied request.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let options = Options::parse();
    kas_server::allocator::spawn_purger();
    let role = Role {
        component: "core-apiserver",
        anonymous_by_default: false,
        storage_checks: options.etcd.health_checks(),
        delegates: true,
    };
    let mut errors = options.delegation.validate(true);
    errors.extend(options.etcd.validate(true));
    errors.extend(options.core.admission.validate());
    errors.extend(options.core.service_account.validate());
    let delegation = options.delegation;
    let etcd = options.etcd;
    let resources = options.core.resources();
    let hooks: Vec<PostStartHook> = core_apiserver::POST_START_HOOKS
        .iter()
        .map(|name| PostStartHook::new(name))
        .collect();
    let marked = hooks.clone();
    kas_server::run::main_with_hooks(
        role,
        hooks,
        options.common,
        errors,
        move |common| async move {
            let next = delegation.build().map_err(|e| e.to_string())?;
            let delegated = kas_delegate::discovery::follow(next.clone(), true);
            let (api, authorizers, flow_control) =
                core_apiserver::api_service(&etcd, &resources, &common, &marked, next).await?;
            kas_server::peer::advertise_merged_discovery(api.discovery_digest(), delegated.clone());
            let api = api.with_delegated_discovery(delegated);
            Ok(kas_server::run::Serving {
                handler: kas_server::Handler::new(api),
                authorizers,
                // Only the aggregator's front-proxy requests reach core: no bearer tokens.
                token_authenticators: Vec::new(),
                collectors: kas_storage_etcd::metrics::collectors(),
                flow_control: Some(flow_control),
            })
        },
    )
}
