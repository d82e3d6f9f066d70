//! Request bodies of writes: read with upstream's 3 MiB limit, negotiated by Content-Type,
//! decoded as JSON or YAML, with duplicate fields reported per `fieldValidation`.

use crate::negotiation::{self, MediaType, PatchType};
use crate::{Body, request_body};
use bytes::Bytes;
use http::HeaderMap;
use kas_apimachinery::Status;
use kas_apimachinery::runtime::serializer::{self, DecodeError};
use serde_json::Value;

use kas_registry::ResourceDescriptor;
use kas_registry::error::Result;
use kas_registry::rest::options::{FieldValidation, WriteOptions};

pub struct Decoded {
    pub value: Value,
    /// `Warning` headers (duplicate fields under `fieldValidation=Warn`).
    pub warnings: Vec<String>,
}

fn content_type(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
}

pub async fn read(body: Body) -> Result<Bytes> {
    Ok(request_body::read_body(body, request_body::DEFAULT_MAX_REQUEST_BODY_BYTES).await?)
}

/// A write's body: its media type (negotiated from its Content-Type; 415 when none
/// decodes it) and its bytes (read with the 3 MiB limit).
pub struct Input {
    pub media: MediaType,
    pub bytes: Bytes,
}

/// Reads a create's or update's body in upstream's order: the input serializer first,
/// then the bytes.
pub async fn read_input(headers: &HeaderMap, body: Body) -> Result<Input> {
    let media = negotiation::negotiate_input_media_type(content_type(headers), false)?;
    let bytes = read(body).await?;
    Ok(Input { media, bytes })
}

/// Upstream's create/update decoding: a malformed body is a 400 naming the kind the
/// endpoint expects; unknown and duplicate fields are, under Strict, that 400 with a
/// strict decoding error (`transformDecodeError`), and warnings under Warn.
pub fn decode(d: &ResourceDescriptor, input: &Input, opts: &WriteOptions) -> Result<Decoded> {
    let (media, bytes) = (input.media, &input.bytes[..]);
    if media == MediaType::Protobuf {
        // Protobuf has no unknown or repeated fields to report: the decoder skips unknown
        // tags, as upstream's does.
        let schema = d.schema.ok_or_else(|| {
            Status::unsupported_media_type(&["application/json", "application/yaml"])
        })?;
        return Ok(Decoded {
            value: crate::responsewriters::protobuf::decode_body(bytes, schema)?,
            warnings: Vec::new(),
        });
    }
    let decoded = match media {
        MediaType::Yaml => serializer::decode_yaml(bytes),
        _ => serializer::decode_json(bytes),
    };
    let decoded =
        decoded.map_err(|e| serializer::transform_decode_error(d.kind, None, &e, bytes))?;
    // Decoding into the Go type: a value that does not fit it (a list for a map, a
    // number for a string, a bad time or base64) is a 400 naming the body's kind, or the
    // endpoint's when the body names none.
    // The kind and version the decoder saw: the body's, else the endpoint's.
    let mut gvk = decoded.gvk.clone();
    if gvk.kind.is_empty() {
        gvk.kind = d.kind.to_owned();
    }
    if gvk.version.is_empty() {
        gvk.version = d.version.to_owned();
    }
    let failed =
        |err: DecodeError| serializer::transform_decode_error(d.kind, Some(&gvk), &err, bytes);
    if let Some(schema) = d.schema
        && let Err(e) = fits_go_type(&decoded.object, schema)
    {
        return Err(failed(DecodeError::Type(e)).into());
    }
    let mut value = decoded.object;
    let warnings = match opts.field_validation {
        FieldValidation::Ignore => Vec::new(),
        FieldValidation::Warn => strict_findings(d, media, bytes, &value),
        FieldValidation::Strict => {
            let findings = strict_findings(d, media, bytes, &value);
            if !findings.is_empty() {
                return Err(failed(DecodeError::Strict(findings)).into());
            }
            Vec::new()
        }
    };
    // Decoding into upstream's types drops what they do not have, whatever the validation.
    if let Some(schema) = d.schema {
        as_go_types(&mut value, schema);
    }
    Ok(Decoded { value, warnings })
}

