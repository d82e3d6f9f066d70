//! A minimal blocking HTTP/1.1 client over rustls (or plain TCP for `http://`).
//!
//! Enough to ask `/readyz`, etcd's `/health` and, in tests, any endpoint of the roles: one
//! request per connection (`Connection: close`), Content-Length or chunked bodies, the
//! server verified against a given CA, an optional client certificate and bearer token.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};

use crate::error::{Error, Result};

/// One request. Build with [`Request::get`] and adjust the public fields.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub method: &'a str,
    pub url: &'a str,
    /// PEM of the CA that must have signed the server's certificate (`https://` only).
    pub ca_pem: &'a [u8],
    /// PEM certificate chain and PEM private key to present to the server.
    pub client_cert: Option<(&'a [u8], &'a [u8])>,
    pub bearer: Option<&'a str>,
    pub headers: Vec<(&'a str, &'a str)>,
    pub body: &'a [u8],
    /// Applies to connecting and to each read and write.
    pub timeout: Duration,
}

impl<'a> Request<'a> {
    pub fn get(url: &'a str, ca_pem: &'a [u8]) -> Self {
        Request {
            method: "GET",
            url,
            ca_pem,
            client_cert: None,
            bearer: None,
            headers: Vec::new(),
            body: &[],
            timeout: Duration::from_secs(5),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// Names lower-cased, in order of arrival.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `GET url`, returning the status and the body.
pub fn get(
    url: &str,
    ca_pem: &[u8],
    client_cert: Option<(&[u8], &[u8])>,
    bearer: Option<&str>,
) -> Result<(u16, Vec<u8>)> {
    let request = Request {
        client_cert,
        bearer,
        ..Request::get(url, ca_pem)
    };
    send(&request).map(|r| (r.status, r.body))
}

pub fn send(req: &Request<'_>) -> Result<Response> {
    let target = Target::parse(req.url)?;
    let io_err = |source| Error::Request {
        url: req.url.to_string(),
        source,
    };
    let tcp = connect(&target, req.timeout).map_err(io_err)?;
    let head = request_head(req, &target);
    if target.tls {
        let config = client_config(req)?;
        let name = ServerName::try_from(target.host.clone()).map_err(|_| Error::Url {
            url: req.url.to_string(),
            reason: "host is not a valid TLS server name",
        })?;
        let conn = rustls::ClientConnection::new(config, name).map_err(|source| Error::Tls {
            what: "client connection",
            source,
        })?;
        exchange(rustls::StreamOwned::new(conn, tcp), &head, req)
    } else {
        exchange(tcp, &head, req)
    }
}

fn exchange(mut stream: impl Read + Write, head: &str, req: &Request<'_>) -> Result<Response> {
    let io_err = |source| Error::Request {
        url: req.url.to_string(),
        source,
    };
    stream.write_all(head.as_bytes()).map_err(io_err)?;
    stream.write_all(req.body).map_err(io_err)?;
    stream.flush().map_err(io_err)?;

    let head_only = req.method.eq_ignore_ascii_case("HEAD");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = match stream.read(&mut chunk) {
            Ok(n) => n,
            // A peer that closes without close_notify: the framing below decides whether
            // the response is complete.
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => 0,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err(e)),
        };
        buf.extend_from_slice(&chunk[..n]);
        let parsed = parse_response(&buf, n == 0, head_only).map_err(|reason| Error::Response {
            url: req.url.to_string(),
            reason,
        })?;
        if let Some(response) = parsed {
            return Ok(response);
        }
    }
}

fn request_head(req: &Request<'_>, target: &Target) -> String {
    let mut head = format!(
        "{} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nUser-Agent: kas-local\r\n",
        req.method, target.path, target.authority
    );
    if let Some(token) = req.bearer {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    for (name, value) in &req.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !req.body.is_empty() || !matches!(req.method, "GET" | "HEAD" | "DELETE") {
        head.push_str(&format!("Content-Length: {}\r\n", req.body.len()));
    }
    head.push_str("\r\n");
    head
}

fn client_config(req: &Request<'_>) -> Result<Arc<rustls::ClientConfig>> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(req.ca_pem) {
        let cert = cert.map_err(pem_err("the CA bundle"))?;
        roots.add(cert).map_err(|source| Error::Tls {
            what: "adding the CA certificate",
            source,
        })?;
    }
    if roots.is_empty() {
        return Err(Error::Pem {
            what: "the CA bundle".into(),
            source: rustls_pki_types::pem::Error::NoItemsFound,
        });
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|source| Error::Tls {
            what: "protocol versions",
            source,
        })?
        .with_root_certificates(roots);
    let mut config = match req.client_cert {
        None => builder.with_no_client_auth(),
        Some((cert_pem, key_pem)) => {
            let chain = CertificateDer::pem_slice_iter(cert_pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(pem_err("the client certificate"))?;
            let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(pem_err("the client key"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|source| Error::Tls {
                    what: "client certificate",
                    source,
                })?
        }
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn pem_err(what: &str) -> impl FnOnce(rustls_pki_types::pem::Error) -> Error {
    let what = what.to_string();
    move |source| Error::Pem { what, source }
}

fn connect(target: &Target, timeout: Duration) -> std::io::Result<TcpStream> {
    let mut last = None;
    for addr in (target.host.as_str(), target.port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(stream) => {
                stream.set_read_timeout(Some(timeout))?;
                stream.set_write_timeout(Some(timeout))?;
                stream.set_nodelay(true)?;
                return Ok(stream);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last
        .unwrap_or_else(|| std::io::Error::new(ErrorKind::NotFound, "host resolves to no address")))
}

#[derive(Debug, PartialEq, Eq)]
struct Target {
    tls: bool,
    /// Without brackets, for resolving and for the TLS server name.
    host: String,
    port: u16,
    /// As written in the URL, for the Host header.
    authority: String,
    path: String,
}

impl Target {
    fn parse(url: &str) -> Result<Target> {
        let bad = |reason| Error::Url {
            url: url.to_string(),
            reason,
        };
        let (tls, rest) = if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err(bad("scheme must be http or https"));
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (host, after) = v6
                .split_once(']')
                .ok_or_else(|| bad("unclosed [ in host"))?;
            (host, after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(bad("empty host"));
        }
        let port = match port {
            Some(p) => p.parse().map_err(|_| bad("invalid port"))?,
            None if tls => 443,
            None => 80,
        };
        Ok(Target {
            tls,
            host: host.to_string(),
            port,
            authority: authority.to_string(),
            path: path.to_string(),
        })
    }
}

/// `Ok(None)`: need more bytes. `eof`: there will be no more.
fn parse_response(buf: &[u8], eof: bool, head_only: bool) -> Result<Option<Response>, String> {
    let Some(end) = find(buf, b"\r\n\r\n") else {
        return if eof {
            Err(format!(
                "connection closed after {} bytes, inside the header",
                buf.len()
            ))
        } else {
            Ok(None)
        };
    };
    let head = std::str::from_utf8(&buf[..end]).map_err(|_| "header is not UTF-8".to_string())?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status: u16 = status_line
        .strip_prefix("HTTP/1.")
        .and_then(|s| s.get(2..5))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let rest = &buf[end + 4..];
    if (100..200).contains(&status) && status != 101 {
        // An interim response; the real one follows.
        return parse_response(rest, eof, head_only);
    }
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };

    let body = if head_only || status == 204 || status == 304 {
        Some(Vec::new())
    } else if header("transfer-encoding")
        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"))
    {
        decode_chunked(rest)?
    } else if let Some(len) = header("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| format!("bad Content-Length {len:?}"))?;
        (rest.len() >= len).then(|| rest[..len].to_vec())
    } else if eof {
        Some(rest.to_vec())
    } else {
        None
    };
    match body {
        Some(body) => Ok(Some(Response {
            status,
            headers,
            body,
        })),
        None if eof => Err("connection closed before the end of the body".into()),
        None => Ok(None),
    }
}

/// `Ok(None)` until the last chunk has arrived.
fn decode_chunked(mut data: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = find(data, b"\r\n") else {
            return Ok(None);
        };
        let size_line =
            std::str::from_utf8(&data[..line_end]).map_err(|_| "bad chunk size".to_string())?;
        let size_hex = size_line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_hex, 16)
            .map_err(|_| format!("bad chunk size {size_hex:?}"))?;
        data = &data[line_end + 2..];
        if size == 0 {
            // Trailers, if any, end with an empty line; we ignore them.
            return Ok(find(data, b"\r\n").map(|_| body));
        }
        if data.len() < size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests;
