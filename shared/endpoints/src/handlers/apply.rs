//! The body of a server-side apply (`application/apply-patch+yaml`): decoded, checked for
//! repeated keys by `fieldValidation`, and checked against the type's schema as upstream's
//! type converter checks it before merging (`ObjectToTyped`).

use kas_apimachinery::Status;
use kas_apimachinery::golang::json::describe;
use kas_apimachinery::runtime::serializer;
use kas_apimachinery::schema::{Kind, ListType, Message};
use serde_json::Value;

use kas_registry::descriptor::ResourceDescriptor;
use kas_registry::error::Result;
use kas_registry::rest::options::{FieldValidation, WriteOptions};

/// The applied configuration: a YAML (or JSON) object. Upstream's message:
/// `error decoding YAML: ...`.
pub fn decode(patch: &[u8]) -> Result<Value> {
    let bad = |e: String| -> kas_registry::Error {
        Status::bad_request(&format!("error decoding YAML: {e}")).into()
    };
    match serializer::yaml_to_json(patch).map_err(|e| bad(e.to_string()))? {
        Value::Null => Ok(Value::Object(Default::default())),
        v @ Value::Object(_) => Ok(v),
        other => Err(bad(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            describe(&other)
        ))),
    }
}

/// Repeated keys: a 400 under `fieldValidation=Strict` (`error strict decoding YAML: ...`),
/// warnings under Warn.
pub fn strict(patch: &[u8], opts: &WriteOptions) -> Result<Vec<String>> {
    if opts.field_validation == FieldValidation::Ignore {
        return Ok(Vec::new());
    }
    let found = serializer::yaml_duplicate_fields(patch);
    if found.is_empty() {
        return Ok(Vec::new());
    }
    let err = format!(
        "error converting YAML to JSON: yaml: unmarshal errors:\n  {}",
        found.join("\n  ")
    );
    if opts.field_validation == FieldValidation::Strict {
        return Err(Status::bad_request(&format!("error strict decoding YAML: {err}")).into());
    }
    Ok(vec![err])
}

/// The configuration's kind and version must be the endpoint's (upstream's version check
/// manager), it may not carry managed fields, and every field must be declared: upstream
/// fails those with `failed to create typed patch object (ns/name; gvk): .x: field not
/// declared in schema`, a 500 without a reason.
pub fn check(
    d: &ResourceDescriptor,
    schema: Option<&'static Message>,
    config: &Value,
) -> Result<()> {
    let s = |k: &str| config.get(k).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (s("apiVersion"), s("kind"));
    if api_version != d.api_version() || kind != d.kind {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        return Err(Status::bad_request(&format!(
            "invalid object type: {group}/{version}, Kind={kind}"
        ))
        .into());
    }
    if config
        .pointer("/metadata/managedFields")
        .is_some_and(|m| !m.is_null())
    {
        return Err(Status::bad_request("metadata.managedFields must be nil").into());
    }
    let Some(schema) = schema else {
        return Ok(());
    };
    let mut errors = Vec::new();
    undeclared(config, schema, &mut String::new(), &mut errors);
    if errors.is_empty() {
        return Ok(());
    }
    let text = match errors.as_slice() {
        [one] => one.clone(),
        many => format!("errors:\n  {}", many.join("\n  ")),
    };
    let meta = |k: &str| {
        config
            .pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let gvk = format!("{}/{}, Kind={}", d.group, d.version, d.kind);
    Err(Status::failure(
        500,
        kas_apimachinery::StatusReason::Unknown,
        format!(
            "failed to create typed patch object ({}/{}; {gvk}): {text}",
            meta("namespace"),
            meta("name")
        ),
    )
    .into())
}

/// structured-merge-diff's validation of the configuration against the type, as
/// `ObjectToTyped` runs it: undeclared fields (`.x: field not declared in schema`), values
/// of the wrong JSON type, associative list items without their keys, and repeated items.
fn undeclared(v: &Value, msg: &'static Message, path: &mut String, out: &mut Vec<String>) {
    let Some(map) = v.as_object() else { return };
    for (k, child) in map {
        let len = path.len();
        path.push('.');
        path.push_str(k);
        match msg.field(k) {
            None => out.push(format!("{path}: field not declared in schema")),
            Some(f) => in_kind(child, &f.kind, f.list_type, path, out),
        }
        path.truncate(len);
    }
}

fn in_kind(
    v: &Value,
    kind: &'static Kind,
    list_type: Option<ListType>,
    path: &mut String,
    out: &mut Vec<String>,
) {
    if v.is_null() {
        return;
    }
    let mut expected = |what: &str| {
        let mut shown = v.to_string();
        if shown.len() > 64 {
            let mut cut = 61;
            while !shown.is_char_boundary(cut) {
                cut -= 1;
            }
            shown.truncate(cut);
            shown.push_str("...");
        }
        out.push(format!("{path}: expected {what}, got {shown}"));
    };
    match kind {
        Kind::String | Kind::Bytes | Kind::Time | Kind::MicroTime | Kind::Quantity => {
            if !v.is_string() {
                expected("string");
            }
        }
        Kind::Bool => {
            if !v.is_boolean() {
                expected("boolean");
            }
        }
        Kind::Int32 | Kind::Int64 | Kind::Float64 => {
            if !v.is_number() {
                expected("numeric (int or float)");
            }
        }
        Kind::IntOrString => {
            if !v.is_number() && !v.is_string() {
                expected("string or number");
            }
        }
        // Types whose OpenAPI schema has no type are deduced: any value is accepted.
        Kind::FieldsV1
        | Kind::RawExtension
        | Kind::Json
        | Kind::Deduced
        | Kind::JsonSchemaPropsOrArray(_)
        | Kind::JsonSchemaPropsOrBool(_)
        | Kind::JsonSchemaPropsOrStringArray(_) => {}
        Kind::Message(m) => match v.is_object() {
            true => undeclared(v, m, path, out),
            false => expected("map"),
        },
        Kind::Map(inner) => match v.as_object() {
            None => expected("map"),
            Some(map) => {
                for (k, child) in map {
                    let len = path.len();
                    path.push('.');
                    path.push_str(k);
                    in_kind(child, inner, None, path, out);
                    path.truncate(len);
                }
            }
        },
        Kind::Array(inner) => match v.as_array() {
            None => expected("list"),
            Some(items) => {
                let keyed = matches!(list_type, Some(ListType::Map(_) | ListType::Set));
                let mut seen = std::collections::HashSet::new();
                for (i, item) in items.iter().enumerate() {
                    if let Some(ListType::Map(keys)) = list_type
                        && item.is_object()
                        && let Some(missing) = keys.iter().find(|k| item.get(**k).is_none())
                    {
                        out.push(format!(
                            "{path}: element {i}: associative list with keys has an element that omits key field {} (and doesn't have default value)",
                            kas_apimachinery::golang::strconv::quote(missing)
                        ));
                        continue;
                    }
                    let pe = kas_apimachinery::managed_fields::item_path(item, i, list_type);
                    if keyed && !seen.insert(pe.clone()) {
                        out.push(format!("{path}: duplicate entries for key {pe}"));
                        continue;
                    }
                    let len = path.len();
                    path.push_str(&pe);
                    in_kind(item, inner, None, path, out);
                    path.truncate(len);
                }
            }
        },
    }
}
