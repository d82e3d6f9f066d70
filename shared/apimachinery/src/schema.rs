//! The shape of an API type as data: what upstream reads from Go struct definitions and
//! their tags (`json:"name,omitempty"`, `protobuf:"bytes,1,opt,name=..."`, `patchStrategy`,
//! `+listType`). One description per type drives everything that needs the type's shape:
//! the protobuf codec, unknown-field detection for `fieldValidation`, the OpenAPI
//! documents and strategic merge patch metadata.
//!
//! The descriptions of upstream's types live in `kas-api`; this module is only the model.

use crate::patch::{PatchMeta, PatchSchema};

/// How a field's value is represented in JSON and in protobuf.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// JSON string; protobuf `string`.
    String,
    /// JSON boolean; protobuf varint.
    Bool,
    /// JSON number; protobuf `int32` varint.
    Int32,
    /// JSON number; protobuf `int64` varint.
    Int64,
    /// JSON number; protobuf `double` (fixed 64 bits).
    Float64,
    /// `[]byte`: JSON base64 string; protobuf `bytes`.
    Bytes,
    /// `metav1.Time`: JSON RFC 3339 string in seconds (or null); protobuf
    /// `Time { int64 seconds = 1; int32 nanos = 2; }`.
    Time,
    /// `metav1.MicroTime`: JSON RFC 3339 string with microseconds; protobuf as [`Kind::Time`].
    MicroTime,
    /// `resource.Quantity`: JSON string; protobuf `Quantity { string string = 1; }`.
    Quantity,
    /// `intstr.IntOrString`: JSON number or string; protobuf
    /// `IntOrString { int64 type = 1; int32 intVal = 2; string strVal = 3; }`.
    IntOrString,
    /// `metav1.FieldsV1`: any JSON object; protobuf `FieldsV1 { bytes Raw = 1; }` holding
    /// the JSON bytes.
    FieldsV1,
    /// `runtime.RawExtension`: any JSON value; protobuf `RawExtension { bytes raw = 1; }`.
    RawExtension,
    /// apiextensions' `JSON`: any JSON value; protobuf `JSON { bytes raw = 1; }` holding
    /// the JSON text, no bytes for `null`.
    Json,
    /// Any JSON value whose fields structured-merge-diff tracks by deduction (its
    /// `__untyped_deduced_`): an object's keys one by one, a list or a scalar whole. A
    /// custom resource's `x-kubernetes-preserve-unknown-fields` node; no Go type has one,
    /// so protobuf never meets it.
    Deduced,
    /// apiextensions' `JSONSchemaPropsOrArray`, of the schema message given: JSON a schema
    /// object or an array of schemas; protobuf `{ schema = 1; repeated jSONSchemas = 2; }`.
    JsonSchemaPropsOrArray(&'static Message),
    /// apiextensions' `JSONSchemaPropsOrBool`: JSON a boolean or a schema object; protobuf
    /// `{ bool allows = 1; schema = 2; }`.
    JsonSchemaPropsOrBool(&'static Message),
    /// apiextensions' `JSONSchemaPropsOrStringArray`: JSON an array of strings or a schema
    /// object; protobuf `{ schema = 1; repeated string property = 2; }`.
    JsonSchemaPropsOrStringArray(&'static Message),
    /// A nested message.
    Message(&'static Message),
    /// A JSON array; protobuf `repeated`.
    Array(&'static Kind),
    /// A JSON object with string keys; protobuf `map<string, V>`.
    Map(&'static Kind),
}

/// `+listType` of an array field, as OpenAPI's `x-kubernetes-list-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListType {
    Atomic,
    Set,
    /// A list of objects keyed by these fields (`x-kubernetes-list-map-keys`).
    Map(&'static [&'static str]),
}

/// One field of a [`Message`].
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// The JSON name.
    pub name: &'static str,
    /// The protobuf field number; 0 for fields that exist only in JSON (`apiVersion` and
    /// `kind` of a top-level type, whose protobuf form travels in the envelope).
    pub tag: u32,
    pub kind: Kind,
    /// `omitempty` in the JSON tag: a zero value is left out of JSON. As in Go it has no
    /// effect on a non-pointer struct ([`Kind::Message`], [`Kind::Time`], ...): those are
    /// always written, a zero time as `null`.
    pub omit_empty: bool,
    /// A Go pointer (`*T`): absent unless set, in JSON and in protobuf.
    pub pointer: bool,
    /// `patchStrategy` / `patchMergeKey`.
    pub patch: Option<PatchMeta>,
    pub list_type: Option<ListType>,
    pub description: &'static str,
    /// An embedded Go struct (`json:",inline"`, a [`Kind::Message`] with an empty name):
    /// its fields are the parent's in JSON, and a message of its own, numbered `tag`, in
    /// protobuf. [`Message::field`] and [`Message::json_fields`] look through it.
    pub inline: bool,
    /// A named slice type (`Verbs []string`, a [`Kind::Array`]): an array in JSON, and in
    /// protobuf a message of its own, numbered `tag`, holding the items as its field 1
    /// (go-to-protobuf's wrapper for such types).
    pub wrapped: bool,
}

impl Field {
    /// A field with `omitempty` and no other markers; the common case.
    pub const fn new(name: &'static str, tag: u32, kind: Kind) -> Field {
        Field {
            name,
            tag,
            kind,
            omit_empty: true,
            pointer: false,
            patch: None,
            list_type: None,
            description: "",
            inline: false,
            wrapped: false,
        }
    }

    /// A Go pointer (`*string`, `*bool`, `*int32`, `*Struct`).
    pub const fn pointer(mut self) -> Field {
        self.pointer = true;
        self
    }

    /// No `omitempty`: the zero value is written to JSON.
    pub const fn always(mut self) -> Field {
        self.omit_empty = false;
        self
    }

    pub const fn patch(mut self, patch: PatchMeta) -> Field {
        self.patch = Some(patch);
        self
    }

    pub const fn list_type(mut self, list_type: ListType) -> Field {
        self.list_type = Some(list_type);
        self
    }

    pub const fn describe(mut self, description: &'static str) -> Field {
        self.description = description;
        self
    }
}

/// The name of a field that stands for the keys a message does not declare: an object
/// whose schema keeps unknown fields (a custom resource's root with
/// `x-kubernetes-preserve-unknown-fields`, structured-merge-diff's map with a deduced
/// element type).
pub const OTHER_FIELDS: &str = "*";

/// A message: a Go struct with its JSON and protobuf tags.
#[derive(Debug)]
pub struct Message {
    /// The OpenAPI definition name, e.g. `io.k8s.api.core.v1.ConfigMap`.
    pub name: &'static str,
    pub description: &'static str,
    pub fields: &'static [Field],
    /// The `required` list of the OpenAPI definition.
    pub required: &'static [&'static str],
    /// `+structType=atomic` (OpenAPI's `x-kubernetes-map-type: atomic`): the struct is
    /// replaced whole by merges and owned whole by one field manager.
    pub atomic: bool,
}

impl Message {
    /// The description of the field `name`, usable in a `static` (a Table column's, as
    /// upstream's printers take `SwaggerDoc()[name]`); a name the message lacks fails the
    /// build.
    pub const fn doc(&self, name: &str) -> &'static str {
        let mut i = 0;
        while i < self.fields.len() {
            let f = &self.fields[i];
            if const_eq(f.name.as_bytes(), name.as_bytes()) {
                return f.description;
            }
            i += 1;
        }
        panic!("no such field")
    }

    /// The field a JSON key names, looking through embedded structs; in a message that
    /// has one, the [`OTHER_FIELDS`] field stands for every key it does not declare.
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        let declared = |name: &str| {
            self.fields.iter().find_map(|f| match (f.inline, &f.kind) {
                (true, Kind::Message(m)) => m.field(name),
                _ => (f.name == name).then_some(f),
            })
        };
        declared(name).or_else(|| declared(OTHER_FIELDS))
    }

    /// The fields as JSON has them: embedded structs' fields in their place.
    pub fn json_fields(&self) -> Vec<&'static Field> {
        fn flatten(fields: &'static [Field], out: &mut Vec<&'static Field>) {
            for f in fields {
                match (f.inline, &f.kind) {
                    (true, Kind::Message(m)) => flatten(m.fields, out),
                    _ => out.push(f),
                }
            }
        }
        let mut out = Vec::new();
        flatten(self.fields, &mut out);
        out
    }

    pub fn field_by_tag(&self, tag: u32) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.tag == tag && tag != 0)
    }

    /// The Go type name: the last segment of the definition name.
    pub fn short_name(&self) -> &'static str {
        self.name.rsplit('.').next().unwrap_or(self.name)
    }
}

