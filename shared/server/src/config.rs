//! `Config` → `CompletedConfig` → `GenericApiServer`, after upstream's
//! `server.Config.Complete().New(name, delegationTarget)`.

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kas_auth::authentication::DynAuthenticator;
use kas_auth::authorization::DynAuthorizer;
use kas_endpoints::RequestInfoFactory;

use crate::healthz::Health;
use crate::{Error, Handler, Result};

/// Everything a role's generic server needs; filled by the options' `apply_to`.
pub struct Config {
    /// The binary name: aggregator, core-apiserver or extensions-apiserver.
    pub component: &'static str,
    pub listener: Option<TcpListener>,
    pub tls: Option<Arc<rustls::ServerConfig>>,
    pub authenticator: Option<DynAuthenticator>,
    pub authorizer: Option<DynAuthorizer>,
    /// The front-proxy CA and allowed names; peers proven by them may call the Peer service.
    pub request_header: Option<(PathBuf, Vec<String>)>,
    pub max_requests_inflight: usize,
    pub max_mutating_requests_inflight: usize,
    pub request_timeout: Duration,
    pub shutdown_delay: Duration,
    pub health: Health,
    pub registry: prometheus::Registry,
    pub request_info_factory: RequestInfoFactory,
    /// The audit policy and backend (`--audit-*`); `None` audits nothing.
    pub auditor: Option<Arc<kas_filters::Auditor>>,
    /// `--enable-priority-and-fairness`.
    pub enable_priority_and_fairness: bool,
    /// API Priority and Fairness, which replaces the max-in-flight limiter when set.
    pub flow_control: Option<Arc<kas_flowcontrol::PriorityAndFairness>>,
}

impl Config {
    pub fn new(component: &'static str) -> Self {
        Config {
            component,
            listener: None,
            tls: None,
            authenticator: None,
            authorizer: None,
            request_header: None,
            max_requests_inflight: 400,
            max_mutating_requests_inflight: 200,
            request_timeout: Duration::from_secs(60),
            shutdown_delay: Duration::ZERO,
            health: Health::new(),
            registry: prometheus::Registry::new(),
            request_info_factory: RequestInfoFactory::default(),
            auditor: None,
            enable_priority_and_fairness: true,
            flow_control: None,
        }
    }

    /// Checks that every stage filled what it must.
    pub fn complete(self) -> Result<CompletedConfig> {
        Ok(CompletedConfig {
            component: self.component,
            listener: self.listener.ok_or(Error::Incomplete("listener"))?,
            tls: self.tls.ok_or(Error::Incomplete("TLS serving config"))?,
            authenticator: self
                .authenticator
                .ok_or(Error::Incomplete("authenticator"))?,
            authorizer: self.authorizer.ok_or(Error::Incomplete("authorizer"))?,
            request_header: self.request_header,
            max_requests_inflight: self.max_requests_inflight,
            max_mutating_requests_inflight: self.max_mutating_requests_inflight,
            request_timeout: self.request_timeout,
            shutdown_delay: self.shutdown_delay,
            health: self.health,
            registry: self.registry,
            request_info_factory: self.request_info_factory,
            auditor: self.auditor,
            flow_control: self.flow_control,
        })
    }
}

/// A `Config` with nothing missing.
pub struct CompletedConfig {
    pub component: &'static str,
    pub listener: TcpListener,
    pub tls: Arc<rustls::ServerConfig>,
    pub authenticator: DynAuthenticator,
    pub authorizer: DynAuthorizer,
    pub request_header: Option<(PathBuf, Vec<String>)>,
    pub max_requests_inflight: usize,
    pub max_mutating_requests_inflight: usize,
    pub request_timeout: Duration,
    pub shutdown_delay: Duration,
    pub health: Health,
    pub registry: prometheus::Registry,
    pub request_info_factory: RequestInfoFactory,
    pub auditor: Option<Arc<kas_filters::Auditor>>,
    pub flow_control: Option<Arc<kas_flowcontrol::PriorityAndFairness>>,
}

impl CompletedConfig {
    /// Builds the server in front of `delegate`, which gets every request the role's own
    /// routes do not serve (upstream's `DelegationTarget`). Named as upstream's
    /// `CompletedConfig.New(name, delegationTarget)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(self, delegate: Handler) -> Result<crate::GenericApiServer> {
        crate::GenericApiServer::new(self, delegate)
    }
}
