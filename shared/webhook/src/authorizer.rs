//! Upstream's webhook authorizer (`plugin/pkg/authorizer/webhook`): a request's attributes
//! are sent as a SubjectAccessReview (`authorization.k8s.io/v1` or `v1beta1`); the status
//! allows, denies or has no opinion, with a reason. Answers are remembered by the review's
//! spec: allowed ones for the authorized TTL, the others for the unauthorized TTL. A failed
//! call is an error: with the failure policy `NoOpinion` (the flags' webhook) upstream's no
//! opinion with the error (the filter's 500 unless another authorizer allows), with `Deny`
//! kas-auth's `DeniedOnError` (the chain stops there). A webhook of
//! `--authorization-config` may have a name and match conditions (CEL over the review's
//! spec, asked before the call: a false one skips the webhook, an error is a failure).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use kas_apimachinery::fields::{Operator, parse_selector};
use kas_auth::UserInfo;
use kas_auth::authorization::config::cel::Matcher;
use kas_auth::authorization::config::{
    AuthorizerConfiguration, CONNECTION_INFO_KUBECONFIG_FILE, FAILURE_POLICY_DENY,
    FAILURE_POLICY_NO_OPINION,
};
use kas_auth::authorization::{Attributes, Authorizer, Decision, RuleResolver, RulesInfo};
use serde::Serialize;
use serde_json::Value;

use crate::generic::{Backoff, GenericWebhook};
use crate::review::{self, Field};
use crate::{Error, Result};

/// Upstream's `maxControlledAttrCacheSize`: longer requester-controlled attributes are
/// never cached.
const MAX_CONTROLLED_ATTR_CACHE_SIZE: usize = 10000;

/// Upstream's LRU holds 8192 answers.
const CACHE_CAPACITY: usize = 8192;

/// Upstream's `RulesFor` error.
pub const RULES_NOT_SUPPORTED: &str = "webhook authorizer does not support user rule resolution";

/// The SubjectAccessReview version sent (`--authorization-webhook-version`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubjectAccessReviewVersion {
    V1,
    V1beta1,
}

impl SubjectAccessReviewVersion {
    pub fn parse(version: &str) -> Result<SubjectAccessReviewVersion> {
        match version {
            "v1" => Ok(SubjectAccessReviewVersion::V1),
            "v1beta1" => Ok(SubjectAccessReviewVersion::V1beta1),
            other => Err(Error::Config(format!(
                "unsupported webhook authorizer version {}, supported versions are \"v1\", \"v1beta1\"",
                kas_apimachinery::golang::strconv::quote(other)
            ))),
        }
    }
}

/// `SubjectAccessReviewSpec` in Go's field order; `groups` is `group` in v1beta1.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Spec {
    #[serde(rename = "resourceAttributes", skip_serializing_if = "Option::is_none")]
    resource_attributes: Option<ResourceAttributes>,
    #[serde(
        rename = "nonResourceAttributes",
        skip_serializing_if = "Option::is_none"
    )]
    non_resource_attributes: Option<NonResourceAttributes>,
    #[serde(skip_serializing_if = "String::is_empty")]
    user: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    groups: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    extra: BTreeMap<String, Vec<String>>,
    #[serde(skip_serializing_if = "String::is_empty")]
    uid: String,
}

#[derive(Clone, Debug, Default, Serialize)]
struct ResourceAttributes {
    #[serde(skip_serializing_if = "String::is_empty")]
    namespace: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    verb: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    resource: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    subresource: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(rename = "fieldSelector", skip_serializing_if = "Option::is_none")]
    field_selector: Option<FieldSelectorAttributes>,
    #[serde(rename = "labelSelector", skip_serializing_if = "Option::is_none")]
    label_selector: Option<LabelSelectorAttributes>,
}

#[derive(Clone, Debug, Default, Serialize)]
struct LabelSelectorAttributes {
    requirements: Vec<LabelSelectorRequirement>,
}

