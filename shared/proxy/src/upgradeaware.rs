//! Upstream's `UpgradeAwareHandler` (`k8s.io/apimachinery/pkg/util/proxy/upgradeaware.go`)
//! over a [`Transport`]: an upgrade request goes over a connection of its own and, on
//! `101 Switching Protocols`, the client's and the backend's connections are spliced;
//! any other request goes through the transport's pool as Go's `httputil.ReverseProxy`
//! sends it.

use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use kas_endpoints::{Body, body};

use crate::headers::{incoming, is_upgrade_request, outgoing, remove_hop_by_hop};
use crate::{Error, Io, Location, Result, Transport};

/// How a request is proxied: upstream's `UpgradeAwareHandler` fields that callers set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `UpgradeRequired`: a request that is no upgrade is refused
    /// ([`Error::UpgradeRequired`]): exec, attach and portforward.
    pub upgrade_required: bool,
    /// `WrapTransport`: the answer of a plain request loses its CORS headers (upstream's
    /// `corsRemovingTransport`): the proxy subresources and the aggregator.
    pub wrap_transport: bool,
    /// `RejectForwardingRedirects`: a backend's redirect becomes a 502 (the aggregator's
    /// `--aggregator-reject-forwarding-redirect`).
    pub reject_forwarding_redirects: bool,
}

const REDIRECT_REFUSED: &str =
    "the backend attempted to redirect this request, which is not permitted";

impl Transport {
    /// Proxies `req` to `location`, as upstream's `UpgradeAwareHandler.ServeHTTP`.
    ///
    /// `req` is the request as the client sent it (its path decides the trailing slash
    /// and the root redirect); `location` is where it goes, its query included (upstream
    /// copies the request's query into the location of a plain request: callers that want
    /// that pass it in the location). An upgrade request needs hyper's `OnUpgrade` in its
    /// extensions, as a server built with `serve_connection_with_upgrades` puts there.
    ///
    /// Failures before an answer are errors for the caller's responder; a backend's answer,
    /// whatever its status, is the `Ok` response, its body streaming.
    pub async fn forward(
        &self,
        location: &Location,
        req: Request<Body>,
        options: &Options,
    ) -> Result<Response<Body>> {
        if is_upgrade_request(req.headers()) {
            return self.upgrade(location, req).await;
        }
        if options.upgrade_required {
            return Err(Error::UpgradeRequired);
        }
        let path = req.uri().path();
        let uri = if !location.path.ends_with('/') && path.ends_with('/') {
            let mut slashed = location.clone();
            slashed.path.push('/');
            slashed.uri()?
        } else if location.path.is_empty() && matches!(*req.method(), Method::GET | Method::HEAD) {
            return Ok(redirect_to_root(&req));
        } else {
            location.uri()?
        };
        let (mut parts, body) = req.into_parts();
        outgoing(&mut parts.headers);
        let mut out = Request::new(body);
        *out.method_mut() = parts.method;
        *out.uri_mut() = uri;
        *out.headers_mut() = parts.headers;
        let resp = self.round_trip(out).await?;
        let (mut parts, answer) = resp.into_parts();
        if options.reject_forwarding_redirects
            && parts.status.is_redirection()
            && parts.headers.contains_key(header::LOCATION)
        {
            return Ok(redirect_refused());
        }
        incoming(&mut parts.headers, options.wrap_transport);
        Ok(Response::from_parts(parts, Body::new(answer)))
    }

    /// Upstream's `tryUpgrade`: the request (every header kept) written on a connection
    /// of its own; a `101` answer passed back and the connections spliced once the client's
    /// is handed over; an error answer (400 and up) passed back whole, the connection then
    /// closed; anything else an invalid upgrade response.
    async fn upgrade(&self, location: &Location, req: Request<Body>) -> Result<Response<Body>> {
        let io = self.dial(location).await.map_err(Error::Dial)?;
        upgrade_over(io, location, req).await
    }
}

