//! The gRPC client of one KMS v2 plugin, on its unix socket (upstream's `gRPCService`).
//!
//! The client lives on a small runtime of its own thread, so a read that misses the DEK
//! cache can wait for `Decrypt` from synchronous decoding, whatever runtime the caller is on
//! (a current-thread runtime cannot drive the call it waits for). The thread ends when the
//! client is dropped.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use kas_proto::kms::v2::key_management_service_client::KeyManagementServiceClient;
use kas_proto::kms::v2::{
    DecryptRequest, EncryptRequest, EncryptResponse, StatusRequest, StatusResponse,
};
use tokio::runtime::{Handle, RuntimeFlavor};
use tonic::transport::{Channel, Endpoint};

use crate::encryption::metrics::record_kms_operation;

pub(super) struct Client {
    /// The provider's name, the metrics' label.
    name: String,
    runtime: Handle,
    grpc: KeyManagementServiceClient<Channel>,
    /// Each call's deadline: the configuration's `timeout`.
    timeout: Duration,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Client {
    /// A client of the plugin listening on `socket`; it dials on first use and again after
    /// the connection breaks.
    pub(super) fn new(name: &str, socket: PathBuf, timeout: Duration) -> Result<Client, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("starting the KMS client of {name:?}: {e}"))?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name(format!("kms-{name}"))
            .spawn(move || {
                let _ = runtime.block_on(stopped);
            })
            .map_err(|e| format!("starting the KMS client of {name:?}: {e}"))?;
        let channel = {
            let _entered = handle.enter();
            Endpoint::from_static("http://localhost")
                .connect_timeout(timeout)
                .connect_with_connector_lazy(tower::service_fn(move |_: http::Uri| {
                    let socket = socket.clone();
                    async move {
                        tokio::net::UnixStream::connect(socket)
                            .await
                            .map(TokioIo::new)
                    }
                }))
        };
        Ok(Client {
            name: name.to_owned(),
            runtime: handle,
            grpc: KeyManagementServiceClient::new(channel),
            timeout,
            _stop: stop,
        })
    }

    /// Runs `task` on the client's runtime (the probe loop).
    pub(super) fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.runtime.spawn(task);
    }

    pub(super) async fn status(&self) -> Result<StatusResponse, String> {
        let mut grpc = self.grpc.clone();
        self.call("Status", async move { grpc.status(StatusRequest {}).await })
            .await
    }

    pub(super) async fn encrypt(
        &self,
        uid: String,
        plaintext: Vec<u8>,
    ) -> Result<EncryptResponse, String> {
        let mut grpc = self.grpc.clone();
        self.call("Encrypt", async move {
            grpc.encrypt(EncryptRequest { plaintext, uid }).await
        })
        .await
    }

    /// `Decrypt`, waited for on the caller's thread.
    pub(super) fn decrypt_blocking(&self, request: DecryptRequest) -> Result<Vec<u8>, String> {
        let mut grpc = self.grpc.clone();
        let call = self.call("Decrypt", async move { grpc.decrypt(request).await });
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.runtime.spawn(async move {
            let _ = tx.send(call.await);
        });
        let wait = move || rx.recv();
        let answer = match Handle::try_current().map(|h| h.runtime_flavor()) {
            // Other tasks of a worker move to other threads meanwhile.
            Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(wait),
            _ => wait(),
        };
        answer
            .map_err(|_| "the KMS client stopped".to_owned())?
            .map(|r| r.plaintext)
    }

    /// One call of `method` on the client's runtime, within the timeout, its error as
    /// upstream's gRPC client prints it; its latency and status go to
    /// `apiserver_envelope_encryption_kms_operations_latency_seconds`.
    fn call<T, F>(
        &self,
        method: &'static str,
        call: F,
    ) -> impl Future<Output = Result<T, String>> + Send + 'static
    where
        T: Send + 'static,
        F: Future<Output = Result<tonic::Response<T>, tonic::Status>> + Send + 'static,
    {
        let timeout = self.timeout;
        let name = self.name.clone();
        let task = self.runtime.spawn(async move {
            let start = std::time::Instant::now();
            let answer = tokio::time::timeout(timeout, call).await;
            let code = match &answer {
                Ok(Ok(_)) => "OK".to_owned(),
                Ok(Err(status)) => format!("{:?}", status.code()),
                Err(_) => "DeadlineExceeded".to_owned(),
            };
            let method = format!("/v2.KeyManagementService/{method}");
            record_kms_operation(&name, &method, start.elapsed(), &code);
            answer
        });
        async move {
            match task.await {
                Ok(Ok(Ok(answer))) => Ok(answer.into_inner()),
                Ok(Ok(Err(status))) => Err(format!(
                    "rpc error: code = {:?} desc = {}",
                    status.code(),
                    status.message()
                )),
                Ok(Err(_)) => Err(
                    "rpc error: code = DeadlineExceeded desc = context deadline exceeded"
                        .to_owned(),
                ),
                Err(_) => Err("the KMS client stopped".to_owned()),
            }
        }
    }
}
