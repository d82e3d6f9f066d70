//! Writing answers: objects and lists as JSON, errors as `Status` (via kas-endpoints).

use crate::{Body, body, write_status};
use bytes::Bytes;
use http::{Response, StatusCode};

use kas_registry::Error;

pub fn json(code: StatusCode, bytes: Bytes) -> Response<Body> {
    let mut resp = Response::new(body::full(bytes));
    *resp.status_mut() = code;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

pub fn error(err: &Error) -> Response<Body> {
    write_status(&err.to_status())
}

/// Upstream's `Warning: 299 - "<text>"` headers.
pub fn add_warnings(resp: &mut Response<Body>, warnings: &[String]) {
    for w in warnings {
        let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = http::HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            resp.headers_mut().append(http::header::WARNING, v);
        }
    }
}
