//! Bootstrap tokens (`--enable-bootstrap-token-auth`), after upstream's
//! `plugin/pkg/auth/authenticator/token/bootstrap`: a bearer token `<id>.<secret>` names the
//! Secret `kube-system/bootstrap-token-<id>` of type `bootstrap.kubernetes.io/token`; it
//! authenticates as `system:bootstrap:<id>` in `system:bootstrappers` (and the Secret's
//! `auth-extra-groups`) while the Secret holds that secret, is marked
//! `usage-bootstrap-authentication=true`, is not deleted and has not expired. Every
//! mismatch is no opinion, as upstream's (a bearer token no authenticator accepts is a 401).

use std::sync::Arc;

use base64::Engine as _;
use futures_util::future::BoxFuture;
use kas_storage::{GetOptions, Storage};
use serde_json::Value;

use super::{AuthRequest, Authenticator, Response};
use crate::{Error, Result, UserInfo};

const SECRET_PREFIX: &str = "bootstrap-token-";
const SECRET_TYPE: &str = "bootstrap.kubernetes.io/token";
const USER_PREFIX: &str = "system:bootstrap:";
const DEFAULT_GROUP: &str = "system:bootstrappers";

pub struct BootstrapTokenAuthenticator {
    storage: Arc<dyn Storage>,
}

impl BootstrapTokenAuthenticator {
    /// Reads the Secrets from `storage` under the core role's keys
    /// (`/secrets/kube-system/<name>`).
    pub fn new(storage: Arc<dyn Storage>) -> Self {
        BootstrapTokenAuthenticator { storage }
    }

    /// Upstream's `AuthenticateToken`.
    pub async fn authenticate_token(&self, token: &str) -> Result<Option<UserInfo>> {
        let Some((id, secret)) = parse_token(token) else {
            return Ok(None);
        };
        let key = format!("/secrets/kube-system/{SECRET_PREFIX}{id}");
        let opts = GetOptions {
            resource_version: None,
            ignore_not_found: true,
        };
        let stored = self
            .storage
            .get(&key, &opts)
            .await
            .map_err(|e| Error::Storage(e.to_string()))?;
        let Some(stored) = stored else {
            return Ok(None);
        };
        let object = stored.value().map_err(|e| Error::Storage(e.to_string()))?;
        Ok(user_of(&object, id, secret, std::time::SystemTime::now()))
    }
}

/// Upstream's `ParseToken`: `^([a-z0-9]{6})\.([a-z0-9]{16})$`.
fn parse_token(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.split_once('.')?;
    let valid = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    (valid(id, 6) && valid(secret, 16)).then_some((id, secret))
}

