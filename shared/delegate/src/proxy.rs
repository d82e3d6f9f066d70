//! `Delegate`: forwards a request to the next role. The user travels in the front-proxy
//! headers, signed by this role's proxy client certificate; the body streams both ways.
//!
//! Retries: a request that never reached a peer (no connection, or refused before it was
//! written) goes to another endpoint. A GET, HEAD or OPTIONS request without a body whose
//! connection broke before the answer came is also retried once elsewhere: it changed
//! nothing, and the answer never reached the client.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::header::{self, HeaderName, HeaderValue};
use http::{Method, Request, Response, Uri};
use http_body::{Body as HttpBody, Frame, SizeHint};
use kas_apimachinery::Status;
use kas_audit::handoff::{AUDIT_ID_HEADER, HANDOFF_HEADER};
use kas_audit::{AuditContext, AuditId};
use kas_auth::UserInfo;
use kas_endpoints::{Body, BoxError, body, write_status};
use kas_flowcontrol::handoff::FlowControlled;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use tracing::Instrument;

use crate::Result;
use crate::endpoint::EndpointState;
use crate::endpoint::StreamGuard;
use crate::pool::Pool;

pub const USER_HEADER: &str = "x-remote-user";
pub const UID_HEADER: &str = "x-remote-uid";
pub const GROUP_HEADER: &str = "x-remote-group";
pub const EXTRA_PREFIX: &str = "x-remote-extra-";

/// Hop-by-hop headers (RFC 9110 §7.6.1) and those HTTP/2 forbids.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// Characters escaped in extra keys, as upstream's proxy does (`url.PathEscape`).
const EXTRA_KEY: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

#[derive(Clone)]
pub struct Delegate {
    pub(crate) pool: Arc<Pool>,
}

impl Delegate {
    pub fn new(urls: &[String], tls: rustls::ClientConfig) -> Result<Delegate> {
        Ok(Delegate {
            pool: Pool::start(urls, tls)?,
        })
    }

    /// Wakes when an endpoint's discovery digest changes, or the endpoint set does.
    pub fn watch_discovery(&self) -> tokio::sync::watch::Receiver<u64> {
        self.pool.discovery_changed.subscribe()
    }

    /// The discovery digests the endpoints that take requests last told (none empty).
    pub fn discovery_digests(&self) -> Vec<String> {
        self.pool
            .snapshot()
            .iter()
            .filter(|e| e.state().eligible())
            .map(|e| e.discovery())
            .filter(|d| !d.is_empty())
            .collect()
    }

    /// Each endpoint's name and state, for logs and tests.
    pub fn endpoint_states(&self) -> Vec<(String, EndpointState)> {
        self.pool
            .snapshot()
            .iter()
            .map(|e| (e.name.clone(), e.state()))
            .collect()
    }

    async fn forward(self, req: Request<Body>) -> Response<Body> {
        if kas_proxy::headers::is_upgrade_request(req.headers()) {
            return self.forward_upgrade(req).await;
        }
        let (mut parts, body) = req.into_parts();
        rewrite_headers(&mut parts);
        crate::trace::inject(&mut parts.headers);
        let replayable = is_replayable(&parts.method, &body);
        let mut req = Some(Request::from_parts(parts, body));
        let mut tried = Vec::new();
        let mut last_error = String::from("no endpoints");
        let attempts = self.pool.len() + 1;
        for _ in 0..attempts {
            let Some(current) = req.take() else { break };
            let Some((index, endpoint)) = self.pool.pick(&tried) else {
                break;
            };
            tried.push(index);
            let (mut sender, guard) = match endpoint.sender().await {
                Ok(pair) => pair,
                Err(e) => {
                    endpoint.set_state(EndpointState::Down);
                    last_error = e.to_string();
                    req = Some(current);
                    continue;
                }
            };
            let replay = replayable.then(|| clone_head(&current));
            let current = with_authority(current, &endpoint.authority);
            match sender.try_send_request(current).await {
                Ok(resp) => return resp.map(|b| Tracked::boxed(b, guard)),
                Err(mut e) => {
                    last_error = format!("{}: {}", endpoint.name, e.error());
                    endpoint.drop_closed();
                    req = e.take_message().or(replay);
                    tracing::debug!(error = %last_error, retry = req.is_some(), "delegate request failed");
                }
            }
        }
        tracing::warn!(error = %last_error, "no delegate endpoint could serve the request");
        write_status(&Status::service_unavailable(&format!(
            "error trying to reach service: {last_error}"
        )))
    }
}

impl tower::Service<Request<Body>> for Delegate {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let this = self.clone();
        let span = tracing::debug_span!("delegate", path = req.uri().path());
        Box::pin(async move { Ok(this.forward(req).await) }.instrument(span))
    }
}

fn is_replayable(method: &Method, body: &Body) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) && body.is_end_stream()
}

fn clone_head(req: &Request<Body>) -> Request<Body> {
    let mut copy = Request::new(body::empty());
    *copy.method_mut() = req.method().clone();
    *copy.uri_mut() = req.uri().clone();
    *copy.headers_mut() = req.headers().clone();
    copy
}

/// Points the request at the endpoint over HTTP/2.
fn with_authority(mut req: Request<Body>, authority: &http::uri::Authority) -> Request<Body> {
    let path = req
        .uri()
        .path_and_query()
        .cloned()
        .unwrap_or_else(|| http::uri::PathAndQuery::from_static("/"));
    if let Ok(uri) = Uri::builder()
        .scheme("https")
        .authority(authority.clone())
        .path_and_query(path)
        .build()
    {
        *req.uri_mut() = uri;
    }
    *req.version_mut() = http::Version::HTTP_2;
    req
}

