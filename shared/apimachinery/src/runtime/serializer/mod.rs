//! Request and response bodies as upstream's JSON/YAML serializer
//! (`k8s.io/apimachinery/pkg/runtime/serializer/json`) reads and writes them.
//!
//! Decoding: JSON is checked by a port of Go's `encoding/json` scanner so that malformed
//! input fails with upstream's exact text (`couldn't get version/kind; json parse error:
//! invalid character ...`), then `apiVersion`/`kind` are read as upstream's
//! `SimpleMetaFactory.Interpret` reads them. YAML becomes JSON as `sigs.k8s.io/yaml` makes
//! it (only the first document counts). Strict field validation finds repeated keys, which
//! serde_json silently collapses, by scanning the raw input.
//!
//! Encoding: compact JSON with Go's escaping and a trailing newline (`json.Encoder`),
//! pretty JSON with two-space indent and no newline (`json.MarshalIndent`), and YAML laid
//! out as `sigs.k8s.io/yaml`'s `JSONToYAML` (goyaml.v2) lays it out.

use crate::Status;
use crate::golang::json::{self, describe};
use crate::golang::strconv::quote;
use crate::schema::Message;
use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;
use thiserror::Error;

use crate::runtime::GroupVersionKind;

/// Why a body could not be decoded; `Display` is upstream's error text.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// `SimpleMetaFactory.Interpret` failed on JSON (syntax, or a non-string kind).
    #[error("couldn't get version/kind; json parse error: {0}")]
    JsonParse(String),
    /// `schema.ParseGroupVersion` failed on `apiVersion`.
    #[error("unexpected GroupVersion string: {0}")]
    GroupVersion(String),
    /// `yaml.YAMLToJSON` failed.
    #[error("error converting YAML to JSON: yaml: {0}")]
    Yaml(String),
    /// `runtime.NewMissingKindErr(data)`.
    #[error("Object 'Kind' is missing in '{0}'")]
    MissingKind(String),
    /// `runtime.NewMissingVersionErr(data)`.
    #[error("Object 'apiVersion' is missing in '{0}'")]
    MissingVersion(String),
    /// A value that does not fit the Go type (`json: cannot unmarshal ...`).
    #[error("{0}")]
    Type(String),
    /// `runtime.NewStrictDecodingError(errs)`: each entry one error text.
    #[error("strict decoding error: {}", .0.join(", "))]
    Strict(Vec<String>),
}

pub type Result<T, E = DecodeError> = std::result::Result<T, E>;

/// A decoded body: the object and the group, version and kind it declares.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    pub object: Value,
    pub gvk: GroupVersionKind,
}

/// Decodes a JSON body as upstream's serializer does before conversion: Go-compatible
/// syntax errors first, then `apiVersion`/`kind`.
pub fn decode_json(data: &[u8]) -> Result<Decoded> {
    let object = json::unmarshal(data).map_err(DecodeError::JsonParse)?;
    let gvk = interpret(&object)?;
    Ok(Decoded { object, gvk })
}

/// Decodes a YAML body: `YAMLToJSON` (first document only), then as JSON.
pub fn decode_yaml(data: &[u8]) -> Result<Decoded> {
    let object = yaml_to_json(data)?;
    let gvk = interpret(&object)?;
    Ok(Decoded { object, gvk })
}

const META_STRUCT: &str = r#"struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }"#;

/// Upstream `SimpleMetaFactory.Interpret` on an already parsed document. Keys match
/// case-insensitively, as Go's decoder matches struct fields.
pub fn interpret(object: &Value) -> Result<GroupVersionKind> {
    let map = match object {
        Value::Null => return Ok(GroupVersionKind::default()),
        Value::Object(map) => map,
        other => {
            return Err(DecodeError::JsonParse(format!(
                "json: cannot unmarshal {} into Go value of type {META_STRUCT}",
                describe(other)
            )));
        }
    };
    let mut api_version = String::new();
    let mut kind = String::new();
    for (key, value) in map {
        let (field, slot) = if key.eq_ignore_ascii_case("apiVersion") {
            ("apiVersion", &mut api_version)
        } else if key.eq_ignore_ascii_case("kind") {
            ("kind", &mut kind)
        } else {
            continue;
        };
        match value {
            Value::String(s) => *slot = s.clone(),
            Value::Null => {}
            other => {
                return Err(DecodeError::JsonParse(format!(
                    "json: cannot unmarshal {} into Go struct field .{field} of type string",
                    describe(other)
                )));
            }
        }
    }
    let (group, version) = parse_group_version(&api_version)?;
    Ok(GroupVersionKind {
        group,
        version,
        kind,
    })
}

