//! `/openapi/v2` as protobuf: gnostic's `openapi.v2.Document` (gnostic-models
//! `openapiv2/OpenAPIv2.proto`), which is what client-go's `OpenAPISchema()` asks for
//! and the only form it can read. Upstream compiles its JSON with gnostic and marshals the
//! result; this walks our JSON the same way, for the subset of Swagger 2.0 the document
//! builder writes and custom resources' schemas use (no headers, examples or XML).
//!
//! Values gnostic keeps as YAML text (`Any.yaml`: defaults, enums and `x-` extensions)
//! are written in YAML's flow style, which is JSON with spaces; clients parse them as
//! YAML, so the meaning is upstream's even where the line breaks are not.

use serde_json::Value;

/// A protobuf message being written: fields in the order the encoder calls for them.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn key(&mut self, field: u32, wire: u8) {
        self.varint((u64::from(field) << 3) | u64::from(wire));
    }

    fn bytes(&mut self, field: u32, data: &[u8]) {
        self.key(field, 2);
        self.varint(data.len() as u64);
        self.0.extend_from_slice(data);
    }

    /// proto3: an empty string is not written.
    fn string(&mut self, field: u32, value: Option<&Value>) {
        if let Some(s) = value.and_then(Value::as_str).filter(|s| !s.is_empty()) {
            self.bytes(field, s.as_bytes());
        }
    }

    fn strings(&mut self, field: u32, value: Option<&Value>) {
        for s in value.and_then(Value::as_array).into_iter().flatten() {
            if let Some(s) = s.as_str() {
                self.bytes(field, s.as_bytes());
            }
        }
    }

    /// proto3: false is not written.
    fn boolean(&mut self, field: u32, value: Option<&Value>) {
        if value.and_then(Value::as_bool) == Some(true) {
            self.key(field, 0);
            self.varint(1);
        }
    }

    /// proto3 `double`: zero is not written.
    fn double(&mut self, field: u32, value: Option<&Value>) {
        if let Some(f) = value.and_then(Value::as_f64).filter(|f| *f != 0.0) {
            self.key(field, 1);
            self.0.extend_from_slice(&f.to_le_bytes());
        }
    }

    /// proto3 `int64`: zero is not written; negatives take ten bytes, as Go writes them.
    fn int64(&mut self, field: u32, value: Option<&Value>) {
        if let Some(i) = value.and_then(Value::as_i64).filter(|i| *i != 0) {
            self.key(field, 0);
            self.varint(i as u64);
        }
    }

    /// A set message field: written even when empty, as Go writes a non-nil pointer.
    fn message(&mut self, field: u32, encode: impl FnOnce(&mut Writer)) {
        let mut inner = Writer::default();
        encode(&mut inner);
        self.bytes(field, &inner.0);
    }

    /// `Any { string yaml = 2; }`.
    fn any(&mut self, field: u32, value: &Value) {
        self.message(field, |w| w.bytes(2, flow_yaml(value).as_bytes()));
    }

    /// The `x-` keys of an object as `NamedAny`s.
    fn extensions(&mut self, field: u32, object: &Value) {
        for (name, value) in entries(object).filter(|(k, _)| k.starts_with("x-")) {
            self.message(field, |w| {
                w.bytes(1, name.as_bytes());
                w.any(2, value);
            });
        }
    }

    /// A map of named messages (`NamedSchema`, `NamedPathItem`, ...) under `field`.
    fn named(&mut self, field: u32, object: Option<&Value>, encode: fn(&mut Writer, &Value)) {
        for (name, value) in object.into_iter().flat_map(entries) {
            self.message(field, |w| {
                w.bytes(1, name.as_bytes());
                w.message(2, |w| encode(w, value));
            });
        }
    }
}

fn entries(value: &Value) -> impl Iterator<Item = (&String, &Value)> {
    value.as_object().into_iter().flatten()
}

