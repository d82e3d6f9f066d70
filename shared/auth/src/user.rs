//! The authenticated user, after upstream's `user.Info`.

use std::collections::BTreeMap;

pub const ANONYMOUS_USER: &str = "system:anonymous";
pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
pub const ALL_AUTHENTICATED: &str = "system:authenticated";
pub const SYSTEM_PRIVILEGED_GROUP: &str = "system:masters";

/// Upstream's `user.DefaultInfo`. Travels as a request extension after authentication.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

/// The extra key under which authenticators record which credential authenticated the user.
pub const CREDENTIAL_ID_KEY: &str = "authentication.kubernetes.io/credential-id";
