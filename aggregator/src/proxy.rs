//! Requests for the group version of a service-backed APIService go to its server, after
//! upstream's `proxyHandler` (`pkg/apiserver/handler_proxy.go`): `/apis/<group>/<version>`
//! and everything under it, proxied with the front-proxy client certificate and the
//! authenticated user in `X-Remote-*` headers over kas-proxy's upgrade-aware transport
//! (watches stream, connection upgrades are spliced). An APIService that is not
//! available answers upstream's plain-text `503 service unavailable`; a local one, or a
//! group version no APIService names, passes on to the role's delegate.
//!
//! What each group version is handled with (upstream's `proxyHandlingInfo`: the service,
//! its availability and a transport built for its TLS) is rebuilt when the APIServices
//! change; a request reads it with one lookup.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use http::{Request, Response, StatusCode};
use kas_auth::UserInfo;
use kas_endpoints::Body;
use kas_endpoints::url::Query;
use kas_proxy::{Location, Options, Transport, text_response};
use kas_registry::store::informer::Objects;
use tokio::sync::watch;

use crate::apiservice::{self, ServiceReference, conditions};
use crate::backend::{Backends, Verify};

/// Upstream's `aggregatedDiscoveryTimeout`: a discovery request to a backend gives up
/// after this long.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);

/// How one service-backed group version is proxied.
struct Handling {
    service: ServiceReference,
    available: bool,
    /// The transport for the APIService's TLS, or why it could not be built.
    transport: Result<Transport, String>,
    /// What the transport was built from, to keep it (and its pool) across changes.
    tls: kas_tls::TlsConfig,
}

/// Service-backed group versions (`group/version`) and how each is proxied.
type Table = Arc<HashMap<String, Arc<Handling>>>;

/// A proxied answer, as the handler returns it.
pub type Proxied = BoxFuture<'static, Result<Response<Body>, Infallible>>;

/// Where a request is proxied: its group version's handling, and whether it is for that
/// group version's discovery document.
pub struct Target {
    handling: Arc<Handling>,
    discovery: bool,
}

/// The proxy: which group versions it takes, and how.
#[derive(Clone)]
pub struct AggregatedProxy {
    table: watch::Receiver<Table>,
    backends: Backends,
    options: Options,
}

impl AggregatedProxy {
    /// Follows `api_services` (the APIService informer) into the handling table; proxied
    /// answers that redirect become 502s when `reject_forwarding_redirects`
    /// (`--aggregator-reject-forwarding-redirect`).
    pub fn new(
        api_services: watch::Receiver<Objects>,
        backends: Backends,
        reject_forwarding_redirects: bool,
    ) -> Self {
        AggregatedProxy {
            table: follow(api_services, backends.clone()),
            backends,
            options: Options {
                wrap_transport: true,
                reject_forwarding_redirects,
                ..Options::default()
            },
        }
    }

    /// The service-backed APIService that takes requests for `path`, if one does (none:
    /// a local one, or none at all).
    pub fn find(&self, path: &str) -> Option<Target> {
        let (gv, discovery) = group_version(path)?;
        let handling = self.table.borrow().get(gv)?.clone();
        Some(Target {
            handling,
            discovery,
        })
    }

    /// The answer of `target`'s server to `req`.
    pub fn serve(&self, target: Target, req: Request<Body>) -> Proxied {
        let (backends, options) = (self.backends.clone(), self.options);
        Box::pin(async move {
            let Target {
                handling,
                discovery,
            } = target;
            Ok(proxy(&handling, discovery, &backends, &options, req).await)
        })
    }

    /// Whether every service-backed APIService of `objects` that is Available is proxied
    /// as Available (upstream's `apiservice-wait-for-first-sync` condition; local ones go
    /// to the delegate, which serves them from the start).
    pub fn handles_every_available(&self, objects: &Objects) -> bool {
        let table = self.table.borrow();
        objects.values().all(|api_service| {
            if apiservice::service(api_service).is_none() || !conditions::is_available(api_service)
            {
                return true;
            }
            let (group, version) = apiservice::group_version(api_service);
            table
                .get(&format!("{group}/{version}"))
                .is_some_and(|h| h.available)
        })
    }
}

fn follow(
    mut api_services: watch::Receiver<Objects>,
    backends: Backends,
) -> watch::Receiver<Table> {
    let (tx, rx) = watch::channel(Table::default());
    // A new front-proxy client certificate makes new transports, as upstream's
    // registration controller listens to the certificate's reloads.
    let mut certs = backends.proxy_client_cert_changes();
    tokio::spawn(async move {
        loop {
            let objects = api_services.borrow_and_update().clone();
            let previous = tx.borrow().clone();
            tx.send_replace(Arc::new(table(&objects, &previous, &backends)));
            let changed = tokio::select! {
                changed = api_services.changed() => changed,
                changed = certs.changed() => changed,
            };
            if changed.is_err() || tx.is_closed() {
                return;
            }
        }
    });
    rx
}

