//! Fakes of the policy the reviews consult, for their tests.

use std::sync::Mutex;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use kas_auth::UserInfo;
use kas_auth::authorization::{Attributes, Authorizer, Decision, RuleResolver, RulesInfo};

/// What the fake authorizer answers.
#[derive(Clone, Debug)]
pub(crate) enum Outcome {
    Decided(Decision, String),
    Failed(String),
}

/// Answers every question with one outcome and keeps the last attributes it was asked.
pub(crate) struct FakeAuthorizer {
    outcome: Outcome,
    seen: Mutex<Option<Attributes>>,
}

impl FakeAuthorizer {
    pub(crate) fn new(outcome: Outcome) -> FakeAuthorizer {
        FakeAuthorizer {
            outcome,
            seen: Mutex::new(None),
        }
    }

    /// The attributes of the last question (panics, in a test, when there was none).
    pub(crate) fn seen(&self) -> Attributes {
        self.seen.lock().unwrap().clone().expect("asked")
    }
}

impl Authorizer for FakeAuthorizer {
    fn authorize<'a>(
        &'a self,
        attrs: &'a Attributes,
    ) -> BoxFuture<'a, kas_auth::Result<(Decision, String)>> {
        *self.seen.lock().unwrap() = Some(attrs.clone());
        let answer = match &self.outcome {
            Outcome::Decided(d, reason) => Ok((*d, reason.clone())),
            Outcome::Failed(msg) => Err(kas_auth::Error::InvalidCredentials(msg.clone())),
        };
        async move { answer }.boxed()
    }
}

/// Answers fixed rules and records whom and where it was asked about.
pub(crate) struct FakeResolver {
    pub(crate) rules: RulesInfo,
    pub(crate) seen: Mutex<Option<(UserInfo, String)>>,
}

impl RuleResolver for FakeResolver {
    fn rules_for<'a>(&'a self, user: &'a UserInfo, namespace: &'a str) -> BoxFuture<'a, RulesInfo> {
        *self.seen.lock().unwrap() = Some((user.clone(), namespace.to_owned()));
        let rules = self.rules.clone();
        async move { rules }.boxed()
    }
}

/// The code and message of an error's `Status`.
pub(crate) fn invalid_message(err: kas_registry::Error) -> (u16, String) {
    let status = err.to_status();
    (status.code, status.message.unwrap_or_default())
}

/// A storage every call of which fails: a review's store never reaches it.
pub(crate) struct NoStorage;

fn never() -> kas_storage::Error {
    kas_storage::Error::internal("reviews are not stored")
}

#[async_trait::async_trait]
impl kas_storage::Storage for NoStorage {
    async fn create(
        &self,
        _: &str,
        _: serde_json::Value,
        _: Option<i64>,
    ) -> kas_storage::Result<kas_storage::ObjectRef> {
        Err(never())
    }

    async fn get(
        &self,
        _: &str,
        _: &kas_storage::GetOptions,
    ) -> kas_storage::Result<Option<kas_storage::ObjectRef>> {
        Err(never())
    }

    async fn list(
        &self,
        _: &str,
        _: &kas_storage::ListOptions,
    ) -> kas_storage::Result<kas_storage::ListResult> {
        Err(never())
    }

    async fn guaranteed_update(
        &self,
        _: &str,
        _: &kas_storage::Preconditions,
        _: bool,
        _: &kas_storage::UpdateFn<'_>,
        _: Option<kas_storage::ObjectRef>,
        _: Option<i64>,
    ) -> kas_storage::Result<kas_storage::ObjectRef> {
        Err(never())
    }

    async fn delete(
        &self,
        _: &str,
        _: &kas_storage::Preconditions,
        _: &kas_storage::ValidateDeletionFn<'_>,
        _: Option<kas_storage::ObjectRef>,
    ) -> kas_storage::Result<kas_storage::ObjectRef> {
        Err(never())
    }

    async fn watch(
        &self,
        _: &str,
        _: &kas_storage::WatchOptions,
    ) -> kas_storage::Result<kas_storage::WatchStream> {
        Err(never())
    }

    async fn count(&self, _: &str) -> kas_storage::Result<i64> {
        Err(never())
    }

    async fn current_revision(&self) -> kas_storage::Result<u64> {
        Err(never())
    }
}
