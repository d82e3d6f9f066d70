//! Upstream's request-header authentication (k8s.io/apiserver's `requestheader`), which an
//! aggregated server runs for the requests its aggregator forwards: the identity headers
//! count only when the connection's client certificate verified against the request-header
//! CA (TLS did that) and its common name is allowed.

use std::collections::BTreeMap;

use http::HeaderMap;
use serde_json::{Value, json};

/// Which headers carry the identity, and who may set them.
#[derive(Clone, Debug)]
pub struct RequestHeaderConfig {
    /// Empty: any common name the CA signed.
    pub allowed_names: Vec<String>,
    pub username_headers: Vec<String>,
    pub uid_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_prefixes: Vec<String>,
}

/// The authenticated user.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

impl User {
    /// The user as a JSON object, `{"name", "uid", "groups", "extra"}`.
    pub fn to_json(&self) -> Value {
        json!({"name": self.name, "uid": self.uid, "groups": self.groups, "extra": self.extra})
    }
}

impl RequestHeaderConfig {
    /// The user the headers name, when `client_cn` (the verified client certificate's
    /// common name, if any) may assert one and a username header is set.
    pub fn authenticate(&self, client_cn: Option<&str>, headers: &HeaderMap) -> Option<User> {
        let cn = client_cn?;
        if !self.allowed_names.is_empty() && !self.allowed_names.iter().any(|n| n == cn) {
            return None;
        }
        let name = first_value(headers, &self.username_headers)?;
        let uid = first_value(headers, &self.uid_headers).unwrap_or_default();
        let groups = all_values(headers, &self.group_headers);
        let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (header, value) in headers {
            let Some(key) = self.extra_key(header.as_str()) else {
                continue;
            };
            let Ok(value) = value.to_str() else { continue };
            let values = extra.entry(key).or_default();
            if !value.is_empty() {
                values.push(value.to_owned());
            }
        }
        Some(User {
            name,
            uid,
            groups,
            extra,
        })
    }

    /// The extra key a header carries: its name after a prefix, unescaped and lowercased,
    /// as upstream's `unescapeExtraKey` (an invalid escape keeps the key as sent).
    fn extra_key(&self, header: &str) -> Option<String> {
        let prefix = self
            .extra_prefixes
            .iter()
            .find(|p| header.len() > p.len() && header[..p.len()].eq_ignore_ascii_case(p))?;
        let raw = &header[prefix.len()..];
        let key = percent_encoding::percent_decode_str(raw)
            .decode_utf8()
            .map(|k| k.into_owned())
            .unwrap_or_else(|_| raw.to_owned());
        Some(key.to_lowercase())
    }
}

/// The first non-empty value of the first header set, in the configured order.
fn first_value(headers: &HeaderMap, names: &[String]) -> Option<String> {
    names.iter().find_map(|n| {
        headers
            .get(n.as_str())
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    })
}

/// Every non-empty value of every configured header.
fn all_values(headers: &HeaderMap, names: &[String]) -> Vec<String> {
    names
        .iter()
        .flat_map(|n| headers.get_all(n.as_str()))
        .filter_map(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> RequestHeaderConfig {
        RequestHeaderConfig {
            allowed_names: vec!["front-proxy-client".into()],
            username_headers: vec!["X-Remote-User".into()],
            uid_headers: vec!["X-Remote-Uid".into()],
            group_headers: vec!["X-Remote-Group".into()],
            extra_prefixes: vec!["X-Remote-Extra-".into()],
        }
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn an_allowed_proxy_asserts_the_user_groups_uid_and_extra() {
        let h = headers(&[
            ("X-Remote-User", "alice"),
            ("X-Remote-Uid", "u-1"),
            ("X-Remote-Group", "g1"),
            ("X-Remote-Group", "g2"),
            ("X-Remote-Extra-Scopes", "a"),
            ("X-Remote-Extra-Scopes", "b"),
            ("X-Remote-Extra-Example.com%2fkey", "v"),
        ]);
        let user = config()
            .authenticate(Some("front-proxy-client"), &h)
            .unwrap();
        assert_eq!(user.name, "alice");
        assert_eq!(user.uid, "u-1");
        assert_eq!(user.groups, ["g1", "g2"]);
        assert_eq!(user.extra["scopes"], ["a", "b"]);
        assert_eq!(user.extra["example.com/key"], ["v"]);
    }

    #[test]
    fn no_certificate_a_stranger_or_no_username_is_no_user() {
        let h = headers(&[("X-Remote-User", "alice")]);
        assert_eq!(config().authenticate(None, &h), None);
        assert_eq!(config().authenticate(Some("kas-admin"), &h), None);
        let nameless = headers(&[("X-Remote-Group", "g")]);
        assert_eq!(
            config().authenticate(Some("front-proxy-client"), &nameless),
            None
        );
        let any = RequestHeaderConfig {
            allowed_names: vec![],
            ..config()
        };
        assert!(any.authenticate(Some("kas-admin"), &h).is_some());
    }
}
