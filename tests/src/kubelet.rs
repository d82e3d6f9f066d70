//! A fake kubelet for the stream tests: HTTPS on 127.0.0.1 (a self-signed certificate,
//! as core trusts kubelets without `--kubelet-certificate-authority`), serving exec,
//! attach and port-forward over SPDY/3.1 as kubelets do (`/exec/<ns>/<pod>/<container>`,
//! `/attach/...`, `/portForward/<ns>/<pod>`; the `v4.channel.k8s.io` remote command
//! protocol and `portforward.k8s.io`). A WebSocket upgrade is refused with a 400, as a
//! kubelet refuses WebSocket subprotocols it does not speak: kubectl then falls back to
//! SPDY.
//!
//! The "container" runs a few commands: `echo`, `cat`, `test`, `tar cf - <path>` (an
//! archive of one file holding `content of <path>\n`), `tar -xmf -` (the archive read
//! and kept in [`FakeKubelet::received`]), and `sh -c` over `;`-separated `echo X`,
//! `echo X >&2` and `exit N`.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use kas_proxy::spdy::{Connection, Role, Stream, header};
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

mod tar;

/// Files a `tar -xmf -` received: name and content.
pub type Received = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

pub struct FakeKubelet {
    pub addr: SocketAddr,
    /// The request line (method and target) of every request, in order.
    pub seen: Arc<Mutex<Vec<String>>>,
    pub received: Received,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for FakeKubelet {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl FakeKubelet {
    pub fn start() -> FakeKubelet {
        let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).expect("cert");
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.signing_key.serialize_der()));
        let mut config = rustls::ServerConfig::builder_with_provider(kas_tls::provider())
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(vec![ck.cert.der().clone()], key)
            .expect("server config");
        config.alpn_protocols = kas_tls::alpn();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let received: Received = Arc::default();
        let (log, files) = (seen.clone(), received.clone());
        runtime.spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (acceptor, log, files) = (acceptor.clone(), log.clone(), files.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(move |req| {
                        let (log, files) = (log.clone(), files.clone());
                        async move { Ok::<_, std::convert::Infallible>(serve(req, log, files)) }
                    });
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection_with_upgrades(TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        FakeKubelet {
            addr,
            seen,
            received,
            runtime: Some(runtime),
        }
    }
}

fn answer(code: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from(text.to_owned())));
    *resp.status_mut() = code;
    resp
}

fn serve(
    mut req: Request<Incoming>,
    log: Arc<Mutex<Vec<String>>>,
    files: Received,
) -> Response<Full<Bytes>> {
    let target = req
        .uri()
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    let upgrade = req
        .headers()
        .get("upgrade")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    log.lock()
        .expect("log")
        .push(format!("{} {target} upgrade={upgrade}", req.method()));
    if !upgrade.eq_ignore_ascii_case(kas_proxy::spdy::PROTOCOL) {
        return answer(
            StatusCode::BAD_REQUEST,
            "fake kubelet: only SPDY/3.1 upgrades",
        );
    }
    let offered: Vec<String> = req
        .headers()
        .get_all(kas_proxy::spdy::STREAM_PROTOCOL_VERSION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|v| v.trim().to_owned())
        .collect();
    let path: Vec<String> = req.uri().path().split('/').map(str::to_owned).collect();
    let query = Query::parse(req.uri().query().unwrap_or(""));
    let session = match path.get(1).map(String::as_str) {
        Some("exec") | Some("attach") if offered.iter().any(|p| p == "v4.channel.k8s.io") => {
            "v4.channel.k8s.io"
        }
        Some("portForward") if offered.iter().any(|p| p == "portforward.k8s.io") => {
            "portforward.k8s.io"
        }
        _ => return answer(StatusCode::FORBIDDEN, "fake kubelet: no protocol in common"),
    };
    let on = hyper::upgrade::on(&mut req);
    let kind = path.get(1).cloned().unwrap_or_default();
    let container = path.get(4).cloned().unwrap_or_default();
    tokio::spawn(async move {
        let Ok(upgraded) = on.await else { return };
        let (conn, incoming) = Connection::start(TokioIo::new(upgraded), Role::Server);
        match kind.as_str() {
            "portForward" => port_forward(incoming).await,
            _ => remote_command(&kind, &container, &query, conn, incoming, files).await,
        }
    });
    let mut resp = answer(StatusCode::SWITCHING_PROTOCOLS, "");
    let h = resp.headers_mut();
    h.insert("connection", HeaderValue::from_static("Upgrade"));
    h.insert("upgrade", HeaderValue::from_static("SPDY/3.1"));
    h.insert(
        "x-stream-protocol-version",
        HeaderValue::from_static(session),
    );
    resp
}

/// A query's values by key.
#[derive(Default)]
struct Query(HashMap<String, Vec<String>>);

impl Query {
    fn parse(raw: &str) -> Query {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for (k, v) in form_urlencoded::parse(raw.as_bytes()) {
            map.entry(k.into_owned()).or_default().push(v.into_owned());
        }
        Query(map)
    }

    fn on(&self, key: &str) -> bool {
        self.0
            .get(key)
            .and_then(|v| v.first())
            .is_some_and(|v| v == "1" || v == "true")
    }

    fn all(&self, key: &str) -> Vec<String> {
        self.0.get(key).cloned().unwrap_or_default()
    }
}

/// The streams of a remote command session, by type.
#[derive(Default)]
struct Streams(HashMap<String, Stream>);

