//! Upstream's continue token: base64url (no padding) of
//! `{"v":"meta.k8s.io/v1","rv":<revision>,"start":"<key after the list prefix>"}`.
//! An `rv` of -1 means "continue at the latest revision" (after the original expired).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

#[derive(Serialize, Deserialize)]
struct Token {
    v: String,
    rv: i64,
    start: String,
}

const VERSION: &str = "meta.k8s.io/v1";

/// Encodes a token that resumes the list of `key_prefix` at `key` (which must lie under
/// the prefix), at `revision`.
pub fn encode_continue(key: &str, key_prefix: &str, revision: i64) -> Result<String> {
    let Some(start) = key.strip_prefix(key_prefix) else {
        return Err(Error::internal(
            "unable to encode next field: the key and key prefix do not match",
        ));
    };
    let token = Token {
        v: VERSION.into(),
        rv: revision,
        start: start.into(),
    };
    let json = serde_json::to_vec(&token).map_err(|e| Error::internal(e.to_string()))?;
    Ok(URL_SAFE_NO_PAD.encode(json))
}

/// Decodes a token into the full start key under `key_prefix` and its revision, refusing
/// tokens that would climb out of the prefix. Errors are [`Error::BadRequest`] with
/// upstream's text.
pub fn decode_continue(token: &str, key_prefix: &str) -> Result<(String, i64)> {
    let bad = |reason: String| Error::BadRequest(format!("invalid continue token: {reason}"));
    let data = URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|e| bad(format!("continue key is not valid: {e}")))?;
    let token: Token = serde_json::from_slice(&data)
        .map_err(|e| bad(format!("continue key is not valid: {e}")))?;
    if token.v != VERSION {
        return Err(bad(format!(
            "continue key is not valid: server does not recognize this encoded version {}",
            token.v
        )));
    }
    if token.rv == 0 {
        return Err(bad("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".into()));
    }
    if token.start.is_empty() {
        return Err(bad(
            "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)".into(),
        ));
    }
    let rooted = if token.start.starts_with('/') {
        token.start.clone()
    } else {
        format!("/{}", token.start)
    };
    if clean_path(&rooted) != rooted {
        return Err(bad(format!("continue key is not valid: {}", token.start)));
    }
    Ok((format!("{key_prefix}{}", &rooted[1..]), token.rv))
}

/// Go's `path.Clean` for rooted paths: no empty, "." or ".." segments, no trailing slash.
fn clean_path(rooted: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for seg in rooted.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_in_upstreams_format() {
        let token = encode_continue("/registry/pods/ns/b\u{0}", "/registry/pods/", 12).unwrap();
        let json = URL_SAFE_NO_PAD.decode(&token).unwrap();
        assert_eq!(
            String::from_utf8(json).unwrap(),
            r#"{"v":"meta.k8s.io/v1","rv":12,"start":"ns/b\u0000"}"#
        );
        assert_eq!(
            decode_continue(&token, "/registry/pods/").unwrap(),
            ("/registry/pods/ns/b\u{0}".to_string(), 12)
        );
    }

    #[test]
    fn refuses_bad_tokens() {
        let enc = |s: &str| URL_SAFE_NO_PAD.encode(s);
        for token in [
            "%%%".to_string(),
            enc("{}"),
            enc(r#"{"v":"x","rv":1,"start":"a"}"#),
            enc(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a"}"#),
            enc(r#"{"v":"meta.k8s.io/v1","rv":1,"start":""}"#),
            enc(r#"{"v":"meta.k8s.io/v1","rv":1,"start":"../secrets/x"}"#),
            enc(r#"{"v":"meta.k8s.io/v1","rv":1,"start":"a/./b"}"#),
        ] {
            assert!(
                matches!(decode_continue(&token, "/p/"), Err(Error::BadRequest(_))),
                "{token}"
            );
        }
        assert!(encode_continue("/other/x", "/p/", 1).is_err());
    }
}
