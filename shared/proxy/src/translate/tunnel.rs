//! Upstream's `TunnelingHandler`: a WebSocket `SPDY/3.1+portforward.k8s.io` request
//! (kubectl's port-forward) becomes a SPDY upgrade request to the kubelet (`POST`, the
//! WebSocket headers dropped, `X-Stream-Protocol-Version` the offered protocols without
//! the prefix). On the kubelet's `101` the client's WebSocket is accepted with the chosen
//! protocol behind the prefix and the kubelet's SPDY bytes travel in its binary messages
//! both ways; any other answer is passed back as it came.

use http::header::{self, HeaderValue};
use http::{Request, Response, StatusCode};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use kas_endpoints::{Body, body};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::headers::remove_hop_by_hop;
use crate::websocket::{self, Message};
use crate::{Error, Location, Result, Transport, text_response};

/// The WebSocket headers the SPDY request leaves behind.
const WEBSOCKET_HEADERS: [&str; 4] = [
    "sec-websocket-protocol",
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-extensions",
];

impl Transport {
    /// Tunnels a port-forward WebSocket to the kubelet at `location`. Failures before the
    /// kubelet answers are errors for the caller's responder, as the upgrade-aware
    /// proxy's.
    pub async fn tunnel(&self, location: &Location, req: Request<Body>) -> Result<Response<Body>> {
        let protocols = super::tunneled_protocols(req.headers());
        if protocols.is_empty() {
            return Ok(text_response(
                "unable to upgrade: no tunneling spdy protocols provided",
                StatusCode::BAD_REQUEST,
            ));
        }
        let (mut parts, _) = req.into_parts();
        let client = parts.extensions.remove::<OnUpgrade>();
        let websocket_headers = parts.headers.clone();
        for name in WEBSOCKET_HEADERS {
            parts.headers.remove(name);
        }
        parts.method = http::Method::POST;
        parts
            .headers
            .insert(header::UPGRADE, HeaderValue::from_static("SPDY/3.1"));
        parts.headers.remove(crate::spdy::STREAM_PROTOCOL_VERSION);
        for p in &protocols {
            if let Ok(v) = HeaderValue::from_str(p) {
                parts
                    .headers
                    .append(crate::spdy::STREAM_PROTOCOL_VERSION, v);
            }
        }
        let io = self.dial(location).await.map_err(Error::Dial)?;
        let mut resp =
            crate::upgradeaware::send_upgrade(io, location, parts, body::empty()).await?;
        if resp.status() != StatusCode::SWITCHING_PROTOCOLS {
            let (mut head, answer) = resp.into_parts();
            remove_hop_by_hop(&mut head.headers);
            head.headers
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return Ok(Response::from_parts(head, Body::new(answer)));
        }
        let has = |name: header::HeaderName, want: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.to_ascii_lowercase().contains(want))
        };
        if !has(header::CONNECTION, "upgrade") || !has(header::UPGRADE, "spdy/3.1") {
            return Ok(text_response(
                "unable to upgrade: missing upgrade headers in response",
                StatusCode::INTERNAL_SERVER_ERROR,
            ));
        }
        let chosen = resp
            .headers()
            .get(crate::spdy::STREAM_PROTOCOL_VERSION)
            .and_then(|v| v.to_str().ok())
            .map(|p| format!("{}{}", super::TUNNELING_PREFIX, p.trim()))
            .unwrap_or_default();
        let (Some(accepted), Some(client)) = (
            super::switching_protocols(&websocket_headers, &chosen),
            client,
        ) else {
            return Ok(super::bad_handshake());
        };
        let backend = hyper::upgrade::on(&mut resp);
        tokio::spawn(async move {
            match tokio::try_join!(client, backend) {
                Ok((client, backend)) => pump(TokioIo::new(client), TokioIo::new(backend)).await,
                Err(e) => tracing::debug!(error = %e, "tunnel: upgrade not completed"),
            }
        });
        Ok(accepted)
    }
}

/// The WebSocket's binary messages to the kubelet, the kubelet's bytes back as binary
/// messages, until either side ends; then a normal close.
async fn pump<C, B>(client: C, backend: B)
where
    C: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    let (client_read, client_write) = tokio::io::split(client);
    let (mut backend_read, mut backend_write) = tokio::io::split(backend);
    let client_write = tokio::sync::Mutex::new(client_write);
    let up = async {
        let mut reader = websocket::Reader::new(client_read);
        loop {
            match reader.next().await {
                Some(Ok(Message::Binary(data))) => {
                    if backend_write.write_all(&data).await.is_err() {
                        break;
                    }
                }
                Some(Err(ping)) => {
                    let mut w = client_write.lock().await;
                    let _ = websocket::write(&mut *w, websocket::OP_PONG, &ping).await;
                }
                Some(Ok(Message::Text(_))) | Some(Ok(Message::Close(_))) | None => break,
            }
        }
        let _ = backend_write.shutdown().await;
    };
    let down = async {
        let mut buf = vec![0u8; 32 << 10];
        loop {
            match backend_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let mut w = client_write.lock().await;
                    if websocket::write(&mut *w, websocket::OP_BINARY, &buf[..n])
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    };
    tokio::select! {
        () = up => {}
        () = down => {}
    }
    let mut w = client_write.lock().await;
    let close = websocket::close_payload(websocket::NORMAL_CLOSURE);
    let _ = websocket::write(&mut *w, websocket::OP_CLOSE, &close).await;
    let _ = w.shutdown().await;
}
