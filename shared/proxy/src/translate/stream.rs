//! Upstream's `StreamTranslatorHandler`: a WebSocket `v5.channel.k8s.io` remote command
//! (exec, attach) translated to SPDY toward the kubelet. The client's WebSocket is
//! accepted first; then a SPDY session is opened to the kubelet (`v5`/`v4.channel.k8s.io`)
//! with the error stream and the streams the options ask for; WebSocket channel 0 feeds
//! stdin (a close signal on channel 255 ends it), 4 feeds resize; stdout and stderr come
//! back on 1 and 2. When the command is done its outcome is a `Status` on channel 3 (a
//! non-zero exit as upstream's `NonZeroExitCode`, other failures as its internal error),
//! then the WebSocket is closed.

use std::sync::Arc;

use http::header::{self, HeaderValue};
use http::{HeaderMap, Request, Response};
use http_body_util::{BodyExt, Limited};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use kas_endpoints::{Body, body};
use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt, WriteHalf};
use tokio::sync::Mutex;

use super::StreamOptions;
use crate::spdy::{Connection, Role, Stream};
use crate::websocket::{self, Message};
use crate::{Location, Transport};

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
const RESIZE: u8 = 4;
/// v5's close signal: `[255, channel]`.
const CLOSE: u8 = 255;

type Out<W> = Arc<Mutex<WriteHalf<W>>>;

impl Transport {
    /// Translates a WebSocket `v5.channel.k8s.io` request to a SPDY session with the
    /// kubelet at `location`; the answer is the WebSocket's `101` (or gorilla's 400).
    pub fn translate_stream(
        &self,
        location: &Location,
        req: Request<Body>,
        options: StreamOptions,
    ) -> Response<Body> {
        let (mut parts, _) = req.into_parts();
        let (Some(resp), Some(on_upgrade)) = (
            super::switching_protocols(&parts.headers, super::STREAM_PROTOCOL_V5),
            parts.extensions.remove::<OnUpgrade>(),
        ) else {
            return super::bad_handshake();
        };
        let (transport, location) = (self.clone(), location.clone());
        tokio::spawn(async move {
            match on_upgrade.await {
                Ok(client) => session(transport, location, options, TokioIo::new(client)).await,
                Err(e) => tracing::debug!(error = %e, "translator: no WebSocket"),
            }
        });
        resp
    }
}

async fn send<W: AsyncWrite>(out: &Out<W>, channel: u8, data: &[u8]) -> bool {
    let mut message = Vec::with_capacity(data.len() + 1);
    message.push(channel);
    message.extend_from_slice(data);
    let mut w = out.lock().await;
    websocket::write(&mut *w, websocket::OP_BINARY, &message)
        .await
        .is_ok()
}

async fn session<IO>(transport: Transport, location: Location, options: StreamOptions, io: IO)
where
    IO: tokio::io::AsyncRead + AsyncWrite + Send + 'static,
{
    let (read, write) = tokio::io::split(io);
    let out: Out<IO> = Arc::new(Mutex::new(write));
    // wsstream tells the client the connection is up: an empty message on the lowest
    // channel it writes.
    let first = if options.stdout { STDOUT } else { STDERR };
    send(&out, first, &[]).await;
    let status = match connect(&transport, &location, options).await {
        Ok((conn, streams)) => run(conn, streams, websocket::Reader::new(read), &out).await,
        Err(status) => status,
    };
    send(&out, ERROR, status.as_bytes()).await;
    let mut w = out.lock().await;
    let close = websocket::close_payload(websocket::NORMAL_CLOSURE);
    let _ = websocket::write(&mut *w, websocket::OP_CLOSE, &close).await;
    let _ = w.shutdown().await;
}

/// The SPDY streams of the session.
struct Streams {
    error: Stream,
    stdin: Option<Stream>,
    stdout: Option<Stream>,
    stderr: Option<Stream>,
    resize: Option<Stream>,
}

/// Opens the SPDY session: the upgrade, then the error stream and the others.
async fn connect(
    transport: &Transport,
    location: &Location,
    options: StreamOptions,
) -> Result<(Connection, Streams), String> {
    let io = transport.dial(location).await.map_err(|e| internal(&e))?;
    let mut headers = HeaderMap::new();
    headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static("SPDY/3.1"));
    for protocol in ["v5.channel.k8s.io", "v4.channel.k8s.io"] {
        headers.append(
            crate::spdy::STREAM_PROTOCOL_VERSION,
            HeaderValue::from_static(protocol),
        );
    }
    let (mut parts, _) = Request::post("/")
        .body(())
        .map_err(|e| internal(&e.to_string()))?
        .into_parts();
    parts.headers = headers;
    let mut resp = crate::upgradeaware::send_upgrade(io, location, parts, body::empty())
        .await
        .map_err(|e| internal(&e.to_string()))?;
    if resp.status() != http::StatusCode::SWITCHING_PROTOCOLS {
        let text = Limited::new(resp.into_body(), 64 << 10)
            .collect()
            .await
            .map(|b| String::from_utf8_lossy(&b.to_bytes()).trim().to_owned())
            .unwrap_or_default();
        return Err(match serde_json::from_str::<Value>(&text) {
            Ok(status) if status["kind"] == "Status" => status.to_string(),
            _ => internal(&format!("unable to upgrade connection: {text}")),
        });
    }
    let upgraded = hyper::upgrade::on(&mut resp)
        .await
        .map_err(|e| internal(&e.to_string()))?;
    let (conn, _) = Connection::start(TokioIo::new(upgraded), Role::Client);
    let open = |kind: &'static str, wanted: bool| {
        let conn = conn.clone();
        async move {
            match wanted {
                true => conn
                    .open(vec![("streamType".to_owned(), kind.to_owned())])
                    .await
                    .map(Some)
                    .ok_or_else(|| internal(&format!("error creating {kind} stream"))),
                false => Ok(None),
            }
        }
    };
    let error = open("error", true)
        .await?
        .ok_or_else(|| internal("no error stream"))?;
    let streams = Streams {
        error,
        stdin: open("stdin", options.stdin).await?,
        stdout: open("stdout", options.stdout).await?,
        stderr: open("stderr", options.stderr && !options.tty).await?,
        resize: open("resize", options.tty).await?,
    };
    Ok((conn, streams))
}

