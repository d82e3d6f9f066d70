//! authorization.k8s.io/v1 `localsubjectaccessreviews`, after upstream's
//! `localsubjectaccessreview.REST`: a SubjectAccessReview within one namespace, the
//! request's, which the review's resource attributes must name.

use async_trait::async_trait;
use kas_apimachinery::Status;
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
    "LocalSubjectAccessReview",
    "LocalSubjectAccessReviewList",
    "localsubjectaccessreviews",
    "localsubjectaccessreview",
    Scope::Namespaced,
    &kas_api::authorization::v1::LOCAL_SUBJECT_ACCESS_REVIEW,
);

pub fn install(opts: &crate::resources::ResourceOptions) -> crate::resources::Install {
    review_install(
        &DESCRIPTOR,
        LocalSubjectAccessReviews {
            authorizer: opts.reviewers.authorizer.clone(),
        },
    )
}

pub struct LocalSubjectAccessReviews {
    pub authorizer: Option<DynAuthorizer>,
}

#[async_trait]
impl Creater for LocalSubjectAccessReviews {
    async fn create(
        &self,
        namespace: &str,
        review: Value,
        _: &WriteOptions,
    ) -> kas_registry::Result<Value> {
        let authorizer = self.authorizer.as_ref().ok_or_else(not_served)?;
        let errs = validate_subject_access_review(&review, true);
        if !errs.is_empty() {
            return Err(invalid(GROUP, errs));
        }
        // The handlers made the object's namespace the request's; upstream checks again.
        if namespace.is_empty() {
            let msg = format!("namespace is required on this type: {namespace}");
            return Err(Status::bad_request(&msg).into());
        }
        if kas_registry::meta::namespace(&review) != namespace {
            let msg =
                format!("spec.resourceAttributes.namespace must match namespace: {namespace}");
            return Err(Status::bad_request(&msg).into());
        }
        Ok(answer_access(
            authorizer,
            review,
            None,
            &kas_api::authorization::v1::LOCAL_SUBJECT_ACCESS_REVIEW,
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

    fn reviews() -> (LocalSubjectAccessReviews, Arc<FakeAuthorizer>) {
        let fake = Arc::new(FakeAuthorizer::new(Outcome::Decided(
            Decision::NoOpinion,
            "no rule".into(),
        )));
        let authorizer: DynAuthorizer = fake.clone();
        let reviews = LocalSubjectAccessReviews {
            authorizer: Some(authorizer),
        };
        (reviews, fake)
    }

    fn review(ns: &str, ra_ns: &str) -> Value {
        json!({"metadata": {"namespace": ns},
               "spec": {"user": "bob", "resourceAttributes": {"namespace": ra_ns, "verb": "get",
                        "resource": "pods"}}})
    }

    #[tokio::test]
    async fn asks_within_the_namespace() {
        let (reviews, fake) = reviews();
        let got = reviews
            .create("ns", review("ns", "ns"), &WriteOptions::default())
            .await
            .unwrap();
        assert_eq!(
            got["status"],
            json!({"allowed": false, "reason": "no rule"})
        );
        assert_eq!(got["metadata"]["namespace"], "ns");
        assert_eq!(fake.seen().namespace, "ns");
    }

    #[tokio::test]
    async fn the_namespaces_must_agree() {
        let (reviews, _) = reviews();
        let err = reviews
            .create("ns", review("ns", "other"), &WriteOptions::default())
            .await
            .err()
            .unwrap();
        assert_eq!(
            invalid_message(err),
            (
                422,
                r#".authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace"#
                    .to_owned()
            )
        );
        let err = reviews
            .create("elsewhere", review("ns", "ns"), &WriteOptions::default())
            .await
            .err()
            .unwrap();
        assert_eq!(
            invalid_message(err),
            (
                400,
                "spec.resourceAttributes.namespace must match namespace: elsewhere".to_owned()
            )
        );
    }
}
