//! Keeps a delegate's discovery and OpenAPI at hand: core-apiserver merges
//! extensions-apiserver's into `/apis` and `/openapi` (upstream's aggregator merges its
//! delegates' groups and specs; see `kas_endpoints::discovery::delegated`), and the
//! aggregator routes the custom groups straight to extensions. Each extensions replica advertises a digest of
//! what it serves on its readiness stream; when the digests change, the documents are
//! fetched through the delegate, again until every replica advertised the same digest
//! before and after the fetch (replicas differ briefly while a CRD change reaches each).
//! The aggregated `/apis` is published first, so a new CRD's group shows here within the
//! stream's latency; the OpenAPI documents follow.

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

/// Starts following `delegate`'s discovery, and its OpenAPI documents when `openapi` (the
/// aggregator routes by groups only; core merges both).
pub fn follow(delegate: crate::Delegate, openapi: bool) -> watch::Receiver<Arc<Delegated>> {
    let (tx, rx) = watch::channel(Arc::new(Delegated::default()));
    let mut changes = delegate.watch_discovery();
    tokio::spawn(async move {
        let mut have = String::new();
        loop {
            let wanted = agreed(&delegate);
            if wanted.as_ref().is_some_and(|w| *w != have) {
                for _ in 0..ATTEMPTS {
                    let before = agreed(&delegate);
                    match fetch(&delegate, &tx, openapi).await {
                        Ok(()) if before.is_some() && before == agreed(&delegate) => {
                            have = before.unwrap_or_default();
                            break;
                        }
                        Ok(()) => {}
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

/// The digest every endpoint that takes requests advertises, when they agree.
fn agreed(delegate: &crate::Delegate) -> Option<String> {
    let digests = delegate.discovery_digests();
    let first = digests.first()?;
    digests.iter().all(|d| d == first).then(|| first.clone())
}

/// Fetches and publishes the delegate's aggregated `/apis`, then, with `openapi`, its
/// OpenAPI v2 document and v3 index with it.
async fn fetch(
    delegate: &crate::Delegate,
    tx: &watch::Sender<Arc<Delegated>>,
    openapi: bool,
) -> Result<(), String> {
    let apis = get(delegate, "/apis", &Version::V2.content_type()).await?;
    let mut delegated = Delegated::from_aggregated(&apis)
        .ok_or_else(|| "GET /apis did not answer aggregated discovery".to_owned())?;
    let previous = tx.borrow().clone();
    if previous.items != delegated.items {
        tx.send_replace(Arc::new(Delegated {
            items: delegated.items.clone(),
            openapi: previous.openapi.clone(),
        }));
    }
    if !openapi {
        return Ok(());
    }
    let v2 = get(delegate, "/openapi/v2", "application/json").await?;
    let root = get(delegate, "/openapi/v3", "application/json").await?;
    // The v2 document stays JSON (see `Delegated`): only checked to be JSON here.
    let v2_is_json = serde_json::from_slice::<serde::de::IgnoredAny>(&v2).is_ok();
    if let (true, Ok(root)) = (v2_is_json, serde_json::from_slice(&root)) {
        delegated.openapi = Some((v2, root));
    }
    if *tx.borrow().as_ref() != delegated {
        tx.send_replace(Arc::new(delegated));
    }
    Ok(())
}

/// A GET through the delegate, as this server's own loopback identity would ask
/// (`system:apiserver` in `system:masters`).
async fn get(delegate: &crate::Delegate, path: &str, accept: &str) -> Result<bytes::Bytes, String> {
    let mut req = http::Request::get(path)
        .header(http::header::ACCEPT, accept)
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
        return Err(format!("GET {path} answered {}", resp.status()));
    }
    Ok(resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes())
}