/// Upstream `schema.ParseGroupVersion`.
pub fn parse_group_version(gv: &str) -> Result<(String, String)> {
    match gv.matches('/').count() {
        0 => Ok((String::new(), gv.to_owned())),
        1 => {
            let (g, v) = gv.split_once('/').unwrap_or_default();
            Ok((g.to_owned(), v.to_owned()))
        }
        _ => Err(DecodeError::GroupVersion(gv.to_owned())),
    }
}

/// Upstream's serializer after defaulting: kind, then version, must be known.
pub fn require_kind_and_version(gvk: &GroupVersionKind, original: &[u8]) -> Result<()> {
    let data = || String::from_utf8_lossy(original).into_owned();
    if gvk.kind.is_empty() {
        return Err(DecodeError::MissingKind(data()));
    }
    if gvk.version.is_empty() {
        return Err(DecodeError::MissingVersion(data()));
    }
    Ok(())
}

/// Upstream `summarizeData(data, 30)`.
fn summarize_data(data: &[u8], max: usize) -> String {
    use std::fmt::Write as _;
    let hex = |d: &[u8]| {
        d.iter().fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
    };
    match data.first() {
        None => "<empty>".to_owned(),
        Some(b'{') if data.len() > max => {
            format!("{} ...", String::from_utf8_lossy(&data[..max]))
        }
        Some(b'{') => String::from_utf8_lossy(data).into_owned(),
        Some(_) if data.len() > max => format!("{} ...", hex(&data[..max])),
        Some(_) => hex(data),
    }
}

/// Upstream `transformDecodeError`: the 400 a create or update answers when decoding fails.
/// `into_kind` is the kind the endpoint expects; `gvk` what the body declared, when known.
pub fn transform_decode_error(
    into_kind: &str,
    gvk: Option<&GroupVersionKind>,
    err: &DecodeError,
    body: &[u8],
) -> Status {
    let message = match gvk.filter(|g| !g.kind.is_empty()) {
        Some(g) => format!(
            "{} in version {} cannot be handled as a {into_kind}: {err}",
            g.kind,
            quote(&g.version)
        ),
        None => format!(
            "the object provided is unrecognized (must be of type {into_kind}): {err} ({})",
            summarize_data(body, 30)
        ),
    };
    Status::bad_request(&message)
}

/// Converts YAML to a JSON value as `yaml.YAMLToJSON` does: YAML 1.1 scalars (`yes`, `on`,
/// `0755` octal), last duplicate key wins, and only the first document is read.
pub fn yaml_to_json(data: &[u8]) -> Result<Value> {
    use serde_saphyr::{DuplicateKeyPolicy, Options};
    let options = || {
        let mut o = Options::default();
        o.duplicate_keys = DuplicateKeyPolicy::LastWins;
        o.legacy_octal_numbers = true;
        o
    };
    if data.iter().all(|b| b.is_ascii_whitespace()) {
        return Ok(Value::Null);
    }
    match serde_saphyr::from_slice_with_options::<Value>(data, options()) {
        Ok(v) => Ok(v),
        Err(first_err) => {
            match serde_saphyr::from_slice_multiple_with_options::<Value>(data, options()) {
                Ok(docs) if docs.len() > 1 => Ok(docs.into_iter().next().unwrap_or_default()),
                _ => Err(DecodeError::Yaml(yaml_message(&first_err))),
            }
        }
    }
}

/// saphyr's message in goyaml.v2's shape (`line 3: <what>`); the wording differs.
fn yaml_message(err: &serde_saphyr::Error) -> String {
    let text = err.to_string();
    let first = text.lines().next().unwrap_or_default().trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    if let Some(rest) = first.strip_prefix("line ")
        && let Some((line, tail)) = rest.split_once(" column ")
        && let Some((_, msg)) = tail.split_once(": ")
    {
        return format!("line {line}: {msg}");
    }
    first.to_owned()
}

