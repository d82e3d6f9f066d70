//! The listener and the routes: TLS (h2 and http/1.1 by ALPN, client certificates verified
//! against the request-header CA when given), authentication, then discovery, OpenAPI,
//! the REST verbs and the echo upgrade.

use std::sync::Arc;

use anyhow::Context;
use http::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::{TokioExecutor, TokioIo};
use kas_apimachinery::status::Status;

use super::api::{ECHO, GroupVersion};
use super::auth::RequestHeaderConfig;
use super::reply::{self, Body};
use super::rest::{self, Target};
use super::state::{Document, State};
use super::{DiscoveryFailure, Options, discovery, upgrade};

pub async fn serve(options: Options) -> anyhow::Result<()> {
    let tls = kas_tls::server_config(
        &options.tls_cert_file,
        &options.tls_private_key_file,
        &[options.requestheader_client_ca_file.as_path()],
    )
    .context("TLS configuration")?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let gv = GroupVersion {
        group: options.group.clone(),
        version: options.version.clone(),
    };
    let auth = RequestHeaderConfig {
        allowed_names: options.requestheader_allowed_names.clone(),
        username_headers: options.requestheader_username_headers.clone(),
        uid_headers: options.requestheader_uid_headers.clone(),
        group_headers: options.requestheader_group_headers.clone(),
        extra_prefixes: options.requestheader_extra_headers_prefix.clone(),
    };
    let mut state = State::new(gv, auth, options.discovery_failure);
    state.legacy_discovery_only = options.legacy_discovery_only;
    let state = Arc::new(state);
    let addr = (options.bind_address, options.secure_port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("listening on {}:{}", addr.0, addr.1))?;
    eprintln!(
        "kas-test-apiserver: serving {} on {}",
        state.gv.api_version(),
        listener.local_addr()?
    );
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let (acceptor, state) = (acceptor.clone(), state.clone());
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let cn = tls
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| chain.first())
                .and_then(|der| common_name(der));
            let service = hyper::service::service_fn(move |req| {
                let (state, cn) = (state.clone(), cn.clone());
                async move { Ok::<_, std::convert::Infallible>(route(&state, req, cn.as_deref()).await) }
            });
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection_with_upgrades(TokioIo::new(tls), service)
                .await;
        });
    }
}

fn common_name(der: &[u8]) -> Option<String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let cn = cert.subject().iter_common_name().next()?;
    cn.as_str().ok().map(str::to_owned)
}

async fn route(
    state: &State,
    req: Request<hyper::body::Incoming>,
    cn: Option<&str>,
) -> Response<Body> {
    let (method, path) = (req.method().clone(), req.uri().path().to_owned());
    if matches!(path.as_str(), "/healthz" | "/livez" | "/readyz") {
        return reply::bytes(StatusCode::OK, "text/plain; charset=utf-8", "ok");
    }
    let Some(user) = state.auth.authenticate(cn, req.headers()) else {
        eprintln!("{method} {path}: 401 (client certificate CN {cn:?})");
        return reply::status(&Status::unauthorized("Unauthorized"));
    };
    let resp = match path.as_str() {
        "/kas-test/discovery-failure" => set_discovery_failure(state, req).await,
        "/version" => version(),
        "/openapi/v2" => document(&req, &state.docs.openapi_v2, "application/json"),
        "/openapi/v3" => document(&req, &state.docs.openapi_v3_index, "application/json"),
        p if p.strip_prefix("/openapi/v3/") == Some(&super::openapi::v3_path(&state.gv)) => {
            openapi_v3(state, &req)
        }
        "/apis" | "/apis/" => match failing(state).await {
            Some(failure) => failure,
            None => apis(state, &req),
        },
        p => match p.strip_prefix("/apis/") {
            Some(rest) => group_version(state, req, &user, rest).await,
            None => reply::not_found(),
        },
    };
    eprintln!(
        "{method} {path}: {} (user {:?})",
        resp.status().as_u16(),
        user.name
    );
    resp
}