#[derive(Clone, Debug, Serialize)]
struct LabelSelectorRequirement {
    key: String,
    operator: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    values: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
struct FieldSelectorAttributes {
    requirements: Vec<FieldSelectorRequirement>,
}

#[derive(Clone, Debug, Serialize)]
struct FieldSelectorRequirement {
    key: String,
    operator: &'static str,
    values: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
struct NonResourceAttributes {
    #[serde(skip_serializing_if = "String::is_empty")]
    path: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    verb: String,
}

/// The v1beta1 spec: the same fields, `groups` written `group`.
#[derive(Serialize)]
struct SpecV1beta1<'a> {
    #[serde(rename = "resourceAttributes", skip_serializing_if = "Option::is_none")]
    resource_attributes: &'a Option<ResourceAttributes>,
    #[serde(
        rename = "nonResourceAttributes",
        skip_serializing_if = "Option::is_none"
    )]
    non_resource_attributes: &'a Option<NonResourceAttributes>,
    #[serde(skip_serializing_if = "String::is_empty")]
    user: &'a String,
    #[serde(rename = "group", skip_serializing_if = "Vec::is_empty")]
    groups: &'a Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    extra: &'a BTreeMap<String, Vec<String>>,
    #[serde(skip_serializing_if = "String::is_empty")]
    uid: &'a String,
}

#[derive(Serialize)]
struct Review<S: Serialize> {
    kind: &'static str,
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    metadata: review::EmptyMeta,
    spec: S,
    status: ZeroStatus,
}

/// A zero `SubjectAccessReviewStatus`: `allowed` has no `omitempty`.
#[derive(Serialize)]
struct ZeroStatus {
    allowed: bool,
}

/// The answer's `SubjectAccessReviewStatus`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    pub allowed: bool,
    pub denied: bool,
    pub reason: String,
    pub evaluation_error: String,
}

/// Upstream's `GetFieldSelector` and `fieldSelectorToAuthorizationAPI`: `=`, `==` (and
/// `in`) as `In`, `!=` (and `notin`) as `NotIn`, each with its one value; an unparsable
/// selector sends none.
fn field_selector(raw: &str) -> Option<FieldSelectorAttributes> {
    if raw.is_empty() {
        return None;
    }
    let requirements: Vec<FieldSelectorRequirement> = parse_selector(raw)
        .ok()?
        .requirements()
        .into_iter()
        .filter_map(|r| {
            let operator = match r.operator {
                Operator::Equals | Operator::DoubleEquals | Operator::In => "In",
                Operator::NotEquals | Operator::NotIn => "NotIn",
                _ => return None,
            };
            Some(FieldSelectorRequirement {
                key: r.field,
                operator,
                values: vec![r.value],
            })
        })
        .collect();
    (!requirements.is_empty()).then_some(FieldSelectorAttributes { requirements })
}

/// Upstream's `GetLabelSelector` and `labelSelectorToAuthorizationAPI`: `=`, `==` and `in`
/// as `In`, `!=` and `notin` as `NotIn` (values sorted), `Exists`, `DoesNotExist`; `gt` and
/// `lt` are not sent, nor is an unparsable selector.
fn label_selector(raw: &str) -> Option<LabelSelectorAttributes> {
    use kas_apimachinery::selection::Operator as Op;
    if raw.is_empty() {
        return None;
    }
    let selector = kas_apimachinery::labels::parse(raw).ok()?;
    let requirements: Vec<LabelSelectorRequirement> = selector
        .requirements()
        .unwrap_or_default()
        .iter()
        .filter_map(|r| {
            let operator = match r.operator() {
                Op::Equals | Op::DoubleEquals | Op::In => "In",
                Op::NotEquals | Op::NotIn => "NotIn",
                Op::Exists => "Exists",
                Op::DoesNotExist => "DoesNotExist",
                Op::GreaterThan | Op::LessThan => return None,
            };
            let mut values = r.values().to_vec();
            values.sort();
            values.dedup();
            Some(LabelSelectorRequirement {
                key: r.key().to_owned(),
                operator,
                values,
            })
        })
        .collect();
    (!requirements.is_empty()).then_some(LabelSelectorAttributes { requirements })
}