impl Kind {
    /// The message a value of this kind is, looking through arrays and maps.
    pub fn element_message(&self) -> Option<&'static Message> {
        match self {
            Kind::Message(m) => Some(m),
            Kind::Array(k) | Kind::Map(k) => k.element_message(),
            _ => None,
        }
    }

    /// The schema message (`JSONSchemaProps`) of a `JSONSchemaProps` union: the message
    /// its protobuf message's `schema` field holds.
    pub fn schema_message(&self) -> Option<&'static Message> {
        match self {
            Kind::JsonSchemaPropsOrArray(u)
            | Kind::JsonSchemaPropsOrBool(u)
            | Kind::JsonSchemaPropsOrStringArray(u) => u.fields.iter().find_map(|f| match f.kind {
                Kind::Message(m) => Some(m),
                _ => None,
            }),
            _ => None,
        }
    }
}

/// Drops every key `value` has that its kind does not (what decoding into upstream's Go
/// types does to unknown fields), recursively. Free-form content (raw extensions, managed
/// fields) and values of the wrong JSON type are left as they are.
pub fn prune(value: &mut serde_json::Value, kind: &Kind) {
    use serde_json::Value;
    match (kind, value) {
        (Kind::Message(m), Value::Object(map)) => {
            map.retain(|k, _| m.field(k).is_some());
            for (k, v) in map.iter_mut() {
                if let Some(f) = m.field(k) {
                    prune(v, &f.kind);
                }
            }
        }
        (Kind::Map(inner), Value::Object(map)) => map.values_mut().for_each(|v| prune(v, inner)),
        (Kind::Array(inner), Value::Array(items)) => items.iter_mut().for_each(|v| prune(v, inner)),
        (kind @ Kind::JsonSchemaPropsOrArray(_), Value::Array(items)) => {
            if let Some(m) = kind.schema_message() {
                items.iter_mut().for_each(|v| prune(v, &Kind::Message(m)));
            }
        }
        (kind, v @ Value::Object(_)) => {
            if let Some(m) = kind.schema_message() {
                prune(v, &Kind::Message(m));
            }
        }
        _ => {}
    }
}

