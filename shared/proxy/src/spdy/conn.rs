//! A SPDY/3.1 connection over an upgraded stream, as moby/spdystream runs one for
//! kubectl and kubelets: streams the peer opens are accepted (answered with an empty
//! SYN_REPLY at once) and handed out; streams this side opens wait for the peer's reply;
//! data is routed per stream, FIN or RST ends a stream's data; pings are answered. No
//! flow control, as spdystream has none.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use super::frame::{Codec, FLAG_FIN, Frame, Headers};

/// Which end of the connection this is: clients open odd streams, servers even ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

type Routes = Arc<Mutex<HashMap<u32, mpsc::UnboundedSender<Bytes>>>>;
type Replies = Arc<Mutex<HashMap<u32, oneshot::Sender<Headers>>>>;

/// Opens streams on the connection; clones share it. The connection ends when the peer
/// closes it, or when every handle and stream writer is dropped.
#[derive(Clone)]
pub struct Connection {
    frames: mpsc::UnboundedSender<Frame>,
    routes: Routes,
    replies: Replies,
    next_id: Arc<AtomicU32>,
}

/// A stream: its id, the headers it was opened with, the data the peer sends on it (the
/// receiver ends on FIN or RST) and a writer.
pub struct Stream {
    pub id: u32,
    pub headers: Headers,
    pub data: mpsc::UnboundedReceiver<Bytes>,
    pub writer: StreamWriter,
}

/// Writes on one stream.
#[derive(Clone)]
pub struct StreamWriter {
    id: u32,
    frames: mpsc::UnboundedSender<Frame>,
}

impl StreamWriter {
    /// Sends `data` (false when the connection is gone).
    pub fn send(&self, data: Bytes) -> bool {
        self.frames
            .send(Frame::Data {
                stream_id: self.id,
                flags: 0,
                data,
            })
            .is_ok()
    }

    /// Half-closes the stream (an empty DATA frame with FIN).
    pub fn close(&self) {
        let _ = self.frames.send(Frame::Data {
            stream_id: self.id,
            flags: FLAG_FIN,
            data: Bytes::new(),
        });
    }
}

