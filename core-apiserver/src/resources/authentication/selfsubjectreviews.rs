//! authentication.k8s.io/v1 `selfsubjectreviews`, after upstream's `selfsubjectreview.REST`:
//! answers the requesting user, in a new object created now.

use std::time::SystemTime;

use async_trait::async_trait;
use kas_apimachinery::Status;
use kas_registry::ResourceDescriptor;
use kas_registry::Scope;
use kas_registry::rest::options::WriteOptions;
use kas_registry::strategy::Creater;
use serde_json::{Value, json};

use super::{GROUP, user_info};
use crate::resources::authorization::{answer, descriptor, install as review_install};

pub static DESCRIPTOR: ResourceDescriptor = descriptor(
    GROUP,
    "SelfSubjectReview",
    "SelfSubjectReviewList",
    "selfsubjectreviews",
    "selfsubjectreview",
    Scope::Cluster,
    &kas_api::authentication::v1::SELF_SUBJECT_REVIEW,
);

pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    review_install(&DESCRIPTOR, SelfSubjectReviews)
}

pub struct SelfSubjectReviews;

#[async_trait]
impl Creater for SelfSubjectReviews {
    async fn create(&self, _: &str, _: Value, opts: &WriteOptions) -> kas_registry::Result<Value> {
        let Some(user) = &opts.user else {
            return Err(Status::bad_request("no user present on request").into());
        };
        let fresh = json!({
            "apiVersion": DESCRIPTOR.api_version(),
            "kind": DESCRIPTOR.kind,
            "metadata": {"creationTimestamp": kas_registry::meta::rfc3339(SystemTime::now())},
        });
        let status = json!({"userInfo": user_info(user)});
        Ok(answer(
            fresh,
            status,
            &kas_api::authentication::v1::SELF_SUBJECT_REVIEW,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::authorization::testing::invalid_message;
    use kas_auth::UserInfo;

    #[tokio::test]
    async fn answers_the_requesting_user() {
        let opts = WriteOptions {
            user: Some(UserInfo {
                name: "alice".into(),
                uid: "u1".into(),
                groups: vec!["dev".into(), "system:authenticated".into()],
                extra: [("scopes".to_owned(), vec!["a".to_owned()])].into(),
            }),
            ..WriteOptions::default()
        };
        let sent = json!({"metadata": {"name": "ignored"}});
        let got = SelfSubjectReviews.create("", sent, &opts).await.unwrap();
        assert_eq!(
            got["status"],
            json!({"userInfo": {"username": "alice", "uid": "u1",
                "groups": ["dev", "system:authenticated"], "extra": {"scopes": ["a"]}}})
        );
        let created = got["metadata"]["creationTimestamp"].as_str().unwrap();
        assert!(kas_apimachinery::golang::time::parse_rfc3339(created).is_some());
        assert_eq!(got["metadata"].as_object().unwrap().len(), 1);
        let anonymous = WriteOptions {
            user: Some(UserInfo {
                name: "system:anonymous".into(),
                ..UserInfo::default()
            }),
            ..WriteOptions::default()
        };
        let got = SelfSubjectReviews
            .create("", json!({}), &anonymous)
            .await
            .unwrap();
        assert_eq!(
            got["status"],
            json!({"userInfo": {"username": "system:anonymous"}})
        );
    }

    #[tokio::test]
    async fn no_user_is_a_bad_request() {
        let err = SelfSubjectReviews
            .create("", json!({}), &WriteOptions::default())
            .await
            .err()
            .unwrap();
        assert_eq!(
            invalid_message(err),
            (400, "no user present on request".to_owned())
        );
    }
}
