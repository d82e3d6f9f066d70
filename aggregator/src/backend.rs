//! How the aggregator reaches the server behind a service-backed APIService for requests
//! of its own (availability checks, discovery, OpenAPI), after upstream's proxy transport
//! and service resolver: the Service resolved to its cluster IP, or with
//! `--enable-aggregator-routing` to a ready endpoint; TLS verified against the APIService's
//! `caBundle` for `<service>.<namespace>.svc` (or not, with `insecureSkipTLSVerify`);
//! the front-proxy client certificate presented; the aggregator's own identity in the
//! front-proxy headers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine;
use http::{HeaderMap, HeaderValue, Method};
use kas_auth::UserInfo;
use kas_tls::TlsConfig;
use kas_webhook::client::{Client, Response};
use serde_json::Value;
use tokio::sync::watch;

use crate::apiservice::ServiceReference;
use crate::services::ServiceIndex;
use kas_proxy::resolve::{self, ResolveError, Routing};

/// The user the aggregator's own requests are made as (upstream's availability and
/// discovery checks: `system:kube-aggregator` in `system:masters`).
pub const USER: &str = "system:kube-aggregator";
pub const GROUP: &str = "system:masters";

/// A PEM certificate and its key.
pub type CertKey = (Vec<u8>, Vec<u8>);

/// How a request of the aggregator's checks the backend's certificate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verify {
    /// Against the APIService's `caBundle` (or not, with `insecureSkipTLSVerify`), as the
    /// proxy does.
    AsProxy,
    /// Not at all: upstream's availability check ("if someone owns the network and
    /// messes with your status that's not so bad").
    No,
}

#[derive(Clone)]
pub struct Backends {
    inner: Arc<Inner>,
}

struct Inner {
    services: Arc<ServiceIndex>,
    routing: Routing,
    /// The front-proxy client certificate and key (PEM); replaced when the files change
    /// (`crate::proxy_cert`).
    proxy_client_cert: watch::Sender<Option<CertKey>>,
    /// One pooled client per TLS configuration and timeout.
    clients: Mutex<HashMap<(TlsKey, Duration), Client>>,
}

/// What distinguishes one client's TLS from another's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct TlsKey {
    ca: Option<Vec<u8>>,
    insecure: bool,
    server_name: Option<String>,
}

impl Backends {
    pub fn new(
        services: Arc<ServiceIndex>,
        routing: Routing,
        proxy_client_cert: Option<CertKey>,
    ) -> Backends {
        Backends {
            inner: Arc::new(Inner {
                services,
                routing,
                proxy_client_cert: watch::Sender::new(proxy_client_cert),
                clients: Mutex::default(),
            }),
        }
    }

    pub fn services(&self) -> &Arc<ServiceIndex> {
        &self.inner.services
    }

    pub fn routing(&self) -> Routing {
        self.inner.routing
    }

    /// The `host:port` a request for `svc` goes to now (upstream's `ResolveEndpoint` of
    /// the routing in use).
    pub fn resolve(&self, svc: &ServiceReference) -> Result<String, ResolveError> {
        let services = &self.inner.services;
        let service = services.service(&svc.namespace, &svc.name);
        match self.inner.routing {
            Routing::ClusterIp => resolve::resolve_cluster(service.as_deref(), &svc.name, svc.port),
            Routing::Endpoints => {
                let endpoints = services.endpoints(&svc.namespace, &svc.name);
                resolve::resolve_endpoint(
                    service.as_deref(),
                    endpoints.as_deref(),
                    &svc.name,
                    svc.port,
                )
            }
        }
    }

    /// The TLS an APIService's backend is reached with.
    pub fn tls_config(
        &self,
        api_service: &Value,
        svc: &ServiceReference,
        verify: Verify,
    ) -> TlsConfig {
        let insecure = verify == Verify::No
            || api_service
                .pointer("/spec/insecureSkipTLSVerify")
                .and_then(Value::as_bool)
                .unwrap_or(false);
        let ca_data = api_service
            .pointer("/spec/caBundle")
            .and_then(Value::as_str)
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
            .filter(|b| !b.is_empty() && !insecure);
        TlsConfig {
            // No caBundle and verification: the system's roots, as Go's transport.
            ca_data,
            insecure,
            client_cert: self.inner.proxy_client_cert.borrow().clone(),
            server_name: Some(format!("{}.{}.svc", svc.name, svc.namespace)),
        }
    }

