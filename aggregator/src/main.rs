//! aggregator: the client-facing role. It authenticates and authorizes every request once,
//! serves what it owns (health, version, metrics; apiregistration.k8s.io later) and
//! delegates everything else to core-apiserver over mTLS with the user in front-proxy
//! headers.

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
}

// mimalloc: glibc malloc was a quarter of the CPU time of a proxied request.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let options = Options::parse();
    kas_server::allocator::spawn_purger();
    // The aggregator stores nothing; it reports etcd's health as upstream's does.
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
    let delegation = options.delegation;
    kas_server::run::main(role, options.common, errors, move |_| async move {
        delegation
            .build()
            .map(kas_server::Handler::new)
            .map_err(|e| e.to_string())
    })
}
