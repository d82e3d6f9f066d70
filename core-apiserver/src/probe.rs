//! An HTTP(S) GET as upstream's HTTP prober (`pkg/probe/http`) makes it for component
//! statuses: over kas-proxy's transport without verifying the server (its
//! `InsecureSkipVerify`), with a timeout, the body up to 10 KiB, and Go's `net/http` error
//! text for what fails (`Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259:
//! connect: connection refused`).

use std::time::Duration;

use http_body_util::{BodyExt, Limited};
use hyper::body::Bytes;

use kas_proxy::{Location, Transport};

use crate::connect::url_error;

/// Upstream's `maxRespBodyLength`.
const MAX_BODY: usize = 10 * 1024;

/// GET `https://host:port/path` (or `http://`), answering the status code and the body (at
/// most 10 KiB), or Go's error text.
pub async fn get(
    https: bool,
    host: &str,
    port: u16,
    path: &str,
    timeout: Duration,
) -> Result<(u16, Bytes), String> {
    let host = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let location = Location {
        scheme: if https { "https" } else { "http" }.to_owned(),
        host,
        path: path.to_owned(),
        query: String::new(),
    };
    let method = http::Method::GET;
    let attempt = async {
        let insecure = kas_tls::TlsConfig {
            insecure: true,
            ..kas_tls::TlsConfig::default()
        };
        let transport = Transport::new(&insecure).map_err(|e| e.to_string())?;
        let uri = location.uri().map_err(|e| e.to_string())?;
        let req = http::Request::get(uri)
            .header(http::header::USER_AGENT, "kube-probe/1.33")
            .header(http::header::ACCEPT, "*/*")
            .body(kas_endpoints::body::empty())
            .map_err(|e| e.to_string())?;
        let resp = transport.round_trip(req).await.map_err(|e| e.to_string())?;
        let code = resp.status().as_u16();
        let body = Limited::new(resp.into_body(), MAX_BODY)
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        Ok::<_, String>((code, body))
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => Err(url_error(&method, &location, &e)),
        Err(_) => Err(url_error(
            &method,
            &location,
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        )),
    }
}
