//! A stand-in for `aggregator`, `core-apiserver` and `extensions-apiserver`, for the
//! launcher's own tests while the real binaries cannot run yet.
//!
//! It prints its arguments (one per line, after `args:`), serves HTTPS on
//! `--bind-address:--secure-port` with `--tls-cert-file`/`--tls-private-key-file`, and
//! answers every request with 200 "ok" and an `X-Fake-Saw-Client-Cert` header. With
//! `--fake-exit` it exits with status 3 at once instead.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

fn flag<'a>(args: &'a [String], name: &str) -> &'a str {
    let i = args
        .iter()
        .position(|a| a == name)
        .unwrap_or_else(|| panic!("missing {name}"));
    &args[i + 1]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    println!("args:");
    for arg in &args {
        println!("{arg}");
    }
    if args.iter().any(|a| a == "--fake-exit") {
        eprintln!("fake-apiserver: exiting as asked");
        std::process::exit(3);
    }
    let chain = CertificateDer::pem_file_iter(flag(&args, "--tls-cert-file"))
        .expect("cert file")
        .collect::<Result<Vec<_>, _>>()
        .expect("cert PEM");
    let key = PrivateKeyDer::from_pem_file(flag(&args, "--tls-private-key-file")).expect("key PEM");
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    // Ask for (but do not require or verify) a client certificate, to report whether the
    // caller presented one.
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_client_cert_verifier(Arc::new(AcceptAnyClientCert))
        .with_single_cert(chain, key)
        .expect("server config");
    let config = Arc::new(config);
    let addr = format!(
        "{}:{}",
        flag(&args, "--bind-address"),
        flag(&args, "--secure-port")
    );
    let listener = TcpListener::bind(&addr).expect("bind");
    println!("listening on {addr}");
    for tcp in listener.incoming().flatten() {
        let config = config.clone();
        std::thread::spawn(move || {
            let conn = rustls::ServerConnection::new(config).expect("connection");
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                match tls.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => return,
                }
            }
            let saw = tls.conn.peer_certificates().is_some_and(|c| !c.is_empty());
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Fake-Saw-Client-Cert: {saw}\r\nConnection: close\r\n\r\nok"
            );
            let _ = tls.write_all(response.as_bytes());
            tls.conn.send_close_notify();
            let _ = tls.flush();
        });
    }
}

#[derive(Debug)]
struct AcceptAnyClientCert;

impl rustls::server::danger::ClientCertVerifier for AcceptAnyClientCert {
    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[rustls::DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: rustls_pki_types::UnixTime,
    ) -> Result<rustls::server::danger::ClientCertVerified, rustls::Error> {
        Ok(rustls::server::danger::ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        let algs = rustls::crypto::aws_lc_rs::default_provider().signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, &algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        let algs = rustls::crypto::aws_lc_rs::default_provider().signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, &algs)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        rustls::crypto::aws_lc_rs::default_provider()
            .signature_verification_algorithms
            .supported_schemes()
    }
}