/// `decode` for a store's resource: one without a Go type is pruned by its strategy
/// (a custom resource by its structural schema), and what was pruned is reported under
/// `fieldValidation` as upstream's decoder reports unknown fields.
pub fn decode_for(
    store: &kas_registry::store::Store,
    input: &Input,
    opts: &WriteOptions,
) -> Result<Decoded> {
    let mut decoded = decode(store.descriptor, input, opts)?;
    if store.descriptor.schema.is_some() {
        return Ok(decoded);
    }
    let Some(pruned) = store.strategy.prune_unknown(&mut decoded.value) else {
        return Ok(decoded);
    };
    let findings = unknown_fields(pruned);
    match opts.field_validation {
        FieldValidation::Ignore => {}
        FieldValidation::Warn => decoded.warnings.extend(findings),
        FieldValidation::Strict if findings.is_empty() => {}
        FieldValidation::Strict => {
            let d = store.descriptor;
            let gvk = kas_apimachinery::runtime::GroupVersionKind {
                group: d.group.to_owned(),
                version: d.version.to_owned(),
                kind: d.kind.to_owned(),
            };
            return Err(serializer::transform_decode_error(
                d.kind,
                Some(&gvk),
                &DecodeError::Strict(findings),
                &input.bytes,
            )
            .into());
        }
    }
    Ok(decoded)
}

/// `check_fields` for a store's resource (see [`decode_for`]).
pub fn check_fields_for(
    store: &kas_registry::store::Store,
    mut value: Value,
    opts: &WriteOptions,
) -> Result<(Value, Vec<String>)> {
    if store.descriptor.schema.is_some() {
        return check_fields(store.descriptor, value, opts);
    }
    let Some(pruned) = store.strategy.prune_unknown(&mut value) else {
        return Ok((value, Vec::new()));
    };
    let findings = unknown_fields(pruned);
    match opts.field_validation {
        FieldValidation::Ignore => Ok((value, Vec::new())),
        FieldValidation::Warn => Ok((value, findings)),
        FieldValidation::Strict if findings.is_empty() => Ok((value, Vec::new())),
        FieldValidation::Strict => Err(invalid_patch(
            &value,
            &DecodeError::Strict(findings).to_string(),
        )),
    }
}

/// Pruned paths as strict decoding names them.
fn unknown_fields(paths: Vec<String>) -> Vec<String> {
    paths
        .into_iter()
        .map(|p| {
            format!(
                "unknown field {}",
                kas_apimachinery::golang::strconv::quote(&p)
            )
        })
        .collect()
}

/// The unknown fields of a patched object under `fieldValidation` (upstream decodes the
/// patch result strictly): an error under Strict, warnings under Warn; the object comes
/// back without them.
pub fn check_fields(
    d: &ResourceDescriptor,
    mut value: Value,
    opts: &WriteOptions,
) -> Result<(Value, Vec<String>)> {
    let Some(schema) = d.schema else {
        return Ok((value, Vec::new()));
    };
    // Upstream decodes the patched object into its Go type; what does not fit, and under
    // Strict what is unknown, is a 422 on the patch with the patched document as value.
    if let Err(e) = fits_go_type(&value, schema) {
        return Err(invalid_patch(&value, &e));
    }
    let findings = || {
        let json = serde_json::to_vec(&value).unwrap_or_default();
        serializer::json_strict_fields(&json, Some(schema))
    };
    let warnings = match opts.field_validation {
        FieldValidation::Ignore => Vec::new(),
        FieldValidation::Warn => findings(),
        FieldValidation::Strict => {
            let found = findings();
            if !found.is_empty() {
                return Err(invalid_patch(
                    &value,
                    &DecodeError::Strict(found).to_string(),
                ));
            }
            Vec::new()
        }
    };
    as_go_types(&mut value, schema);
    Ok((value, warnings))
}

