//! CustomResourceDefinitions are stored in `apiextensions.k8s.io/v1beta1` (upstream's
//! apiextensions server prefers "the more compact serialization", issue 82292) and served
//! in v1. These are upstream's conversions through the internal version
//! (`apis/apiextensions/v1/conversion.go`, the generated ones) and v1beta1's defaulting
//! (`v1beta1/defaults.go`), on the JSON forms:
//!
//! - v1 → v1beta1: `spec.version` is the first version's name; a per-version
//!   `subresources`, `schema`, `additionalPrinterColumns` or `selectableFields` that is the
//!   same in every version moves to the spec (`subresources`, `validation`, ...); printer
//!   columns spell `JSONPath`; `conversion.webhook`'s fields move up
//!   (`webhookClientConfig`, `conversionReviewVersions`); `preserveUnknownFields` is
//!   written, false included (the internal version's pointer).
//! - v1beta1 → v1: defaults first, then the spec's shared fields copied into each version
//!   (over the version's own), and the rest back.

use serde_json::{Map, Value, json};

use super::StoredKind;

const GROUP: &str = "apiextensions.k8s.io";
const KIND: &str = "CustomResourceDefinition";

/// The per-version fields v1beta1 can also hold once in the spec: (v1's name in a version,
/// v1beta1's name in the spec).
const SHARED: [(&str, &str); 4] = [
    ("subresources", "subresources"),
    ("schema", "validation"),
    ("additionalPrinterColumns", "additionalPrinterColumns"),
    ("selectableFields", "selectableFields"),
];

/// Whether writes of this kind go through [`to_v1beta1`].
pub(super) fn converts(kind: &StoredKind) -> bool {
    (kind.group, kind.version, kind.kind) == (GROUP, "v1beta1", KIND)
}

/// Whether a stored object of this type is read through [`from_v1beta1`].
pub(super) fn is_v1beta1(api_version: &str, kind: &str) -> bool {
    kind == KIND && api_version == "apiextensions.k8s.io/v1beta1"
}

/// A v1 CRD in v1beta1's form.
pub(super) fn to_v1beta1(crd: &mut Value) {
    let Some(Value::Object(spec)) = crd.get_mut("spec") else {
        return;
    };
    let preserve = spec
        .get("preserveUnknownFields")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    spec.insert("preserveUnknownFields".into(), preserve.into());
    if let Some(Value::Object(conversion)) = spec.get_mut("conversion")
        && let Some(Value::Object(mut webhook)) = conversion.remove("webhook")
    {
        move_field(
            &mut webhook,
            "conversionReviewVersions",
            conversion,
            "conversionReviewVersions",
        );
        move_field(
            &mut webhook,
            "clientConfig",
            conversion,
            "webhookClientConfig",
        );
    }
    let mut shared = Map::new();
    if let Some(Value::Array(versions)) = spec.get_mut("versions")
        && !versions.is_empty()
    {
        let name = versions[0].get("name").cloned().unwrap_or(Value::Null);
        for (field, top) in SHARED {
            let value = set(versions[0].get(field)).cloned();
            if versions.iter().all(|v| set(v.get(field)) == value.as_ref()) {
                for v in versions.iter_mut() {
                    if let Value::Object(v) = v {
                        v.remove(field);
                    }
                }
                if let Some(value) = value {
                    shared.insert(top.to_owned(), value);
                }
            }
        }
        for v in versions.iter_mut() {
            rename_columns(
                v.get_mut("additionalPrinterColumns"),
                "jsonPath",
                "JSONPath",
            );
        }
        if !name.is_null() {
            spec.insert("version".into(), name);
        }
    }
    rename_columns(
        shared.get_mut("additionalPrinterColumns"),
        "jsonPath",
        "JSONPath",
    );
    spec.extend(shared);
}

