use super::*;
use crate::cluster::Role;
use crate::pki::Pki;
use std::net::TcpListener;
use std::thread::{self, JoinHandle};

/// What the test server saw: the request head, and the client's certificate chain if any.
struct Seen {
    head: String,
    client_certs: usize,
}

/// Serves one TLS connection on a loopback port with `role`'s serving certificate, requiring
/// a client certificate from the cluster CA when `require_client_cert`, and answers with
/// `raw_response` written in two pieces to exercise the incremental parser.
fn serve_once(
    pki: &Pki,
    require_client_cert: bool,
    raw_response: &'static [u8],
) -> (String, JoinHandle<Option<Seen>>) {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let chain = CertificateDer::pem_file_iter(&pki.serving(Role::Aggregator).cert)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(&pki.serving(Role::Aggregator).key).unwrap();
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = if require_client_cert {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_file(&pki.ca.cert).unwrap())
            .unwrap();
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .unwrap();
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let config = Arc::new(builder.with_single_cert(chain, key).unwrap());

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "https://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    let handle = thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let conn = rustls::ServerConnection::new(config).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match tls.read(&mut byte) {
                Ok(1) => head.push(byte[0]),
                _ => return None, // handshake refused, or the client gave up
            }
        }
        let split = raw_response.len() / 2;
        tls.write_all(&raw_response[..split]).unwrap();
        tls.flush().unwrap();
        thread::sleep(Duration::from_millis(20));
        tls.write_all(&raw_response[split..]).unwrap();
        tls.conn.send_close_notify();
        tls.flush().unwrap();
        let client_certs = tls.conn.peer_certificates().map_or(0, |c| c.len());
        Some(Seen {
            head: String::from_utf8(head).unwrap(),
            client_certs,
        })
    });
    (url, handle)
}

fn pki() -> (tempfile::TempDir, Pki, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::ensure(dir.path()).unwrap();
    let ca = fs_read(&pki.ca.cert);
    (dir, pki, ca)
}

fn fs_read(path: &std::path::Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn gets_a_content_length_body_and_sends_the_bearer_token() {
    let (_dir, pki, ca) = pki();
    let (url, server) = serve_once(
        &pki,
        false,
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    );
    let (status, body) = get(&format!("{url}/readyz?verbose"), &ca, None, Some("s3cret")).unwrap();
    assert_eq!((status, body.as_slice()), (200, b"ok".as_slice()));
    let seen = server.join().unwrap().unwrap();
    assert!(
        seen.head.starts_with("GET /readyz?verbose HTTP/1.1\r\n"),
        "{}",
        seen.head
    );
    assert!(seen.head.contains("\r\nAuthorization: Bearer s3cret\r\n"));
    assert!(seen.head.contains("\r\nConnection: close\r\n"));
    assert!(seen.head.contains(&format!(
        "\r\nHost: {}\r\n",
        url.trim_start_matches("https://")
    )));
    assert_eq!(seen.client_certs, 0);
}

#[test]
fn decodes_a_chunked_body_and_reports_headers() {
    let (_dir, pki, ca) = pki();
    let (url, server) = serve_once(
        &pki,
        false,
        b"HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n4\r\nnot \r\n5;x=y\r\nready\r\n0\r\n\r\n",
    );
    let response = send(&Request::get(&format!("{url}/readyz"), &ca)).unwrap();
    assert_eq!(response.status, 503);
    assert_eq!(response.body, b"not ready");
    assert_eq!(response.header("Content-Type"), Some("text/plain"));
    server.join().unwrap().unwrap();
}

#[test]
fn presents_the_client_certificate_when_asked() {
    let (_dir, pki, ca) = pki();
    let (url, server) = serve_once(&pki, true, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    let cert = fs_read(&pki.admin.cert);
    let key = fs_read(&pki.admin.key);
    let (status, body) = get(&url, &ca, Some((&cert, &key)), None).unwrap();
    assert_eq!((status, body.len()), (200, 0));
    assert_eq!(server.join().unwrap().unwrap().client_certs, 1);

    // Without one, the server refuses the handshake and the probe reports an error.
    let (url, server) = serve_once(&pki, true, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert!(get(&url, &ca, None, None).is_err());
    assert!(server.join().unwrap().is_none());
}

#[test]
fn refuses_a_server_signed_by_another_ca() {
    let (_dir, pki, _) = pki();
    let other_ca = fs_read(&pki.front_proxy_ca.cert);
    let (url, server) = serve_once(&pki, false, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    let err = get(&url, &other_ca, None, None).unwrap_err();
    assert!(matches!(err, Error::Request { .. }), "{err:?}");
    assert!(server.join().unwrap().is_none());
}

#[test]
fn speaks_plain_http_and_reads_to_eof_without_length() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/health",
        listener.local_addr().unwrap().port()
    );
    let server = thread::spawn(move || {
        let (mut tcp, _) = listener.accept().unwrap();
        let mut buf = [0u8; 1024];
        let n = tcp.read(&mut buf).unwrap();
        tcp.write_all(b"HTTP/1.0 200 OK\r\n\r\n{\"health\":\"true\"}")
            .unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    });
    let (status, body) = get(&url, b"", None, None).unwrap();
    assert_eq!(
        (status, body.as_slice()),
        (200, br#"{"health":"true"}"#.as_slice())
    );
    assert!(
        server
            .join()
            .unwrap()
            .starts_with("GET /health HTTP/1.1\r\n")
    );
}

#[test]
fn reports_a_truncated_body() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/",
        listener.local_addr().unwrap().port()
    );
    let server = thread::spawn(move || {
        let (mut tcp, _) = listener.accept().unwrap();
        let mut buf = [0u8; 1024];
        let _ = tcp.read(&mut buf).unwrap();
        tcp.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort")
            .unwrap();
    });
    let err = get(&url, b"", None, None).unwrap_err();
    assert!(matches!(err, Error::Response { .. }), "{err:?}");
    server.join().unwrap();
}

#[test]
fn parses_urls() {
    let t = Target::parse("https://[::1]:6443/readyz").unwrap();
    assert_eq!(
        (
            t.tls,
            t.host.as_str(),
            t.port,
            t.authority.as_str(),
            t.path.as_str()
        ),
        (true, "::1", 6443, "[::1]:6443", "/readyz")
    );
    let t = Target::parse("http://localhost").unwrap();
    assert_eq!(
        (t.tls, t.host.as_str(), t.port, t.path.as_str()),
        (false, "localhost", 80, "/")
    );
    assert_eq!(Target::parse("https://h/x").unwrap().port, 443);
    assert!(Target::parse("ftp://h/").is_err());
    assert!(Target::parse("https://h:notaport/").is_err());
    assert!(Target::parse("https://:1/").is_err());
}

#[test]
fn parses_responses_incrementally() {
    let full = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nabc";
    for cut in 0..full.len() {
        assert_eq!(
            parse_response(&full[..cut], false, false),
            Ok(None),
            "cut at {cut}"
        );
    }
    let r = parse_response(full, false, false).unwrap().unwrap();
    assert_eq!((r.status, r.body.as_slice()), (201, b"abc".as_slice()));
    assert!(parse_response(b"garbage\r\n\r\n", false, false).is_err());
    let r = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", false, true)
        .unwrap()
        .unwrap();
    assert!(r.body.is_empty(), "HEAD has no body");
}
