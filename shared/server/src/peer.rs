//! The `Peer` gRPC service each role serves to the role that delegates to it: a stream of
//! this role's readiness. It is mounted beside the filter chain (a stream must not count
//! against in-flight limits or time out), and only peers whose client certificate the
//! front-proxy CA signed, with an allowed common name, may call it.

use std::convert::Infallible;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::Stream;
use http::{Request, Response};
use kas_apimachinery::Status;
use kas_auth::authentication::{
    AuthRequest, Authenticator, PeerCertificates, x509::X509Authenticator,
};
use kas_endpoints::{Body, body, write_status};
use kas_proto::peer::v1::peer_server::{Peer, PeerServer};
use kas_proto::peer::v1::{Check, Readiness, WatchReadinessRequest};
use tokio::sync::watch;
use tower::ServiceExt;

use crate::Result;
use crate::healthz::{Endpoint, Health};

/// How often a peer hears from us even when nothing changed.
pub const HEARTBEAT: Duration = Duration::from_secs(2);
/// How often the readiness checks run to feed the stream.
const EVALUATE_EVERY: Duration = Duration::from_secs(1);

pub const PATH_PREFIX: &str = "/kas.peer.v1.Peer/";

/// The role's discovery digest (see `Readiness.discovery`), empty until the role sets one.
static DISCOVERY: std::sync::LazyLock<watch::Sender<String>> =
    std::sync::LazyLock::new(|| watch::channel(String::new()).0);

/// Sets the discovery digest the readiness stream tells delegating peers; they hear of a
/// change at once.
pub fn set_discovery_digest(digest: String) {
    DISCOVERY.send_if_modified(|old| {
        let modified = *old != digest;
        *old = digest;
        modified
    });
}

/// Advertises the digest of this role's discovery (`own`) with its delegate's merged in,
/// each time `delegated` (what the role fetched of its delegate's) changes; the role in
/// front then fetches the merged documents (core-apiserver merges extensions-apiserver's,
/// and the aggregator follows core's).
pub fn advertise_merged_discovery(
    own: String,
    mut delegated: watch::Receiver<Arc<kas_endpoints::discovery::delegated::Delegated>>,
) {
    tokio::spawn(async move {
        loop {
            let digest = delegated.borrow_and_update().merged_digest(&own);
            set_discovery_digest(digest);
            if delegated.changed().await.is_err() {
                return;
            }
        }
    });
}

/// Runs the readyz checks periodically (and at once when `changed` fires) and publishes
/// the result.
pub fn spawn_publisher(
    role: &'static str,
    health: Health,
    shutting_down: Arc<std::sync::atomic::AtomicBool>,
    mut changed: watch::Receiver<bool>,
) -> watch::Receiver<Readiness> {
    let (tx, rx) = watch::channel(Readiness {
        role: role.to_owned(),
        ..Readiness::default()
    });
    let mut discovery = DISCOVERY.subscribe();
    tokio::spawn(async move {
        loop {
            let results = health.evaluate(Endpoint::Readyz).await;
            let readiness = Readiness {
                role: role.to_owned(),
                ready: results.iter().all(|(_, r)| r.is_ok()),
                shutting_down: shutting_down.load(std::sync::atomic::Ordering::Acquire),
                checks: results
                    .into_iter()
                    .map(|(name, r)| Check {
                        name,
                        ok: r.is_ok(),
                    })
                    .collect(),
                discovery: discovery.borrow_and_update().clone(),
                object_counts: kas_storage::counts::tracker()
                    .snapshot()
                    .into_iter()
                    .collect(),
            };
            tx.send_if_modified(|old| {
                let modified = *old != readiness;
                *old = readiness;
                modified
            });
            if tx.is_closed() {
                return;
            }
            tokio::select! {
                () = tokio::time::sleep(EVALUATE_EVERY) => {}
                r = changed.changed() => if r.is_err() { tokio::time::sleep(EVALUATE_EVERY).await },
                _ = discovery.changed() => {}
            }
        }
    });
    rx
}

struct PeerService {
    readiness: watch::Receiver<Readiness>,
}

type ReadinessStream = Pin<Box<dyn Stream<Item = Result<Readiness, tonic::Status>> + Send>>;

#[tonic::async_trait]
impl Peer for PeerService {
    type WatchReadinessStream = ReadinessStream;

    async fn watch_readiness(
        &self,
        _: tonic::Request<WatchReadinessRequest>,
    ) -> Result<tonic::Response<ReadinessStream>, tonic::Status> {
        let rx = self.readiness.clone();
        let stream = futures_util::stream::unfold((rx, true), |(mut rx, first)| async move {
            if !first {
                // A change or a heartbeat, whichever comes first; a closed channel ends the stream.
                if let Ok(Err(_)) = tokio::time::timeout(HEARTBEAT, rx.changed()).await {
                    return None;
                }
            }
            let current = rx.borrow_and_update().clone();
            Some((Ok(current), (rx, false)))
        });
        Ok(tonic::Response::new(Box::pin(stream)))
    }
}

/// The Peer route: authenticates the caller, then hands the call to tonic.
#[derive(Clone)]
pub struct PeerRoute {
    grpc: PeerServer<PeerService>,
    peers: Option<Arc<(X509Authenticator, Vec<String>)>>,
}

impl PeerRoute {
    pub fn new(
        readiness: watch::Receiver<Readiness>,
        request_header: Option<(&Path, &[String])>,
    ) -> Result<Self> {
        let peers = match request_header {
            Some((ca, names)) => Some(Arc::new((
                X509Authenticator::from_ca_file(ca)?,
                names.to_vec(),
            ))),
            None => None,
        };
        Ok(PeerRoute {
            grpc: PeerServer::new(PeerService { readiness }),
            peers,
        })
    }

    pub fn matches<B>(req: &Request<B>) -> bool {
        req.uri().path().starts_with(PATH_PREFIX)
    }

    pub async fn call(self, req: Request<Body>) -> Result<Response<Body>, Infallible> {
        // Only the head crosses the await: the body is not Sync.
        let (parts, body) = req.into_parts();
        if !self.authorized(&parts).await {
            return Ok(write_status(&Status::unauthorized("Unauthorized")));
        }
        match self.grpc.oneshot(Request::from_parts(parts, body)).await {
            Ok(resp) => Ok(resp.map(body::boxed)),
            Err(never) => match never {},
        }
    }

    async fn authorized(&self, req: &http::request::Parts) -> bool {
        let auth = AuthRequest {
            path: req.uri.path(),
            headers: &req.headers,
            peer_certificates: req.extensions.get::<PeerCertificates>(),
            audiences: None,
        };
        self.verified(&auth).await
    }

    /// Whether a connection's client certificate proves a peer (the role delegating to
    /// this one), whatever it then asks for.
    pub async fn is_peer(&self, certs: &PeerCertificates) -> bool {
        let auth = AuthRequest {
            path: "",
            headers: &http::HeaderMap::new(),
            peer_certificates: Some(certs),
            audiences: None,
        };
        self.verified(&auth).await
    }

    async fn verified(&self, auth: &AuthRequest<'_>) -> bool {
        // A role with no front-proxy CA has no peers to serve.
        let Some(peers) = &self.peers else {
            return false;
        };
        match peers.0.authenticate(auth).await {
            Ok(Some(resp)) => peers.1.is_empty() || peers.1.contains(&resp.user.name),
            _ => false,
        }
    }
}