/// Drops what must not cross the hop (hop-by-hop headers, the caller's credentials, any
/// identity headers the caller made up) and writes the authenticated user, the request's
/// audit ID and, when this role audits, the audit hand-off (`kas_audit::handoff`: the peer
/// writes the request's events), and the APF hand-off of an admitted request
/// (`kas_flowcontrol::handoff`: the peer does not queue it again).
pub(crate) fn rewrite_headers(parts: &mut http::request::Parts) {
    let user = parts.extensions.remove::<UserInfo>();
    rewrite_hop_headers(&mut parts.headers, user.as_ref());
    if let Some(AuditId(id)) = parts.extensions.get::<AuditId>() {
        parts.headers.insert(AUDIT_ID_HEADER, id.clone());
    }
    if let Some(handoff) = parts
        .extensions
        .get::<Arc<AuditContext>>()
        .and_then(|ctx| ctx.hand_off())
    {
        parts.headers.insert(HANDOFF_HEADER, handoff);
    }
    if parts.extensions.get::<FlowControlled>().is_some() {
        parts.headers.insert(
            kas_flowcontrol::handoff::HANDOFF_HEADER,
            http::HeaderValue::from_static("true"),
        );
    }
}

fn rewrite_hop_headers(headers: &mut http::HeaderMap, user: Option<&UserInfo>) {
    if let Some(connection) = headers
        .get(header::CONNECTION)
        .and_then(|v| v.to_str().ok())
    {
        let named: Vec<String> = connection
            .split(',')
            .map(|s| s.trim().to_ascii_lowercase())
            .collect();
        for name in named {
            headers.remove(name.as_str());
        }
    }
    for name in HOP_BY_HOP {
        headers.remove(*name);
    }
    set_auth_proxy_headers(headers, user);
}

/// client-go's `SetAuthProxyHeaders` for a request a role proxies (to its delegate, or the
/// aggregator to an aggregated server): the caller's credentials and any identity headers
/// it made up are dropped, and the authenticated user is written in the front-proxy
/// headers (extra keys percent-escaped, as upstream's).
pub fn set_auth_proxy_headers(headers: &mut http::HeaderMap, user: Option<&UserInfo>) {
    headers.remove(header::AUTHORIZATION);
    headers.remove(HANDOFF_HEADER);
    headers.remove(kas_flowcontrol::handoff::HANDOFF_HEADER);
    let forged: Vec<HeaderName> = headers
        .keys()
        .filter(|k| k.as_str().starts_with("x-remote-"))
        .cloned()
        .collect();
    for name in forged {
        headers.remove(name);
    }
    let Some(user) = user else { return };
    let mut put = |name: HeaderName, value: &str| {
        if let Ok(v) = HeaderValue::from_str(value) {
            headers.append(name, v);
        }
    };
    put(HeaderName::from_static(USER_HEADER), &user.name);
    if !user.uid.is_empty() {
        put(HeaderName::from_static(UID_HEADER), &user.uid);
    }
    for group in &user.groups {
        put(HeaderName::from_static(GROUP_HEADER), group);
    }
    for (key, values) in &user.extra {
        let escaped = utf8_percent_encode(key, EXTRA_KEY)
            .to_string()
            .to_ascii_lowercase();
        let Ok(name) = HeaderName::from_bytes(format!("{EXTRA_PREFIX}{escaped}").as_bytes()) else {
            continue;
        };
        for value in values {
            put(name.clone(), value);
        }
    }
}

/// A response body that holds its stream slot until it ends or is dropped.
struct Tracked {
    inner: hyper::body::Incoming,
    _guard: StreamGuard,
}

impl Tracked {
    fn boxed(inner: hyper::body::Incoming, guard: StreamGuard) -> Body {
        body::boxed(Tracked {
            inner,
            _guard: guard,
        })
    }
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, BoxError>>> {
        Pin::new(&mut self.inner).poll_frame(cx).map_err(Into::into)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn identity_is_rewritten_and_forgeries_dropped() {
        let mut h = http::HeaderMap::new();
        h.insert("authorization", HeaderValue::from_static("Bearer secret"));
        h.insert("x-remote-user", HeaderValue::from_static("forged"));
        h.insert("x-remote-extra-scopes", HeaderValue::from_static("forged"));
        h.insert(
            "connection",
            HeaderValue::from_static("keep-alive, x-custom"),
        );
        h.insert("x-custom", HeaderValue::from_static("hop"));
        h.insert("accept", HeaderValue::from_static("application/json"));
        let user = UserInfo {
            name: "alice".into(),
            uid: "u-1".into(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            extra: BTreeMap::from([("example.org/Scopes x".into(), vec!["a".into(), "b".into()])]),
        };
        rewrite_hop_headers(&mut h, Some(&user));
        assert!(h.get("authorization").is_none());
        assert!(h.get("connection").is_none());
        assert!(h.get("x-custom").is_none());
        assert_eq!(h["accept"], "application/json");
        assert_eq!(h["x-remote-user"], "alice");
        assert_eq!(h["x-remote-uid"], "u-1");
        let groups: Vec<_> = h.get_all("x-remote-group").iter().collect();
        assert_eq!(groups, ["system:masters", "system:authenticated"]);
        assert!(h.get("x-remote-extra-scopes").is_none());
        let extra: Vec<_> = h
            .get_all("x-remote-extra-example.org%2fscopes%20x")
            .iter()
            .collect();
        assert_eq!(extra, ["a", "b"]);
    }

    #[test]
    fn without_a_user_nothing_is_claimed() {
        let mut h = http::HeaderMap::new();
        h.insert("x-remote-user", HeaderValue::from_static("forged"));
        rewrite_hop_headers(&mut h, None);
        assert!(h.is_empty());
    }
}
