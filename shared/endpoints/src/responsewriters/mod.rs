//! The one place a `Status` becomes an HTTP response, after upstream's
//! `handlers/responsewriters` (`ErrorNegotiated` for JSON, `InternalError` for the
//! plain-text 500 that filters write before any serializer exists).

pub mod encode;
pub mod list_stream;
pub mod negotiated;
pub mod partial;
pub mod protobuf;
pub mod response;
pub mod table;
pub mod watch;

use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use kas_apimachinery::Status;
use kas_apimachinery::golang::strconv::quote;

use crate::{Body, body};

/// Writes `status` as upstream's `ErrorNegotiated` does for a JSON client: the HTTP code
/// from `status.code` (500 when it is zero or not a valid code), `Content-Type:
/// application/json`, and `Retry-After` when `details.retryAfterSeconds` is positive. The
/// body ends with a newline because upstream's encoder (`json.Encoder.Encode`) adds one; a
/// 204 has no body.
pub fn write_status(status: &Status) -> http::Response<Body> {
    let code = if status.code == 0 {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::from_u16(status.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    };
    let retry_after = status
        .details
        .as_ref()
        .and_then(|d| d.retry_after_seconds)
        .filter(|n| *n > 0);

    let mut response = if code == StatusCode::NO_CONTENT {
        let mut r = http::Response::new(body::empty());
        *r.status_mut() = code;
        r
    } else {
        let mut json = status.to_json();
        json.push(b'\n');
        write_raw(code, "application/json", json)
    };
    if let Some(n) = retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(n));
    }
    response
}

/// A response with `code`, `Content-Type: content_type` and `bytes` as the whole body. A
/// content type that is not a valid header value is left out rather than panicking.
pub fn write_raw(
    code: StatusCode,
    content_type: &str,
    bytes: impl Into<Bytes>,
) -> http::Response<Body> {
    let mut response = http::Response::new(body::full(bytes));
    *response.status_mut() = code;
    if let Ok(v) = HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    response
}

/// Upstream `responsewriters.InternalError`: a plain-text 500 written with Go's
/// `http.Error`, `Internal Server Error: "<request URI>": <err>` with `&`, `<` and `>`
/// HTML-escaped. `request_uri` is the request target as received (path and query).
pub fn internal_error(
    request_uri: &str,
    err: &(impl std::fmt::Display + ?Sized),
) -> http::Response<Body> {
    let text = format!("Internal Server Error: {}: {err}", quote(request_uri));
    http_error(StatusCode::INTERNAL_SERVER_ERROR, &sanitize(&text))
}