    /// Presents `pair` from now on: new connections of the aggregator's own requests and
    /// the proxy's transports (which follow [`Backends::proxy_client_cert_changes`]) use
    /// it; requests under way finish on their connections. False when it is the same.
    pub fn set_proxy_client_cert(&self, pair: CertKey) -> bool {
        let changed = self.inner.proxy_client_cert.send_if_modified(|current| {
            let changed = current.as_ref() != Some(&pair);
            if changed {
                *current = Some(pair);
            }
            changed
        });
        if changed {
            self.inner
                .clients
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
        }
        changed
    }

    /// Told when the front-proxy client certificate changes.
    pub fn proxy_client_cert_changes(&self) -> watch::Receiver<Option<CertKey>> {
        self.inner.proxy_client_cert.subscribe()
    }

    /// A pooled client for `tls` whose requests time out after `timeout`.
    pub fn client(&self, tls: &TlsConfig, timeout: Duration) -> Result<Client, String> {
        let key = TlsKey {
            ca: tls.ca_data.clone(),
            insecure: tls.insecure,
            server_name: tls.server_name.clone(),
        };
        let mut clients = self
            .inner
            .clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(client) = clients.get(&(key.clone(), timeout)) {
            return Ok(client.clone());
        }
        let client = Client::new(tls, timeout).map_err(|e| e.to_string())?;
        // Configurations come and go with APIServices; a bound keeps old ones from piling up.
        if clients.len() >= 256 {
            clients.clear();
        }
        clients.insert((key, timeout), client.clone());
        Ok(client)
    }

    /// `GET path` from the backend of `api_service` as the aggregator itself; the URL it
    /// went to with the answer, or Go's error text (with the URL when it was resolved).
    pub async fn get(
        &self,
        api_service: &Value,
        path: &str,
        accept: &str,
        verify: Verify,
        timeout: Duration,
    ) -> Result<(String, Response), BackendError> {
        let mut headers = HeaderMap::new();
        if let Ok(v) = HeaderValue::from_str(accept) {
            headers.insert(http::header::ACCEPT, v);
        }
        let user = UserInfo {
            name: USER.to_owned(),
            groups: vec![GROUP.to_owned()],
            ..UserInfo::default()
        };
        self.get_as(api_service, path, headers, &user, verify, timeout)
            .await
    }

    /// `GET path` (with its query) from the backend of `api_service` with `headers`, as
    /// `user` (in the front-proxy headers, which replace any in `headers`).
    pub async fn get_as(
        &self,
        api_service: &Value,
        path: &str,
        mut headers: HeaderMap,
        user: &UserInfo,
        verify: Verify,
        timeout: Duration,
    ) -> Result<(String, Response), BackendError> {
        let svc = crate::apiservice::service(api_service).ok_or(BackendError::Local)?;
        let host = self.resolve(&svc).map_err(BackendError::Resolve)?;
        let url = format!("https://{host}{path}");
        let client = self
            .client(&self.tls_config(api_service, &svc, verify), timeout)
            .map_err(|e| BackendError::Request(url.clone(), e))?;
        kas_delegate::set_auth_proxy_headers(&mut headers, Some(user));
        match client
            .send(Method::GET, &url, headers, bytes::Bytes::new())
            .await
        {
            Ok(resp) => Ok((url, resp)),
            Err(e) => Err(BackendError::Request(url, e.to_string())),
        }
    }
}

/// Why a request of the aggregator's own did not reach the backend.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("a local APIService has no backend of its own")]
    Local,
    #[error("{0}")]
    Resolve(ResolveError),
    /// The URL, and Go's error text for it.
    #[error("{1}")]
    Request(String, String),
}