/// Upstream's remote command server, v4: the streams the query asks for, the command
/// run, its output written, then its status on the error stream.
async fn remote_command(
    kind: &str,
    container: &str,
    query: &Query,
    conn: Connection,
    mut incoming: tokio::sync::mpsc::UnboundedReceiver<Stream>,
    files: Received,
) {
    let tty = query.on("tty");
    let mut expected = vec!["error"];
    for (key, stream) in [("input", "stdin"), ("output", "stdout")] {
        if query.on(key) {
            expected.push(stream);
        }
    }
    if query.on("error") && !tty {
        expected.push("stderr");
    }
    if tty {
        expected.push("resize");
    }
    let mut streams = Streams::default();
    let wait = async {
        while expected.iter().any(|e| !streams.0.contains_key(*e)) {
            let Some(stream) = incoming.recv().await else {
                return false;
            };
            let kind = header(&stream.headers, "streamtype")
                .unwrap_or("")
                .to_owned();
            streams.0.insert(kind, stream);
        }
        true
    };
    if !tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .unwrap_or(false)
    {
        return;
    }
    let mut stdin = streams.0.remove("stdin");
    let command = match kind {
        "attach" => vec!["attach".to_owned(), container.to_owned()],
        _ => query.all("command"),
    };
    let run = run(&command, stdin.as_mut(), &files).await;
    let write = |name: &str, data: &[u8]| {
        if let Some(s) = streams.0.get(name)
            && !data.is_empty()
        {
            s.writer.send(Bytes::copy_from_slice(data));
        }
    };
    write("stdout", &run.stdout);
    if tty {
        write("stdout", &run.stderr);
    } else {
        write("stderr", &run.stderr);
    }
    write("error", status(&command, run.exit).as_bytes());
    for stream in streams.0.values() {
        stream.writer.close();
    }
    conn.go_away();
}

/// Upstream's v4 status of a finished command.
fn status(command: &[String], exit: i32) -> String {
    if exit == 0 {
        return r#"{"metadata":{},"status":"Success"}"#.to_owned();
    }
    serde_json::json!({
        "metadata": {},
        "status": "Failure",
        "message": format!(
            "command terminated with non-zero exit code: error executing command [{}], exit code {exit}",
            command.join(" ")
        ),
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": exit.to_string()}]},
    })
    .to_string()
}

#[derive(Default)]
struct Run {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exit: i32,
}

async fn read_all(stdin: Option<&mut Stream>) -> Vec<u8> {
    let mut all = Vec::new();
    if let Some(stdin) = stdin {
        while let Some(chunk) = stdin.data.recv().await {
            all.extend_from_slice(&chunk);
        }
    }
    all
}

/// The fake container's commands.
async fn run(command: &[String], stdin: Option<&mut Stream>, files: &Received) -> Run {
    let args: Vec<&str> = command.iter().map(String::as_str).collect();
    let mut out = Run::default();
    match args.as_slice() {
        ["attach", container] => {
            out.stdout = format!("attached to {container}\n").into_bytes();
            out.stdout.extend(read_all(stdin).await);
        }
        ["echo", words @ ..] => out.stdout = format!("{}\n", words.join(" ")).into_bytes(),
        ["cat"] => out.stdout = read_all(stdin).await,
        ["test", ..] => out.exit = 1,
        ["tar", "cf", "-", paths @ ..] => {
            let entries: Vec<(String, Vec<u8>)> = paths
                .iter()
                .map(|p| {
                    let name = p.trim_start_matches('/').to_owned();
                    (name, format!("content of {p}\n").into_bytes())
                })
                .collect();
            out.stdout = tar::write(&entries);
        }
        ["tar", "-xmf", "-", ..] | ["tar", "xmf", "-", ..] => {
            let archive = read_all(stdin).await;
            files.lock().expect("files").extend(tar::read(&archive));
        }
        ["sh", "-c", script] => {
            for step in script.split(';').map(str::trim) {
                if let Some(code) = step.strip_prefix("exit ") {
                    out.exit = code.trim().parse().unwrap_or(1);
                    break;
                } else if let Some(text) = step.strip_prefix("echo ") {
                    match text.strip_suffix(">&2") {
                        Some(err) => out.stderr.extend(format!("{}\n", err.trim()).bytes()),
                        None => out.stdout.extend(format!("{text}\n").bytes()),
                    }
                }
            }
        }
        other => {
            out.stderr = format!("fake kubelet: no such command {other:?}\n").into_bytes();
            out.exit = 127;
        }
    }
    out
}

/// Upstream's port-forward protocol: for each data stream (with its error stream, both
/// naming the port and a request id) every chunk received is answered with
/// `port <port>: <chunk>`; the data stream's end ends both.
async fn port_forward(mut incoming: tokio::sync::mpsc::UnboundedReceiver<Stream>) {
    let mut errors: HashMap<String, Stream> = HashMap::new();
    while let Some(mut stream) = incoming.recv().await {
        let request = header(&stream.headers, "requestid")
            .unwrap_or("")
            .to_owned();
        if header(&stream.headers, "streamtype") == Some("error") {
            errors.insert(request, stream);
            continue;
        }
        let error = errors.remove(&request);
        tokio::spawn(async move {
            let port = header(&stream.headers, "port").unwrap_or("").to_owned();
            while let Some(chunk) = stream.data.recv().await {
                let mut reply = format!("port {port}: ").into_bytes();
                reply.extend_from_slice(&chunk);
                stream.writer.send(Bytes::from(reply));
            }
            stream.writer.close();
            if let Some(error) = error {
                error.writer.close();
            }
        });
    }
}
