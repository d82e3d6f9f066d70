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
