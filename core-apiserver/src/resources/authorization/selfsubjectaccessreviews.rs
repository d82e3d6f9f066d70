//! authorization.k8s.io/v1 `selfsubjectaccessreviews`, after upstream's
//! `selfsubjectaccessreview.REST`: may the requesting user do what the spec says?

use async_trait::async_trait;
use kas_apimachinery::Status;
use kas_auth::authorization::DynAuthorizer;
use kas_registry::ResourceDescriptor;
use kas_registry::Scope;
use kas_registry::rest::options::WriteOptions;
use kas_registry::strategy::Creater;
use serde_json::Value;

use super::util::answer_access;
use super::validation::validate_self_subject_access_review;
use super::{GROUP, descriptor, install as review_install, invalid, not_served};

pub static DESCRIPTOR: ResourceDescriptor = descriptor(
    GROUP,
    "SelfSubjectAccessReview",
    "SelfSubjectAccessReviewList",
    "selfsubjectaccessreviews",
    "selfsubjectaccessreview",
    Scope::Cluster,
    &kas_api::authorization::v1::SELF_SUBJECT_ACCESS_REVIEW,
);

pub fn install(opts: &crate::resources::ResourceOptions) -> crate::resources::Install {
    review_install(
        &DESCRIPTOR,
        SelfSubjectAccessReviews {
            authorizer: opts.reviewers.authorizer.clone(),
        },
    )
}

pub struct SelfSubjectAccessReviews {
    pub authorizer: Option<DynAuthorizer>,
}

#[async_trait]
impl Creater for SelfSubjectAccessReviews {
    async fn create(
        &self,
        _: &str,
        review: Value,
        opts: &WriteOptions,
    ) -> kas_registry::Result<Value> {
        let authorizer = self.authorizer.as_ref().ok_or_else(not_served)?;
        let errs = validate_self_subject_access_review(&review);
        if !errs.is_empty() {
            return Err(invalid(GROUP, errs));
        }
        let Some(user) = opts.user.clone() else {
            return Err(Status::bad_request("no user present on request").into());
        };
        Ok(answer_access(
            authorizer,
            review,
            Some(user),
            &kas_api::authorization::v1::SELF_SUBJECT_ACCESS_REVIEW,
        )
        .await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::authorization::testing::{FakeAuthorizer, Outcome, invalid_message};
    use kas_auth::UserInfo;
    use kas_auth::authorization::Decision;
    use serde_json::json;
    use std::sync::Arc;

    fn reviews() -> (SelfSubjectAccessReviews, Arc<FakeAuthorizer>) {
        let fake = Arc::new(FakeAuthorizer::new(Outcome::Decided(
            Decision::Allow,
            String::new(),
        )));
        let authorizer: DynAuthorizer = fake.clone();
        let reviews = SelfSubjectAccessReviews {
            authorizer: Some(authorizer),
        };
        (reviews, fake)
    }

    fn as_user(name: &str) -> WriteOptions {
        WriteOptions {
            user: Some(UserInfo {
                name: name.into(),
                groups: vec!["system:authenticated".into()],
                ..UserInfo::default()
            }),
            ..WriteOptions::default()
        }
    }

    #[tokio::test]
    async fn asks_about_the_requesting_user() {
        let (reviews, fake) = reviews();
        let review = json!({"metadata": {},
            "spec": {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}}});
        let got = reviews.create("", review, &as_user("alice")).await.unwrap();
        assert_eq!(got["status"], json!({"allowed": true}));
        let seen = fake.seen();
        assert_eq!(seen.user, as_user("alice").user.unwrap());
        assert_eq!(
            (seen.path.as_str(), seen.verb.as_str()),
            ("/healthz", "get")
        );
        assert!(!seen.is_resource_request);
    }

    #[tokio::test]
    async fn invalid_and_userless_reviews() {
        let (reviews, _) = reviews();
        let err = reviews
            .create("", json!({"spec": {}}), &as_user("alice"))
            .await
            .err()
            .unwrap();
        assert_eq!(
            invalid_message(err),
            (
                422,
                r#".authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified"#
                    .to_owned()
            )
        );
        let review = json!({"spec": {"resourceAttributes": {"verb": "get"}}});
        let err = reviews
            .create("", review, &WriteOptions::default())
            .await
            .err()
            .unwrap();
        assert_eq!(
            invalid_message(err),
            (400, "no user present on request".to_owned())
        );
    }
}
