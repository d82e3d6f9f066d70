//! The JWT part of upstream's `AuthenticationConfiguration` (`apiserver.config.k8s.io`,
//! `v1alpha1` and `v1beta1` as 1.33 serves them; both read the same JSON), and its
//! anonymous section.

use kas_apimachinery::golang::strconv::quote;
use serde::Deserialize;

/// The API versions 1.33 decodes an `AuthenticationConfiguration` from.
pub const API_VERSIONS: &[&str] = &[
    "apiserver.config.k8s.io/v1alpha1",
    "apiserver.config.k8s.io/v1beta1",
];

/// Upstream's `AuthenticationConfiguration`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AuthenticationConfiguration {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub jwt: Vec<JwtAuthenticator>,
    #[serde(default)]
    pub anonymous: Option<AnonymousAuthConfig>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AnonymousAuthConfig {
    #[serde(default)]
    pub enabled: bool,
    #[serde(default)]
    pub conditions: Vec<AnonymousAuthCondition>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AnonymousAuthCondition {
    #[serde(default)]
    pub path: String,
}

/// Upstream's `JWTAuthenticator`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JwtAuthenticator {
    #[serde(default)]
    pub issuer: Issuer,
    #[serde(default)]
    pub claim_validation_rules: Vec<ClaimValidationRule>,
    #[serde(default)]
    pub claim_mappings: ClaimMappings,
    #[serde(default)]
    pub user_validation_rules: Vec<UserValidationRule>,
}

/// The only `audienceMatchPolicy`.
pub const AUDIENCE_MATCH_POLICY_MATCH_ANY: &str = "MatchAny";

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Issuer {
    #[serde(default)]
    pub url: String,
    /// `discoveryURL`; empty when unset.
    #[serde(default, rename = "discoveryURL")]
    pub discovery_url: String,
    /// PEM bundle the provider's certificate is verified with; the system's roots when
    /// empty.
    #[serde(default)]
    pub certificate_authority: String,
    #[serde(default)]
    pub audiences: Vec<String>,
    #[serde(default)]
    pub audience_match_policy: String,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaimValidationRule {
    #[serde(default)]
    pub claim: String,
    #[serde(default)]
    pub required_value: String,
    #[serde(default)]
    pub expression: String,
    #[serde(default)]
    pub message: String,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaimMappings {
    #[serde(default)]
    pub username: PrefixedClaimOrExpression,
    #[serde(default)]
    pub groups: PrefixedClaimOrExpression,
    #[serde(default)]
    pub uid: ClaimOrExpression,
    #[serde(default)]
    pub extra: Vec<ExtraMapping>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PrefixedClaimOrExpression {
    #[serde(default)]
    pub claim: String,
    /// `None` when unset (a claim then needs it), `Some("")` to disable prefixing.
    #[serde(default)]
    pub prefix: Option<String>,
    #[serde(default)]
    pub expression: String,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaimOrExpression {
    #[serde(default)]
    pub claim: String,
    #[serde(default)]
    pub expression: String,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExtraMapping {
    #[serde(default)]
    pub key: String,
    #[serde(default)]
    pub value_expression: String,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UserValidationRule {
    #[serde(default)]
    pub expression: String,
    #[serde(default)]
    pub message: String,
}

impl AuthenticationConfiguration {
    /// Decodes a configuration (JSON, or YAML already turned into JSON) as upstream's strict
    /// decoder: the group and version must be served, the kind must match, unknown fields
    /// are errors.
    pub fn decode(data: serde_json::Value) -> Result<AuthenticationConfiguration, String> {
        let api_version = data
            .get("apiVersion")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned();
        let kind = data
            .get("kind")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned();
        if kind.is_empty() {
            return Err("Object 'Kind' is missing in config".to_owned());
        }
        if api_version.is_empty() {
            return Err("Object 'apiVersion' is missing in config".to_owned());
        }
        if !API_VERSIONS.contains(&api_version.as_str()) || kind != "AuthenticationConfiguration" {
            return Err(format!(
                "no kind {} is registered for version {} in scheme \"pkg/kubeapiserver/options/authentication.go\"",
                quote(&kind),
                quote(&api_version)
            ));
        }
        serde_json::from_value(data).map_err(|e| format!("strict decoding error: {e}"))
    }
}
