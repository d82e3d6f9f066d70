//! The structured authorization configuration of `--authorization-config`: upstream's
//! `AuthorizationConfiguration` (`apiserver.config.k8s.io` `v1`, `v1beta1` and `v1alpha1`,
//! which 1.33 decodes alike), loaded as `pkg/apis/apiserver/load` loads it (strict, with
//! the versions' defaults), validated as `ValidateAuthorizationConfiguration` and
//! kube-apiserver's `LoadAndValidateData` validate it ([`validation`]), the CEL of webhook
//! match conditions ([`cel`]), and the authorizer chain it builds, reloaded when the file
//! changes ([`reload`]).
//!
//! 1.33's `WebhookConfiguration` has no `cacheAuthorizedRequests` or
//! `cacheUnauthorizedRequests` (1.34 added them): they are unknown fields here, as there.

pub mod cel;
mod decode;
pub mod reload;
pub mod validation;

pub use decode::{load_from_data, load_from_file, read_file};
pub use reload::{ReloadableAuthorizer, WebhookFactory, new_for_config};
pub use validation::{load_and_validate_data, validate_authorization_configuration};

use kas_apimachinery::golang::time::Duration;

/// The API versions 1.33 decodes an `AuthorizationConfiguration` from.
pub const API_VERSIONS: &[&str] = &[
    "apiserver.config.k8s.io/v1",
    "apiserver.config.k8s.io/v1beta1",
    "apiserver.config.k8s.io/v1alpha1",
];

pub const TYPE_WEBHOOK: &str = "Webhook";
pub const FAILURE_POLICY_NO_OPINION: &str = "NoOpinion";
pub const FAILURE_POLICY_DENY: &str = "Deny";
pub const CONNECTION_INFO_KUBECONFIG_FILE: &str = "KubeConfigFile";
pub const CONNECTION_INFO_IN_CLUSTER: &str = "InClusterConfig";

/// Upstream's internal `AuthorizationConfiguration`, after the versions' defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuthorizationConfiguration {
    pub authorizers: Vec<AuthorizerConfiguration>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuthorizerConfiguration {
    /// `type`: `Webhook`, `Node`, `RBAC`, `AlwaysAllow`, `AlwaysDeny` (or `ABAC`).
    pub authorizer_type: String,
    pub name: String,
    pub webhook: Option<WebhookConfiguration>,
}

/// Upstream's `WebhookConfiguration`; durations as Go's (signed nanoseconds).
#[derive(Clone, Debug, PartialEq)]
pub struct WebhookConfiguration {
    /// Defaults to 5m when zero.
    pub authorized_ttl: Duration,
    /// Defaults to 30s when zero.
    pub unauthorized_ttl: Duration,
    pub timeout: Duration,
    pub subject_access_review_version: String,
    pub match_condition_subject_access_review_version: String,
    pub failure_policy: String,
    pub connection_info: WebhookConnectionInfo,
    pub match_conditions: Vec<WebhookMatchCondition>,
}

impl Default for WebhookConfiguration {
    /// The zero value (before the versions' defaults).
    fn default() -> Self {
        WebhookConfiguration {
            authorized_ttl: Duration(0),
            unauthorized_ttl: Duration(0),
            timeout: Duration(0),
            subject_access_review_version: String::new(),
            match_condition_subject_access_review_version: String::new(),
            failure_policy: String::new(),
            connection_info: WebhookConnectionInfo::default(),
            match_conditions: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct WebhookConnectionInfo {
    pub connection_type: String,
    /// `None` when unset (a nil pointer upstream), `Some("")` when set empty.
    pub kube_config_file: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct WebhookMatchCondition {
    pub expression: String,
}

pub use kas_apimachinery::golang::time::duration_string;
