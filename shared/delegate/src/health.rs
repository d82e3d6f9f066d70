//! The health watcher of one endpoint: subscribes to its `Peer.WatchReadiness` stream over a
//! dedicated mTLS HTTP/2 connection and turns what it hears into the endpoint's state. A
//! broken stream or a silent peer ejects the endpoint; it is probed back in with backoff.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::future::BoxFuture;
use hyper::body::Incoming;
use hyper::client::conn::http2::SendRequest;
use kas_endpoints::{Body, body};
use kas_proto::peer::v1::WatchReadinessRequest;
use kas_proto::peer::v1::peer_client::PeerClient;

use crate::endpoint::{Endpoint, EndpointState};

const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// The peer sends at least every 2 s; three missed heartbeats mean it is gone.
const SILENCE_LIMIT: Duration = Duration::from_secs(6);

pub(crate) async fn watch(endpoint: Arc<Endpoint>) {
    let mut backoff = MIN_BACKOFF;
    loop {
        match subscribe(&endpoint).await {
            Ok(mut stream) => {
                backoff = MIN_BACKOFF;
                let mut heard = false;
                loop {
                    match tokio::time::timeout(SILENCE_LIMIT, stream.message()).await {
                        Ok(Ok(Some(r))) => {
                            heard = true;
                            endpoint.set_discovery(&r.discovery);
                            let counts = kas_storage::counts::tracker();
                            for (resource, count) in &r.object_counts {
                                counts.set(resource, *count);
                            }
                            endpoint.set_state(if r.ready && !r.shutting_down {
                                EndpointState::Ready
                            } else {
                                EndpointState::NotReady
                            });
                        }
                        Ok(Ok(None)) => break,
                        Ok(Err(status)) if !heard => {
                            // It answered, but not with a readiness stream.
                            tracing::warn!(endpoint = %endpoint.name, %status, "endpoint does not stream its readiness");
                            endpoint.set_state(EndpointState::Unknown);
                            backoff = MAX_BACKOFF;
                            break;
                        }
                        Ok(Err(status)) => {
                            tracing::debug!(endpoint = %endpoint.name, %status, "readiness stream failed");
                            endpoint.set_state(EndpointState::Down);
                            break;
                        }
                        Err(_) => {
                            tracing::warn!(endpoint = %endpoint.name, "peer went silent");
                            endpoint.set_state(EndpointState::Down);
                            break;
                        }
                    }
                }
                if heard && endpoint.state() != EndpointState::Down {
                    // The stream ended cleanly: the peer is going away.
                    endpoint.set_state(EndpointState::Down);
                }
            }
            Err(Subscribe::Unreachable(e)) => {
                tracing::debug!(endpoint = %endpoint.name, error = %e, "endpoint unreachable");
                endpoint.set_state(EndpointState::Down);
            }
            Err(Subscribe::NoPeerService(status)) => {
                // Reachable, but it does not serve Peer to us (a misconfigured front-proxy
                // CA, or a server that is not one of ours): route to it blind.
                tracing::warn!(endpoint = %endpoint.name, %status, "endpoint does not stream its readiness");
                endpoint.set_state(EndpointState::Unknown);
                backoff = MAX_BACKOFF;
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

enum Subscribe {
    Unreachable(crate::Error),
    NoPeerService(tonic::Status),
}

async fn subscribe(
    endpoint: &Endpoint,
) -> Result<tonic::Streaming<kas_proto::peer::v1::Readiness>, Subscribe> {
    let sender = endpoint.connect().await.map_err(Subscribe::Unreachable)?;
    let origin = http::Uri::builder()
        .scheme("https")
        .authority(endpoint.authority.clone())
        .path_and_query("/")
        .build()
        .map_err(|e| Subscribe::NoPeerService(tonic::Status::internal(e.to_string())))?;
    let mut client = PeerClient::with_origin(Channel { sender }, origin);
    client
        .watch_readiness(WatchReadinessRequest {})
        .await
        .map(tonic::Response::into_inner)
        .map_err(Subscribe::NoPeerService)
}

/// tonic's client over one of our HTTP/2 connections.
#[derive(Clone)]
struct Channel {
    sender: SendRequest<Body>,
}

impl tower::Service<http::Request<tonic::body::Body>> for Channel {
    type Response = http::Response<Incoming>;
    type Error = hyper::Error;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.sender.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let fut = self.sender.send_request(req.map(body::boxed));
        Box::pin(fut)
    }
}
