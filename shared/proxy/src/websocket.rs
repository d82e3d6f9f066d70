//! The server side of RFC 6455 as Kubernetes streams use it (gorilla/websocket behind
//! upstream's `wsstream`): the handshake's answer, and messages read from a client
//! (masked, possibly fragmented; pings answered, a close answered and ended) and written
//! to it (unmasked, one frame each).

use aws_lc_rs::digest;
use base64::Engine;
use bytes::{Bytes, BytesMut};
use http::HeaderMap;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/// The largest message read: a stream's chunks are 32 KiB (client-go's buffer).
const MAX_MESSAGE: usize = 16 << 20;

pub const OP_CONTINUATION: u8 = 0;
pub const OP_TEXT: u8 = 1;
pub const OP_BINARY: u8 = 2;
pub const OP_CLOSE: u8 = 8;
pub const OP_PING: u8 = 9;
pub const OP_PONG: u8 = 10;
/// Close code 1000.
pub const NORMAL_CLOSURE: u16 = 1000;

/// Whether the request asks for a WebSocket (upstream's `wsstream.IsWebSocketRequest`).
pub fn is_websocket_request(headers: &HeaderMap) -> bool {
    crate::headers::is_upgrade_request(headers)
        && headers
            .get(http::header::UPGRADE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// The subprotocols the client offers (`Sec-WebSocket-Protocol`, comma-separated).
pub fn subprotocols(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(http::header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}

/// `Sec-WebSocket-Accept` for the client's key.
pub fn accept_key(key: &str) -> String {
    let hash = digest::digest(
        &digest::SHA1_FOR_LEGACY_USE_ONLY,
        format!("{key}{GUID}").as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(hash.as_ref())
}

/// A message or control frame read from the client.
#[derive(Debug, PartialEq, Eq)]
pub enum Message {
    Binary(Bytes),
    Text(Bytes),
    /// The client closed (its code, when it sent one).
    Close(Option<u16>),
}

/// Reads the client's messages; answers pings on `writer`'s behalf through `pong`.
pub struct Reader<R> {
    read: R,
    /// A fragmented message so far (a ping may come between its frames).
    message: BytesMut,
    kind: Option<u8>,
}

impl<R: AsyncRead + Unpin> Reader<R> {
    pub fn new(read: R) -> Reader<R> {
        Reader {
            read,
            message: BytesMut::new(),
            kind: None,
        }
    }

    /// The next data message or close; pings come back as `Err(payload)` for the caller
    /// to answer. `None` when the connection ended without a close.
    pub async fn next(&mut self) -> Option<Result<Message, Bytes>> {
        loop {
            let (fin, op, payload) = self.frame().await?;
            match op {
                OP_PING => return Some(Err(payload)),
                OP_PONG => continue,
                OP_CLOSE => {
                    let code = payload.get(0..2).map(|c| u16::from_be_bytes([c[0], c[1]]));
                    return Some(Ok(Message::Close(code)));
                }
                OP_TEXT | OP_BINARY => self.kind = Some(op),
                OP_CONTINUATION if self.kind.is_some() => {}
                _ => return None,
            }
            self.message.extend_from_slice(&payload);
            if self.message.len() > MAX_MESSAGE {
                return None;
            }
            if fin {
                let data = self.message.split().freeze();
                return Some(Ok(match self.kind.take() {
                    Some(OP_TEXT) => Message::Text(data),
                    _ => Message::Binary(data),
                }));
            }
        }
    }

    async fn frame(&mut self) -> Option<(bool, u8, Bytes)> {
        let mut head = [0u8; 2];
        self.read.read_exact(&mut head).await.ok()?;
        let fin = head[0] & 0x80 != 0;
        let op = head[0] & 0x0f;
        let masked = head[1] & 0x80 != 0;
        let len = match head[1] & 0x7f {
            126 => {
                let mut b = [0u8; 2];
                self.read.read_exact(&mut b).await.ok()?;
                u64::from(u16::from_be_bytes(b))
            }
            127 => {
                let mut b = [0u8; 8];
                self.read.read_exact(&mut b).await.ok()?;
                u64::from_be_bytes(b)
            }
            n => u64::from(n),
        };
        let len = usize::try_from(len).ok().filter(|l| *l <= MAX_MESSAGE)?;
        let mut mask = [0u8; 4];
        if masked {
            self.read.read_exact(&mut mask).await.ok()?;
        }
        let mut payload = vec![0u8; len];
        self.read.read_exact(&mut payload).await.ok()?;
        if masked {
            for (i, b) in payload.iter_mut().enumerate() {
                *b ^= mask[i % 4];
            }
        }
        Some((fin, op, Bytes::from(payload)))
    }
}

/// One unmasked frame, as a server writes it.
pub fn frame(op: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 10);
    out.push(0x80 | op);
    match payload.len() {
        n if n < 126 => out.push(n as u8),
        n if n <= usize::from(u16::MAX) => {
            out.push(126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
    out
}

/// Writes a frame and flushes it.
pub async fn write<W: AsyncWrite + Unpin>(
    w: &mut W,
    op: u8,
    payload: &[u8],
) -> std::io::Result<()> {
    w.write_all(&frame(op, payload)).await?;
    w.flush().await
}

/// A close frame with `code`.
pub fn close_payload(code: u16) -> [u8; 2] {
    code.to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accept_key_is_rfc_6455s() {
        // RFC 6455, section 1.3.
        assert_eq!(
            accept_key("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[tokio::test]
    async fn masked_fragmented_messages_are_read_whole() {
        let mask = [1u8, 2, 3, 4];
        let masked = |fin: bool, op: u8, data: &[u8]| {
            let mut out = vec![if fin { 0x80 } else { 0 } | op, 0x80 | data.len() as u8];
            out.extend_from_slice(&mask);
            out.extend(data.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
            out
        };
        let mut wire = masked(false, OP_BINARY, b"\x00hel");
        wire.extend(masked(true, OP_PING, b"p"));
        wire.extend(masked(true, OP_CONTINUATION, b"lo"));
        wire.extend(masked(true, OP_CLOSE, &close_payload(NORMAL_CLOSURE)));
        let mut reader = Reader::new(wire.as_slice());
        assert_eq!(reader.next().await, Some(Err(Bytes::from_static(b"p"))));
        assert_eq!(
            reader.next().await,
            Some(Ok(Message::Binary(Bytes::from_static(b"\x00hello"))))
        );
        assert_eq!(reader.next().await, Some(Ok(Message::Close(Some(1000)))));
        assert_eq!(reader.next().await, None);
        assert_eq!(frame(OP_BINARY, b"ab"), [0x82, 2, b'a', b'b']);
    }
}
