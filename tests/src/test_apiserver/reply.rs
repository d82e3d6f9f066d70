//! Responses: JSON, `Status`, plain text; one body type for whole and streamed answers.

use std::convert::Infallible;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use kas_apimachinery::status::Status;
use serde_json::Value;

/// Every answer's body: whole, or a watch stream.
pub type Body = http_body_util::combinators::UnsyncBoxBody<Bytes, Infallible>;

pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed_unsync()
}

/// `value` as JSON with `code`.
pub fn json(code: StatusCode, value: &Value) -> Response<Body> {
    bytes(
        code,
        "application/json",
        serde_json::to_vec(value).unwrap_or_default(),
    )
}

pub fn bytes(code: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut resp = Response::new(full(body));
    *resp.status_mut() = code;
    if let Ok(ct) = HeaderValue::from_str(content_type) {
        resp.headers_mut().insert(header::CONTENT_TYPE, ct);
    }
    resp
}

/// A failure `Status` with its code.
pub fn status(s: &Status) -> Response<Body> {
    let code = StatusCode::from_u16(s.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    bytes(code, "application/json", s.to_json())
}

/// Go's `http.NotFound` for a path nobody serves.
pub fn not_found() -> Response<Body> {
    bytes(
        StatusCode::NOT_FOUND,
        "text/plain; charset=utf-8",
        "404 page not found\n",
    )
}
