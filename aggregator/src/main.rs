//! aggregator: the client-facing role. It authenticates and authorizes every request once,
//! serves what it owns (health, version, metrics; apiregistration.k8s.io later) and
//! delegates everything else to core-apiserver over mTLS with the user in front-proxy
//! headers.

use std::process::ExitCode;

use clap::Parser;
use kas_delegate::DelegationOptions;
use kas_server::options::CommonOptions;
use kas_server::run::Role;

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
    delegation: DelegationOptions,
}

// mimalloc: glibc malloc was a quarter of the CPU time of a proxied request.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let options = Options::parse();
    kas_server::allocator::spawn_purger();
    let role = Role {
        component: "aggregator",
        anonymous_by_default: true,
    };
    let errors = options.delegation.validate(true);
    let delegation = options.delegation;
    kas_server::run::main(role, options.common, errors, move |_| async move {
        delegation
            .build()
            .map(kas_server::Handler::new)
            .map_err(|e| e.to_string())
    })
}
