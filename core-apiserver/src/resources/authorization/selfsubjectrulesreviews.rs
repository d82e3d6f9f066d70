//! authorization.k8s.io/v1 `selfsubjectrulesreviews`, after upstream's
//! `selfsubjectrulesreview.REST`: what may the requesting user do in `spec.namespace`?
//! Answered with a new object (no spec), as upstream's.

use async_trait::async_trait;
use kas_apimachinery::Status;
use kas_auth::authorization::{DynRuleResolver, NonResourceRuleInfo, ResourceRuleInfo};
use kas_registry::ResourceDescriptor;
use kas_registry::Scope;
use kas_registry::rest::options::WriteOptions;
use kas_registry::strategy::Creater;
use serde_json::{Value, json};

use super::{GROUP, answer, descriptor, install as review_install, not_served};
use crate::podspec::validation::json::str_of;

pub static DESCRIPTOR: ResourceDescriptor = descriptor(
    GROUP,
    "SelfSubjectRulesReview",
    "SelfSubjectRulesReviewList",
    "selfsubjectrulesreviews",
    "selfsubjectrulesreview",
    Scope::Cluster,
    &kas_api::authorization::v1::SELF_SUBJECT_RULES_REVIEW,
);

pub fn install(opts: &crate::resources::ResourceOptions) -> crate::resources::Install {
    review_install(
        &DESCRIPTOR,
        SelfSubjectRulesReviews {
            rule_resolver: opts.reviewers.rule_resolver.clone(),
        },
    )
}

pub struct SelfSubjectRulesReviews {
    pub rule_resolver: Option<DynRuleResolver>,
}

#[async_trait]
impl Creater for SelfSubjectRulesReviews {
    async fn create(
        &self,
        _: &str,
        review: Value,
        opts: &WriteOptions,
    ) -> kas_registry::Result<Value> {
        let resolver = self.rule_resolver.as_ref().ok_or_else(not_served)?;
        let Some(user) = &opts.user else {
            return Err(Status::bad_request("no user present on request").into());
        };
        let spec = review.get("spec").unwrap_or(&Value::Null);
        let namespace = str_of(spec, "namespace");
        if namespace.is_empty() {
            return Err(Status::bad_request("no namespace on request").into());
        }
        let rules = resolver.rules_for(user, namespace).await;
        let status = json!({
            "resourceRules": rules.resource_rules.iter().map(resource_rule).collect::<Vec<_>>(),
            "nonResourceRules":
                rules.non_resource_rules.iter().map(non_resource_rule).collect::<Vec<_>>(),
            "incomplete": rules.incomplete,
            "evaluationError": rules.evaluation_error,
        });
        let fresh = json!({
            "apiVersion": DESCRIPTOR.api_version(),
            "kind": DESCRIPTOR.kind,
            "metadata": {},
            "spec": {},
        });
        Ok(answer(
            fresh,
            status,
            &kas_api::authorization::v1::SELF_SUBJECT_RULES_REVIEW,
        ))
    }
}

/// Upstream's `getResourceRules`, one rule.
fn resource_rule(info: &ResourceRuleInfo) -> Value {
    json!({
        "verbs": info.verbs,
        "apiGroups": info.api_groups,
        "resources": info.resources,
        "resourceNames": info.resource_names,
    })
}

/// Upstream's `getNonResourceRules`, one rule.
fn non_resource_rule(info: &NonResourceRuleInfo) -> Value {
    json!({"verbs": info.verbs, "nonResourceURLs": info.non_resource_urls})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::authorization::testing::{FakeResolver, invalid_message};
    use kas_auth::UserInfo;
    use kas_auth::authorization::RulesInfo;
    use std::sync::Arc;
    use std::sync::Mutex;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| (*x).to_owned()).collect()
    }

    fn reviews() -> (SelfSubjectRulesReviews, Arc<FakeResolver>) {
        let fake = Arc::new(FakeResolver {
            rules: RulesInfo {
                resource_rules: vec![ResourceRuleInfo {
                    verbs: strings(&["get", "list"]),
                    api_groups: strings(&[""]),
                    resources: strings(&["pods"]),
                    resource_names: vec![],
                }],
                non_resource_rules: vec![NonResourceRuleInfo {
                    verbs: strings(&["get"]),
                    non_resource_urls: strings(&["/healthz"]),
                }],
                incomplete: true,
                evaluation_error: "role missing".into(),
            },
            seen: Mutex::new(None),
        });
        let resolver: DynRuleResolver = fake.clone();
        let reviews = SelfSubjectRulesReviews {
            rule_resolver: Some(resolver),
        };
        (reviews, fake)
    }

    fn alice() -> WriteOptions {
        WriteOptions {
            user: Some(UserInfo {
                name: "alice".into(),
                ..UserInfo::default()
            }),
            ..WriteOptions::default()
        }
    }

    #[tokio::test]
    async fn answers_the_rules_of_the_requesting_user() {
        let (reviews, fake) = reviews();
        let review = json!({"metadata": {"managedFields": []}, "spec": {"namespace": "ns"}});
        let got = reviews.create("", review, &alice()).await.unwrap();
        assert_eq!(
            got,
            json!({
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SelfSubjectRulesReview",
                "metadata": {"creationTimestamp": null},
                "spec": {},
                "status": {
                    "resourceRules": [
                        {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}
                    ],
                    "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
                    "incomplete": true,
                    "evaluationError": "role missing",
                }
            })
        );
        let (user, ns) = fake.seen.lock().unwrap().clone().unwrap();
        assert_eq!((user.name.as_str(), ns.as_str()), ("alice", "ns"));
    }

    #[tokio::test]
    async fn a_namespace_and_a_user_are_required() {
        let (reviews, _) = reviews();
        let err = reviews
            .create("", json!({"spec": {}}), &alice())
            .await
            .err()
            .unwrap();
        assert_eq!(
            invalid_message(err),
            (400, "no namespace on request".to_owned())
        );
        let review = json!({"spec": {"namespace": "ns"}});
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