/// Upstream's `updateAPIService` for every service-backed APIService; a transport whose
/// TLS did not change is kept.
fn table(
    objects: &Objects,
    previous: &Table,
    backends: &Backends,
) -> HashMap<String, Arc<Handling>> {
    let mut out = HashMap::new();
    for api_service in objects.values() {
        let Some(service) = apiservice::service(api_service) else {
            continue;
        };
        let (group, version) = apiservice::group_version(api_service);
        let key = format!("{group}/{version}");
        let tls = backends.tls_config(api_service, &service, Verify::AsProxy);
        let transport = match previous.get(&key) {
            Some(h) if h.tls == tls => h.transport.clone(),
            _ => Transport::new(&tls).map_err(|e| e.to_string()),
        };
        if let Err(e) = &transport {
            tracing::warn!(apiservice = kas_registry::meta::name(api_service), error = %e, "proxy transport");
        }
        let handling = Handling {
            service,
            available: conditions::is_available(api_service),
            transport,
            tls,
        };
        out.insert(key, Arc::new(handling));
    }
    out
}

/// `group/version` of a path under `/apis/<group>/<version>`, and whether it is that
/// group version's discovery document itself.
fn group_version(path: &str) -> Option<(&str, bool)> {
    let rest = path.strip_prefix("/apis/")?;
    let mut slashes = rest.match_indices('/');
    let (first, _) = slashes.next()?;
    match slashes.next() {
        Some((second, _)) => Some((&rest[..second], rest[second..].trim_matches('/').is_empty())),
        None if first + 1 < rest.len() => Some((rest, true)),
        None => None,
    }
}

/// Upstream's `proxyHandler.ServeHTTP` for a service-backed APIService.
async fn proxy(
    handling: &Handling,
    discovery: bool,
    backends: &Backends,
    options: &Options,
    mut req: Request<Body>,
) -> Response<Body> {
    if !handling.available {
        return text_response("service unavailable", StatusCode::SERVICE_UNAVAILABLE);
    }
    let transport = match &handling.transport {
        Ok(t) => t,
        Err(e) => return text_response(e, StatusCode::INTERNAL_SERVER_ERROR),
    };
    let Some(user) = req.extensions_mut().remove::<UserInfo>() else {
        return text_response("missing user", StatusCode::INTERNAL_SERVER_ERROR);
    };
    let host = match backends.resolve(&handling.service) {
        Ok(host) => host,
        Err(e) => {
            let svc = &handling.service;
            tracing::error!("error resolving {}/{}: {e}", svc.namespace, svc.name);
            return text_response("service unavailable", StatusCode::SERVICE_UNAVAILABLE);
        }
    };
    let location = Location {
        scheme: "https".to_owned(),
        host,
        path: req.uri().path().to_owned(),
        query: Query::parse(req.uri().query().unwrap_or("")).encode(),
    };
    kas_delegate::set_auth_proxy_headers(req.headers_mut(), Some(&user));
    let forward = transport.forward(&location, req, options);
    let answer = if discovery {
        match tokio::time::timeout(DISCOVERY_TIMEOUT, forward).await {
            Ok(answer) => answer,
            Err(_) => Err(kas_proxy::Error::Backend(
                "context deadline exceeded".to_owned(),
            )),
        }
    } else {
        forward.await
    };
    // Upstream's responder writes every proxy error as a 503.
    answer.unwrap_or_else(|e| e.text_response(StatusCode::SERVICE_UNAVAILABLE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_versions_of_paths() {
        assert_eq!(
            group_version("/apis/wardle.example.com/v1alpha1"),
            Some(("wardle.example.com/v1alpha1", true))
        );
        assert_eq!(
            group_version("/apis/wardle.example.com/v1alpha1/"),
            Some(("wardle.example.com/v1alpha1", true))
        );
        assert_eq!(
            group_version("/apis/wardle.example.com/v1alpha1/namespaces/a/flunders"),
            Some(("wardle.example.com/v1alpha1", false))
        );
        assert_eq!(group_version("/apis/wardle.example.com"), None);
        assert_eq!(group_version("/apis/wardle.example.com/"), None);
        assert_eq!(group_version("/apis"), None);
        assert_eq!(group_version("/api/v1"), None);
    }
}
