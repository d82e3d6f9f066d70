use http::{HeaderValue, Response, StatusCode};
use kas_apimachinery::Status;
use kas_endpoints::{Body, body};

/// What goes wrong while proxying. Upstream's handler hands each to its responder: core's
/// connecters write it as a `Status` ([`Error::to_status`], as `scope.err` does), the
/// aggregator's proxy as plain text with its own code ([`Error::text_response`], as its
/// `responder` calls `http.Error`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A transport could not be built (its TLS configuration).
    #[error("{0}")]
    Config(String),
    /// The location does not form a URL.
    #[error("{0}")]
    InvalidLocation(String),
    /// The handler requires an upgrade and the request is none.
    #[error("Upgrade request required")]
    UpgradeRequired,
    /// The backend of an upgrade could not be dialed: nothing was sent (Go's dial or
    /// handshake error text after upstream's prefix).
    #[error("error dialing backend: {0}")]
    Dial(String),
    /// The backend could not be reached or its answer read, in Go's words
    /// (`dial tcp 10.0.0.1:443: connect: connection refused`,
    /// `invalid upgrade response: status code 200`).
    #[error("{0}")]
    Backend(String),
}

impl Error {
    /// The error as an API status: `UpgradeRequired` is upstream's 400 BadRequest, the
    /// rest are errors that are no API status (500 with their text).
    pub fn to_status(&self) -> Status {
        match self {
            Error::UpgradeRequired => Status::bad_request(&self.to_string()),
            other => Status::from_plain_error(other.to_string()),
        }
    }

    /// Go's `http.Error(w, err.Error(), code)`: the text and a newline, as plain text.
    pub fn text_response(&self, code: StatusCode) -> Response<Body> {
        text_response(&self.to_string(), code)
    }
}

/// Go's `http.Error`.
pub fn text_response(message: &str, code: StatusCode) -> Response<Body> {
    let mut resp = Response::new(body::full(format!("{message}\n")));
    *resp.status_mut() = code;
    let headers = resp.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        http::header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    resp
}