/// Drops the fields Go's `encoding/json` would leave out after decoding `value` into
/// upstream's types: `omitempty` fields holding an empty string, array, map or byte
/// string, `false`, `0` or `null` (a nil pointer, or a zero value). As in Go, a pointer
/// keeps any value but `null`, and a struct (a message, a time, a quantity) is never
/// empty. So `metadata.annotations: {}` or an event's `count: 0` is not stored, as
/// upstream does not store it.
pub fn omit_empty(value: &mut serde_json::Value, kind: &Kind) {
    use serde_json::Value;
    match (kind, value) {
        (Kind::Message(m), Value::Object(map)) => {
            map.retain(|k, v| !m.field(k).is_some_and(|f| f.omit_empty && go_empty(f, v)));
            for (k, v) in map.iter_mut() {
                if let Some(f) = m.field(k) {
                    omit_empty(v, &f.kind);
                }
            }
        }
        (Kind::Map(inner), Value::Object(map)) => {
            map.values_mut().for_each(|v| omit_empty(v, inner));
        }
        (Kind::Array(inner), Value::Array(items)) => {
            items.iter_mut().for_each(|v| omit_empty(v, inner));
        }
        (kind @ Kind::JsonSchemaPropsOrArray(_), Value::Array(items)) => {
            if let Some(m) = kind.schema_message() {
                items
                    .iter_mut()
                    .for_each(|v| omit_empty(v, &Kind::Message(m)));
            }
        }
        (kind, v @ Value::Object(_)) => {
            if let Some(m) = kind.schema_message() {
                omit_empty(v, &Kind::Message(m));
            }
        }
        _ => {}
    }
}

