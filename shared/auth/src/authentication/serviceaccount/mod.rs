//! Service-account tokens, after upstream's `pkg/serviceaccount` (signing keys, JWT
//! generation, the claims of bound and legacy tokens and their validation, OIDC discovery
//! documents) and k8s.io/apiserver's `authentication/serviceaccount` (user names and the
//! resulting user).
//!
//! Policy only: the objects a token is bound to are read through [`ServiceAccountLookup`],
//! which the role implements over its storage or its delegate.

pub mod authenticator;
pub mod claims;
pub mod generator;
pub mod jwt;
pub mod keys;
pub mod legacy;
pub mod lookup;
pub mod openidmetadata;
pub mod storage_lookup;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::UserInfo;
use crate::user::CREDENTIAL_ID_KEY;

pub use authenticator::JwtTokenAuthenticator;
pub use claims::{BoundObject, ObjectRef, TokenClaims, claims};
pub use generator::TokenGenerator;
pub use keys::{PrivateKey, PublicKey, private_key_from_file, public_keys_from_file};
pub use legacy::LEGACY_ISSUER;
pub use lookup::{LookupObject, LookupResult, ServiceAccountLookup};
pub use openidmetadata::OpenIdMetadata;
pub use storage_lookup::StorageLookup;

pub const SERVICE_ACCOUNT_USERNAME_PREFIX: &str = "system:serviceaccount:";
pub const SERVICE_ACCOUNT_USERNAME_SEPARATOR: &str = ":";
pub const SERVICE_ACCOUNT_GROUP_PREFIX: &str = "system:serviceaccounts:";
pub const ALL_SERVICE_ACCOUNTS_GROUP: &str = "system:serviceaccounts";
/// The audit annotation naming the credential a TokenRequest issued.
pub const ISSUED_CREDENTIAL_ID_AUDIT_ANNOTATION_KEY: &str =
    "authentication.kubernetes.io/issued-credential-id";
pub const POD_NAME_KEY: &str = "authentication.kubernetes.io/pod-name";
pub const POD_UID_KEY: &str = "authentication.kubernetes.io/pod-uid";
pub const NODE_NAME_KEY: &str = "authentication.kubernetes.io/node-name";
pub const NODE_UID_KEY: &str = "authentication.kubernetes.io/node-uid";

/// Upstream's `WarnOnlyBoundTokenExpirationSeconds`: the expiration admission gives
/// projected tokens, which `--service-account-extend-token-expiration` extends.
pub const WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS: i64 = 60 * 60 + 7;
/// Upstream's `ExpirationExtensionSeconds`: one year.
pub const EXPIRATION_EXTENSION_SECONDS: i64 = 24 * 365 * 60 * 60;

/// `system:serviceaccount:<namespace>:<name>`.
pub fn make_username(namespace: &str, name: &str) -> String {
    format!(
        "{SERVICE_ACCOUNT_USERNAME_PREFIX}{namespace}{SERVICE_ACCOUNT_USERNAME_SEPARATOR}{name}"
    )
}

/// Upstream's `SplitUsername`: the namespace and name of a service-account user name, both
/// valid names, or the error upstream gives.
pub fn split_username(username: &str) -> Result<(String, String), String> {
    let invalid = || {
        format!(
            "Username must be in the form {}",
            make_username("namespace", "name")
        )
    };
    let trimmed = username
        .strip_prefix(SERVICE_ACCOUNT_USERNAME_PREFIX)
        .ok_or_else(invalid)?;
    let parts: Vec<&str> = trimmed.split(SERVICE_ACCOUNT_USERNAME_SEPARATOR).collect();
    let [namespace, name] = parts[..] else {
        return Err(invalid());
    };
    use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_namespace_name};
    if !validate_namespace_name(namespace, false).is_empty()
        || !name_is_dns_subdomain(name, false).is_empty()
    {
        return Err(invalid());
    }
    Ok((namespace.to_owned(), name.to_owned()))
}

/// `system:serviceaccounts` and `system:serviceaccounts:<namespace>`.
pub fn make_group_names(namespace: &str) -> Vec<String> {
    vec![
        ALL_SERVICE_ACCOUNTS_GROUP.to_owned(),
        format!("{SERVICE_ACCOUNT_GROUP_PREFIX}{namespace}"),
    ]
}

/// Upstream's `CredentialIDForJTI`.
pub fn credential_id_for_jti(jti: &str) -> String {
    if jti.is_empty() {
        String::new()
    } else {
        format!("JTI={jti}")
    }
}

/// Upstream's `ServiceAccountInfo`: what a validated token says of its holder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceAccountInfo {
    pub name: String,
    pub namespace: String,
    pub uid: String,
    pub pod_name: String,
    pub pod_uid: String,
    pub credential_id: String,
    pub node_name: String,
    pub node_uid: String,
}

impl ServiceAccountInfo {
    /// Upstream's `ServiceAccountInfo.UserInfo`.
    pub fn user_info(&self) -> UserInfo {
        let mut extra = BTreeMap::new();
        if !self.pod_name.is_empty() && !self.pod_uid.is_empty() {
            extra.insert(POD_NAME_KEY.to_owned(), vec![self.pod_name.clone()]);
            extra.insert(POD_UID_KEY.to_owned(), vec![self.pod_uid.clone()]);
        }
        if !self.credential_id.is_empty() {
            extra.insert(
                CREDENTIAL_ID_KEY.to_owned(),
                vec![self.credential_id.clone()],
            );
        }
        if !self.node_name.is_empty() {
            extra.insert(NODE_NAME_KEY.to_owned(), vec![self.node_name.clone()]);
            if !self.node_uid.is_empty() {
                extra.insert(NODE_UID_KEY.to_owned(), vec![self.node_uid.clone()]);
            }
        }
        UserInfo {
            name: make_username(&self.namespace, &self.name),
            uid: self.uid.clone(),
            groups: make_group_names(&self.namespace),
            extra,
        }
    }
}
