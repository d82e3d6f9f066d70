//! Tries authenticators in order, after upstream's `request/union`.

use futures_util::future::BoxFuture;

use super::{AuthRequest, Authenticator, DynAuthenticator, Response};
use crate::{Error, Result};

/// The first authenticator to return a user wins. Errors are collected and returned only
/// when none did; with `fail_on_error` the first error is returned at once.
pub struct Union {
    authenticators: Vec<DynAuthenticator>,
    fail_on_error: bool,
}

impl Union {
    /// Upstream's `union.New`.
    pub fn new(authenticators: Vec<DynAuthenticator>) -> Self {
        Union {
            authenticators,
            fail_on_error: false,
        }
    }

    /// Upstream's `union.NewFailOnError`: an error stops the chain, so a bad credential is
    /// never retried as anonymous.
    pub fn fail_on_error(authenticators: Vec<DynAuthenticator>) -> Self {
        Union {
            authenticators,
            fail_on_error: true,
        }
    }
}

impl Authenticator for Union {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Response>>> {
        Box::pin(async move {
            let mut errs = Vec::new();
            for auth in &self.authenticators {
                match auth.authenticate(req).await {
                    Ok(Some(resp)) => return Ok(Some(resp)),
                    Ok(None) => {}
                    Err(err) if self.fail_on_error => return Err(err),
                    Err(err) => errs.push(err),
                }
            }
            match Error::aggregate(errs) {
                Some(err) => Err(err),
                None => Ok(None),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::UserInfo;
    use crate::authentication::testing::request;

    enum Answer {
        User(&'static str),
        NoOpinion,
        Fail(&'static str),
    }

    struct Fake {
        answer: Answer,
        calls: AtomicUsize,
    }

    fn fake(answer: Answer) -> Arc<Fake> {
        Arc::new(Fake {
            answer,
            calls: AtomicUsize::new(0),
        })
    }

    impl Authenticator for Fake {
        fn authenticate<'a>(
            &'a self,
            _: &'a AuthRequest<'a>,
        ) -> BoxFuture<'a, Result<Option<Response>>> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let out = match self.answer {
                Answer::User(name) => Ok(Some(Response {
                    user: UserInfo {
                        name: name.to_owned(),
                        ..UserInfo::default()
                    },
                    consumed_headers: Vec::new(),
                    proxied: false,
                    audiences: Vec::new(),
                    notes: Default::default(),
                })),
                Answer::NoOpinion => Ok(None),
                Answer::Fail(msg) => Err(Error::InvalidCredentials(msg.to_owned())),
            };
            Box::pin(std::future::ready(out))
        }
    }

    async fn run(u: &Union) -> Result<Option<Response>> {
        let h = http::HeaderMap::new();
        u.authenticate(&request("/", &h, None)).await
    }

    #[tokio::test]
    async fn first_user_wins_despite_earlier_errors() {
        let last = fake(Answer::User("late"));
        let u = Union::new(vec![
            fake(Answer::Fail("bad")),
            fake(Answer::NoOpinion),
            fake(Answer::User("bob")),
            last.clone(),
        ]);
        assert_eq!(run(&u).await.unwrap().unwrap().user.name, "bob");
        assert_eq!(last.calls.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn errors_are_aggregated_when_nobody_answers() {
        let u = Union::new(vec![
            fake(Answer::Fail("one")),
            fake(Answer::NoOpinion),
            fake(Answer::Fail("two")),
        ]);
        assert_eq!(run(&u).await.unwrap_err().to_string(), "[one, two]");
    }

    #[tokio::test]
    async fn all_no_opinion_is_no_opinion() {
        let u = Union::new(vec![fake(Answer::NoOpinion), fake(Answer::NoOpinion)]);
        assert_eq!(run(&u).await.unwrap(), None);
        assert_eq!(run(&Union::new(Vec::new())).await.unwrap(), None);
    }

    #[tokio::test]
    async fn fail_on_error_stops_at_the_first_error() {
        let after = fake(Answer::User("anon"));
        let u = Union::fail_on_error(vec![fake(Answer::Fail("bad")), after.clone()]);
        assert_eq!(run(&u).await.unwrap_err().to_string(), "bad");
        assert_eq!(after.calls.load(Ordering::SeqCst), 0);
    }
}
