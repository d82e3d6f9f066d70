//! The HTTPS client. One [`Client`] per configuration (a webhook, an OIDC issuer) keeps its
//! connections, as Go's `http.Transport` does behind the REST client; requests are whole
//! (a body of bytes out, the answer's body read in full, up to [`MAX_RESPONSE_BYTES`]).

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Limited};
use kas_apimachinery::golang::net::url_error;
pub use kas_tls::TlsConfig;

use crate::{Error, Result};

/// The largest answer read: webhook and discovery answers are small; a server that sends
/// more is cut off rather than held in memory.
pub const MAX_RESPONSE_BYTES: usize = 32 << 20;

/// An answer: its status, headers and whole body.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// A whole-body client over kas-proxy's [`kas_proxy::Transport`], the one client of calls
/// out: its connections are pooled there.
#[derive(Clone)]
pub struct Client {
    transport: kas_proxy::Transport,
    timeout: Duration,
}

impl Client {
    /// A client for `tls`, whose requests fail after `timeout` (Go's `http.Client.Timeout`:
    /// dialing, the handshake, sending and reading the answer).
    pub fn new(tls: &TlsConfig, timeout: Duration) -> Result<Client> {
        let transport = kas_proxy::Transport::new(tls).map_err(|e| Error::Config(e.to_string()))?;
        Ok(Client { transport, timeout })
    }

    /// `GET url`.
    pub async fn get(&self, url: &str) -> Result<Response> {
        self.send(Method::GET, url, HeaderMap::new(), Bytes::new())
            .await
    }

    /// `POST url` with a JSON body (`Content-Type` and `Accept` `application/json`), and a
    /// bearer token when given.
    pub async fn post_json(
        &self,
        url: &str,
        body: Vec<u8>,
        bearer: Option<&str>,
    ) -> Result<Response> {
        let mut headers = HeaderMap::new();
        let json = http::HeaderValue::from_static("application/json");
        headers.insert(http::header::CONTENT_TYPE, json.clone());
        headers.insert(http::header::ACCEPT, json);
        if let Some(token) = bearer {
            let value = http::HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| Error::InvalidRequest("invalid bearer token".to_owned()))?;
            headers.insert(http::header::AUTHORIZATION, value);
        }
        self.send(Method::POST, url, headers, Bytes::from(body))
            .await
    }

    /// Sends a request to an absolute `url` and reads the whole answer. Failures before an
    /// answer are Go's `url.Error` texts; any status is an answer.
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response> {
        let uri: Uri = url
            .parse()
            .map_err(|e| Error::InvalidRequest(format!("parse {url:?}: {e}")))?;
        if uri.host().is_none() {
            return Err(Error::InvalidRequest(url_error(
                method.as_str(),
                url,
                "http: no Host in request URL",
            )));
        }
        let fail = |err: String| Error::Request(url_error(method.as_str(), url, &err));
        let mut request = Request::builder()
            .method(method.clone())
            .uri(uri)
            .body(kas_endpoints::body::full(body))
            .map_err(|e| Error::InvalidRequest(e.to_string()))?;
        *request.headers_mut() = headers;
        let exchange = async {
            let response = self
                .transport
                .round_trip(request)
                .await
                .map_err(|e| fail(e.to_string()))?;
            let (parts, body) = response.into_parts();
            let body = Limited::new(body, MAX_RESPONSE_BYTES)
                .collect()
                .await
                .map_err(|e| fail(e.to_string()))?
                .to_bytes();
            Ok(Response {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        };
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(answer) => answer,
            Err(_) => Err(fail(
                "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
                    .to_owned(),
            )),
        }
    }
}

#[cfg(test)]
mod tests;
