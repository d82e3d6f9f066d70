//! Upstream's continue token (kas-apimachinery's `continue_token`), with its failures as
//! this crate's errors: a token that does not decode is upstream's 400 `invalid continue
//! token: ...`. An `rv` of -1 means "continue at the latest revision" (after the original
//! expired).

use kas_apimachinery::continue_token;

use crate::error::{Error, Result};

/// Encodes a token that resumes the list of `key_prefix` at `key` (which must lie under
/// the prefix), at `revision`.
pub fn encode_continue(key: &str, key_prefix: &str, revision: i64) -> Result<String> {
    continue_token::encode_continue(key, key_prefix, revision)
        .map_err(|e| Error::internal(format!("unable to encode next field: {e}")))
}

/// Decodes a token into the full start key under `key_prefix` and its revision, refusing
/// tokens that would climb out of the prefix.
pub fn decode_continue(token: &str, key_prefix: &str) -> Result<(String, i64)> {
    continue_token::decode(token, key_prefix)
        .map_err(|e| Error::BadRequest(format!("invalid continue token: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

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
