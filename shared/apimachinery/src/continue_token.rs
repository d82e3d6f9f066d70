//! List continue tokens, after upstream's `k8s.io/apiserver/pkg/storage/continue.go`:
//! unpadded URL-safe base64 (Go's `base64.RawURLEncoding`) of
//! `{"v":"meta.k8s.io/v1","rv":<resourceVersion>,"start":"<key after the prefix>"}`.
//!
//! Decoding follows Go's decoders ([`crate::golang`]), so the error texts are upstream's:
//! bad base64, malformed or non-object JSON, wrong types.

use serde::Serialize;
use serde_json::Value;
use thiserror::Error;

use crate::golang::base64::RAW_URL_ENCODING;
use crate::golang::json::{describe, unmarshal};

/// The only encoded version upstream knows.
pub const VERSION: &str = "meta.k8s.io/v1";

/// Why a token cannot be decoded (or a key encoded); the texts are upstream's.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Error {
    /// Upstream `ErrInvalidStartRV`.
    #[error(
        "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
    )]
    InvalidStartRv,
    /// Upstream `ErrEmptyStartKey`.
    #[error("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")]
    EmptyStartKey,
    /// Upstream `ErrGenericInvalidKey` wrapping a cause: bad base64, bad JSON, or a start
    /// key that tries to leave the prefix (`..`, `//`, ...).
    #[error("continue key is not valid: {0}")]
    InvalidKey(String),
    /// Upstream `ErrUnrecognizedEncodedVersion` and the version found.
    #[error("continue key is not valid: server does not recognize this encoded version {0}")]
    UnrecognizedVersion(String),
    /// Upstream `EncodeContinue`'s refusal of a key outside the prefix.
    #[error("unable to encode next field: the key and key prefix do not match {prefix} {key}")]
    KeyPrefixMismatch { prefix: String, key: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Serialize)]
struct Token<'a> {
    v: &'a str,
    rv: i64,
    start: &'a str,
}

/// The token for continuing after `key_suffix` (the key with the storage prefix removed)
/// at resource version `rv`.
pub fn encode(key_suffix: &str, rv: i64) -> String {
    let token = Token {
        v: VERSION,
        rv,
        start: key_suffix,
    };
    // Serializing three plain fields cannot fail.
    let json = crate::golang::json::to_vec(&token).unwrap_or_default();
    RAW_URL_ENCODING.encode_to_string(&json)
}

/// Upstream `EncodeContinue(key, keyPrefix, rv)`: `key` must start with (and differ from
/// nothing but) `key_prefix`.
pub fn encode_continue(key: &str, key_prefix: &str, rv: i64) -> Result<String> {
    match key.strip_prefix(key_prefix) {
        Some(suffix) if !key_prefix.is_empty() => Ok(encode(suffix, rv)),
        _ => Err(Error::KeyPrefixMismatch {
            prefix: key_prefix.to_owned(),
            key: key.to_owned(),
        }),
    }
}

/// Upstream `DecodeContinue(token, keyPrefix)`: the key to start from (`key_prefix` plus
/// the cleaned start key) and the resource version.
pub fn decode(token: &str, key_prefix: &str) -> Result<(String, i64)> {
    let data = RAW_URL_ENCODING
        .decode_string(token)
        .map_err(|e| Error::InvalidKey(e.to_string()))?;
    let (version, rv, start) = go_unmarshal(&data).map_err(Error::InvalidKey)?;
    if version != VERSION {
        return Err(Error::UnrecognizedVersion(version));
    }
    if rv == 0 {
        return Err(Error::InvalidStartRv);
    }
    if start.is_empty() {
        return Err(Error::EmptyStartKey);
    }
    // Against path traversal: the start key must already be clean, so that with the
    // prefix added it cannot range over anything above the prefix.
    let key = if start.starts_with('/') {
        start.clone()
    } else {
        format!("/{start}")
    };
    let cleaned = clean_rooted(&key);
    if cleaned != key {
        return Err(Error::InvalidKey(start));
    }
    Ok((format!("{key_prefix}{}", &cleaned[1..]), rv))
}

/// Go's `path.Clean` for a path starting with `/`.
fn clean_rooted(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// `json.Unmarshal(data, &continueToken{})` with Go's rules: names match exactly or
/// case-insensitively, unknown fields and nulls are ignored, and the first type mismatch
/// is reported.
fn go_unmarshal(data: &[u8]) -> Result<(String, i64, String), String> {
    let value = unmarshal(data)?;
    let obj = match value {
        Value::Null => return Ok((String::new(), 0, String::new())),
        Value::Object(obj) => obj,
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type storage.continueToken",
                describe(&other)
            ));
        }
    };
    let find = |name: &str| {
        obj.get(name).or_else(|| {
            obj.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v)
        })
    };
    let mismatch = |field: &str, value: &str, ty: &str| {
        format!(
            "json: cannot unmarshal {value} into Go struct field continueToken.{field} of type {ty}"
        )
    };
    let string_field = |name: &str| match find(name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(mismatch(name, describe(other), "string")),
    };
    let version = string_field("v")?;
    let rv = match find("rv") {
        None | Some(Value::Null) => 0,
        // A number that is no int64 is named with its text, as Go's decoder does.
        Some(Value::Number(n)) => n
            .as_i64()
            .ok_or_else(|| mismatch("rv", &format!("number {n}"), "int64"))?,
        Some(other) => return Err(mismatch("rv", describe(other), "int64")),
    };
    let start = string_field("start")?;
    Ok((version, rv, start))
}

#[cfg(test)]
mod tests;
