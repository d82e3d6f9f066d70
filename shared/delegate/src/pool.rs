//! The set of delegate endpoints, how they are found (a list of URLs, or one DNS name that
//! resolves to many), and how one is picked for a request.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rustls_pki_types::ServerName;
use tokio::task::JoinHandle;
use tokio_rustls::TlsConnector;

use crate::endpoint::{Endpoint, EndpointState};
use crate::{Error, Result};

const RESOLVE_EVERY: Duration = Duration::from_secs(10);

/// A parsed `https://host:port` endpoint URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EndpointUrl {
    pub host: String,
    pub port: u16,
}

impl EndpointUrl {
    fn is_dns_name(&self) -> bool {
        self.host
            .trim_matches(['[', ']'])
            .parse::<IpAddr>()
            .is_err()
    }
}

pub(crate) fn parse_endpoint(url: &str) -> Result<EndpointUrl> {
    let invalid = |reason: &str| Error::InvalidEndpoint {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    let uri: http::Uri = url.parse().map_err(|_| invalid("not a URL"))?;
    if uri.scheme_str() != Some("https") {
        return Err(invalid("the scheme must be https"));
    }
    if uri.path() != "/" && !uri.path().is_empty() {
        return Err(invalid("a path is not allowed"));
    }
    let host = uri.host().ok_or_else(|| invalid("no host"))?.to_owned();
    Ok(EndpointUrl {
        host,
        port: uri.port_u16().unwrap_or(443),
    })
}

pub(crate) struct Pool {
    endpoints: RwLock<Arc<Vec<Arc<Endpoint>>>>,
    watchers: std::sync::Mutex<HashMap<String, JoinHandle<()>>>,
    next: AtomicUsize,
    tls: TlsConnector,
    /// The same identity, for the upgrade connections each endpoint's transport dials.
    upgrade_tls: rustls::ClientConfig,
    /// Counts changes of the endpoints' discovery digests.
    pub(crate) discovery_changed: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Drop for Pool {
    fn drop(&mut self) {
        for (_, task) in self
            .watchers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
        {
            task.abort();
        }
    }
}

impl Pool {
    /// Builds the pool and starts a health watcher per endpoint; with one DNS name, also a
    /// resolver that adds and removes endpoints as the name's addresses change.
    pub fn start(urls: &[String], tls: rustls::ClientConfig) -> Result<Arc<Pool>> {
        let parsed = urls
            .iter()
            .map(|u| parse_endpoint(u))
            .collect::<Result<Vec<_>>>()?;
        let pool = Arc::new(Pool {
            endpoints: RwLock::new(Arc::new(Vec::new())),
            watchers: std::sync::Mutex::new(HashMap::new()),
            next: AtomicUsize::new(0),
            upgrade_tls: tls.clone(),
            tls: TlsConnector::from(Arc::new(tls)),
            discovery_changed: Arc::new(tokio::sync::watch::channel(0).0),
        });
        match parsed.as_slice() {
            [one] if one.is_dns_name() => {
                let weak = Arc::downgrade(&pool);
                let one = one.clone();
                tokio::spawn(async move { resolve_loop(weak, one).await });
            }
            _ => {
                let endpoints = urls
                    .iter()
                    .zip(parsed)
                    .map(|(url, u)| {
                        pool.endpoint(url.clone(), format!("{}:{}", u.host, u.port), &u)
                    })
                    .collect::<Result<Vec<_>>>()?;
                pool.replace(endpoints);
            }
        }
        Ok(pool)
    }

    fn endpoint(&self, name: String, dial: String, url: &EndpointUrl) -> Result<Arc<Endpoint>> {
        let invalid = |reason: &str| Error::InvalidEndpoint {
            url: name.clone(),
            reason: reason.to_owned(),
        };
        let bare = url.host.trim_matches(['[', ']']).to_owned();
        let upgrades = kas_proxy::Transport::from_rustls(self.upgrade_tls.clone(), Some(&bare))?;
        let server_name =
            ServerName::try_from(bare).map_err(|_| invalid("not a valid TLS server name"))?;
        let authority = format!("{}:{}", url.host, url.port)
            .parse()
            .map_err(|_| invalid("not a valid authority"))?;
        Ok(Arc::new(Endpoint::new(
            name,
            dial,
            server_name,
            authority,
            self.tls.clone(),
            upgrades,
            self.discovery_changed.clone(),
        )))
    }

    /// Installs a new endpoint set, keeping the watchers of endpoints that stay.
    fn replace(self: &Arc<Self>, endpoints: Vec<Arc<Endpoint>>) {
        let mut watchers = self.watchers.lock().unwrap_or_else(|p| p.into_inner());
        watchers.retain(|name, task| {
            let keep = endpoints.iter().any(|e| &e.name == name);
            if !keep {
                task.abort();
            }
            keep
        });
        for endpoint in &endpoints {
            watchers
                .entry(endpoint.name.clone())
                .or_insert_with(|| tokio::spawn(crate::health::watch(endpoint.clone())));
        }
        *self.endpoints.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(endpoints);
        self.discovery_changed.send_modify(|n| *n += 1);
    }

    pub fn snapshot(&self) -> Arc<Vec<Arc<Endpoint>>> {
        self.endpoints
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The less loaded of two eligible endpoints taken in turn (power of two choices),
    /// skipping those already tried for this request. When none is eligible, any untried
    /// endpoint that is not down, so a fleet that is all starting up is still tried; when
    /// every one left is down, one of those. Ejection only orders the choice: a prober
    /// starved of CPU for a few seconds marks a live peer down, and refusing it then would
    /// turn a false alarm into 503s, where a peer that is really gone refuses the dial at
    /// once (upstream's proxy, which ejects nothing, tries the service every time).
    pub fn pick(&self, tried: &[usize]) -> Option<(usize, Arc<Endpoint>)> {
        let all = self.snapshot();
        let n = all.len();
        if n == 0 {
            return None;
        }
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let untried = || {
            (0..n)
                .map(move |k| (start + k) % n)
                .filter(|i| !tried.contains(i))
        };
        let mut eligible = untried().filter(|&i| all[i].state().eligible());
        let load = |i: usize| all[i].active.load(Ordering::Relaxed);
        let chosen = match (eligible.next(), eligible.next()) {
            (Some(a), Some(b)) => {
                if load(b) < load(a) {
                    b
                } else {
                    a
                }
            }
            (Some(a), None) => a,
            _ => untried()
                .find(|&i| all[i].state() != EndpointState::Down)
                .or_else(|| untried().next())?,
        };
        Some((chosen, all[chosen].clone()))
    }

    pub fn len(&self) -> usize {
        self.snapshot().len()
    }
}

async fn resolve_loop(pool: std::sync::Weak<Pool>, url: EndpointUrl) {
    loop {
        let Some(strong) = pool.upgrade() else { return };
        match tokio::net::lookup_host((url.host.as_str(), url.port)).await {
            Ok(addrs) => {
                let mut addrs: Vec<_> = addrs.collect();
                addrs.sort();
                addrs.dedup();
                let current = strong.snapshot();
                let mut next = Vec::with_capacity(addrs.len());
                for addr in addrs {
                    let name = format!("https://{}:{} ({addr})", url.host, url.port);
                    match current.iter().find(|e| e.name == name) {
                        Some(e) => next.push(e.clone()),
                        None => match strong.endpoint(name, addr.to_string(), &url) {
                            Ok(e) => next.push(e),
                            Err(e) => tracing::warn!(error = %e, "skipping resolved address"),
                        },
                    }
                }
                let changed = next.len() != current.len()
                    || next
                        .iter()
                        .zip(current.iter())
                        .any(|(a, b)| a.name != b.name);
                if changed {
                    tracing::info!(host = %url.host, endpoints = next.len(), "delegate endpoints resolved");
                    strong.replace(next);
                }
            }
            Err(e) => {
                tracing::warn!(host = %url.host, error = %e, "resolving delegate endpoints failed; keeping the last set")
            }
        }
        drop(strong);
        tokio::time::sleep(RESOLVE_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_urls() {
        assert_eq!(
            parse_endpoint("https://127.0.0.1:6443").unwrap(),
            EndpointUrl {
                host: "127.0.0.1".into(),
                port: 6443
            }
        );
        assert!(
            !parse_endpoint("https://127.0.0.1:6443")
                .unwrap()
                .is_dns_name()
        );
        assert!(
            parse_endpoint("https://core.kube-system.svc:443")
                .unwrap()
                .is_dns_name()
        );
        assert!(!parse_endpoint("https://[::1]:6443").unwrap().is_dns_name());
        assert_eq!(parse_endpoint("https://core").unwrap().port, 443);
        assert!(parse_endpoint("http://127.0.0.1:1").is_err());
        assert!(parse_endpoint("https://127.0.0.1:1/path").is_err());
        assert!(parse_endpoint("not a url").is_err());
    }
}