/// A data value of the Secret, decoded (upstream's `GetData`: empty when absent).
fn data(secret: &Value, key: &str) -> String {
    secret
        .pointer(&format!("/data/{key}"))
        .and_then(Value::as_str)
        .and_then(|v| base64::engine::general_purpose::STANDARD.decode(v).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// Upstream's `GetGroups`: `system:bootstrappers` and each of `auth-extra-groups`, which
/// must be `system:bootstrappers:<name>`; sorted and unique (a `sets.String`).
fn groups(secret: &Value) -> Option<Vec<String>> {
    let mut groups = std::collections::BTreeSet::from([DEFAULT_GROUP.to_owned()]);
    let extra = data(secret, "auth-extra-groups");
    for group in extra
        .split(',')
        .filter(|g| !extra.is_empty() || !g.is_empty())
    {
        let name = group.strip_prefix("system:bootstrappers:")?;
        let valid = !name.is_empty()
            && name.len() <= 256
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b':' || b == b'-')
            && name
                .bytes()
                .last()
                .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if !valid {
            return None;
        }
        groups.insert(group.to_owned());
    }
    Some(groups.into_iter().collect())
}

/// Upstream's `HasExpired`: an `expiration` that does not parse counts as expired.
fn expired(secret: &Value, now: std::time::SystemTime) -> bool {
    let raw = data(secret, "expiration");
    if raw.is_empty() {
        return false;
    }
    let Some(at) = kas_apimachinery::golang::time::parse_rfc3339(&raw) else {
        return true;
    };
    let since_epoch = now
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let now = (
        since_epoch.as_secs() as i64,
        since_epoch.subsec_nanos() as i64,
    );
    now > (at.seconds, i64::from(at.nanos))
}

/// The user `secret` makes of token `<id>.<token_secret>`, when it accepts it.
fn user_of(
    secret: &Value,
    id: &str,
    token_secret: &str,
    now: std::time::SystemTime,
) -> Option<UserInfo> {
    if secret
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
    {
        return None;
    }
    if secret.get("type").and_then(Value::as_str) != Some(SECRET_TYPE)
        || secret.get("data").is_none()
    {
        return None;
    }
    let stored = data(secret, "token-secret");
    let matches = aws_lc_rs::constant_time::verify_slices_are_equal(
        stored.as_bytes(),
        token_secret.as_bytes(),
    )
    .is_ok();
    if !matches || data(secret, "token-id") != id || expired(secret, now) {
        return None;
    }
    if data(secret, "usage-bootstrap-authentication") != "true" {
        return None;
    }
    Some(UserInfo {
        name: format!("{USER_PREFIX}{id}"),
        groups: groups(secret)?,
        ..UserInfo::default()
    })
}

impl Authenticator for BootstrapTokenAuthenticator {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Response>>> {
        Box::pin(async move {
            let Some(token) = super::bearer_token(req) else {
                return Ok(None);
            };
            Ok(self.authenticate_token(&token).await?.map(Response::bearer))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use serde_json::json;

    use super::*;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    fn secret(extra: &[(&str, &str)]) -> Value {
        let mut data = serde_json::Map::new();
        for (k, v) in [
            ("token-id", "abcdef"),
            ("token-secret", "0123456789abcdef"),
            ("usage-bootstrap-authentication", "true"),
        ]
        .iter()
        .chain(extra)
        {
            data.insert((*k).to_owned(), json!(b64(v)));
        }
        json!({"metadata": {"name": "bootstrap-token-abcdef", "namespace": "kube-system"},
            "type": SECRET_TYPE, "data": data})
    }

    fn now() -> std::time::SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    #[test]
    fn tokens_parse_as_upstream_s_pattern() {
        assert_eq!(
            parse_token("abcdef.0123456789abcdef"),
            Some(("abcdef", "0123456789abcdef"))
        );
        for bad in [
            "abcdef0123456789abcdef",
            "ABCDEF.0123456789abcdef",
            "abcde.0123456789abcdef",
            "abcdef.0123456789abcde",
            "abcdef.0123456789abcdef.x",
        ] {
            assert_eq!(parse_token(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_matching_secret_authenticates_with_its_groups() {
        let user = user_of(&secret(&[]), "abcdef", "0123456789abcdef", now()).unwrap();
        assert_eq!(user.name, "system:bootstrap:abcdef");
        assert_eq!(user.groups, ["system:bootstrappers"]);
        let extra = secret(&[(
            "auth-extra-groups",
            "system:bootstrappers:b,system:bootstrappers:a,system:bootstrappers:a",
        )]);
        let user = user_of(&extra, "abcdef", "0123456789abcdef", now()).unwrap();
        assert_eq!(
            user.groups,
            [
                "system:bootstrappers",
                "system:bootstrappers:a",
                "system:bootstrappers:b"
            ]
        );
    }

    #[test]
    fn every_mismatch_is_no_opinion() {
        let ok = "0123456789abcdef";
        assert!(user_of(&secret(&[]), "abcdef", "0123456789abcdee", now()).is_none());
        let mut wrong_type = secret(&[]);
        wrong_type["type"] = json!("Opaque");
        assert!(user_of(&wrong_type, "abcdef", ok, now()).is_none());
        let mut deleted = secret(&[]);
        deleted["metadata"]["deletionTimestamp"] = json!("2023-01-01T00:00:00Z");
        assert!(user_of(&deleted, "abcdef", ok, now()).is_none());
        let unmarked = secret(&[("usage-bootstrap-authentication", "false")]);
        assert!(user_of(&unmarked, "abcdef", ok, now()).is_none());
        let expired = secret(&[("expiration", "2023-01-01T00:00:00Z")]);
        assert!(user_of(&expired, "abcdef", ok, now()).is_none());
        let later = secret(&[("expiration", "2030-01-01T00:00:00Z")]);
        assert!(user_of(&later, "abcdef", ok, now()).is_some());
        let unparsable = secret(&[("expiration", "soon")]);
        assert!(user_of(&unparsable, "abcdef", ok, now()).is_none());
        let bad_group = secret(&[("auth-extra-groups", "system:masters")]);
        assert!(user_of(&bad_group, "abcdef", ok, now()).is_none());
        let other_id = secret(&[("token-id", "zzzzzz")]);
        assert!(user_of(&other_id, "abcdef", ok, now()).is_none());
    }
}
