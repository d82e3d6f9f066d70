//! A small KMS v2 plugin for the tests, over the real gRPC API on a unix socket: it
//! encrypts with AES-256-GCM under the keys of a file it reads on every call.
//!
//! The keys file has one base64 32-byte key per line; the first encrypts, every one
//! decrypts. A key's ID is `key-` and the first 16 hex digits of its SHA-256, so replacing
//! the first line rotates the key ID that `Status` reports. While a file `<keys>.unhealthy`
//! exists, `Status` answers healthz `unhealthy`.
//!
//! `kas-kms-plugin --socket /run/kms.sock --keys keys.txt`

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, Nonce, UnboundKey};
use base64::Engine;
use clap::Parser;
use kas_e2e::kms::key_id;
use kas_proto::kms::v2::key_management_service_server::{
    KeyManagementService, KeyManagementServiceServer,
};
use kas_proto::kms::v2::{
    DecryptRequest, DecryptResponse, EncryptRequest, EncryptResponse, StatusRequest, StatusResponse,
};
use tonic::{Request, Response, Status};

#[derive(Parser)]
struct Args {
    /// The unix socket to listen on (replaced if it exists).
    #[arg(long)]
    socket: PathBuf,
    /// The keys file.
    #[arg(long)]
    keys: PathBuf,
}

/// The annotation each ciphertext carries, as real plugins add their own.
const ANNOTATION: &str = "plugin.kms.kas.example.com";
const NONCE: usize = 12;

struct Plugin {
    keys: PathBuf,
}

impl Plugin {
    /// The keys with their IDs, the one that encrypts first (never empty).
    fn keys(&self) -> Result<Vec<(String, Vec<u8>)>, Status> {
        let text = std::fs::read_to_string(&self.keys)
            .map_err(|e| Status::unavailable(format!("reading {:?}: {e}", self.keys)))?;
        let mut keys = Vec::new();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let key = base64::engine::general_purpose::STANDARD
                .decode(line)
                .map_err(|e| Status::internal(format!("a key is not base64: {e}")))?;
            keys.push((key_id(&key), key));
        }
        if keys.is_empty() {
            return Err(Status::unavailable("no keys"));
        }
        Ok(keys)
    }
}

fn cipher(key: &[u8]) -> Result<LessSafeKey, Status> {
    let key =
        UnboundKey::new(&AES_256_GCM, key).map_err(|_| Status::internal("not an AES-256 key"))?;
    Ok(LessSafeKey::new(key))
}

#[tonic::async_trait]
impl KeyManagementService for Plugin {
    async fn status(&self, _: Request<StatusRequest>) -> Result<Response<StatusResponse>, Status> {
        let key_id = self.keys()?.swap_remove(0).0;
        let mut unhealthy = self.keys.clone().into_os_string();
        unhealthy.push(".unhealthy");
        let healthz = if Path::new(&unhealthy).exists() {
            "unhealthy"
        } else {
            "ok"
        };
        Ok(Response::new(StatusResponse {
            version: "v2".into(),
            healthz: healthz.into(),
            key_id,
        }))
    }

    async fn encrypt(
        &self,
        request: Request<EncryptRequest>,
    ) -> Result<Response<EncryptResponse>, Status> {
        let (key_id, key) = self.keys()?.swap_remove(0);
        let key = cipher(&key)?;
        let mut nonce = [0u8; NONCE];
        aws_lc_rs::rand::fill(&mut nonce).map_err(|_| Status::internal("no randomness"))?;
        let mut sealed = request.into_inner().plaintext;
        key.seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::empty(),
            &mut sealed,
        )
        .map_err(|_| Status::internal("sealing failed"))?;
        let mut ciphertext = nonce.to_vec();
        ciphertext.extend_from_slice(&sealed);
        Ok(Response::new(EncryptResponse {
            ciphertext,
            key_id,
            annotations: HashMap::from([(ANNOTATION.to_owned(), b"kas-kms-plugin".to_vec())]),
        }))
    }

    async fn decrypt(
        &self,
        request: Request<DecryptRequest>,
    ) -> Result<Response<DecryptResponse>, Status> {
        let request = request.into_inner();
        let keys = self.keys()?;
        let Some((_, key)) = keys.iter().find(|(id, _)| *id == request.key_id) else {
            return Err(Status::not_found(format!("no key {:?}", request.key_id)));
        };
        if request.ciphertext.len() < NONCE {
            return Err(Status::invalid_argument("ciphertext too short"));
        }
        let (nonce, sealed) = request.ciphertext.split_at(NONCE);
        let nonce = Nonce::try_assume_unique_for_key(nonce)
            .map_err(|_| Status::invalid_argument("nonce"))?;
        let mut plaintext = sealed.to_vec();
        let len = cipher(key)?
            .open_in_place(nonce, Aad::empty(), &mut plaintext)
            .map_err(|_| Status::invalid_argument("message authentication failed"))?
            .len();
        plaintext.truncate(len);
        Ok(Response::new(DecryptResponse { plaintext }))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let _ = std::fs::remove_file(&args.socket);
    let listener = tokio::net::UnixListener::bind(&args.socket)?;
    let incoming = futures_util::stream::unfold(listener, |listener| async move {
        let accepted = listener.accept().await.map(|(stream, _)| stream);
        Some((accepted, listener))
    });
    tonic::transport::Server::builder()
        .add_service(KeyManagementServiceServer::new(Plugin { keys: args.keys }))
        .serve_with_incoming(incoming)
        .await?;
    Ok(())
}