/// A value as gnostic's YAML text: flow style with a final newline.
fn flow_yaml(value: &Value) -> String {
    fn write(out: &mut String, value: &Value) {
        match value {
            Value::Object(map) => {
                out.push('{');
                for (i, (k, v)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push_str(": ");
                    write(out, v);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write(out, v);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(&mut out, value);
    out.push('\n');
    out
}

/// The protobuf form of a Swagger 2.0 document.
pub fn encode(doc: &Value) -> Vec<u8> {
    let mut w = Writer::default();
    w.string(1, doc.get("swagger"));
    if let Some(info) = doc.get("info") {
        w.message(2, |w| {
            w.string(1, info.get("title"));
            w.string(2, info.get("version"));
            w.string(3, info.get("description"));
            w.extensions(7, info);
        });
    }
    w.string(3, doc.get("host"));
    w.string(4, doc.get("basePath"));
    w.strings(5, doc.get("schemes"));
    w.strings(6, doc.get("consumes"));
    w.strings(7, doc.get("produces"));
    if let Some(paths) = doc.get("paths") {
        w.message(8, |w| {
            w.extensions(1, paths);
            let items = entries(paths).filter(|(k, _)| !k.starts_with("x-"));
            for (path, item) in items {
                w.message(2, |w| {
                    w.bytes(1, path.as_bytes());
                    w.message(2, |w| path_item(w, item));
                });
            }
        });
    }
    if let Some(defs) = doc.get("definitions") {
        w.message(9, |w| w.named(1, Some(defs), schema));
    }
    if let Some(params) = doc.get("parameters") {
        w.message(10, |w| w.named(1, Some(params), parameter));
    }
    for requirement in doc
        .get("security")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        w.message(12, |w| security_requirement(w, requirement));
    }
    if let Some(defs) = doc.get("securityDefinitions") {
        w.message(13, |w| w.named(1, Some(defs), security_scheme));
    }
    w.extensions(16, doc);
    w.0
}

fn path_item(w: &mut Writer, item: &Value) {
    w.string(1, item.get("$ref"));
    for (field, method) in [
        (2, "get"),
        (3, "put"),
        (4, "post"),
        (5, "delete"),
        (6, "options"),
        (7, "head"),
        (8, "patch"),
    ] {
        if let Some(op) = item.get(method) {
            w.message(field, |w| operation(w, op));
        }
    }
    parameters_items(w, 9, item.get("parameters"));
    w.extensions(10, item);
}

fn operation(w: &mut Writer, op: &Value) {
    w.strings(1, op.get("tags"));
    w.string(2, op.get("summary"));
    w.string(3, op.get("description"));
    w.string(5, op.get("operationId"));
    w.strings(6, op.get("produces"));
    w.strings(7, op.get("consumes"));
    parameters_items(w, 8, op.get("parameters"));
    if let Some(responses) = op.get("responses") {
        w.message(9, |w| {
            for (code, value) in entries(responses).filter(|(k, _)| !k.starts_with("x-")) {
                w.message(1, |w| {
                    w.bytes(1, code.as_bytes());
                    w.message(2, |w| response_value(w, value));
                });
            }
            w.extensions(2, responses);
        });
    }
    w.strings(10, op.get("schemes"));
    w.boolean(11, op.get("deprecated"));
    w.extensions(13, op);
}

/// `ParametersItem`: a reference, or a parameter.
fn parameters_items(w: &mut Writer, field: u32, list: Option<&Value>) {
    for p in list.and_then(Value::as_array).into_iter().flatten() {
        w.message(field, |w| {
            if p.get("$ref").is_some() {
                w.message(2, |w| json_reference(w, p));
            } else {
                w.message(1, |w| parameter(w, p));
            }
        });
    }
}

fn json_reference(w: &mut Writer, value: &Value) {
    w.string(1, value.get("$ref"));
    w.string(2, value.get("description"));
}

/// `Parameter`: a body parameter, or one of the four non-body kinds by `in`.
fn parameter(w: &mut Writer, p: &Value) {
    if p.get("in").and_then(Value::as_str) == Some("body") {
        w.message(1, |w| {
            w.string(1, p.get("description"));
            w.string(2, p.get("name"));
            w.string(3, p.get("in"));
            w.boolean(4, p.get("required"));
            if let Some(s) = p.get("schema") {
                w.message(5, |w| schema(w, s));
            }
            w.extensions(6, p);
        });
        return;
    }
    // Header and path sub-schemas share a layout; query and formData add
    // allowEmptyValue at 5, shifting the rest by one.
    let (which, shifted) = match p.get("in").and_then(Value::as_str) {
        Some("header") => (1, false),
        Some("formData") => (2, true),
        Some("query") => (3, true),
        _ => (4, false),
    };
    let at = |n: u32| if shifted { n + 1 } else { n };
    w.message(2, |w| {
        w.message(which, |w| {
            w.boolean(1, p.get("required"));
            w.string(2, p.get("in"));
            w.string(3, p.get("description"));
            w.string(4, p.get("name"));
            if shifted {
                w.boolean(5, p.get("allowEmptyValue"));
            }
            w.string(at(5), p.get("type"));
            w.string(at(6), p.get("format"));
            w.string(at(8), p.get("collectionFormat"));
            if let Some(default) = p.get("default") {
                w.any(at(9), default);
            }
            w.boolean(at(19), p.get("uniqueItems"));
            for e in p
                .get("enum")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                w.any(at(20), e);
            }
            w.extensions(at(22), p);
        });
    });
}

fn response_value(w: &mut Writer, value: &Value) {
    if value.get("$ref").is_some() {
        w.message(2, |w| json_reference(w, value));
        return;
    }
    w.message(1, |w| {
        w.string(1, value.get("description"));
        if let Some(s) = value.get("schema") {
            // SchemaItem: a schema (file schemas are never written here).
            w.message(2, |w| w.message(1, |w| schema(w, s)));
        }
        w.extensions(5, value);
    });
}

fn schema(w: &mut Writer, s: &Value) {
    w.string(1, s.get("$ref"));
    w.string(2, s.get("format"));
    w.string(3, s.get("title"));
    w.string(4, s.get("description"));
    if let Some(default) = s.get("default") {
        w.any(5, default);
    }
    w.double(6, s.get("multipleOf"));
    w.double(7, s.get("maximum"));
    w.boolean(8, s.get("exclusiveMaximum"));
    w.double(9, s.get("minimum"));
    w.boolean(10, s.get("exclusiveMinimum"));
    w.int64(11, s.get("maxLength"));
    w.int64(12, s.get("minLength"));
    w.string(13, s.get("pattern"));
    w.int64(14, s.get("maxItems"));
    w.int64(15, s.get("minItems"));
    w.boolean(16, s.get("uniqueItems"));
    w.int64(17, s.get("maxProperties"));
    w.int64(18, s.get("minProperties"));
    w.strings(19, s.get("required"));
    for e in s
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        w.any(20, e);
    }
    match s.get("additionalProperties") {
        Some(Value::Bool(b)) => w.message(21, |w| w.boolean(2, Some(&Value::Bool(*b)))),
        Some(inner @ Value::Object(_)) => w.message(21, |w| w.message(1, |w| schema(w, inner))),
        _ => {}
    }
    match s.get("type") {
        Some(Value::String(t)) => w.message(22, |w| w.bytes(1, t.as_bytes())),
        Some(types @ Value::Array(_)) => w.message(22, |w| w.strings(1, Some(types))),
        _ => {}
    }
    match s.get("items") {
        Some(Value::Array(list)) => w.message(23, |w| {
            list.iter().for_each(|i| w.message(1, |w| schema(w, i)));
        }),
        Some(item @ Value::Object(_)) => w.message(23, |w| w.message(1, |w| schema(w, item))),
        _ => {}
    }
    for part in s
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        w.message(24, |w| schema(w, part));
    }
    if let Some(props) = s.get("properties") {
        w.message(25, |w| w.named(1, Some(props), schema));
    }
    w.boolean(27, s.get("readOnly"));
    w.extensions(31, s);
}