/// The review's spec for `attrs` (upstream's `Authorize` before the call).
pub fn spec_for(attrs: &Attributes) -> Spec {
    let UserInfo {
        name,
        uid,
        groups,
        extra,
    } = attrs.user.clone();
    let mut spec = Spec {
        user: name,
        uid,
        groups,
        extra,
        ..Spec::default()
    };
    if attrs.is_resource_request {
        spec.resource_attributes = Some(ResourceAttributes {
            namespace: attrs.namespace.clone(),
            verb: attrs.verb.clone(),
            group: attrs.api_group.clone(),
            version: attrs.api_version.clone(),
            resource: attrs.resource.clone(),
            subresource: attrs.subresource.clone(),
            name: attrs.name.clone(),
            field_selector: field_selector(&attrs.field_selector),
            label_selector: label_selector(&attrs.label_selector),
        });
    } else {
        spec.non_resource_attributes = Some(NonResourceAttributes {
            path: attrs.path.clone(),
            verb: attrs.verb.clone(),
        });
    }
    spec
}

/// Upstream's `shouldCache`.
fn should_cache(attrs: &Attributes) -> bool {
    let size = attrs.namespace.len()
        + attrs.verb.len()
        + attrs.api_group.len()
        + attrs.api_version.len()
        + attrs.resource.len()
        + attrs.subresource.len()
        + attrs.name.len()
        + attrs.path.len();
    size < MAX_CONTROLLED_ATTR_CACHE_SIZE
}

pub struct WebhookAuthorizer {
    webhook: GenericWebhook,
    version: SubjectAccessReviewVersion,
    authorized_ttl: Duration,
    unauthorized_ttl: Duration,
    /// By the spec's JSON: when the answer expires, and the answer.
    cache: Mutex<HashMap<String, (Instant, Status)>>,
    /// Upstream's `decisionOnError`: NoOpinion or Deny.
    decision_on_error: Decision,
    matcher: Option<Matcher>,
    name: String,
}

impl WebhookAuthorizer {
    pub fn new(
        webhook: GenericWebhook,
        version: SubjectAccessReviewVersion,
        authorized_ttl: Duration,
        unauthorized_ttl: Duration,
    ) -> WebhookAuthorizer {
        WebhookAuthorizer {
            webhook,
            version,
            authorized_ttl,
            unauthorized_ttl,
            cache: Mutex::new(HashMap::new()),
            decision_on_error: Decision::NoOpinion,
            matcher: None,
            name: String::new(),
        }
    }

    /// The decision a failure (a failed call, a match condition's error) stands for:
    /// `Decision::Deny` makes it kas-auth's `DeniedOnError`.
    pub fn with_decision_on_error(mut self, decision: Decision) -> WebhookAuthorizer {
        self.decision_on_error = decision;
        self
    }

    /// Match conditions, asked before each call.
    pub fn with_match_conditions(mut self, matcher: Option<Matcher>) -> WebhookAuthorizer {
        self.matcher = matcher;
        self
    }

    /// The webhook's name in the configuration, which its log lines carry.
    pub fn with_name(mut self, name: &str) -> WebhookAuthorizer {
        self.name = name.to_owned();
        self
    }

    /// A failure as the failure policy decides it.
    fn failure(&self, message: String) -> kas_auth::Error {
        let err = kas_auth::Error::Webhook(message);
        match self.decision_on_error {
            Decision::Deny => kas_auth::Error::DeniedOnError(Box::new(err)),
            _ => err,
        }
    }