/// Adds what Go's `encoding/json` writes for the fields `value` leaves at their zero value
/// after decoding into upstream's types: a struct (a message, a time, a quantity) is always
/// written, as `{}` with its own zero fields, `null` or `"0"`; a field without
/// `omitempty` is written as `""`, `0`, `false`, or `null` for a nil pointer, slice or map.
/// A `null` where Go keeps no nil becomes the zero value. So an event posted without
/// them is stored with `source: {}`, `eventTime: null` and `reportingComponent: ""`, as
/// upstream stores it. Quantities are written in their canonical form. Expects
/// `omit_empty` to have run (see [`go_encoded`]).
pub fn fill_zero(value: &mut serde_json::Value, kind: &Kind) {
    use serde_json::Value;
    match (kind, value) {
        (Kind::Message(m), Value::Object(map)) => fill_fields(map, m.fields),
        (Kind::Map(inner), Value::Object(map)) => {
            map.values_mut().for_each(|v| fill_element(v, inner));
        }
        (Kind::Array(inner), Value::Array(items)) => {
            items.iter_mut().for_each(|v| fill_element(v, inner));
        }
        // Go writes a decoded Quantity in its canonical form (`1000m` as `1`).
        (Kind::Quantity, v @ (Value::String(_) | Value::Number(_))) => {
            let text = match &*v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if let Some(canonical) = crate::resource::canonical(&text) {
                *v = Value::String(canonical);
            }
        }
        // Go writes a float64 in its own shortest form (`1.0` as `1`).
        (Kind::Float64, Value::Number(n)) => {
            if let Some(f) = n.as_f64().filter(|f| f.is_finite())
                && let Ok(go) = serde_json::from_str(&crate::golang::json::format_float(f, 64))
            {
                *n = go;
            }
        }
        // The unions' `UnmarshalJSON` keep a schema object, an array (of schemas, of
        // strings) when it has items, a boolean; their `MarshalJSON` write `null` for
        // anything else.
        (
            kind @ (Kind::JsonSchemaPropsOrArray(_)
            | Kind::JsonSchemaPropsOrBool(_)
            | Kind::JsonSchemaPropsOrStringArray(_)),
            v @ Value::Object(_),
        ) => {
            if let Some(m) = kind.schema_message() {
                fill_zero(v, &Kind::Message(m));
            }
        }
        (kind @ Kind::JsonSchemaPropsOrArray(_), Value::Array(items)) if !items.is_empty() => {
            if let Some(m) = kind.schema_message() {
                items
                    .iter_mut()
                    .for_each(|v| fill_element(v, &Kind::Message(m)));
            }
        }
        (Kind::JsonSchemaPropsOrStringArray(_), Value::Array(items)) if !items.is_empty() => {}
        (Kind::JsonSchemaPropsOrBool(_), Value::Bool(_)) => {}
        (Kind::JsonSchemaPropsOrArray(_) | Kind::JsonSchemaPropsOrStringArray(_), v) => {
            *v = Value::Null;
        }
        _ => {}
    }
}

/// [`fill_zero`] of a struct's fields in `map`; an embedded struct's fields are the
/// same object's.
fn fill_fields(map: &mut serde_json::Map<String, serde_json::Value>, fields: &'static [Field]) {
    for f in fields.iter().filter(|f| f.tag != 0) {
        if let (true, Kind::Message(inner)) = (f.inline, &f.kind) {
            fill_fields(map, inner.fields);
            continue;
        }
        match map.get_mut(f.name) {
            Some(v) if !v.is_null() => fill_zero(v, &f.kind),
            Some(v) => match written_zero(f) {
                Some(zero) => *v = zero,
                None => {
                    map.remove(f.name);
                }
            },
            None => {
                if let Some(zero) = written_zero(f) {
                    map.insert(f.name.to_owned(), zero);
                }
            }
        }
    }
}

