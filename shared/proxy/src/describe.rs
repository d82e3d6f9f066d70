//! A client failure in Go's words, as Go's `http.Transport` reports it: a refused dial as
//! `net.OpError` (`dial tcp 10.0.0.1:443: connect: connection refused`), an untrusted
//! certificate as `crypto/x509`'s error, else the error's own text.

use http::Uri;
use kas_apimachinery::golang::net::{dial_error, errno};

/// A pooled request's failure.
pub(crate) fn describe(err: &hyper_util::client::legacy::Error, uri: &Uri) -> String {
    let mut io_error = None;
    let mut next: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    while let Some(e) = next {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return kas_tls::go_tls_error(tls, uri.host().unwrap_or_default());
        }
        next = e.source();
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            io_error.get_or_insert(io);
            // io::Error::new(kind, inner) reports its inner error as its text, not as
            // its source.
            if let Some(inner) = io.get_ref() {
                next = Some(inner as &(dyn std::error::Error + 'static));
            }
        }
    }
    match io_error {
        Some(io) if err.is_connect() => dial_error(&authority(uri), io),
        Some(io) => errno(io),
        None => error_chain(err),
    }
}

/// A TLS handshake's failure; `host` is the name the certificate was checked against.
pub(crate) fn describe_io(err: &std::io::Error, host: &str) -> String {
    match err
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    {
        Some(tls) => kas_tls::go_tls_error(tls, host),
        None => errno(err),
    }
}

/// `host:port` of a URI, the scheme's port when it names none.
pub(crate) fn authority(uri: &Uri) -> String {
    let host = uri.host().unwrap_or_default();
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("http") {
            80
        } else {
            443
        });
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// An error and its causes, `: `-joined.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}
