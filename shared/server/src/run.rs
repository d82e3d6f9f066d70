//! The `main` every role shares: flags → telemetry → `Config` → server → run until SIGTERM.

use std::future::Future;
use std::process::ExitCode;

use crate::healthz::PostStartHook;
use crate::options::CommonOptions;
use kas_auth::authentication::DynAuthenticator;
use kas_auth::authorization::ModeAuthorizers;

use crate::{Config, Handler, Result};

/// What differs between the roles.
pub struct Role {
    /// The binary name, also the metrics and tracing component.
    pub component: &'static str,
    pub anonymous_by_default: bool,
    /// The storage's checks (etcd's, the KMS plugins'), after the default ones and before
    /// `shutdown`, each on the endpoints its scope says.
    pub storage_checks: Vec<kas_storage::health::HealthCheck>,
    /// Whether the role passes requests to kas peers (the aggregator and core): its audit
    /// filter then waits for the peer's answer before writing RequestReceived.
    pub delegates: bool,
}

/// What a role's `delegate` builds: the handler of the requests its own routes do not
/// serve, and the authorizers of the `--authorization-mode` modes whose state the role
/// keeps (RBAC's index).
pub struct Serving {
    pub handler: Handler,
    pub authorizers: ModeAuthorizers,
    /// Bearer-token authenticators the role built (service-account tokens).
    pub token_authenticators: Vec<DynAuthenticator>,
    /// The role's own metrics, registered beside the server's and served on /metrics.
    pub collectors: Vec<Box<dyn prometheus::core::Collector>>,
    /// Where API Priority and Fairness reads its configuration; without it the role uses
    /// the max-in-flight limiter.
    pub flow_control: Option<FlowControlSource>,
}

pub use crate::flowcontrol::FlowControlSource;

impl From<Handler> for Serving {
    fn from(handler: Handler) -> Self {
        Serving {
            handler,
            authorizers: ModeAuthorizers::default(),
            token_authenticators: Vec::new(),
            collectors: Vec::new(),
            flow_control: None,
        }
    }
}

/// Runs a role to completion. `delegate` builds the handler for requests the role's own
/// routes do not serve; it runs inside the runtime, after the flags were validated.
pub fn main<F, Fut>(
    role: Role,
    options: CommonOptions,
    extra_errors: Vec<String>,
    delegate: F,
) -> ExitCode
where
    F: FnOnce(CommonOptions) -> Fut,
    Fut: Future<Output = Result<Serving, String>>,
{
    main_with_hooks(role, Vec::new(), options, extra_errors, delegate)
}

/// [`main`] for a role that runs post-start hooks: each is registered as the check
/// `poststarthook/<name>` on /healthz, /livez and /readyz (after the role's own checks and
/// before `shutdown`, upstream's order), failing until the role marks it done (the
/// delegate holds clones of the hooks).
pub fn main_with_hooks<F, Fut>(
    role: Role,
    post_start_hooks: Vec<PostStartHook>,
    options: CommonOptions,
    extra_errors: Vec<String>,
    delegate: F,
) -> ExitCode
where
    F: FnOnce(CommonOptions) -> Fut,
    Fut: Future<Output = Result<Serving, String>>,
{
    if let Err(e) = options.validate(extra_errors) {
        eprintln!("Error: {e}");
        return ExitCode::from(1);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: starting the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(serve(role, post_start_hooks, options, delegate)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "exiting");
            eprintln!("Error: {}", error_chain(&e));
            ExitCode::from(1)
        }
    }
}

async fn serve<F, Fut>(
    role: Role,
    post_start_hooks: Vec<PostStartHook>,
    options: CommonOptions,
    delegate: F,
) -> Result<()>
where
    F: FnOnce(CommonOptions) -> Fut,
    Fut: Future<Output = Result<Serving, String>>,
{
    let tracing_config = options.tracing.load()?;
    let _telemetry = crate::telemetry::init(&options.logging, tracing_config, role.component)?;
    let mut config = Config::new(role.component);
    options.apply_to(&mut config)?;
    for warning in options.audit.warnings() {
        tracing::warn!("{warning}");
    }
    let audit = options
        .audit
        .build(&tokio::runtime::Handle::current())
        .map_err(crate::Error::Audit)?;
    if let Some(audit) = &audit {
        config.auditor = Some(std::sync::Arc::new(kas_filters::Auditor {
            policy: audit.policy.clone(),
            sink: audit.backend.clone(),
            delegates: role.delegates,
        }));
    }
    for collector in kas_audit::metrics::collectors() {
        config.registry.register(collector)?;
    }
    for check in role.storage_checks {
        config.health.add_storage(check);
    }
    for hook in post_start_hooks {
        config.health.add_everywhere(std::sync::Arc::new(hook));
    }
    let serving = delegate(options.clone())
        .await
        .map_err(crate::Error::Delegate)?;
    for collector in serving.collectors {
        config.registry.register(collector)?;
    }
    if config.enable_priority_and_fairness
        && let Some(source) = serving.flow_control
    {
        config.flow_control = Some(crate::flowcontrol::start(&config, source).await?);
    }
    options.authentication.apply_to(
        &mut config,
        role.anonymous_by_default,
        serving.token_authenticators,
    )?;
    options
        .authorization
        .apply_to(&mut config, &serving.authorizers)?;
    let server = config.complete()?.new(serving.handler)?;
    let ran = server.prepare_run()?.run(crate::shutdown_signal()).await;
    if let Some(audit) = audit {
        // Flushes buffered events (a batch backend's thread), off the runtime's workers.
        let backend = audit.backend;
        let _ = tokio::task::spawn_blocking(move || backend.shutdown()).await;
    }
    ran
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}
