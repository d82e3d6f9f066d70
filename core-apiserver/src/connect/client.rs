//! The HTTP client connecters send their requests with, after upstream's kubelet client
//! (`pkg/kubelet/client`: HTTPS to the kubelet, trusting `--kubelet-certificate-authority`
//! or, without it, not verifying the kubelet's certificate, presenting
//! `--kubelet-client-certificate`) and its proxy transport (pods/proxy, services/proxy:
//! http or https as the id says, certificates not verified). One HTTP/1.1 connection per
//! request; the answer's body streams back as it comes. Dial and TLS failures are
//! reported in Go's words (`dial tcp 127.0.0.1:10250: connect: connection refused`).

use std::sync::Arc;

use http::{Request, Response};
use hyper_util::rt::TokioIo;
use kas_endpoints::Body;
use rustls::pki_types::ServerName;

/// Where a request goes: scheme (`http` or `https`), `host[:port]`, path and raw query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub scheme: String,
    pub host: String,
    pub path: String,
    pub query: String,
}

impl Location {
    /// Go's `url.URL.String()` for what connecters build.
    pub fn url(&self) -> String {
        let scheme = if self.scheme.is_empty() {
            "http"
        } else {
            &self.scheme
        };
        let mut out = format!("{scheme}://{}{}", self.host, self.path);
        if !self.query.is_empty() {
            out.push('?');
            out.push_str(&self.query);
        }
        out
    }

    /// The host and port to dial: the port the host names, else the scheme's.
    fn dial_address(&self) -> String {
        let has_port = match self.host.rfind(']') {
            Some(end) => self.host[end..].contains(':'),
            None => self.host.contains(':'),
        };
        if has_port {
            self.host.clone()
        } else if self.scheme == "https" {
            format!("{}:443", self.host)
        } else {
            format!("{}:80", self.host)
        }
    }

    fn host_name(&self) -> &str {
        let addr = self.host.as_str();
        if let Some(rest) = addr.strip_prefix('[') {
            return rest.split(']').next().unwrap_or(rest);
        }
        addr.split(':').next().unwrap_or(addr)
    }
}

/// A transport: the TLS configuration its https requests use.
#[derive(Clone)]
pub struct Transport {
    tls: Arc<rustls::ClientConfig>,
}

impl Transport {
    /// Trusts `ca` when given, else verifies nothing (upstream's kubelet client without
    /// `--kubelet-certificate-authority`, and its proxy transport); presents
    /// `client_cert` when given.
    pub fn new(
        ca: Option<&std::path::Path>,
        client_cert: Option<(&std::path::Path, &std::path::Path)>,
    ) -> Result<Transport, String> {
        let mut config = kas_tls::client_config(ca, client_cert, vec![b"http/1.1".to_vec()])
            .map_err(|e| e.to_string())?;
        if ca.is_none() {
            config
                .dangerous()
                .set_certificate_verifier(kas_tls::InsecureVerifier::new());
        }
        Ok(Transport {
            tls: Arc::new(config),
        })
    }

    /// Sends `req` (its URI is replaced by the location's path and query) to `location`.
    /// The error is Go's transport error text.
    pub async fn send(
        &self,
        location: &Location,
        mut req: Request<Body>,
    ) -> Result<Response<Body>, String> {
        let target = match location.query.as_str() {
            "" if location.path.is_empty() => "/".to_owned(),
            "" => location.path.clone(),
            q => format!(
                "{}?{q}",
                if location.path.is_empty() {
                    "/"
                } else {
                    &location.path
                }
            ),
        };
        *req.uri_mut() = target.parse().map_err(|e| format!("{e}"))?;
        if let Ok(host) = http::HeaderValue::from_str(&location.host) {
            req.headers_mut().insert(http::header::HOST, host);
        }
        *req.version_mut() = http::Version::HTTP_11;
        let addr = location.dial_address();
        let tcp = tokio::net::TcpStream::connect(&addr)
            .await
            .map_err(|e| kas_apimachinery::golang::net::dial_error(&addr, &e))?;
        let _ = tcp.set_nodelay(true);
        if location.scheme == "https" {
            let name =
                ServerName::try_from(location.host_name().to_owned()).map_err(|e| e.to_string())?;
            let tls = tokio_rustls::TlsConnector::from(self.tls.clone())
                .connect(name, tcp)
                .await
                .map_err(|e| format!("tls: {e}"))?;
            exchange(TokioIo::new(tls), req).await
        } else {
            exchange(TokioIo::new(tcp), req).await
        }
    }
}

async fn exchange<T>(io: T, req: Request<Body>) -> Result<Response<Body>, String>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "connect: backend connection closed");
        }
    });
    let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
    Ok(resp.map(Body::new))
}

/// Go's `url.Error` text for a client's request: `Get "<url>": <err>`.
pub fn url_error(method: &http::Method, location: &Location, err: &str) -> String {
    kas_apimachinery::golang::net::url_error(method.as_str(), &location.url(), err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_as_go_writes_them() {
        let loc = Location {
            scheme: "https".into(),
            host: "127.0.0.1:10250".into(),
            path: "/containerLogs/default/p/c".into(),
            query: String::new(),
        };
        assert_eq!(
            url_error(
                &http::Method::GET,
                &loc,
                "dial tcp 127.0.0.1:10250: connect: connection refused"
            ),
            "Get \"https://127.0.0.1:10250/containerLogs/default/p/c\": dial tcp 127.0.0.1:10250: connect: connection refused"
        );
        assert_eq!(loc.dial_address(), "127.0.0.1:10250");
        let v6 = Location {
            host: "[fd00::1]".into(),
            ..loc
        };
        assert_eq!(
            (v6.dial_address().as_str(), v6.host_name()),
            ("[fd00::1]:443", "fd00::1")
        );
    }
}