/// An element of a slice or map: Go decodes `null` into its zero value.
fn fill_element(value: &mut serde_json::Value, kind: &Kind) {
    if value.is_null() {
        *value = zero_value(kind);
    } else {
        fill_zero(value, kind);
    }
}

/// [`omit_empty`] then [`fill_zero`]: the JSON Go writes for `value` after decoding it into
/// upstream's types, but for unknown fields (see [`prune`]) and key order.
pub fn go_encoded(value: &mut serde_json::Value, kind: &Kind) {
    omit_empty(value, kind);
    fill_zero(value, kind);
}

/// What field `f` writes when it holds its zero value, or `None` when `omitempty` drops it.
fn written_zero(f: &Field) -> Option<serde_json::Value> {
    if f.pointer {
        return (!f.omit_empty).then_some(serde_json::Value::Null);
    }
    let scalar = matches!(
        f.kind,
        Kind::String
            | Kind::Bool
            | Kind::Int32
            | Kind::Int64
            | Kind::Float64
            | Kind::Bytes
            | Kind::Array(_)
            | Kind::Map(_)
    );
    (!(f.omit_empty && scalar)).then(|| zero_value(&f.kind))
}

/// The JSON of a Go zero value of `kind`: `""`, `false`, `0`, `null` for nil slices, maps,
/// byte strings, raw extensions and the zero time, `"0"` for a quantity, and a message's
/// object of its written zero fields.
pub fn zero_value(kind: &Kind) -> serde_json::Value {
    use serde_json::Value;
    match kind {
        Kind::String => Value::String(String::new()),
        Kind::Bool | Kind::JsonSchemaPropsOrBool(_) => Value::Bool(false),
        Kind::Int32 | Kind::Int64 | Kind::Float64 | Kind::IntOrString => Value::from(0),
        Kind::Quantity => Value::String("0".into()),
        Kind::Message(_) => {
            let mut v = Value::Object(serde_json::Map::new());
            fill_zero(&mut v, kind);
            v
        }
        Kind::Bytes
        | Kind::Time
        | Kind::MicroTime
        | Kind::FieldsV1
        | Kind::RawExtension
        | Kind::Json
        | Kind::Deduced
        | Kind::JsonSchemaPropsOrArray(_)
        | Kind::JsonSchemaPropsOrStringArray(_)
        | Kind::Array(_)
        | Kind::Map(_) => Value::Null,
    }
}

/// Whether Go's `omitempty` leaves out `value` of field `f`.
fn go_empty(f: &Field, value: &serde_json::Value) -> bool {
    use serde_json::Value;
    let is_struct = matches!(
        f.kind,
        Kind::Message(_)
            | Kind::Time
            | Kind::MicroTime
            | Kind::Quantity
            | Kind::IntOrString
            | Kind::FieldsV1
            | Kind::RawExtension
            | Kind::Json
            | Kind::Deduced
            | Kind::JsonSchemaPropsOrArray(_)
            | Kind::JsonSchemaPropsOrBool(_)
            | Kind::JsonSchemaPropsOrStringArray(_)
    );
    match value {
        Value::Null => f.pointer || !is_struct,
        _ if f.pointer || is_struct => false,
        Value::String(s) => matches!(f.kind, Kind::String | Kind::Bytes) && s.is_empty(),
        Value::Bool(b) => matches!(f.kind, Kind::Bool) && !b,
        Value::Number(n) => {
            matches!(f.kind, Kind::Int32 | Kind::Int64 | Kind::Float64) && n.as_f64() == Some(0.0)
        }
        Value::Array(a) => matches!(f.kind, Kind::Array(_)) && a.is_empty(),
        Value::Object(o) => matches!(f.kind, Kind::Map(_)) && o.is_empty(),
    }
}