/// Repeated keys in a JSON document, as `sigs.k8s.io/json` strict decoding reports them:
/// `duplicate field "metadata.name"`, list items as `[i]`, each text once. `data` must be
/// valid JSON (an invalid document yields what was found before the error).
pub fn json_duplicate_fields(data: &[u8]) -> Vec<String> {
    strict::duplicate_fields(data)
        .into_iter()
        .map(|path| format!("duplicate field {}", quote(&path)))
        .fold(Vec::new(), |mut out, e| {
            if !out.contains(&e) {
                out.push(e);
            }
            out
        })
}

/// Strict decoding's findings on a JSON body, as upstream's messages, in document order:
/// `duplicate field "a.b"` and, with a schema, `unknown field "spec.x"`.
pub fn json_strict_fields(data: &[u8], schema: Option<&'static Message>) -> Vec<String> {
    strict::strict_fields(data, schema)
        .into_iter()
        .map(|f| match f {
            strict::StrictField::Duplicate(path) => format!("duplicate field {}", quote(&path)),
            strict::StrictField::Unknown(path) => format!("unknown field {}", quote(&path)),
        })
        .fold(Vec::new(), |mut out, e| {
            if !out.contains(&e) {
                out.push(e);
            }
            out
        })
}

/// Repeated keys in the first YAML document, as goyaml.v2's `UnmarshalStrict` reports them
/// (`line 4: key "name" already set in map`), in its order: for each key, every later equal
/// key of the same mapping.
pub fn yaml_duplicate_fields(data: &[u8]) -> Vec<String> {
    yaml_out::duplicate_keys(&String::from_utf8_lossy(data))
}

/// The strict decoding error of a YAML body: goyaml.v2's `unmarshal errors` wrapped as
/// `YAMLToJSONStrict` wraps them. `None` when there are no duplicates.
pub fn yaml_strict_error(data: &[u8]) -> Option<DecodeError> {
    let errs = yaml_duplicate_fields(data);
    if errs.is_empty() {
        return None;
    }
    Some(DecodeError::Strict(vec![format!(
        "error converting YAML to JSON: yaml: unmarshal errors:\n  {}",
        errs.join("\n  ")
    )]))
}

/// The strict decoding error of a JSON body, `None` when no key repeats.
pub fn json_strict_error(data: &[u8]) -> Option<DecodeError> {
    let errs = json_duplicate_fields(data);
    (!errs.is_empty()).then_some(DecodeError::Strict(errs))
}

/// Why a value could not be encoded.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct EncodeError(#[source] serde_json::Error);

/// Compact JSON bytes pretty-printed as `json.MarshalIndent(obj, "", "  ")` would write
/// them, without decoding them.
pub fn indent_json(compact: &[u8]) -> Bytes {
    Bytes::from(json::indent(compact))
}

/// JSON as upstream writes it: compact with Go's escaping and a trailing newline
/// (`json.Encoder.Encode`), or, when `pretty`, `json.MarshalIndent(obj, "", "  ")`, which
/// has no trailing newline. Floats are formatted as Go formats them (`1` not `1.0`,
/// `1e+21`).
pub fn encode_json<T: Serialize + ?Sized>(value: &T, pretty: bool) -> Result<Bytes, EncodeError> {
    let mut out = Vec::with_capacity(256);
    let formatter = json::Formatter::new(pretty);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    value.serialize(&mut ser).map_err(EncodeError)?;
    if !pretty {
        out.push(b'\n');
    }
    Ok(Bytes::from(out))
}

/// YAML as upstream writes it (`json.Marshal` then `yaml.JSONToYAML`): block style, keys in
/// goyaml.v2's order, strings quoted only where goyaml.v2 would quote them, long plain
/// strings folded past column 80.
pub fn encode_yaml<T: Serialize + ?Sized>(value: &T) -> Result<Bytes, EncodeError> {
    let value = serde_json::to_value(value).map_err(EncodeError)?;
    Ok(Bytes::from(yaml_out::to_yaml(&value)))
}

/// Strict decoding's repeated and unknown keys, found on the raw bytes.
mod strict;

pub use json::Indenter as JsonIndenter;

/// YAML output as goyaml.v2 (behind `sigs.k8s.io/yaml`) writes a JSON document, and its
/// strict duplicate-key check.
mod yaml_out;

#[cfg(test)]
mod tests;
