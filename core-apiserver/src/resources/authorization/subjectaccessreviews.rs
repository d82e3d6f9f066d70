//! authorization.k8s.io/v1 `subjectaccessreviews`, after upstream's
//! `subjectaccessreview.REST`: may the user the spec names do what it says?

use async_trait::async_trait;
use kas_auth::authorization::DynAuthorizer;
use kas_registry::ResourceDescriptor;
use kas_registry::Scope;
use kas_registry::rest::options::WriteOptions;
use kas_registry::strategy::Creater;
use serde_json::Value;

use super::util::answer_access;
use super::validation::validate_subject_access_review;
use super::{GROUP, descriptor, install as review_install, invalid, not_served};

pub static DESCRIPTOR: ResourceDescriptor = descriptor(
    GROUP,
    "SubjectAccessReview",
    "SubjectAccessReviewList",
    "subjectaccessreviews",
    "subjectaccessreview",
    Scope::Cluster,
    &kas_api::authorization::v1::SUBJECT_ACCESS_REVIEW,
);

pub fn install(opts: &crate::resources::ResourceOptions) -> crate::resources::Install {
    review_install(
        &DESCRIPTOR,
        SubjectAccessReviews {
            authorizer: opts.reviewers.authorizer.clone(),
        },
    )
}

pub struct SubjectAccessReviews {
    pub authorizer: Option<DynAuthorizer>,
}

#[async_trait]
impl Creater for SubjectAccessReviews {
    async fn create(
        &self,
        _: &str,
        review: Value,
        _: &WriteOptions,
    ) -> kas_registry::Result<Value> {
        let authorizer = self.authorizer.as_ref().ok_or_else(not_served)?;
        let errs = validate_subject_access_review(&review, false);
        if !errs.is_empty() {
            return Err(invalid(GROUP, errs));
        }
        Ok(answer_access(
            authorizer,
            review,
            None,
            &kas_api::authorization::v1::SUBJECT_ACCESS_REVIEW,
        )
        .await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::authorization::testing::{FakeAuthorizer, Outcome, invalid_message};
    use kas_auth::authorization::Decision;
    use serde_json::json;
    use std::sync::Arc;

    fn with_outcome(outcome: Outcome) -> (SubjectAccessReviews, Arc<FakeAuthorizer>) {
        let fake = Arc::new(FakeAuthorizer::new(outcome));
        let authorizer: DynAuthorizer = fake.clone();
        let reviews = SubjectAccessReviews {
            authorizer: Some(authorizer),
        };
        (reviews, fake)
    }

    fn review(spec: Value) -> Value {
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
               "metadata": {"creationTimestamp": null}, "spec": spec})
    }

    #[tokio::test]
    async fn status_from_the_decision() {
        let spec = json!({"user": "bob", "groups": ["g"],
            "resourceAttributes": {"namespace": "myns", "verb": "create", "group": "apps",
                "version": "v1", "resource": "deployments", "subresource": "scale",
                "name": "d"}});
        let (reviews, fake) = with_outcome(Outcome::Decided(Decision::Allow, "allowed".into()));
        let got = reviews
            .create("", review(spec.clone()), &WriteOptions::default())
            .await
            .unwrap();
        assert_eq!(got["status"], json!({"allowed": true, "reason": "allowed"}));
        assert_eq!(got["metadata"], json!({"creationTimestamp": null}));
        assert_eq!(got["spec"]["user"], "bob");
        let seen = fake.seen();
        assert_eq!(seen.user.name, "bob");
        assert_eq!(seen.user.groups, vec!["g".to_owned()]);
        assert_eq!(
            (
                seen.namespace.as_str(),
                seen.api_version.as_str(),
                seen.name.as_str()
            ),
            ("myns", "v1", "d")
        );

        let (reviews, _) = with_outcome(Outcome::Decided(Decision::Deny, "no".into()));
        let got = reviews
            .create("", review(spec.clone()), &WriteOptions::default())
            .await
            .unwrap();
        assert_eq!(
            got["status"],
            json!({"allowed": false, "denied": true, "reason": "no"})
        );

        let (reviews, _) = with_outcome(Outcome::Failed("myerror".into()));
        let got = reviews
            .create("", review(spec), &WriteOptions::default())
            .await
            .unwrap();
        assert_eq!(
            got["status"],
            json!({"allowed": false, "evaluationError": "myerror"})
        );
    }

    #[tokio::test]
    async fn invalid_reviews_are_422_with_upstream_message() {
        let (reviews, _) = with_outcome(Outcome::Decided(Decision::Allow, String::new()));
        let err = reviews
            .create(
                "",
                review(json!({"resourceAttributes": {}})),
                &WriteOptions::default(),
            )
            .await
            .err()
            .unwrap();
        assert_eq!(
            invalid_message(err),
            (
                422,
                r#".authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified"#
                    .to_owned()
            )
        );
    }

    #[tokio::test]
    async fn no_authorizer_is_404() {
        let reviews = SubjectAccessReviews { authorizer: None };
        let err = reviews
            .create("", review(json!({"user": "u"})), &WriteOptions::default())
            .await
            .err()
            .unwrap();
        assert_eq!(invalid_message(err).0, 404);
    }

    /// Through a store, as the create handler calls it: type checks, managed fields, the
    /// review's `Creater`. A review's store answers without storing (`Written::DryRun`).
    #[tokio::test]
    async fn a_review_store_answers_without_storing() {
        use crate::resources::authorization::testing::NoStorage;
        use kas_registry::store::{Store, Written};

        let fake = Arc::new(FakeAuthorizer::new(Outcome::Decided(
            Decision::Allow,
            String::new(),
        )));
        let authorizer: DynAuthorizer = fake;
        let strategy = Arc::new(crate::resources::authorization::ReviewStrategy(
            SubjectAccessReviews {
                authorizer: Some(authorizer),
            },
        ));
        let store = Store::new(&DESCRIPTOR, strategy, Arc::new(NoStorage));
        let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": "bob", "nonResourceAttributes": {"path": "/", "verb": "get"}}});
        let opts = kas_registry::rest::options::WriteOptions {
            manager: "kubectl".into(),
            ..Default::default()
        };
        let Ok(Written::DryRun(got)) = store.create("", review, &opts).await else {
            panic!("a review is answered, not stored");
        };
        assert_eq!(got["status"], json!({"allowed": true}));
        let meta = got["metadata"].as_object().unwrap();
        assert_eq!(meta["creationTimestamp"], serde_json::Value::Null);
        assert_eq!(meta["managedFields"][0]["manager"], "kubectl");
        assert!(!meta.contains_key("uid") && !meta.contains_key("name"));
    }
}
