//! What upstream 1.33's API server does with the WebSocket streams kubectl 1.30+ asks for
//! first (`k8s.io/apiserver/pkg/util/proxy`: `translatinghandler.go`,
//! `streamtranslator.go`, `streamtunnel.go`), while kubelets speak SPDY:
//!
//! - [`stream`]: exec and attach over WebSocket `v5.channel.k8s.io` (gate
//!   `TranslateStreamCloseWebsocketRequests`, on in 1.33) are translated: the client's
//!   WebSocket is accepted here, a SPDY remote command session is opened to the kubelet,
//!   and the channels are copied between them; the command's end is written as a
//!   `Status` on the error channel.
//! - [`tunnel`]: port-forward over WebSocket `SPDY/3.1+portforward.k8s.io` (gate
//!   `PortForwardWebsockets`, on in 1.33) is tunneled: the kubelet is asked for a SPDY
//!   upgrade and its SPDY bytes travel in the WebSocket's binary messages.
//!
//! Any other request goes to the upgrade-aware proxy unchanged.

pub mod stream;
pub mod tunnel;

use http::HeaderMap;

use crate::websocket;

/// The remote command protocol whose close signal needs translating.
pub const STREAM_PROTOCOL_V5: &str = "v5.channel.k8s.io";
/// The prefix of a WebSocket subprotocol that tunnels SPDY.
pub const TUNNELING_PREFIX: &str = "SPDY/3.1+";
const KUBERNETES_SUFFIX: &str = ".k8s.io";

/// Upstream's `wsstream.IsWebSocketRequestWithStreamCloseProtocol`.
pub fn is_stream_close_request(headers: &HeaderMap) -> bool {
    websocket::is_websocket_request(headers)
        && websocket::subprotocols(headers)
            .iter()
            .any(|p| p == STREAM_PROTOCOL_V5)
}

/// Upstream's `wsstream.IsWebSocketRequestWithTunnelingProtocol`.
pub fn is_tunneling_request(headers: &HeaderMap) -> bool {
    websocket::is_websocket_request(headers)
        && websocket::subprotocols(headers)
            .iter()
            .any(|p| p.starts_with(TUNNELING_PREFIX))
}

/// The SPDY protocols a tunneling request offers (`SPDY/3.1+<x>.k8s.io` → `<x>.k8s.io`).
pub fn tunneled_protocols(headers: &HeaderMap) -> Vec<String> {
    websocket::subprotocols(headers)
        .into_iter()
        .filter(|p| p.ends_with(KUBERNETES_SUFFIX))
        .filter_map(|p| p.strip_prefix(TUNNELING_PREFIX).map(str::to_owned))
        .collect()
}

/// The streams a remote command asks for (upstream's translator `Options`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamOptions {
    pub stdin: bool,
    pub stdout: bool,
    pub stderr: bool,
    pub tty: bool,
}

/// The `101` that accepts a WebSocket with `protocol` (none when empty); `None` without a
/// key to answer.
pub(crate) fn switching_protocols(
    headers: &HeaderMap,
    protocol: &str,
) -> Option<http::Response<kas_endpoints::Body>> {
    let key = headers
        .get(http::header::SEC_WEBSOCKET_KEY)?
        .to_str()
        .ok()
        .filter(|k| !k.trim().is_empty())?;
    let mut resp = http::Response::new(kas_endpoints::body::empty());
    *resp.status_mut() = http::StatusCode::SWITCHING_PROTOCOLS;
    let h = resp.headers_mut();
    h.insert(
        http::header::UPGRADE,
        http::HeaderValue::from_static("websocket"),
    );
    h.insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("Upgrade"),
    );
    if let Ok(accept) = http::HeaderValue::from_str(&websocket::accept_key(key.trim())) {
        h.insert(http::header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    if !protocol.is_empty()
        && let Ok(p) = http::HeaderValue::from_str(protocol)
    {
        h.insert(http::header::SEC_WEBSOCKET_PROTOCOL, p);
    }
    Some(resp)
}

/// gorilla/websocket's refusal of a handshake it cannot answer.
pub(crate) fn bad_handshake() -> http::Response<kas_endpoints::Body> {
    crate::text_response("Bad Request", http::StatusCode::BAD_REQUEST)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_told_apart_by_their_subprotocols() {
        let mut h = HeaderMap::new();
        h.insert("connection", "Upgrade".parse().unwrap());
        h.insert("upgrade", "websocket".parse().unwrap());
        h.insert(
            "sec-websocket-protocol",
            "v5.channel.k8s.io, v4.channel.k8s.io".parse().unwrap(),
        );
        assert!(is_stream_close_request(&h));
        assert!(!is_tunneling_request(&h));
        h.insert(
            "sec-websocket-protocol",
            "SPDY/3.1+portforward.k8s.io, SPDY/3.1+other"
                .parse()
                .unwrap(),
        );
        assert!(is_tunneling_request(&h));
        assert_eq!(tunneled_protocols(&h), ["portforward.k8s.io"]);
        h.insert("upgrade", "SPDY/3.1".parse().unwrap());
        assert!(!is_tunneling_request(&h));
    }
}
