//! Upstream's cached token authenticator (`pkg/authentication/token/cache`) as
//! kube-apiserver configures it for its token authenticators: a bearer token that
//! authenticated is remembered for 10 s (`TokenSuccessCacheTTL`), failures are not
//! (`TokenFailureCacheTTL` 0). A service-account token whose bound object is deleted
//! therefore stops working within 10 s, as upstream's. Tokens are keyed by their SHA-256,
//! never kept in memory. The webhook token authenticator's cache is the same with a
//! failure TTL (`--authentication-token-webhook-cache-ttl` for both): "not authenticated"
//! answers are remembered too, errors never.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use http::header::AUTHORIZATION;

use super::{AuthRequest, Authenticator, DynAuthenticator, Response};
use crate::Result;

/// Upstream's `TokenSuccessCacheTTL`.
pub const SUCCESS_TTL: Duration = Duration::from_secs(10);

/// Entries kept at most; when full, expired entries are dropped, then everything.
const CAPACITY: usize = 4096;

type Key = [u8; 32];

pub struct CachedTokenAuthenticator {
    inner: DynAuthenticator,
    ttl: Duration,
    failure_ttl: Duration,
    /// A remembered answer: a user, or none (a failure).
    entries: Mutex<HashMap<Key, (Instant, Option<Response>)>>,
}

impl CachedTokenAuthenticator {
    pub fn new(inner: DynAuthenticator) -> Self {
        Self::with_ttl(inner, SUCCESS_TTL)
    }

    pub fn with_ttl(inner: DynAuthenticator, ttl: Duration) -> Self {
        Self::with_ttls(inner, ttl, Duration::ZERO)
    }

    /// Upstream's `cache.New(auth, false, successTTL, failureTTL)`: a zero TTL remembers
    /// nothing of that kind.
    pub fn with_ttls(inner: DynAuthenticator, ttl: Duration, failure_ttl: Duration) -> Self {
        CachedTokenAuthenticator {
            inner,
            ttl,
            failure_ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn ttl_of(&self, answer: &Option<Response>) -> Duration {
        match answer {
            Some(_) => self.ttl,
            None => self.failure_ttl,
        }
    }

    fn lookup(&self, key: &Key) -> Option<Option<Response>> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let (at, answer) = entries.get(key)?;
        (at.elapsed() < self.ttl_of(answer)).then(|| answer.clone())
    }

    fn remember(&self, key: Key, answer: &Option<Response>) {
        if self.ttl_of(answer).is_zero() {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= CAPACITY {
            let longest = self.ttl.max(self.failure_ttl);
            entries.retain(|_, (at, _)| at.elapsed() < longest);
            if entries.len() >= CAPACITY {
                entries.clear();
            }
        }
        entries.insert(key, (Instant::now(), answer.clone()));
    }
}

/// The SHA-256 of a bearer token and the audiences asked for (upstream's key holds both),
/// when the request carries a token.
fn token_key(req: &AuthRequest<'_>) -> Option<Key> {
    let value = req.headers.get(AUTHORIZATION)?.as_bytes();
    let token = value
        .strip_prefix(b"Bearer ")
        .or_else(|| value.strip_prefix(b"bearer "))?;
    let mut ctx = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
    if let Some(audiences) = req.audiences {
        for audience in audiences {
            ctx.update(&(audience.len() as u64).to_be_bytes());
            ctx.update(audience.as_bytes());
        }
        ctx.update(b"/");
    }
    ctx.update(token);
    ctx.finish().as_ref().try_into().ok()
}

impl Authenticator for CachedTokenAuthenticator {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Response>>> {
        Box::pin(async move {
            let Some(key) = token_key(req) else {
                return self.inner.authenticate(req).await;
            };
            if let Some(answer) = self.lookup(&key) {
                return Ok(answer);
            }
            let answer = self.inner.authenticate(req).await?;
            self.remember(key, &answer);
            Ok(answer)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use http::HeaderMap;

    use super::*;
    use crate::UserInfo;

    /// Authenticates token "good" as alice while `valid`, counting its calls.
    struct Counting {
        calls: AtomicUsize,
        valid: std::sync::atomic::AtomicBool,
    }

    impl Authenticator for Counting {
        fn authenticate<'a>(
            &'a self,
            req: &'a AuthRequest<'a>,
        ) -> BoxFuture<'a, Result<Option<Response>>> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let good = req
                .headers
                .get(AUTHORIZATION)
                .is_some_and(|v| v == "Bearer good")
                && self.valid.load(Ordering::SeqCst);
            Box::pin(async move {
                Ok(good.then(|| Response {
                    user: UserInfo {
                        name: "alice".into(),
                        ..UserInfo::default()
                    },
                    consumed_headers: vec![AUTHORIZATION],
                    proxied: false,
                    audiences: Vec::new(),
                    notes: Default::default(),
                }))
            })
        }
    }

    async fn auth(a: &CachedTokenAuthenticator, token: &str) -> Option<String> {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, format!("Bearer {token}").parse().unwrap());
        let req = AuthRequest {
            path: "/",
            headers: &headers,
            peer_certificates: None,
            audiences: None,
        };
        a.authenticate(&req).await.unwrap().map(|r| r.user.name)
    }

    #[tokio::test]
    async fn successes_are_remembered_for_the_ttl_and_failures_not_at_all() {
        let inner = Arc::new(Counting {
            calls: AtomicUsize::new(0),
            valid: true.into(),
        });
        let cache = CachedTokenAuthenticator::with_ttl(inner.clone(), Duration::from_millis(200));
        assert_eq!(auth(&cache, "good").await.as_deref(), Some("alice"));
        inner.valid.store(false, Ordering::SeqCst);
        assert_eq!(auth(&cache, "good").await.as_deref(), Some("alice"));
        assert_eq!(inner.calls.load(Ordering::SeqCst), 1);
        assert_eq!(auth(&cache, "bad").await, None);
        assert_eq!(auth(&cache, "bad").await, None);
        assert_eq!(inner.calls.load(Ordering::SeqCst), 3);
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert_eq!(auth(&cache, "good").await, None, "expired: asked again");
        assert_eq!(inner.calls.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn a_failure_ttl_remembers_failures_for_their_own_time() {
        let inner = Arc::new(Counting {
            calls: AtomicUsize::new(0),
            valid: false.into(),
        });
        let cache = CachedTokenAuthenticator::with_ttls(
            inner.clone(),
            Duration::from_secs(60),
            Duration::from_millis(200),
        );
        assert_eq!(auth(&cache, "good").await, None);
        inner.valid.store(true, Ordering::SeqCst);
        assert_eq!(
            auth(&cache, "good").await,
            None,
            "the failure is remembered"
        );
        assert_eq!(inner.calls.load(Ordering::SeqCst), 1);
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert_eq!(auth(&cache, "good").await.as_deref(), Some("alice"));
        assert_eq!(auth(&cache, "good").await.as_deref(), Some("alice"));
        assert_eq!(inner.calls.load(Ordering::SeqCst), 2);
    }
}