/// Copies the channels until the command is done; its outcome as a `Status`.
async fn run<R, W>(
    conn: Connection,
    streams: Streams,
    mut client: websocket::Reader<R>,
    out: &Out<W>,
) -> String
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Send + 'static,
{
    let Streams {
        mut error,
        stdin,
        stdout,
        stderr,
        resize,
    } = streams;
    let copies: Vec<_> = [(stdout, STDOUT), (stderr, STDERR)]
        .into_iter()
        .filter_map(|(s, channel)| s.map(|s| (s, channel)))
        .map(|(mut stream, channel)| {
            let out = out.clone();
            tokio::spawn(async move {
                while let Some(data) = stream.data.recv().await {
                    if !send(&out, channel, &data).await {
                        return;
                    }
                }
            })
        })
        .collect();
    let (input_out, input_conn) = (out.clone(), conn.clone());
    let input = tokio::spawn(async move {
        let (stdin, resize) = (stdin.map(|s| s.writer), resize.map(|s| s.writer));
        loop {
            match client.next().await {
                Some(Ok(Message::Binary(m))) => match (m.first(), &stdin, &resize) {
                    (Some(&STDIN), Some(w), _) => {
                        w.send(m.slice(1..));
                    }
                    (Some(&RESIZE), _, Some(w)) => {
                        w.send(m.slice(1..));
                    }
                    (Some(&CLOSE), Some(w), _) if m.get(1) == Some(&STDIN) => w.close(),
                    _ => {}
                },
                Some(Ok(Message::Text(_))) => {}
                Some(Err(ping)) => {
                    let mut w = input_out.lock().await;
                    let _ = websocket::write(&mut *w, websocket::OP_PONG, &ping).await;
                }
                Some(Ok(Message::Close(_))) | None => {
                    input_conn.go_away();
                    return;
                }
            }
        }
    });
    let mut outcome = Vec::new();
    while let Some(data) = error.data.recv().await {
        outcome.extend_from_slice(&data);
    }
    for copy in copies {
        let _ = copy.await;
    }
    input.abort();
    conn.go_away();
    status(&outcome)
}

/// Upstream's `finish`: the translator's `Status` for what the kubelet's error stream said.
fn status(outcome: &[u8]) -> String {
    if outcome.is_empty() {
        return success();
    }
    let Ok(kubelet) = serde_json::from_slice::<Value>(outcome) else {
        return internal(&format!(
            "error stream protocol error: invalid character in {:?}",
            String::from_utf8_lossy(outcome)
        ));
    };
    if kubelet["status"] == "Success" {
        return success();
    }
    if kubelet["reason"] != "NonZeroExitCode" {
        return kubelet.to_string();
    }
    let code = kubelet["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["reason"] == "ExitCode")
        .and_then(|c| c["message"].as_str())
        .and_then(|m| m.parse::<i64>().ok());
    let Some(code) = code else {
        return internal("error stream protocol error: unknown error");
    };
    format!(
        r#"{{"metadata":{{}},"status":"Failure","message":{},"reason":"NonZeroExitCode","details":{{"causes":[{{"reason":"ExitCode","message":"{code}"}}]}}}}"#,
        Value::from(format!(
            "command terminated with non-zero exit code: command terminated with exit code {code}"
        ))
    )
}

fn success() -> String {
    r#"{"metadata":{},"status":"Success"}"#.to_owned()
}

/// Upstream's `NewInternalError(err)` as JSON.
fn internal(err: &str) -> String {
    let message = Value::from(format!("Internal error occurred: {err}"));
    let cause = Value::from(err);
    format!(
        r#"{{"metadata":{{}},"status":"Failure","message":{message},"reason":"InternalError","details":{{"causes":[{{"message":{cause}}}]}},"code":500}}"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_become_upstreams_statuses() {
        assert_eq!(status(b""), success());
        assert_eq!(status(br#"{"metadata":{},"status":"Success"}"#), success());
        let exit = br#"{"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}"#;
        let translated: Value = serde_json::from_str(&status(exit)).unwrap();
        assert_eq!(
            translated["message"],
            "command terminated with non-zero exit code: command terminated with exit code 3"
        );
        assert_eq!(translated["details"]["causes"][0]["message"], "3");
        let other: Value = serde_json::from_str(&internal("boom")).unwrap();
        assert_eq!(other["message"], "Internal error occurred: boom");
        assert_eq!(other["code"], 500);
    }
}
