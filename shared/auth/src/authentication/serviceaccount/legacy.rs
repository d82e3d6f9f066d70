//! Secret-based (legacy) service-account tokens, after upstream's `legacy.go`: their
//! claims and `legacyValidator.Validate`, with lookup (upstream's default) or without,
//! and the audit annotations and warning it makes. The last-used label upstream writes
//! on the secret is not kept here.

use serde::Deserialize;

use super::claims::{PublicClaims, nullable};
use super::lookup::{ServiceAccountLookup, not_found};
use super::{ServiceAccountInfo, split_username};
use crate::authentication::Notes;

/// The issuer of secret-based tokens.
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";
/// The label the legacy-token cleaner puts on a secret whose token it invalidated.
pub const INVALID_SINCE_LABEL_KEY: &str = "kubernetes.io/legacy-token-invalid-since";

/// Upstream's `legacyPrivateClaims`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct LegacyPrivateClaims {
    #[serde(
        rename = "kubernetes.io/serviceaccount/service-account.name",
        deserialize_with = "nullable"
    )]
    pub service_account_name: String,
    #[serde(
        rename = "kubernetes.io/serviceaccount/service-account.uid",
        deserialize_with = "nullable"
    )]
    pub service_account_uid: String,
    #[serde(
        rename = "kubernetes.io/serviceaccount/secret.name",
        deserialize_with = "nullable"
    )]
    pub secret_name: String,
    #[serde(
        rename = "kubernetes.io/serviceaccount/namespace",
        deserialize_with = "nullable"
    )]
    pub namespace: String,
}

/// Upstream's `legacyValidator.Validate`: the claims are complete; with `lookup`, the
/// secret exists, is not being deleted and holds this very token, the service account
/// exists with the claimed UID, and the secret is not marked invalid. With `lookup`, the
/// secret's name is noted for the audit event, as auto-generated (with upstream's
/// warning) when the service account lists it, else as manual.
pub async fn validate(
    lookup: Option<&dyn ServiceAccountLookup>,
    token: &str,
    public: &PublicClaims,
    private: &LegacyPrivateClaims,
    notes: &mut Notes,
) -> Result<ServiceAccountInfo, String> {
    let required = [
        (public.subject.as_str(), "sub claim is missing"),
        (&private.namespace, "namespace claim is missing"),
        (&private.secret_name, "secretName claim is missing"),
        (
            &private.service_account_name,
            "serviceAccountName claim is missing",
        ),
        (
            &private.service_account_uid,
            "serviceAccountUID claim is missing",
        ),
    ];
    if let Some((_, missing)) = required.iter().find(|(v, _)| v.is_empty()) {
        return Err((*missing).to_owned());
    }
    let namespace = private.namespace.as_str();
    let sa_name = private.service_account_name.as_str();
    match split_username(&public.subject) {
        Ok((ns, name)) if ns == namespace && name == sa_name => {}
        _ => return Err("sub claim is invalid".to_owned()),
    }
    let info = ServiceAccountInfo {
        namespace: private.namespace.clone(),
        name: private.service_account_name.clone(),
        uid: private.service_account_uid.clone(),
        ..Default::default()
    };
    let Some(lookup) = lookup else {
        return Ok(info);
    };
    let invalidated = || "Token has been invalidated".to_owned();
    let secret = match lookup.secret(namespace, &private.secret_name).await {
        Ok(Some(secret)) => secret,
        _ => return Err(invalidated()),
    };
    if secret.deletion_timestamp.is_some() {
        return Err(invalidated());
    }
    let stored = secret.token.as_deref().unwrap_or_default();
    if !constant_time_eq(stored, token.as_bytes()) {
        return Err("Token does not match server's copy".to_owned());
    }
    let sa = lookup
        .service_account(namespace, sa_name)
        .await?
        .ok_or_else(|| not_found("serviceaccounts", sa_name))?;
    if sa.deletion_timestamp.is_some() {
        return Err(format!(
            "ServiceAccount {namespace}/{sa_name} has been deleted"
        ));
    }
    if sa.uid != private.service_account_uid {
        return Err(format!(
            "ServiceAccount UID ({}) does not match claim ({})",
            sa.uid, private.service_account_uid
        ));
    }
    let secret_name = private.secret_name.as_str();
    if secret
        .labels
        .get(INVALID_SINCE_LABEL_KEY)
        .is_some_and(|v| !v.is_empty())
    {
        notes.annotate(
            "authentication.k8s.io/legacy-token-invalidated",
            format!("{secret_name}/{namespace}"),
        );
        return Err(format!(
            "the token in secret {namespace}/{} for service account {namespace}/{sa_name} has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '{INVALID_SINCE_LABEL_KEY}' label from the secret to temporarily allow use of this token",
            private.secret_name
        ));
    }
    if sa.secret_names.iter().any(|n| n == secret_name) {
        notes.warn(AUTO_GENERATED_WARNING);
        notes.annotate(
            "authentication.k8s.io/legacy-token-autogenerated-secret",
            secret_name,
        );
    } else {
        notes.annotate(
            "authentication.k8s.io/legacy-token-manual-secret",
            secret_name,
        );
    }
    Ok(info)
}

/// Upstream's warning for a token from a secret its service account lists.
pub const AUTO_GENERATED_WARNING: &str = "Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens.";

/// Go's `subtle.ConstantTimeCompare` as a boolean.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
