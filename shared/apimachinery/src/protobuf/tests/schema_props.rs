//! apiextensions' hand-marshalled types: `JSON`, a `double`, and the `JSONSchemaProps`
//! unions, on a cut-down `JSONSchemaProps` with upstream's field numbers
//! (k8s.io/apiextensions-apiserver v0.33.0 `generated.proto`) and Go's rules from its
//! `marshal.go`.

use serde_json::{Value, json};

use super::{enc, round_trip};
use crate::protobuf::{Error, decode, encode};
use crate::schema::{Field, Kind, Message, go_encoded};

const fn msg(name: &'static str, fields: &'static [Field]) -> Message {
    Message {
        name,
        description: "",
        fields,
        required: &[],
        atomic: false,
    }
}

static PROPS: Message = msg(
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
    &[
        Field::new("type", 5, Kind::String),
        Field::new("default", 8, Kind::Json).pointer(),
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
            Kind::Map(&Kind::JsonSchemaPropsOrStringArray(&OR_STRING_ARRAY)),
        ),
    ],
);
static OR_ARRAY: Message = msg(
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
    &[
        Field::new("schema", 1, Kind::Message(&PROPS)).pointer(),
        Field::new("jSONSchemas", 2, Kind::Array(&Kind::Message(&PROPS))),
    ],
);
static OR_BOOL: Message = msg(
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
    &[
        Field::new("allows", 1, Kind::Bool),
        Field::new("schema", 2, Kind::Message(&PROPS)).pointer(),
    ],
);
static OR_STRING_ARRAY: Message = msg(
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
    &[
        Field::new("schema", 1, Kind::Message(&PROPS)).pointer(),
        Field::new("property", 2, Kind::Array(&Kind::String)),
    ],
);

