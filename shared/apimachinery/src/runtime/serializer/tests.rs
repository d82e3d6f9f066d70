use serde_json::json;

use super::*;

fn json_err(input: &str) -> String {
    decode_json(input.as_bytes()).unwrap_err().to_string()
}

#[test]
fn go_syntax_errors() {
    let p = "couldn't get version/kind; json parse error: ";
    let cases = [
        ("", "unexpected end of JSON input"),
        ("{", "unexpected end of JSON input"),
        (
            "imastring!",
            "invalid character 'i' looking for beginning of value",
        ),
        (
            "{]",
            "invalid character ']' looking for beginning of object key string",
        ),
        (r#"{"a" 1}"#, "invalid character '1' after object key"),
        (
            r#"{"a":1 "b":2}"#,
            "invalid character '\"' after object key:value pair",
        ),
        ("[1 2]", "invalid character '2' after array element"),
        ("{} x", "invalid character 'x' after top-level value"),
        ("01", "invalid character '1' after top-level value"),
        ("-x", "invalid character 'x' in numeric literal"),
        (
            "1.x",
            "invalid character 'x' after decimal point in numeric literal",
        ),
        (
            "1.",
            "invalid character ' ' after decimal point in numeric literal",
        ),
        (
            "1ex",
            "invalid character 'x' in exponent of numeric literal",
        ),
        // At the end Go's scanner feeds one space, so a cut literal reports it.
        (
            "tru",
            "invalid character ' ' in literal true (expecting 'e')",
        ),
        ("[", "unexpected end of JSON input"),
        (
            "trux",
            "invalid character 'x' in literal true (expecting 'e')",
        ),
        (
            "nul1",
            "invalid character '1' in literal null (expecting 'l')",
        ),
        ("\"a\u{1}\"", "invalid character '\\x01' in string literal"),
        (r#""\q""#, "invalid character 'q' in string escape code"),
        (
            r#""\u12x4""#,
            "invalid character 'x' in \\u hexadecimal character escape",
        ),
        (
            "{'a':1}",
            "invalid character '\\'' looking for beginning of object key string",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(json_err(input), format!("{p}{want}"), "{input:?}");
    }
}

#[test]
fn max_depth_matches_go() {
    let deep = "[".repeat(10001);
    assert!(json_err(&deep).ends_with("exceeded max depth"));
}

#[test]
fn interpret_errors_and_kinds() {
    assert_eq!(
        json_err("[1]"),
        "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go \
         value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; \
         Kind string \"json:\\\"kind,omitempty\\\"\" }"
    );
    assert_eq!(
        json_err(r#"{"kind":1}"#),
        "couldn't get version/kind; json parse error: json: cannot unmarshal number into \
         Go struct field .kind of type string"
    );
    assert_eq!(
        json_err(r#"{"apiVersion":"a/b/c"}"#),
        "unexpected GroupVersion string: a/b/c"
    );
    let d = decode_json(br#"{"APIVERSION":"apps/v1","Kind":"Deployment","kind":null}"#).unwrap();
    assert_eq!(
        d.gvk,
        GroupVersionKind {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into()
        }
    );
    assert_eq!(
        decode_json(b"null").unwrap().gvk,
        GroupVersionKind::default()
    );
    let d = decode_json(br#" {"apiVersion":"v1","kind":"Pod","spec":{"x":[1,2.5]}} "#).unwrap();
    assert_eq!(d.object["spec"]["x"], json!([1, 2.5]));
    assert_eq!(d.gvk.version, "v1");
}

#[test]
fn missing_kind_and_version() {
    let gvk = GroupVersionKind::default();
    assert_eq!(
        require_kind_and_version(&gvk, b"{}")
            .unwrap_err()
            .to_string(),
        "Object 'Kind' is missing in '{}'"
    );
    let gvk = GroupVersionKind {
        kind: "Pod".into(),
        ..GroupVersionKind::default()
    };
    assert_eq!(
        require_kind_and_version(&gvk, br#"{"kind":"Pod"}"#)
            .unwrap_err()
            .to_string(),
        r#"Object 'apiVersion' is missing in '{"kind":"Pod"}'"#
    );
}

#[test]
fn transform_decode_error_messages() {
    let body = br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"}"#;
    let err = decode_json(body).unwrap_err();
    let s = transform_decode_error("Pod", None, &err, body);
    assert_eq!(s.code, 400);
    assert_eq!(
        s.message.as_deref(),
        Some(
            "the object provided is unrecognized (must be of type Pod): couldn't get \
             version/kind; json parse error: unexpected end of JSON input \
             ({\"apiVersion\":\"v1\",\"kind\":\"Pod ...)"
        )
    );
    let s = transform_decode_error("Pod", None, &err, b"\x01\x02");
    assert!(s.message.unwrap().ends_with("(0102)"));
    let s = transform_decode_error("Pod", None, &err, b"");
    assert!(s.message.unwrap().ends_with("(<empty>)"));
    let gvk = GroupVersionKind {
        group: String::new(),
        version: "v1".into(),
        kind: "Pod".into(),
    };
    let strict = DecodeError::Strict(vec![r#"duplicate field "metadata.name""#.into()]);
    let s = transform_decode_error("Pod", Some(&gvk), &strict, body);
    assert_eq!(
        s.message.as_deref(),
        Some(
            "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: \
             duplicate field \"metadata.name\""
        )
    );
}

#[test]
fn json_duplicates() {
    let body = br#"{"metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2","x":"3"}},
        "spec":{"containers":[{"name":"c","name":"d"},{"name":"e"}]},"metadata":{}}"#;
    assert_eq!(
        json_duplicate_fields(body),
        [
            r#"duplicate field "metadata.name""#,
            r#"duplicate field "metadata.labels.x""#,
            r#"duplicate field "spec.containers[0].name""#,
            r#"duplicate field "metadata""#,
        ]
    );
    assert!(json_duplicate_fields(br#"{"a":{"b":1},"c":{"b":1},"\u0061b":1}"#).is_empty());
    // Escapes are compared decoded.
    assert_eq!(
        json_duplicate_fields(br#"{"a":1,"\u0061":2}"#),
        [r#"duplicate field "a""#]
    );
    let e = json_strict_error(br#"{"a":1,"a":2,"b":1,"b":1}"#).unwrap();
    assert_eq!(
        e.to_string(),
        r#"strict decoding error: duplicate field "a", duplicate field "b""#
    );
    assert!(json_strict_error(b"[]").is_none());
}

#[test]
fn duplicates_in_wide_objects() {
    // Past the short list of keys the walker keeps a set: a key repeated before and after
    // the switch is still found, once per repeat, in document order.
    let mut keys: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
    keys.insert(5, "k1".into());
    keys.push("k2".into());
    keys.push("k39".into());
    let body: Vec<String> = keys.iter().map(|k| format!("\"{k}\":1")).collect();
    let json = format!("{{\"data\":{{{}}}}}", body.join(","));
    assert_eq!(
        json_duplicate_fields(json.as_bytes()),
        [
            r#"duplicate field "data.k1""#,
            r#"duplicate field "data.k2""#,
            r#"duplicate field "data.k39""#,
        ]
    );
    let yaml: Vec<String> = keys.iter().map(|k| format!("  {k}: 1\n")).collect();
    let yaml = format!("data:\n{}", yaml.concat());
    assert_eq!(
        yaml_duplicate_fields(yaml.as_bytes()),
        [
            r#"line 7: key "k1" already set in map"#,
            r#"line 43: key "k2" already set in map"#,
            r#"line 44: key "k39" already set in map"#,
        ]
    );
}

#[test]
fn yaml_decoding() {
    let d = decode_yaml(b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels:\n    a: yes\n    b: '1'\n    c: 0755\n").unwrap();
    assert_eq!(d.gvk.kind, "Pod");
    assert_eq!(
        d.object["metadata"]["labels"],
        json!({"a": true, "b": "1", "c": 493})
    );
    // Only the first document counts, as with goyaml.v2.
    let d = decode_yaml(b"kind: A\n---\nkind: B\n").unwrap();
    assert_eq!(d.gvk.kind, "A");
    assert_eq!(decode_yaml(b"").unwrap().object, Value::Null);
    let err = decode_yaml(b"a: [1, 2\n").unwrap_err().to_string();
    assert!(
        err.starts_with("error converting YAML to JSON: yaml: "),
        "{err}"
    );
    assert_eq!(
        err,
        "error converting YAML to JSON: yaml: line 1: unclosed bracket '['"
    );
    // Non-string keys become their text, as sigs.k8s.io/yaml converts them.
    assert_eq!(
        decode_yaml(b"1: a\nx: 2\n").unwrap().object,
        json!({"1": "a", "x": 2})
    );
    // Last duplicate wins when not strict.
    assert_eq!(
        decode_yaml(b"a: 1\na: 2\n").unwrap().object,
        json!({"a": 2})
    );
}

#[test]
fn yaml_duplicates() {
    let y = b"metadata:\n  name: a\n  name: b\nspec:\n  x: 1\n  x: 2\n  x: 3\nmetadata: {}\n";
    assert_eq!(
        yaml_duplicate_fields(y),
        [
            r#"line 3: key "name" already set in map"#,
            r#"line 6: key "x" already set in map"#,
            r#"line 7: key "x" already set in map"#,
            r#"line 8: key "metadata" already set in map"#,
        ]
    );
    let e = yaml_strict_error(b"a: 1\na: 2\n").unwrap();
    assert_eq!(
        e.to_string(),
        "strict decoding error: error converting YAML to JSON: yaml: unmarshal errors:\n  \
         line 2: key \"a\" already set in map"
    );
    assert!(yaml_strict_error(b"a: 1\nb: {a: 1}\n---\na: 1\na: 1\n").is_none());
}

#[test]
fn json_encoding() {
    let v = json!({"b": "<x>&", "a": [1, 1.0, 1.5, 1e21, 1e-7, -0.000001], "c": {}, "d": []});
    let compact = encode_json(&v, false).unwrap();
    assert_eq!(
        std::str::from_utf8(&compact).unwrap(),
        "{\"a\":[1,1,1.5,1e+21,1e-7,-0.000001],\"b\":\"\\u003cx\\u003e\\u0026\",\"c\":{},\"d\":[]}\n"
    );
    let pretty = encode_json(&json!({"a": {"b": [1, 2]}, "c": {}}), true).unwrap();
    assert_eq!(
        std::str::from_utf8(&pretty).unwrap(),
        "{\n  \"a\": {\n    \"b\": [\n      1,\n      2\n    ]\n  },\n  \"c\": {}\n}"
    );
}

fn yaml(v: Value) -> String {
    String::from_utf8(encode_yaml(&v).unwrap().to_vec()).unwrap()
}

#[test]
fn yaml_layout() {
    let v = json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": "x", "labels": {}, "finalizers": []},
        "spec": {"containers": [{"name": "c", "args": ["a", "b"]}], "n": null},
        "list": [[1, 2], {"a": 1}],
    });
    assert_eq!(
        yaml(v),
        "apiVersion: v1\nkind: Pod\nlist:\n- - 1\n  - 2\n- a: 1\nmetadata:\n  finalizers: []\n  \
         labels: {}\n  name: x\nspec:\n  containers:\n  - args:\n    - a\n    - b\n    name: c\n  \
         \"n\": null\n"
    );
    assert_eq!(yaml(json!({})), "{}\n");
    assert_eq!(yaml(json!("abc")), "abc\n");
    assert_eq!(yaml(json!([1, true])), "- 1\n- true\n");
}

#[test]
fn yaml_key_order_is_goyaml_v2() {
    let v = json!({"a10": 1, "a2": 1, "B": 1, "a": 1, "-x": 1, "_y": 1, "1": 1});
    // Non-letters first, digit runs compared as numbers (no digits counts as 0).
    assert_eq!(
        yaml(v),
        "-x: 1\n_y: 1\n\"1\": 1\nB: 1\na: 1\na2: 1\na10: 1\n"
    );
}

#[test]
fn yaml_scalar_quoting() {
    let cases = [
        ("", "\"\""),
        ("true", "\"true\""),
        ("yes", "\"yes\""),
        ("null", "\"null\""),
        ("~", "\"~\""),
        ("123", "\"123\""),
        ("0x1F", "\"0x1F\""),
        ("1.5", "\"1.5\""),
        ("1e3", "\"1e3\""),
        (".inf", "\".inf\""),
        ("2024-01-02T03:04:05Z", "\"2024-01-02T03:04:05Z\""),
        ("2024-01-02", "\"2024-01-02\""),
        ("1:20", "\"1:20\""),
        ("8080:80", "8080:80"),
        ("1.2.3", "1.2.3"),
        ("*", "'*'"),
        ("- a", "'- a'"),
        ("a: b", "'a: b'"),
        ("a #b", "'a #b'"),
        ("a#b", "a#b"),
        (" lead", "' lead'"),
        ("it's", "it's"),
        ("'q'", "'''q'''"),
        ("tab\there", "\"tab\\there\""),
        ("héllo", "héllo"),
        ("http://x:80/a", "http://x:80/a"),
        ("a\nb", "|-\n  a\n  b"),
        ("a\nb\n", "|\n  a\n  b"),
        ("a\n\nb\n\n", "|+\n  a\n\n  b\n"),
        (" a\nb", "|2-\n   a\n  b"),
        ("a \nb", "\"a \\nb\""),
    ];
    for (s, want) in cases {
        assert_eq!(yaml(json!({ "k": s })), format!("k: {want}\n"), "{s:?}");
    }
    assert_eq!(
        yaml(json!({"a: b": 1, "true": 2})),
        "'a: b': 1\n\"true\": 2\n"
    );
}

#[test]
fn yaml_numbers() {
    let v = json!({"a": 1.0, "b": 1.5, "c": 1e21, "d": 1234567.5, "e": 0.00001, "f": -3});
    assert_eq!(
        yaml(v),
        "a: 1\nb: 1.5\nc: 1e+21\nd: 1.2345675e+06\ne: 1e-05\nf: -3\n"
    );
}

#[test]
fn yaml_folds_long_plain_strings() {
    let words = vec!["word"; 30].join(" ");
    let out = yaml(json!({"m": {"k": words}}));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "m:");
    assert!(lines[1].starts_with("  k: word"));
    assert!(lines[1].chars().count() > 80 && lines[1].chars().count() <= 85);
    assert!(lines[2].starts_with("    word"));
    assert_eq!(
        out.replace("\n    ", " ").trim_end(),
        format!("m:\n  k: {words}")
    );
}

#[test]
fn json_unknown_fields_follow_the_schema() {
    use crate::schema::{Field, Kind, Message};
    static CONTAINER: Message = Message {
        name: "test.Container",
        description: "",
        fields: &[Field::new("name", 1, Kind::String)],
        required: &[],
        atomic: false,
    };
    static SPEC: Message = Message {
        name: "test.Spec",
        description: "",
        fields: &[
            Field::new("containers", 1, Kind::Array(&Kind::Message(&CONTAINER))),
            Field::new("selector", 2, Kind::Map(&Kind::String)),
            Field::new("raw", 3, Kind::RawExtension),
        ],
        required: &[],
        atomic: false,
    };
    static ROOT: Message = Message {
        name: "test.Root",
        description: "",
        fields: &[
            Field::new("kind", 0, Kind::String),
            Field::new("spec", 1, Kind::Message(&SPEC)),
        ],
        required: &[],
        atomic: false,
    };
    let body = br#"{"kind":"R","spec":{"containers":[{"name":"a","bad":1,"name":"b"}],
        "selector":{"any":"1","any":"2"},"raw":{"free":{"x":1,"x":2}},"Containers":[]},
        "unknownDupe":{"n":1,"n":2},"unknownDupe":2}"#;
    assert_eq!(
        json_strict_fields(body, Some(&ROOT)),
        [
            r#"unknown field "spec.containers[0].bad""#,
            r#"duplicate field "spec.containers[0].name""#,
            r#"duplicate field "spec.selector.any""#,
            r#"unknown field "spec.Containers""#,
            r#"unknown field "unknownDupe""#,
        ],
        "case-sensitive; raw content and unknown values are not looked into"
    );
    // Without a schema only duplicates count, everywhere.
    assert_eq!(json_strict_fields(body, None).len(), 5);
}