    /// The body posted for `spec`.
    pub fn review_body(&self, spec: &Spec) -> Vec<u8> {
        let status = ZeroStatus { allowed: false };
        let metadata = review::EmptyMeta::default();
        let kind = "SubjectAccessReview";
        match self.version {
            SubjectAccessReviewVersion::V1 => review::encode(&Review {
                kind,
                api_version: "authorization.k8s.io/v1",
                metadata,
                spec,
                status,
            }),
            SubjectAccessReviewVersion::V1beta1 => review::encode(&Review {
                kind,
                api_version: "authorization.k8s.io/v1beta1",
                metadata,
                spec: SpecV1beta1 {
                    resource_attributes: &spec.resource_attributes,
                    non_resource_attributes: &spec.non_resource_attributes,
                    user: &spec.user,
                    groups: &spec.groups,
                    extra: &spec.extra,
                    uid: &spec.uid,
                },
                status,
            }),
        }
    }

    fn cached(&self, key: &str) -> Option<Status> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let (expires, status) = cache.get(key)?;
        (Instant::now() < *expires).then(|| status.clone())
    }

    fn remember(&self, key: String, status: &Status) {
        let ttl = match status.allowed {
            true => self.authorized_ttl,
            false => self.unauthorized_ttl,
        };
        if ttl.is_zero() {
            return;
        }
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= CACHE_CAPACITY {
            let now = Instant::now();
            cache.retain(|_, (expires, _)| now < *expires);
            if cache.len() >= CACHE_CAPACITY {
                cache.clear();
            }
        }
        cache.insert(key, (Instant::now() + ttl, status.clone()));
    }

    /// The answer for `spec`: remembered, or asked for (and remembered when `cache`).
    async fn review(&self, spec: &Spec, cache: bool) -> Result<Status> {
        let key = String::from_utf8(review::encode(spec)).unwrap_or_default();
        if let Some(status) = self.cached(&key) {
            return Ok(status);
        }
        let answer = self.webhook.post(&self.review_body(spec)).await?;
        let status = decode_status(&answer).map_err(Error::Decode)?;
        if cache {
            self.remember(key, &status);
        }
        Ok(status)
    }
}

/// The answer's `status`, with Go's decoding errors for fields of the wrong type.
pub fn decode_status(answer: &Value) -> Result<Status, String> {
    let Some(status) = review::field(answer, &Field::root("SubjectAccessReview", "status"))? else {
        return Ok(Status::default());
    };
    let at = |name: &'static str| Field::nested("SubjectAccessReviewStatus", "status", name);
    Ok(Status {
        allowed: review::boolean(status, &at("allowed"))?,
        denied: review::boolean(status, &at("denied"))?,
        reason: review::string(status, &at("reason"))?,
        evaluation_error: review::string(status, &at("evaluationError"))?,
    })
}

impl Authorizer for WebhookAuthorizer {
    fn authorize<'a>(
        &'a self,
        attrs: &'a Attributes,
    ) -> BoxFuture<'a, kas_auth::Result<(Decision, String)>> {
        Box::pin(async move {
            let spec = spec_for(attrs);
            if let Some(matcher) = &self.matcher {
                let json = serde_json::to_value(&spec).unwrap_or_default();
                match matcher.eval(&json) {
                    Ok(true) => {}
                    Ok(false) => return Ok((Decision::NoOpinion, String::new())),
                    Err(err) => return Err(self.failure(err)),
                }
            }
            let status = match self.review(&spec, should_cache(attrs)).await {
                Ok(status) => status,
                Err(err) => {
                    tracing::error!(error = %err, name = %self.name, "Failed to make webhook authorizer request");
                    return Err(self.failure(err.to_string()));
                }
            };
            match (status.allowed, status.denied) {
                // Upstream's Deny with this error: the chain stops, the filter's 500.
                (true, true) => Err(kas_auth::Error::DeniedOnError(Box::new(
                    kas_auth::Error::Webhook(
                        "webhook subject access review returned both allow and deny response"
                            .to_owned(),
                    ),
                ))),
                (_, true) => Ok((Decision::Deny, status.reason)),
                (true, _) => Ok((Decision::Allow, status.reason)),
                _ => Ok((Decision::NoOpinion, status.reason)),
            }
        })
    }
}