#[test]
fn json_values_are_their_compact_text() {
    // type = 5 "" (a Go string, always written), default = 8 { raw = 1
    // "{\"a\":[1,null]}" }; enum = 20, one message per value, the null one empty (a nil
    // Raw).
    let bytes = enc(
        &json!({"default": {"a": [1, null]}, "enum": ["x", null]}),
        &PROPS,
    );
    let mut want = vec![0x2a, 0, 0x42, 16, 0x0a, 14];
    want.extend_from_slice(br#"{"a":[1,null]}"#);
    want.extend_from_slice(&[0xa2, 0x01, 5, 0x0a, 3, b'"', b'x', b'"', 0xa2, 0x01, 0]);
    assert_eq!(bytes, want);
    assert_eq!(
        decode(&bytes, &PROPS).expect("decode"),
        json!({"default": {"a": [1, null]}, "enum": ["x", null]})
    );
    // A null default is a nil pointer: not written.
    assert_eq!(enc(&json!({"default": null}), &PROPS), [0x2a, 0]);
    // Bytes that are not JSON fail as `encoding/json` fails on MarshalJSON's output.
    let broken = [0x42, 3, 0x0a, 1, b'{'];
    assert!(matches!(
        decode(&broken, &PROPS),
        Err(Error::JsonMarshal(_))
    ));
}

#[test]
fn doubles_are_eight_bytes_written_as_go_writes_float64() {
    let bytes = enc(&json!({"maximum": 1.5}), &PROPS);
    let mut want = vec![0x2a, 0, 0x49];
    want.extend_from_slice(&1.5f64.to_le_bytes());
    assert_eq!(bytes, want);
    for (input, output) in [
        (json!(1.5), json!(1.5)),
        (json!(2.0), json!(2)),
        (json!(-0.25), json!(-0.25)),
        (
            json!(1e21),
            serde_json::from_str::<Value>("1e+21").expect("number"),
        ),
        (json!(7), json!(7)),
    ] {
        assert_eq!(
            round_trip(&json!({"maximum": input}), &PROPS),
            json!({"maximum": output})
        );
    }
    // NaN cannot be written as JSON.
    let mut nan = vec![0x49];
    nan.extend_from_slice(&f64::NAN.to_le_bytes());
    assert_eq!(
        decode(&nan, &PROPS)
            .map_err(|e| e.to_string())
            .err()
            .as_deref(),
        Some("json: unsupported value: NaN")
    );
    // A double read as a varint is gogo's wire type error.
    assert_eq!(
        decode(&[0x48, 1], &PROPS)
            .map_err(|e| e.to_string())
            .err()
            .as_deref(),
        Some("proto: wrong wireType = 0 for field Maximum")
    );
    let mut out = Vec::new();
    assert_eq!(
        encode(&json!({"maximum": "1"}), &PROPS, &mut out)
            .map_err(|e| e.to_string())
            .err()
            .as_deref(),
        Some(
            "json: cannot unmarshal string into Go struct field JSONSchemaProps.maximum of type float64"
        )
    );
}

#[test]
fn schema_or_array_is_a_schema_or_schemas() {
    // items = 24 { schema = 1 { type = 5 "string" } }
    let one = enc(&json!({"items": {"type": "string"}}), &PROPS);
    assert_eq!(
        one,
        [
            0x2a, 0, 0xc2, 0x01, 10, 0x0a, 8, 0x2a, 6, b's', b't', b'r', b'i', b'n', b'g'
        ]
    );
    // items = 24 { jSONSchemas = 2 { type = 5 "" }, jSONSchemas = 2 { type = 5 "a" } }
    let many = enc(&json!({"items": [{}, {"type": "a"}]}), &PROPS);
    assert_eq!(
        many,
        [
            0x2a, 0, 0xc2, 0x01, 9, 0x12, 2, 0x2a, 0, 0x12, 3, 0x2a, 1, b'a'
        ]
    );
    for v in [
        json!({"items": {"type": "string"}}),
        json!({"items": [{}, {"type": "a"}]}),
    ] {
        assert_eq!(round_trip(&v, &PROPS), v);
    }
    // Neither form (an empty array, a string) leaves both empty: MarshalJSON writes the
    // nil schema, `null`, kept for a non-nil pointer.
    for v in [json!([]), json!("x")] {
        assert_eq!(
            round_trip(&json!({"items": v}), &PROPS),
            json!({"items": null})
        );
        let mut go = json!({"items": v});
        go_encoded(&mut go, &Kind::Message(&PROPS));
        assert_eq!(go, json!({"items": null}));
    }
}

#[test]
fn schema_or_bool_is_a_boolean_or_a_schema() {
    // additionalProperties = 30 { allows = 1 false }: allows is always written.
    assert_eq!(
        enc(&json!({"additionalProperties": false}), &PROPS),
        [0x2a, 0, 0xf2, 0x01, 2, 0x08, 0]
    );
    // A schema allows too.
    assert_eq!(
        enc(&json!({"additionalProperties": {}}), &PROPS),
        [0x2a, 0, 0xf2, 0x01, 6, 0x08, 1, 0x12, 2, 0x2a, 0]
    );
    for v in [
        json!({"additionalProperties": true}),
        json!({"additionalProperties": false}),
        json!({"additionalProperties": {}}),
        json!({"additionalProperties": {"type": "string"}}),
    ] {
        assert_eq!(round_trip(&v, &PROPS), v);
    }
    let mut out = Vec::new();
    assert_eq!(
        encode(&json!({"additionalProperties": 1}), &PROPS, &mut out)
            .map_err(|e| e.to_string())
            .err()
            .as_deref(),
        Some("boolean or JSON schema expected")
    );
}

#[test]
fn schema_or_string_array_is_strings_or_a_schema() {
    // dependencies = 32 { key = 1 "a", value = 2 { property = 2 "b" } }
    assert_eq!(
        enc(&json!({"dependencies": {"a": ["b"]}}), &PROPS),
        [
            0x2a, 0, 0x82, 0x02, 8, 0x0a, 1, b'a', 0x12, 3, 0x12, 1, b'b'
        ]
    );
    let v = json!({"dependencies": {"a": ["b", "c"], "d": {"type": "object"}}});
    assert_eq!(round_trip(&v, &PROPS), v);
    // No strings and no schema: `null`.
    assert_eq!(
        round_trip(&json!({"dependencies": {"a": []}}), &PROPS),
        json!({"dependencies": {"a": null}})
    );
}