/// The rest of upstream's `tryUpgrade` once the backend is dialed: the request written on
/// `io`, the answer passed back, the connections spliced on `101`. For callers that choose
/// and dial the backend themselves (kas-delegate tries its endpoints in turn).
pub async fn upgrade_over(
    io: Box<dyn Io>,
    location: &Location,
    req: Request<Body>,
) -> Result<Response<Body>> {
    let (mut parts, body) = req.into_parts();
    let client = parts.extensions.remove::<OnUpgrade>();
    let mut resp = send_upgrade(io, location, parts, body).await?;
    let status = resp.status();
    if status != StatusCode::SWITCHING_PROTOCOLS && status.as_u16() < 400 {
        return Err(Error::Backend(format!(
            "invalid upgrade response: status code {}",
            status.as_u16()
        )));
    }
    let Some(client) = client else {
        return Err(Error::Backend(
                "request connection cannot be hijacked: the request came without a connection to upgrade"
                    .to_owned(),
            ));
    };
    if status != StatusCode::SWITCHING_PROTOCOLS {
        let (mut parts, incoming) = resp.into_parts();
        remove_hop_by_hop(&mut parts.headers);
        parts
            .headers
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return Ok(Response::from_parts(parts, Body::new(incoming)));
    }
    let backend = hyper::upgrade::on(&mut resp);
    tokio::spawn(async move {
        match tokio::try_join!(client, backend) {
            Ok((client, backend)) => {
                crate::splice::splice(TokioIo::new(client), TokioIo::new(backend)).await
            }
            Err(e) => tracing::debug!(error = %e, "proxy: upgrade not completed"),
        }
    });
    let (parts, _) = resp.into_parts();
    Ok(Response::from_parts(parts, body::empty()))
}

/// Upstream's `proxyRedirectsforRootPath`: a GET or HEAD of an empty path is sent to the
/// request's path with a `/`.
fn redirect_to_root(req: &Request<Body>) -> Response<Body> {
    let mut target = format!("{}/", req.uri().path());
    if let Some(q) = req.uri().query().filter(|q| !q.is_empty()) {
        target.push('?');
        target.push_str(q);
    }
    let mut resp = Response::new(body::empty());
    *resp.status_mut() = StatusCode::MOVED_PERMANENTLY;
    if let Ok(v) = HeaderValue::from_str(&target) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    resp
}

/// Upstream's answer in place of a refused redirect: a 502 whose body is the reason (no
/// newline: a response upstream builds, not `http.Error`'s), its type sniffed as Go does.
fn redirect_refused() -> Response<Body> {
    let mut resp = Response::new(body::full(REDIRECT_REFUSED));
    *resp.status_mut() = StatusCode::BAD_GATEWAY;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

/// Writes an upgrade request (its head from `parts`, every header kept; `Host` the
/// location's when it has none) on `io` and reads the answer's head; on `101`,
/// `hyper::upgrade::on` of the answer yields the backend's connection.
pub async fn send_upgrade(
    io: Box<dyn Io>,
    location: &Location,
    mut parts: http::request::Parts,
    body: Body,
) -> Result<Response<hyper::body::Incoming>> {
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| Error::Backend(format!("error sending request: {e}")))?;
    tokio::spawn(async move {
        if let Err(e) = conn.with_upgrades().await {
            tracing::debug!(error = %e, "proxy: upgrade connection to the backend ended");
        }
    });
    if !parts.headers.contains_key(header::HOST)
        && let Ok(host) = HeaderValue::from_str(&location.host)
    {
        parts.headers.insert(header::HOST, host);
    }
    let mut out = Request::new(body);
    *out.method_mut() = parts.method;
    *out.uri_mut() = location
        .path_and_query()
        .parse()
        .map_err(|e| Error::InvalidLocation(format!("parse {:?}: {e}", location.url())))?;
    *out.headers_mut() = parts.headers;
    sender.send_request(out).await.map_err(|e| {
        Error::Backend(match e.is_incomplete_message() {
            true => "EOF".to_owned(),
            false => e.to_string(),
        })
    })
}
