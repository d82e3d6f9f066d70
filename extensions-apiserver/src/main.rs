//! extensions-apiserver: CRDs and custom resources, the end of the delegation chain.
//! Whatever it does not serve gets upstream's 404 Status.

use std::process::ExitCode;

use clap::Parser;
use kas_server::options::CommonOptions;
use kas_server::run::Role;
use kas_storage_etcd::EtcdOptions;

#[derive(Parser, Debug)]
#[command(
    args_override_self = true,
    name = "extensions-apiserver",
    version,
    about = "CRDs and custom resources of the Kubernetes API server."
)]
struct Options {
    #[command(flatten)]
    common: CommonOptions,
    #[command(flatten)]
    etcd: EtcdOptions,
}

// mimalloc: glibc malloc was a quarter of the CPU time of a proxied request.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let options = Options::parse();
    kas_server::allocator::spawn_purger();
    let role = Role {
        component: "extensions-apiserver",
        anonymous_by_default: false,
        storage_checks: options.etcd.health_checks(),
        delegates: false,
    };
    let errors = options.etcd.validate(true);
    let etcd = options.etcd;
    kas_server::run::main(role, options.common, errors, move |_| async move {
        let (api, storage) =
            extensions_apiserver::api_service(&etcd, kas_server::routes::not_found()).await?;
        let mut serving = kas_server::run::Serving::from(kas_server::Handler::new(api));
        serving.collectors = kas_storage_etcd::metrics::collectors();
        serving.flow_control = kas_server::run::FlowControlSource::reader(storage);
        Ok(serving)
    })
}