/// Go's `http.Error(w, text, code)`: `text` plus a newline, as `text/plain; charset=utf-8`
/// with `X-Content-Type-Options: nosniff`.
pub fn http_error(code: StatusCode, text: &str) -> http::Response<Body> {
    let mut body = String::with_capacity(text.len() + 1);
    body.push_str(text);
    body.push('\n');
    let mut response = write_raw(code, "text/plain; charset=utf-8", body);
    response.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// Upstream's sanitizer (`&`, `<`, `>` as HTML entities): error text that cannot be read
/// as HTML.
pub fn sanitize(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;
    use kas_apimachinery::{StatusDetails, StatusReason};

    use super::*;

    fn parts(r: http::Response<Body>) -> (StatusCode, http::HeaderMap, Vec<u8>) {
        let (head, body) = r.into_parts();
        let bytes = block_on(body.collect()).expect("body error").to_bytes();
        (head.status, head.headers, bytes.to_vec())
    }

    /// The bodies here are `Full` or `Empty`, which are ready on the first poll.
    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match std::pin::pin!(f).poll(&mut cx) {
            std::task::Poll::Ready(out) => out,
            std::task::Poll::Pending => panic!("body not ready"),
        }
    }

    #[test]
    fn not_found_path_is_upstreams_404() {
        let (code, headers, body) = parts(write_status(&Status::not_found_path()));
        assert_eq!(code, StatusCode::NOT_FOUND);
        assert_eq!(headers[header::CONTENT_TYPE], "application/json");
        assert!(headers.get(header::RETRY_AFTER).is_none());
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"the server could not find the requested resource\",\"reason\":\"NotFound\",\"details\":{},\"code\":404}\n"
        );
    }

    #[test]
    fn retry_after_header() {
        let (code, headers, body) = parts(write_status(&Status::too_many_requests("slow", 7)));
        assert_eq!(code, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(headers[header::RETRY_AFTER], "7");
        assert!(body.ends_with(b"\"details\":{\"retryAfterSeconds\":7},\"code\":429}\n"));

        let (code, headers, _) = parts(write_status(&Status::timeout("x", 1)));
        assert_eq!(code, StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(headers[header::RETRY_AFTER], "1");

        // Upstream writes it for any code when the seconds are positive, and never for zero.
        let (_, headers, _) = parts(write_status(&Status::server_timeout("", "pods", "get", 2)));
        assert_eq!(headers[header::RETRY_AFTER], "2");
        let (_, headers, _) = parts(write_status(&Status::too_many_requests("x", 0)));
        assert!(headers.get(header::RETRY_AFTER).is_none());
        let mut negative = Status::service_unavailable("x");
        negative.details = Some(StatusDetails {
            retry_after_seconds: Some(-1),
            ..StatusDetails::default()
        });
        let (code, headers, _) = parts(write_status(&negative));
        assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE);
        assert!(headers.get(header::RETRY_AFTER).is_none());
    }

    #[test]
    fn code_fallbacks() {
        let (code, _, body) = parts(write_status(&Status::failure(
            0,
            StatusReason::Unknown,
            "x",
        )));
        assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
        // The body keeps what the Status says; only the HTTP code falls back.
        assert!(!String::from_utf8(body).unwrap().contains("\"code\""));
        let (code, _, _) = parts(write_status(&Status::failure(
            42,
            StatusReason::Unknown,
            "x",
        )));
        assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
        let (code, headers, body) = parts(write_status(&Status::failure(
            204,
            StatusReason::Unknown,
            "",
        )));
        assert_eq!(code, StatusCode::NO_CONTENT);
        assert!(body.is_empty() && headers.get(header::CONTENT_TYPE).is_none());
    }

    #[test]
    fn every_constructor_round_trips_its_code() {
        for s in [
            Status::unauthorized("Unauthorized"),
            Status::forbidden("", "pods", "p", "no"),
            Status::internal_error("boom"),
            Status::method_not_supported("", "pods", "create"),
            Status::bad_request("bad"),
        ] {
            let (code, _, body) = parts(write_status(&s));
            assert_eq!(code.as_u16(), s.code);
            assert_eq!(&body[..body.len() - 1], s.to_json().as_slice());
        }
    }

    #[test]
    fn raw() {
        let (code, headers, body) = parts(write_raw(StatusCode::OK, "text/plain", "ok"));
        assert_eq!(code, StatusCode::OK);
        assert_eq!(headers[header::CONTENT_TYPE], "text/plain");
        assert_eq!(body, b"ok");
        let (_, headers, _) = parts(write_raw(StatusCode::OK, "bad\nvalue", ""));
        assert!(headers.get(header::CONTENT_TYPE).is_none());
    }

    #[test]
    fn internal_error_is_plain_text_like_go() {
        let err = crate::Error::KindAndNamespace {
            url: "/api/v1/watch".into(),
        };
        let (code, headers, body) = parts(internal_error("/api/v1/watch", &err));
        assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(headers[header::CONTENT_TYPE], "text/plain; charset=utf-8");
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "Internal Server Error: \"/api/v1/watch\": unable to determine kind and namespace from url, /api/v1/watch\n"
        );
        let (_, _, body) = parts(internal_error("/x?a=<b>&c", &"e"));
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "Internal Server Error: \"/x?a=&lt;b&gt;&amp;c\": e\n"
        );
        // The whole text is sanitized, the error's part too, as upstream's
        // `sanitizer.Replace(fmt.Sprintf(...))`.
        let (_, _, body) = parts(internal_error("/x?<y>", "boom <b>"));
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "Internal Server Error: \"/x?&lt;y&gt;\": boom &lt;b&gt;\n"
        );
    }

    #[test]
    fn http_error_is_go_http_error() {
        let (code, headers, body) = parts(http_error(StatusCode::TOO_MANY_REQUESTS, "slow down"));
        assert_eq!(code, 429);
        assert_eq!(headers[header::CONTENT_TYPE], "text/plain; charset=utf-8");
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(body, b"slow down\n");
    }

    #[test]
    fn sanitize_escapes_html() {
        assert_eq!(
            sanitize("<a href='x'>&</a>"),
            "&lt;a href='x'&gt;&amp;&lt;/a&gt;"
        );
    }
}