/// Upstream's `RulesFor`: nothing, incomplete, with its error.
impl RuleResolver for WebhookAuthorizer {
    fn rules_for<'a>(&'a self, _: &'a UserInfo, _: &'a str) -> BoxFuture<'a, RulesInfo> {
        Box::pin(std::future::ready(RulesInfo {
            incomplete: true,
            evaluation_error: RULES_NOT_SUPPORTED.to_owned(),
            ..RulesInfo::default()
        }))
    }
}

/// kube-apiserver's webhook mode from its flags: the kubeconfig at `config_file`, the
/// SubjectAccessReview `version`, the TTLs (zero: not cached), no opinion on failure.
pub fn new_from_flags(
    config_file: &Path,
    version: &str,
    authorized_ttl: Duration,
    unauthorized_ttl: Duration,
    retry_backoff: Backoff,
) -> Result<Arc<WebhookAuthorizer>> {
    let config = crate::kubeconfig::load(config_file)?;
    let version = SubjectAccessReviewVersion::parse(version)?;
    let webhook = GenericWebhook::new(config, retry_backoff)?;
    Ok(Arc::new(WebhookAuthorizer::new(
        webhook,
        version,
        authorized_ttl,
        unauthorized_ttl,
    )))
}

/// A webhook of `--authorization-config` (kube-apiserver's `newForConfig`): its kubeconfig,
/// its timeout when set, its SubjectAccessReview version, TTLs, failure policy, match
/// conditions and name. The configuration was validated; `InClusterConfig` is refused
/// (kube-apiserver 1.33 dereferences the absent kubeconfig path and panics).
pub fn new_from_config(
    a: &AuthorizerConfiguration,
    retry_backoff: Backoff,
) -> Result<Arc<WebhookAuthorizer>> {
    let Some(w) = &a.webhook else {
        return Err(Error::Config(format!(
            "authorizer {} of type Webhook has no webhook configuration",
            kas_apimachinery::golang::strconv::quote(&a.name)
        )));
    };
    let file = match (
        &w.connection_info.connection_type[..],
        &w.connection_info.kube_config_file,
    ) {
        (CONNECTION_INFO_KUBECONFIG_FILE, Some(file)) => file,
        (t, _) => {
            return Err(Error::Config(format!(
                "authorizer {}: webhook connectionInfo type {} is not supported",
                kas_apimachinery::golang::strconv::quote(&a.name),
                kas_apimachinery::golang::strconv::quote(t)
            )));
        }
    };
    let mut config = crate::kubeconfig::load(Path::new(file))?;
    if let Some(timeout) = w.timeout.to_std().filter(|t| !t.is_zero()) {
        config.timeout = timeout;
    }
    let decision_on_error = match &w.failure_policy[..] {
        FAILURE_POLICY_NO_OPINION => Decision::NoOpinion,
        FAILURE_POLICY_DENY => Decision::Deny,
        other => {
            return Err(Error::Config(format!(
                "unknown failurePolicy {}",
                kas_apimachinery::golang::strconv::quote(other)
            )));
        }
    };
    let (matcher, errs) = kas_auth::authorization::config::cel::compile_match_conditions(
        &w.match_conditions,
        &kas_apimachinery::validation::field::Path::nil(),
    );
    if let Some(message) = kas_apimachinery::validation::field::aggregate_message(&errs) {
        return Err(Error::Config(message));
    }
    let version = SubjectAccessReviewVersion::parse(&w.subject_access_review_version)?;
    let webhook = GenericWebhook::new(config, retry_backoff)?;
    let ttl = |d: kas_apimachinery::golang::time::Duration| d.to_std().unwrap_or_default();
    Ok(Arc::new(
        WebhookAuthorizer::new(
            webhook,
            version,
            ttl(w.authorized_ttl),
            ttl(w.unauthorized_ttl),
        )
        .with_decision_on_error(decision_on_error)
        .with_match_conditions(matcher)
        .with_name(&a.name),
    ))
}

#[cfg(test)]
mod config_tests;
#[cfg(test)]
mod tests;