/// A message is a patch schema: `patchStrategy` and `patchMergeKey` by path, `[]` stepping
/// into an array's elements. Every message is a closed Go struct, as upstream's lookups
/// through its Go types find.
impl PatchSchema for Message {
    fn unknown_field(&self, path: &[&str]) -> Option<&str> {
        let (field, parent) = path.split_last()?;
        let mut message: &Message = self;
        let mut rest = parent;
        while let Some((first, tail)) = rest.split_first() {
            let mut kind = &message.field(first)?.kind;
            rest = tail;
            loop {
                match (kind, rest.split_first()) {
                    (Kind::Array(inner), Some((&"[]", tail)))
                    | (Kind::Map(inner), Some((_, tail))) => {
                        kind = inner;
                        rest = tail;
                    }
                    (Kind::Message(m), _) => {
                        message = m;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        message.field(field).is_none().then(|| message.short_name())
    }

    fn lookup(&self, path: &[&str]) -> Option<PatchMeta> {
        let (first, rest) = path.split_first()?;
        let field = self.field(first)?;
        if rest.is_empty() {
            return field.patch;
        }
        let mut kind = &field.kind;
        let mut rest = rest;
        loop {
            match (kind, rest.split_first()) {
                (Kind::Array(inner), Some((&"[]", tail))) | (Kind::Map(inner), Some((_, tail))) => {
                    kind = inner;
                    rest = tail;
                }
                (Kind::Message(m), Some(_)) => return m.lookup(rest),
                _ => return None,
            }
        }
    }
}

/// Byte equality in a `const fn`.
const fn const_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    static PORT: Message = Message {
        name: "test.Port",
        description: "",
        fields: &[
            Field::new("name", 1, Kind::String),
            Field::new("port", 2, Kind::Int32).always(),
        ],
        required: &["port"],
        atomic: false,
    };
    static SPEC: Message = Message {
        name: "test.Spec",
        description: "",
        fields: &[
            Field::new("ports", 1, Kind::Array(&Kind::Message(&PORT)))
                .patch(PatchMeta::merge_by("port")),
            Field::new("finalizers", 2, Kind::Array(&Kind::String)),
        ],
        required: &[],
        atomic: false,
    };
    static ROOT: Message = Message {
        name: "io.k8s.test.Root",
        description: "",
        fields: &[
            Field::new("kind", 0, Kind::String),
            Field::new("spec", 2, Kind::Message(&SPEC)),
        ],
        required: &[],
        atomic: false,
    };

    #[test]
    fn message_lookup_by_name_and_tag() {
        assert_eq!(ROOT.field("spec").map(|f| f.tag), Some(2));
        assert!(ROOT.field_by_tag(0).is_none(), "tag 0 is JSON only");
        assert_eq!(ROOT.short_name(), "Root");
        assert_eq!(
            SPEC.field("ports")
                .and_then(|f| f.kind.element_message())
                .map(|m| m.name),
            Some("test.Port")
        );
    }

    #[test]
    fn prune_drops_unknown_keys_at_every_depth() {
        let mut v = serde_json::json!({"kind": "Root", "bogus": 1, "spec": {
            "ports": [{"name": "a", "port": 1, "extra": true}], "finalizers": ["x"], "nope": {}}});
        prune(&mut v, &Kind::Message(&ROOT));
        assert_eq!(
            v,
            serde_json::json!({"kind": "Root", "spec": {
                "ports": [{"name": "a", "port": 1}], "finalizers": ["x"]}})
        );
    }

    static EMPTIES: Message = Message {
        name: "test.Empties",
        description: "",
        fields: &[
            Field::new("labels", 1, Kind::Map(&Kind::String)),
            Field::new("name", 2, Kind::String),
            Field::new("count", 3, Kind::Int32),
            Field::new("flag", 4, Kind::Bool),
            Field::new("replicas", 5, Kind::Int32).pointer(),
            Field::new("paused", 6, Kind::Bool).pointer(),
            Field::new("spec", 7, Kind::Message(&SPEC)),
            Field::new("time", 8, Kind::Time),
            Field::new("always", 9, Kind::Array(&Kind::String)).always(),
            Field::new("raw", 10, Kind::Bytes),
        ],
        required: &[],
        atomic: false,
    };

    #[test]
    fn omit_empty_drops_what_go_would_not_encode() {
        let mut v = serde_json::json!({
            "labels": {}, "name": "", "count": 0, "flag": false, "replicas": 0,
            "paused": false, "spec": {"ports": [{"name": "", "port": 0}], "finalizers": []},
            "time": null, "always": [], "raw": "", "unknown": ""});
        omit_empty(&mut v, &Kind::Message(&EMPTIES));
        assert_eq!(
            v,
            serde_json::json!({
                "replicas": 0, "paused": false, "spec": {"ports": [{"port": 0}]},
                "time": null, "always": [], "unknown": ""})
        );
        let mut v = serde_json::json!({"labels": {"a": ""}, "name": "x", "count": 2,
            "flag": true, "replicas": null, "spec": {}});
        omit_empty(&mut v, &Kind::Message(&EMPTIES));
        assert_eq!(
            v,
            serde_json::json!({"labels": {"a": ""}, "name": "x", "count": 2, "flag": true, "spec": {}})
        );
    }

    static ZEROS: Message = Message {
        name: "test.Zeros",
        description: "",
        fields: &[
            Field::new("kind", 0, Kind::String),
            Field::new("name", 1, Kind::String),
            Field::new("component", 2, Kind::String).always(),
            Field::new("count", 3, Kind::Int32).always(),
            Field::new("flag", 4, Kind::Bool).always(),
            Field::new("items", 5, Kind::Array(&Kind::Message(&PORT))).always(),
            Field::new("labels", 6, Kind::Map(&Kind::String)).always(),
            Field::new("replicas", 7, Kind::Int32).pointer().always(),
            Field::new("paused", 8, Kind::Bool).pointer(),
            Field::new("spec", 9, Kind::Message(&PORT)),
            Field::new("time", 10, Kind::Time),
            Field::new("size", 11, Kind::Quantity),
            Field::new("port", 12, Kind::IntOrString),
            Field::new("ports", 13, Kind::Array(&Kind::Message(&PORT))),
            Field::new("names", 14, Kind::Map(&Kind::String)),
        ],
        required: &[],
        atomic: false,
    };

    #[test]
    fn quantities_are_written_canonically() {
        let mut v = serde_json::json!({"size": "1000m"});
        go_encoded(&mut v, &Kind::Message(&ZEROS));
        assert_eq!(v["size"], "1");
        let mut v = serde_json::json!({"size": 1536});
        go_encoded(&mut v, &Kind::Message(&ZEROS));
        assert_eq!(v["size"], "1536");
    }

    #[test]
    fn fill_zero_writes_what_go_writes_for_zero_fields() {
        let mut v = serde_json::json!({});
        fill_zero(&mut v, &Kind::Message(&ZEROS));
        assert_eq!(
            v,
            serde_json::json!({
                "component": "", "count": 0, "flag": false, "items": null, "labels": null,
                "replicas": null, "spec": {"port": 0}, "time": null, "size": "0", "port": 0})
        );
        // Null is the zero value where Go has no nil; set values are kept, and message
        // elements of arrays and maps are filled too.
        let mut v = serde_json::json!({
            "name": "x", "component": null, "spec": null, "paused": null,
            "ports": [{"name": "a"}, null], "names": {"a": null}, "time": "2024-01-01T00:00:00Z"});
        go_encoded(&mut v, &Kind::Message(&ZEROS));
        assert_eq!(
            v,
            serde_json::json!({
                "name": "x", "component": "", "count": 0, "flag": false, "items": null,
                "labels": null, "replicas": null, "spec": {"port": 0},
                "time": "2024-01-01T00:00:00Z", "size": "0", "port": 0,
                "ports": [{"name": "a", "port": 0}, {"port": 0}], "names": {"a": ""}})
        );
    }

    static PROPS: Message = Message {
        name: "test.JSONSchemaProps",
        description: "",
        fields: &[
            Field::new("type", 5, Kind::String),
            Field::new("maximum", 9, Kind::Float64).pointer(),
            Field::new("enum", 20, Kind::Array(&Kind::Json)),
            Field::new("items", 24, Kind::JsonSchemaPropsOrArray(&OR_ARRAY)).pointer(),
            Field::new(
                "additionalProperties",
                30,
                Kind::JsonSchemaPropsOrBool(&OR_BOOL),
            )
            .pointer(),
            Field::new(
                "dependencies",
                32,
                Kind::Map(&Kind::JsonSchemaPropsOrStringArray(&OR_STRINGS)),
            ),
        ],
        required: &[],
        atomic: false,
    };
    static OR_ARRAY: Message = Message {
        name: "test.JSONSchemaPropsOrArray",
        description: "",
        fields: &[
            Field::new("schema", 1, Kind::Message(&PROPS)).pointer(),
            Field::new("jSONSchemas", 2, Kind::Array(&Kind::Message(&PROPS))),
        ],
        required: &[],
        atomic: false,
    };
    static OR_BOOL: Message = Message {
        name: "test.JSONSchemaPropsOrBool",
        description: "",
        fields: &[
            Field::new("allows", 1, Kind::Bool),
            Field::new("schema", 2, Kind::Message(&PROPS)).pointer(),
        ],
        required: &[],
        atomic: false,
    };
    static OR_STRINGS: Message = Message {
        name: "test.JSONSchemaPropsOrStringArray",
        description: "",
        fields: &[
            Field::new("schema", 1, Kind::Message(&PROPS)).pointer(),
            Field::new("property", 2, Kind::Array(&Kind::String)),
        ],
        required: &[],
        atomic: false,
    };

    #[test]
    fn unions_are_pruned_and_encoded_in_either_form() {
        let kind = Kind::Message(&PROPS);
        let mut v = serde_json::json!({
            "items": [{"type": "a", "bogus": 1}, {"items": {"type": "b", "nope": 2}}],
            "additionalProperties": {"type": "", "x": 1},
            "dependencies": {"a": ["b"], "c": {"type": "d", "y": 0}},
            "enum": [{"free": "form"}, null],
        });
        prune(&mut v, &kind);
        assert_eq!(
            v,
            serde_json::json!({
                "items": [{"type": "a"}, {"items": {"type": "b"}}],
                "additionalProperties": {"type": ""},
                "dependencies": {"a": ["b"], "c": {"type": "d"}},
                "enum": [{"free": "form"}, null],
            })
        );
        go_encoded(&mut v, &kind);
        assert_eq!(
            v,
            serde_json::json!({
                "items": [{"type": "a"}, {"items": {"type": "b"}}],
                "additionalProperties": {},
                "dependencies": {"a": ["b"], "c": {"type": "d"}},
                "enum": [{"free": "form"}, null],
            })
        );
        // What the unions' MarshalJSON write for what their UnmarshalJSON keep of odd
        // input; a float64 in Go's form.
        let mut v = serde_json::json!({
            "items": [], "additionalProperties": true, "dependencies": {"a": [], "b": 1},
            "maximum": 2.0,
        });
        go_encoded(&mut v, &kind);
        assert_eq!(
            v,
            serde_json::json!({
                "items": null, "additionalProperties": true,
                "dependencies": {"a": null, "b": null}, "maximum": 2,
            })
        );
        // Left out when zero, as pointers; a zero float64 is kept by its pointer.
        let mut v = serde_json::json!({"items": null, "maximum": 0, "additionalProperties": null});
        go_encoded(&mut v, &kind);
        assert_eq!(v, serde_json::json!({"maximum": 0}));
    }

    #[test]
    fn patch_schema_follows_fields_and_arrays() {
        assert_eq!(
            ROOT.lookup(&["spec", "ports"]),
            Some(PatchMeta::merge_by("port"))
        );
        assert_eq!(ROOT.lookup(&["spec", "finalizers"]), None);
        assert_eq!(ROOT.lookup(&["spec", "ports", "[]", "name"]), None);
        assert_eq!(ROOT.lookup(&["spec", "nope"]), None);
    }
}
