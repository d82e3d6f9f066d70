//! Keeps extensions-apiserver's discovery at hand for `/apis` (upstream's aggregator
//! merges its delegates' groups; see `kas_endpoints::discovery::delegated`). Each
//! extensions replica advertises the digest of its aggregated `/apis` on its readiness
//! stream; when the digests change, the document is fetched through the delegate until
//! what came back is one of them (replicas may briefly differ while a CRD change reaches
//! each), so a new CRD's group shows here within the stream's latency.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use kas_endpoints::discovery::aggregated::Version;
use kas_endpoints::discovery::delegated::Delegated;
use tokio::sync::watch;
use tower::ServiceExt;

/// How often a fetch that did not match is tried again.
const RETRY: Duration = Duration::from_millis(50);
const ATTEMPTS: usize = 40;
/// How often the digests are looked at again without a change.
const RECHECK: Duration = Duration::from_secs(2);

/// Starts following `delegate`'s discovery.
pub fn start(delegate: kas_delegate::Delegate) -> watch::Receiver<Arc<Delegated>> {
    let (tx, rx) = watch::channel(Arc::new(Delegated::default()));
    let mut changes = delegate.watch_discovery();
    tokio::spawn(async move {
        let mut have = String::new();
        loop {
            let wanted = delegate.discovery_digests();
            if !wanted.is_empty() && !wanted.contains(&have) {
                for _ in 0..ATTEMPTS {
                    match fetch(&delegate).await {
                        Ok((digest, delegated)) => {
                            let matched = delegate.discovery_digests().contains(&digest);
                            if digest != have {
                                have = digest;
                                tx.send_replace(Arc::new(delegated));
                            }
                            if matched {
                                break;
                            }
                        }
                        Err(e) => tracing::debug!(error = %e, "fetching the delegate's discovery"),
                    }
                    tokio::time::sleep(RETRY).await;
                }
            }
            if tx.is_closed() {
                return;
            }
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return },
                () = tokio::time::sleep(RECHECK) => {}
            }
        }
    });
    rx
}

/// The delegate's aggregated `/apis` and its digest, asked as this server's own loopback
/// identity would (`system:apiserver` in `system:masters`).
async fn fetch(delegate: &kas_delegate::Delegate) -> Result<(String, Delegated), String> {
    let mut req = http::Request::get("/apis")
        .header(http::header::ACCEPT, Version::V2.content_type())
        .body(kas_endpoints::body::empty())
        .map_err(|e| e.to_string())?;
    req.extensions_mut().insert(kas_auth::UserInfo {
        name: "system:apiserver".into(),
        uid: String::new(),
        groups: vec!["system:masters".into(), "system:authenticated".into()],
        extra: Default::default(),
    });
    let resp = delegate
        .clone()
        .oneshot(req)
        .await
        .map_err(|e| e.to_string())?;
    if resp.status() != http::StatusCode::OK {
        return Err(format!("GET /apis answered {}", resp.status()));
    }
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    let delegated = Delegated::from_aggregated(&bytes)
        .ok_or_else(|| "GET /apis did not answer aggregated discovery".to_owned())?;
    Ok((Delegated::digest(&bytes), delegated))
}