/// Upstream's patcher when the patched document does not decode: a 422 on `patch`, its
/// value the document, its detail the decoding error.
fn invalid_patch(value: &Value, err: &str) -> kas_registry::Error {
    use kas_apimachinery::validation::field;
    let json = kas_apimachinery::golang::json::to_vec(value).unwrap_or_default();
    let json = String::from_utf8_lossy(&json).into_owned();
    let cause = field::invalid(&field::Path::new("patch"), json, err).to_cause();
    Status::invalid("", "", "", vec![cause]).into()
}

/// Whether `value` decodes into upstream's Go type: the protobuf encoder walks it as that
/// decoding would, and fails with `encoding/json`'s words (`json: cannot unmarshal array
/// into Go struct field ConfigMap.data of type map[string]string`).
fn fits_go_type(
    value: &Value,
    schema: &'static kas_apimachinery::schema::Message,
) -> std::result::Result<(), String> {
    kas_apimachinery::protobuf::encode(value, schema, &mut Vec::new()).map_err(|e| e.to_string())
}

/// What a round trip through upstream's Go types leaves of `value`: no unknown fields, and
/// no `omitempty` field holding an empty value. An empty `metadata.managedFields` list
/// stays: decoded, it is an empty slice, not a nil one, and asks the field manager to
/// reset the entries.
fn as_go_types(value: &mut Value, schema: &'static kas_apimachinery::schema::Message) {
    let kind = kas_apimachinery::schema::Kind::Message(schema);
    let reset = value
        .pointer("/metadata/managedFields")
        .is_some_and(|m| m.as_array().is_some_and(Vec::is_empty));
    kas_apimachinery::schema::prune(value, &kind);
    kas_apimachinery::schema::omit_empty(value, &kind);
    if reset && let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("managedFields".into(), Value::Array(Vec::new()));
    }
}

/// What strict decoding reports, in upstream's order: a YAML body's repeated keys as
/// goyaml reports them, then the unknown fields of its JSON form; a JSON body's repeated
/// and unknown keys in document order.
fn strict_findings(
    d: &ResourceDescriptor,
    media: MediaType,
    bytes: &[u8],
    value: &Value,
) -> Vec<String> {
    match media {
        MediaType::Yaml => {
            let mut findings = serializer::yaml_duplicate_fields(bytes);
            if d.schema.is_some() {
                let json = serde_json::to_vec(value).unwrap_or_default();
                findings.extend(
                    serializer::json_strict_fields(&json, d.schema)
                        .into_iter()
                        .filter(|f| f.starts_with("unknown field")),
                );
            }
            findings
        }
        _ => serializer::json_strict_fields(bytes, d.schema),
    }
}

/// A body that is an options object (DeleteOptions): JSON or YAML, no kind required.
pub fn decode_options(headers: &HeaderMap, bytes: &[u8]) -> Result<Value> {
    let media = negotiation::negotiate_input_media_type(content_type(headers), false)?;
    if media == MediaType::Protobuf {
        return crate::responsewriters::protobuf::decode_body(
            bytes,
            &kas_api::meta::v1::DELETE_OPTIONS,
        );
    }
    let value = match media {
        MediaType::Yaml => serializer::yaml_to_json(bytes),
        _ => serde_json::from_slice(bytes).map_err(|e| DecodeError::JsonParse(e.to_string())),
    };
    value.map_err(|e| Status::bad_request(&e.to_string()).into())
}

pub fn patch_type(headers: &HeaderMap, custom: bool) -> Result<PatchType> {
    let supported = if custom {
        negotiation::CUSTOM_RESOURCE_PATCH_TYPES
    } else {
        negotiation::BUILTIN_PATCH_TYPES
    };
    Ok(negotiation::negotiate_patch_type(
        content_type(headers),
        supported,
    )?)
}