/// A v1beta1 CRD, defaulted as v1beta1 defaults it, in v1's form.
pub(super) fn from_v1beta1(crd: &mut Value) {
    let Some(Value::Object(spec)) = crd.get_mut("spec") else {
        return;
    };
    default_spec(spec);
    let version = spec.remove("version");
    if spec
        .get("versions")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
        && let Some(Value::String(name)) = &version
        && !name.is_empty()
    {
        spec.insert(
            "versions".into(),
            json!([{"name": name, "served": true, "storage": true}]),
        );
    }
    let mut shared = Vec::new();
    for (field, top) in SHARED {
        if let Some(value) = spec.remove(top).filter(|v| !v.is_null()) {
            shared.push((field, value));
        }
    }
    if let Some(Value::Array(versions)) = spec.get_mut("versions") {
        for v in versions.iter_mut() {
            let Value::Object(v) = v else { continue };
            for (field, value) in &shared {
                v.insert((*field).to_owned(), value.clone());
            }
            rename_columns(
                v.get_mut("additionalPrinterColumns"),
                "JSONPath",
                "jsonPath",
            );
        }
    }
    if let Some(Value::Object(conversion)) = spec.get_mut("conversion") {
        let mut webhook = Map::new();
        move_field(
            conversion,
            "conversionReviewVersions",
            &mut webhook,
            "conversionReviewVersions",
        );
        move_field(
            conversion,
            "webhookClientConfig",
            &mut webhook,
            "clientConfig",
        );
        if !webhook.is_empty() {
            conversion.insert("webhook".into(), Value::Object(webhook));
        }
    }
    if spec.get("preserveUnknownFields") != Some(&Value::Bool(true)) {
        spec.remove("preserveUnknownFields");
    }
    let stored = first_storage_version(spec);
    if let Some(Value::Object(status)) = crd.get_mut("status")
        && status
            .get("storedVersions")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        && let Some(name) = stored
    {
        status.insert("storedVersions".into(), json!([name]));
    }
}

/// v1beta1's `SetDefaults_CustomResourceDefinitionSpec` (and its service port's).
fn default_spec(spec: &mut Map<String, Value>) {
    if spec
        .get("scope")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        spec.insert("scope".into(), "Namespaced".into());
    }
    if let Some(Value::Object(names)) = spec.get_mut("names") {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if names
            .get("singular")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            names.insert("singular".into(), kind.to_lowercase().into());
        }
        if names
            .get("listKind")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
            && !kind.is_empty()
        {
            names.insert("listKind".into(), format!("{kind}List").into());
        }
    }
    let conversion = spec
        .entry("conversion")
        .or_insert_with(|| json!({"strategy": "None"}));
    if let Value::Object(conversion) = conversion {
        if conversion.get("strategy").and_then(Value::as_str) == Some("Webhook")
            && conversion
                .get("conversionReviewVersions")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
        {
            conversion.insert("conversionReviewVersions".into(), json!(["v1beta1"]));
        }
        if let Some(Value::Object(service)) = conversion
            .get_mut("webhookClientConfig")
            .and_then(|c| c.get_mut("service"))
        {
            service.entry("port").or_insert_with(|| json!(443));
        }
    }
    if spec.get("preserveUnknownFields").is_none_or(Value::is_null) {
        spec.insert("preserveUnknownFields".into(), true.into());
    }
}

/// The name of the first version stored (v1beta1's default of `status.storedVersions`).
fn first_storage_version(spec: &Map<String, Value>) -> Option<Value> {
    spec.get("versions")?
        .as_array()?
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))?
        .get("name")
        .cloned()
}

/// A field that is set in Go's sense: not null, not an empty list (Semantic.DeepEqual
/// takes nil and empty slices as equal).
fn set(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()))
}

fn move_field(
    from: &mut Map<String, Value>,
    name: &str,
    to: &mut Map<String, Value>,
    to_name: &str,
) {
    if let Some(value) = from.remove(name).filter(|v| !v.is_null()) {
        to.insert(to_name.to_owned(), value);
    }
}

/// Printer columns' JSONPath field, renamed between the versions' spellings.
fn rename_columns(columns: Option<&mut Value>, from: &str, to: &str) {
    let Some(Value::Array(columns)) = columns else {
        return;
    };
    for column in columns {
        if let Value::Object(column) = column
            && let Some(path) = column.remove(from)
        {
            column.insert(to.to_owned(), path);
        }
    }
}