/// `SecurityRequirement`: scheme names and their scopes.
fn security_requirement(w: &mut Writer, requirement: &Value) {
    for (name, scopes) in entries(requirement) {
        w.message(1, |w| {
            w.bytes(1, name.as_bytes());
            w.message(2, |w| w.strings(1, Some(scopes)));
        });
    }
}

/// `SecurityDefinitionsItem`; only the kinds upstream uses (basic, apiKey).
fn security_scheme(w: &mut Writer, s: &Value) {
    match s.get("type").and_then(Value::as_str) {
        Some("basic") => w.message(1, |w| {
            w.string(1, s.get("type"));
            w.string(2, s.get("description"));
            w.extensions(3, s);
        }),
        _ => w.message(2, |w| {
            w.string(1, s.get("type"));
            w.string(2, s.get("name"));
            w.string(3, s.get("in"));
            w.string(4, s.get("description"));
            w.extensions(5, s);
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_and_nested_messages() {
        let doc = json!({"swagger": "2.0", "info": {"title": "K", "version": "1"}});
        assert_eq!(
            encode(&doc),
            [
                0x0a, 3, b'2', b'.', b'0', 0x12, 6, 0x0a, 1, b'K', 0x12, 1, b'1'
            ]
        );
    }

    #[test]
    fn empty_messages_are_written_and_extensions_are_yaml() {
        let doc = json!({"security": [{"BearerToken": []}]});
        // Document.security { additional_properties { name, value: StringArray {} } }
        let expected = [
            0x62, 17, 0x0a, 15, 0x0a, 11, b'B', b'e', b'a', b'r', b'e', b'r', b'T', b'o', b'k',
            b'e', b'n', 0x12, 0,
        ];
        assert_eq!(encode(&doc), expected);
        assert_eq!(
            flow_yaml(&json!([{"group": "", "kind": "ConfigMap"}])),
            "[{\"group\": \"\", \"kind\": \"ConfigMap\"}]\n"
        );
    }

    #[test]
    fn query_parameters_use_the_shifted_layout() {
        let mut w = Writer::default();
        parameter(
            &mut w,
            &json!({"name": "w", "in": "query", "type": "boolean", "uniqueItems": true}),
        );
        // Parameter.non_body_parameter(2) { query_parameter_sub_schema(3) { in=2 "query",
        // name=4 "w", type=6 "boolean", unique_items=20 true } }
        let mut inner = vec![0x12, 5];
        inner.extend_from_slice(b"query");
        inner.extend_from_slice(&[0x22, 1, b'w', 0x32, 7]);
        inner.extend_from_slice(b"boolean");
        inner.extend_from_slice(&[0xa0, 0x01, 1]);
        let mut expected = vec![0x12, inner.len() as u8 + 2, 0x1a, inner.len() as u8];
        expected.extend(inner);
        assert_eq!(w.0, expected);
    }

    #[test]
    fn numeric_validations_use_schema_field_numbers() {
        let mut w = Writer::default();
        schema(
            &mut w,
            &json!({"maximum": 10, "minimum": 0, "exclusiveMaximum": true, "maxLength": 3,
                    "pattern": "a"}),
        );
        // maximum=7 (fixed64 10.0), exclusive_maximum=8 true, minimum 0 left out (proto3),
        // max_length=11 varint 3, pattern=13 "a".
        let mut expected = vec![0x39];
        expected.extend_from_slice(&10f64.to_le_bytes());
        expected.extend_from_slice(&[0x40, 1, 0x58, 3, 0x6a, 1, b'a']);
        assert_eq!(w.0, expected);
    }
}