/// Everything under `/apis/`: the group and version documents, then the resources.
async fn group_version(
    state: &State,
    req: Request<hyper::body::Incoming>,
    user: &super::auth::User,
    rest: &str,
) -> Response<Body> {
    let gv = &state.gv;
    let Some(after_group) = rest.strip_prefix(gv.group.as_str()) else {
        return reply::not_found();
    };
    let after_group = after_group.trim_end_matches('/');
    if after_group.is_empty() {
        return match failing(state).await {
            Some(failure) => failure,
            None => reply::json(StatusCode::OK, &discovery::group(gv)),
        };
    }
    let Some(after_version) = after_group
        .strip_prefix('/')
        .and_then(|r| r.strip_prefix(gv.version.as_str()))
    else {
        return reply::not_found();
    };
    if after_version.is_empty() || after_version == "/" {
        return match failing(state).await {
            Some(failure) => failure,
            None => reply::json(StatusCode::OK, &discovery::resource_list(gv)),
        };
    }
    let Some(target) = after_version
        .strip_prefix('/')
        .and_then(|r| Target::parse(gv, r))
    else {
        return reply::not_found();
    };
    match target.subresource.as_deref() {
        None => rest::handle(state, req, user, &target).await,
        Some(ECHO) if target.resource.namespaced => {
            let name = target.name.as_deref().unwrap_or("");
            let ns = target.namespace.as_deref().unwrap_or("");
            match state.store.get(target.resource, ns, name) {
                Ok(_) => upgrade::echo(req),
                Err(_) => {
                    reply::status(&Status::not_found(&gv.group, target.resource.plural, name))
                }
            }
        }
        Some(_) => reply::not_found(),
    }
}

/// The discovery failure to answer with, if one is set; `Hang` never returns.
async fn failing(state: &State) -> Option<Response<Body>> {
    match state.discovery_failure() {
        DiscoveryFailure::None => None,
        DiscoveryFailure::Error => Some(reply::status(&Status::internal_error(
            "discovery fails on purpose (kas-test-apiserver --discovery-failure)",
        ))),
        DiscoveryFailure::Hang => std::future::pending().await,
    }
}

fn apis(state: &State, req: &Request<hyper::body::Incoming>) -> Response<Body> {
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    match discovery::negotiate(accept).filter(|_| !state.legacy_discovery_only) {
        Some(version) => {
            let doc = match version {
                "v2" => &state.docs.aggregated_v2,
                _ => &state.docs.aggregated_v2beta1,
            };
            let mut resp = document(req, doc, &discovery::aggregated_content_type(version));
            resp.headers_mut()
                .insert(header::VARY, http::HeaderValue::from_static("Accept"));
            resp
        }
        None => reply::json(StatusCode::OK, &discovery::group_list(&state.gv)),
    }
}

/// A precomputed document with its ETag; 304 when `If-None-Match` names it.
fn document(
    req: &Request<hyper::body::Incoming>,
    doc: &Document,
    content_type: &str,
) -> Response<Body> {
    let etag = doc.etag();
    let matched = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut resp = if matched {
        reply::bytes(StatusCode::NOT_MODIFIED, content_type, "")
    } else {
        reply::bytes(StatusCode::OK, content_type, doc.body.clone())
    };
    if let Ok(v) = http::HeaderValue::from_str(&etag) {
        resp.headers_mut().insert(header::ETAG, v);
    }
    resp
}

/// The v3 document: with a stale `hash`, a redirect to the current one, as upstream's.
fn openapi_v3(state: &State, req: &Request<hyper::body::Incoming>) -> Response<Body> {
    let doc = &state.docs.openapi_v3;
    let hash = req.uri().query().and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == "hash")
            .map(|(_, v)| v.into_owned())
    });
    match hash {
        Some(h) if h != doc.hash => {
            let location = format!(
                "/openapi/v3/{}?hash={}",
                super::openapi::v3_path(&state.gv),
                doc.hash
            );
            let mut resp = reply::bytes(StatusCode::MOVED_PERMANENTLY, "text/plain", "");
            if let Ok(v) = http::HeaderValue::from_str(&location) {
                resp.headers_mut().insert(header::LOCATION, v);
            }
            resp
        }
        Some(_) => {
            let mut resp = document(req, doc, "application/json");
            resp.headers_mut().insert(
                header::CACHE_CONTROL,
                http::HeaderValue::from_static("public, immutable"),
            );
            resp
        }
        None => document(req, doc, "application/json"),
    }
}

async fn set_discovery_failure(
    state: &State,
    req: Request<hyper::body::Incoming>,
) -> Response<Body> {
    use http_body_util::BodyExt;
    if req.method() == Method::GET {
        let now = format!("{:?}", state.discovery_failure()).to_lowercase();
        return reply::bytes(StatusCode::OK, "text/plain", now);
    }
    if req.method() != Method::PUT {
        return reply::status(&Status::bad_request("GET or PUT none, error or hang"));
    }
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    match DiscoveryFailure::parse(&String::from_utf8_lossy(&body)) {
        Some(failure) => {
            state.set_discovery_failure(failure);
            reply::bytes(StatusCode::OK, "text/plain", "ok")
        }
        None => reply::status(&Status::bad_request("the body must be none, error or hang")),
    }
}

fn version() -> Response<Body> {
    let info = serde_json::json!({
        "major": "1",
        "minor": "33",
        "gitVersion": "v1.33.0-kas-test-apiserver",
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "",
        "compiler": "rustc",
        "platform": "linux/amd64",
    });
    reply::json(StatusCode::OK, &info)
}
