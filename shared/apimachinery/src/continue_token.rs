//! List continue tokens, after upstream's `k8s.io/apiserver/pkg/storage/continue.go`:
//! unpadded URL-safe base64 (Go's `base64.RawURLEncoding`) of
//! `{"v":"meta.k8s.io/v1","rv":<resourceVersion>,"start":"<key after the prefix>"}`.
//!
//! Decoding follows Go's decoders closely enough that the error texts match upstream's for
//! what clients actually send (bad base64, truncated or non-object JSON, wrong types); for
//! other malformed JSON the text names the offending character as Go's does, with the
//! context upstream's scanner would report approximated from serde_json's diagnosis.

use serde::Serialize;
use serde_json::Value;
use thiserror::Error;

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
    let json = crate::json::to_vec(&token).unwrap_or_default();
    base64_encode(&json)
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
    let data = base64_decode(token).map_err(Error::InvalidKey)?;
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

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Go's `base64.RawURLEncoding.EncodeToString`.
fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

fn decode_char(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'-' => Some(62),
        b'_' => Some(63),
        _ => None,
    }
}

/// Go's `base64.RawURLEncoding.DecodeString`: `\r` and `\n` are skipped, stray bits at
/// the end are ignored, and errors name the offending input byte as Go's do.
fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    let src = s.as_bytes();
    let corrupt = |at: usize| format!("illegal base64 data at input byte {at}");
    let mut out = Vec::with_capacity(src.len() * 3 / 4);
    let mut si = 0;
    loop {
        let mut buf = [0u8; 4];
        let mut len = 4;
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                match j {
                    0 => return Ok(out),
                    1 => return Err(corrupt(si - j)),
                    _ => {}
                }
                len = j;
                break;
            }
            let c = src[si];
            si += 1;
            if let Some(v) = decode_char(c) {
                buf[j] = v;
                j += 1;
            } else if c != b'\n' && c != b'\r' {
                return Err(corrupt(si - 1));
            }
        }
        let n = (u32::from(buf[0]) << 18)
            | (u32::from(buf[1]) << 12)
            | (u32::from(buf[2]) << 6)
            | u32::from(buf[3]);
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..len - 1]);
        if len < 4 {
            return Ok(out);
        }
    }
}

/// `json.Unmarshal(data, &continueToken{})` with Go's rules: names match exactly or
/// case-insensitively, unknown fields and nulls are ignored, and the first type mismatch
/// is reported.
fn go_unmarshal(data: &[u8]) -> Result<(String, i64, String), String> {
    let value: Value = serde_json::from_slice(data).map_err(|e| go_syntax_error(data, &e))?;
    let obj = match value {
        Value::Null => return Ok((String::new(), 0, String::new())),
        Value::Object(obj) => obj,
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type storage.continueToken",
                json_kind(&other)
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
    let mismatch = |field: &str, v: &Value, ty: &str| {
        format!(
            "json: cannot unmarshal {} into Go struct field continueToken.{field} of type {ty}",
            json_kind(v)
        )
    };
    let string_field = |name: &str| match find(name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(mismatch(name, other, "string")),
    };
    let version = string_field("v")?;
    let rv = match find("rv") {
        None | Some(Value::Null) => 0,
        Some(Value::Number(n)) => n
            .as_i64()
            .ok_or_else(|| mismatch("rv", &Value::Number(n.clone()), "int64"))?,
        Some(other) => return Err(mismatch("rv", other, "int64")),
    };
    let start = string_field("start")?;
    Ok((version, rv, start))
}

/// The `Value` part of Go's `UnmarshalTypeError` text.
fn json_kind(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(_) => "bool".to_owned(),
        Value::Number(n) => format!("number {n}"),
        Value::String(_) => "string".to_owned(),
        Value::Array(_) => "array".to_owned(),
        Value::Object(_) => "object".to_owned(),
    }
}

/// Go's `SyntaxError` text for what serde_json rejected.
fn go_syntax_error(data: &[u8], e: &serde_json::Error) -> String {
    if e.is_eof() {
        return "unexpected end of JSON input".to_owned();
    }
    // serde_json reports 1-based line and column of the offending byte.
    let offset = data
        .split(|&b| b == b'\n')
        .take(e.line().saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum::<usize>()
        + e.column().saturating_sub(1);
    let Some(&c) = data.get(offset) else {
        return "unexpected end of JSON input".to_owned();
    };
    let msg = e.to_string();
    let context = if msg.starts_with("trailing characters") {
        "after top-level value"
    } else if msg.starts_with("key must be a string") {
        "looking for beginning of object key string"
    } else if msg.starts_with("expected `:`") {
        "after object key"
    } else if msg.starts_with("expected `,` or `}`") {
        "after object key:value pair"
    } else if msg.starts_with("expected `,` or `]`") {
        "after array element"
    } else if msg.starts_with("control character") {
        "in string literal"
    } else if msg.starts_with("invalid escape") {
        "in string escape code"
    } else if msg.starts_with("invalid number") {
        "in numeric literal"
    } else {
        "looking for beginning of value"
    };
    format!("invalid character {} {context}", go_quote_char(c))
}

/// Go's `quoteChar`.
fn go_quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".to_owned(),
        b'"' => "'\"'".to_owned(),
        c => {
            let q = crate::gostr::quote(&char::from(c).to_string());
            format!("'{}'", &q[1..q.len() - 1])
        }
    }
}

#[cfg(test)]
mod tests;