impl Connection {
    /// Starts reading and writing `io`; returns the handle and the streams the peer opens.
    pub fn start<IO>(io: IO, role: Role) -> (Connection, mpsc::UnboundedReceiver<Stream>)
    where
        IO: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (read, write) = tokio::io::split(io);
        let (frames, outgoing) = mpsc::unbounded_channel();
        let (accepted, incoming) = mpsc::unbounded_channel();
        let conn = Connection {
            frames,
            routes: Arc::default(),
            replies: Arc::default(),
            next_id: Arc::new(AtomicU32::new(match role {
                Role::Client => 1,
                Role::Server => 2,
            })),
        };
        tokio::spawn(write_loop(write, outgoing));
        tokio::spawn(read_loop(read, conn.clone(), accepted));
        (conn, incoming)
    }

    /// Opens a stream with `headers` and waits for the peer's reply.
    pub async fn open(&self, headers: Headers) -> Option<Stream> {
        let id = self.next_id.fetch_add(2, Ordering::Relaxed);
        let (tx, data) = mpsc::unbounded_channel();
        let (reply_tx, reply) = oneshot::channel();
        lock(&self.routes).insert(id, tx);
        lock(&self.replies).insert(id, reply_tx);
        let syn = Frame::SynStream {
            stream_id: id,
            associated_to: 0,
            priority: 0,
            flags: 0,
            headers: headers.clone(),
        };
        self.frames.send(syn).ok()?;
        reply.await.ok()?;
        Some(Stream {
            id,
            headers,
            data,
            writer: self.writer(id),
        })
    }

    pub fn writer(&self, id: u32) -> StreamWriter {
        StreamWriter {
            id,
            frames: self.frames.clone(),
        }
    }

    /// Says goodbye to the peer.
    pub fn go_away(&self) {
        let _ = self.frames.send(Frame::GoAway {
            last_good_stream_id: 0,
            status: 0,
        });
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

async fn write_loop<W: AsyncWrite>(write: W, mut outgoing: mpsc::UnboundedReceiver<Frame>) {
    let mut write = std::pin::pin!(write);
    let mut codec = Codec::new();
    let mut buf = Vec::new();
    while let Some(frame) = outgoing.recv().await {
        buf.clear();
        let go_away = matches!(frame, Frame::GoAway { .. });
        if let Err(e) = codec.encode(&frame, &mut buf) {
            tracing::debug!(error = %e, "spdy: frame not written");
            continue;
        }
        // Frames queued meanwhile go out in the same write.
        while let Ok(more) = outgoing.try_recv() {
            if codec.encode(&more, &mut buf).is_err() {
                break;
            }
        }
        if write.write_all(&buf).await.is_err() || write.flush().await.is_err() {
            return;
        }
        if go_away {
            let _ = write.shutdown().await;
            return;
        }
    }
    let _ = write.shutdown().await;
}

async fn read_loop<R: AsyncRead>(
    read: R,
    conn: Connection,
    accepted: mpsc::UnboundedSender<Stream>,
) {
    let mut read = std::pin::pin!(read);
    let mut codec = Codec::new();
    loop {
        let mut head = [0u8; 8];
        if read.read_exact(&mut head).await.is_err() {
            break;
        }
        let len = u32::from_be_bytes([0, head[5], head[6], head[7]]) as usize;
        let mut payload = vec![0u8; len];
        if read.read_exact(&mut payload).await.is_err() {
            break;
        }
        let frame = match codec.decode(head, Bytes::from(payload)) {
            Ok(frame) => frame,
            Err(e) => {
                tracing::debug!(error = %e, "spdy: connection ended on a bad frame");
                break;
            }
        };
        if !handle(frame, &conn, &accepted) {
            break;
        }
    }
    lock(&conn.routes).clear();
    lock(&conn.replies).clear();
}

/// Acts on one frame; false ends the connection.
fn handle(frame: Frame, conn: &Connection, accepted: &mpsc::UnboundedSender<Stream>) -> bool {
    match frame {
        Frame::SynStream {
            stream_id,
            flags,
            headers,
            ..
        } => {
            let (tx, data) = mpsc::unbounded_channel();
            if flags & FLAG_FIN == 0 {
                lock(&conn.routes).insert(stream_id, tx);
            }
            let reply = Frame::SynReply {
                stream_id,
                flags: 0,
                headers: Vec::new(),
            };
            let _ = conn.frames.send(reply);
            let _ = accepted.send(Stream {
                id: stream_id,
                headers,
                data,
                writer: conn.writer(stream_id),
            });
        }
        Frame::SynReply {
            stream_id,
            flags,
            headers,
        } => {
            if let Some(waiting) = lock(&conn.replies).remove(&stream_id) {
                let _ = waiting.send(headers);
            }
            if flags & FLAG_FIN != 0 {
                lock(&conn.routes).remove(&stream_id);
            }
        }
        Frame::Data {
            stream_id,
            flags,
            data,
        } => {
            let mut routes = lock(&conn.routes);
            if !data.is_empty()
                && let Some(route) = routes.get(&stream_id)
            {
                let _ = route.send(data);
            }
            if flags & FLAG_FIN != 0 {
                routes.remove(&stream_id);
            }
        }
        Frame::RstStream { stream_id, .. } => {
            lock(&conn.routes).remove(&stream_id);
            lock(&conn.replies).remove(&stream_id);
        }
        Frame::Ping { id } => {
            let _ = conn.frames.send(Frame::Ping { id });
        }
        Frame::GoAway { .. } => return false,
        Frame::Headers { .. }
        | Frame::Settings { .. }
        | Frame::WindowUpdate { .. }
        | Frame::Unknown { .. } => {}
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn streams_carry_data_both_ways_until_fin() {
        let (a, b) = tokio::io::duplex(1 << 16);
        let (client, _) = Connection::start(a, Role::Client);
        let (_server, mut incoming) = Connection::start(b, Role::Server);
        tokio::spawn(async move {
            while let Some(mut stream) = incoming.recv().await {
                tokio::spawn(async move {
                    let kind = super::super::header(&stream.headers, "streamtype")
                        .unwrap_or("")
                        .to_owned();
                    while let Some(data) = stream.data.recv().await {
                        let mut echo = kind.clone().into_bytes();
                        echo.extend_from_slice(&data);
                        stream.writer.send(Bytes::from(echo));
                    }
                    stream.writer.close();
                });
            }
        });
        let mut stream = client
            .open(vec![("streamType".into(), "stdin".into())])
            .await
            .unwrap();
        assert_eq!(stream.id, 1);
        stream.writer.send(Bytes::from_static(b": hi"));
        assert_eq!(stream.data.recv().await.unwrap(), "stdin: hi");
        stream.writer.close();
        assert_eq!(stream.data.recv().await, None);
        let other = client.open(vec![("streamtype".into(), "x".into())]).await;
        assert_eq!(other.map(|s| s.id), Some(3));
    }
}
