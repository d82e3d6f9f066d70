//! `…/flunders/<name>/echo`: answers `Connection: Upgrade` with `101 Switching Protocols`
//! (the protocol the client asked for; for `websocket` with `Sec-WebSocket-Accept`, for
//! SPDY with the first `X-Stream-Protocol-Version` asked), then writes back every byte it
//! reads, unframed, until the client closes. Lets tests check that an upgrade passes
//! through a proxy byte for byte.

use base64::Engine;
use http::{HeaderValue, Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use kas_apimachinery::status::Status;

use super::reply::{self, Body};

/// RFC 6455's GUID for `Sec-WebSocket-Accept`.
const WEBSOCKET_GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

fn upgrading(req: &Request<hyper::body::Incoming>) -> Option<String> {
    let connection = req.headers().get(header::CONNECTION)?.to_str().ok()?;
    if !connection
        .split(',')
        .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
    {
        return None;
    }
    let protocol = req.headers().get(header::UPGRADE)?.to_str().ok()?;
    Some(protocol.to_owned())
}

/// The 101 answer, the echo running once hyper hands over the connection.
pub fn echo(mut req: Request<hyper::body::Incoming>) -> Response<Body> {
    let Some(protocol) = upgrading(&req) else {
        let s = Status::bad_request("echo needs an upgrade request (Connection: Upgrade)");
        return reply::status(&s);
    };
    let mut resp = Response::new(reply::full(""));
    *resp.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = resp.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(p) = HeaderValue::from_str(&protocol) {
        headers.insert(header::UPGRADE, p);
    }
    if let Some(key) = req.headers().get(header::SEC_WEBSOCKET_KEY) {
        let accept = websocket_accept(key.as_bytes());
        if let Ok(v) = HeaderValue::from_str(&accept) {
            headers.insert(header::SEC_WEBSOCKET_ACCEPT, v);
        }
    }
    if let Some(version) = req
        .headers()
        .get_all("x-stream-protocol-version")
        .iter()
        .next()
    {
        headers.insert("x-stream-protocol-version", version.clone());
    }
    let on_upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        let (mut read, mut write) = tokio::io::split(TokioIo::new(upgraded));
        let _ = tokio::io::copy(&mut read, &mut write).await;
    });
    resp
}

fn websocket_accept(key: &[u8]) -> String {
    let mut input = key.to_vec();
    input.extend_from_slice(WEBSOCKET_GUID.as_bytes());
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA1_FOR_LEGACY_USE_ONLY, &input);
    base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
}

#[cfg(test)]
mod tests {
    #[test]
    fn websocket_accept_is_rfc_6455s() {
        // RFC 6455 section 1.3's example.
        assert_eq!(
            super::websocket_accept(b"dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }
}
