//! A small HTTPS client: one connection, HTTP/2 or HTTP/1.1 by ALPN, optional client
//! certificate, bodies read whole.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow};
use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    H1,
    H2,
}

/// TLS settings for a target.
#[derive(Clone)]
pub struct Tls(pub Arc<rustls::ClientConfig>);

impl Tls {
    pub fn new(ca: &Path, client: Option<(&Path, &Path)>, proto: Proto) -> Result<Tls> {
        let alpn = match proto {
            Proto::H1 => vec![b"http/1.1".to_vec()],
            Proto::H2 => vec![b"h2".to_vec()],
        };
        Ok(Tls(Arc::new(kas_tls::client_config(
            Some(ca),
            client,
            alpn,
        )?)))
    }
}

pub type Sender = hyper::client::conn::http2::SendRequest<Full<Bytes>>;

/// Opens an HTTP/2 connection to `https://host:port` (the path of `base` is ignored).
pub async fn connect_h2(base: &http::Uri, tls: &Tls) -> Result<Sender> {
    let stream = dial(base, tls).await?;
    let (sender, conn) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .initial_stream_window_size(1 << 20)
        .initial_connection_window_size(16 << 20)
        .handshake(TokioIo::new(stream))
        .await?;
    tokio::spawn(conn);
    Ok(sender)
}

pub async fn dial(
    base: &http::Uri,
    tls: &Tls,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let host = base.host().ok_or_else(|| anyhow!("no host in {base}"))?;
    let port = base.port_u16().unwrap_or(443);
    let tcp = TcpStream::connect((host, port))
        .await
        .with_context(|| format!("connecting to {base}"))?;
    tcp.set_nodelay(true)?;
    let name = ServerName::try_from(host.trim_matches(['[', ']']).to_owned())?;
    Ok(TlsConnector::from(tls.0.clone()).connect(name, tcp).await?)
}

/// A response read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// One request on a fresh connection.
pub async fn request(
    url: &str,
    method: Method,
    headers: &[(&str, &str)],
    tls: &Tls,
    proto: Proto,
) -> Result<Answer> {
    request_with_body(url, method, headers, Bytes::new(), tls, proto).await
}

/// One request with a body on a fresh connection.
pub async fn request_with_body(
    url: &str,
    method: Method,
    headers: &[(&str, &str)],
    body: Bytes,
    tls: &Tls,
    proto: Proto,
) -> Result<Answer> {
    let uri: http::Uri = url.parse()?;
    let mut req = Request::builder().method(method).uri(uri.clone());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let stream = dial(&uri, tls).await?;
    let resp = match proto {
        Proto::H2 => {
            let (mut sender, conn) =
                hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
                    .await?;
            tokio::spawn(conn);
            sender.send_request(req.body(Full::new(body))?).await?
        }
        Proto::H1 => {
            let (mut sender, conn) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(conn);
            let host = uri.authority().map(|a| a.to_string()).unwrap_or_default();
            let mut req = req.body(Full::new(body))?;
            req.headers_mut().insert(http::header::HOST, host.parse()?);
            *req.uri_mut() = uri
                .path_and_query()
                .map(|p| p.as_str())
                .unwrap_or("/")
                .parse()?;
            sender.send_request(req).await?
        }
    };
    let status = resp.status();
    let headers = resp.headers().clone();
    let body = resp.into_body().collect().await?.to_bytes();
    Ok(Answer {
        status,
        headers,
        body,
    })
}

/// The byte stream of an upgraded connection.
pub type Upgraded = TokioIo<hyper::upgrade::Upgraded>;

/// An HTTP/1.1 upgrade (`Connection: Upgrade`, `Upgrade: <protocol>`, plus `headers`) on a
/// fresh connection; `tls` must offer http/1.1. Returns the response (its body read whole
/// unless it switched protocols) and, after `101 Switching Protocols`, the connection.
pub async fn upgrade(
    url: &str,
    method: Method,
    protocol: &str,
    headers: &[(&str, &str)],
    tls: &Tls,
) -> Result<(Answer, Option<Upgraded>)> {
    let uri: http::Uri = url.parse()?;
    let stream = dial(&uri, tls).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn.with_upgrades());
    let host = uri.authority().map(|a| a.to_string()).unwrap_or_default();
    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::HOST, host)
        .header(http::header::CONNECTION, "Upgrade")
        .header(http::header::UPGRADE, protocol);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = sender
        .send_request(req.body(Full::new(Bytes::new()))?)
        .await?;
    let status = resp.status();
    let headers = resp.headers().clone();
    if status != StatusCode::SWITCHING_PROTOCOLS {
        let body = resp.into_body().collect().await?.to_bytes();
        return Ok((
            Answer {
                status,
                headers,
                body,
            },
            None,
        ));
    }
    let upgraded = hyper::upgrade::on(resp).await?;
    let answer = Answer {
        status,
        headers,
        body: Bytes::new(),
    };
    Ok((answer, Some(TokioIo::new(upgraded))))
}
