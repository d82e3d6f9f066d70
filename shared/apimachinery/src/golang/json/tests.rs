use serde_json::json;

use super::*;

#[test]
fn syntax_errors_read_like_go() {
    let cases: &[(&str, &str)] = &[
        ("", "unexpected end of JSON input"),
        ("[", "unexpected end of JSON input"),
        ("x", "invalid character 'x' looking for beginning of value"),
        (
            "{x",
            "invalid character 'x' looking for beginning of object key string",
        ),
        ("{\"a\" 1}", "invalid character '1' after object key"),
        (
            "{\"a\":1 2}",
            "invalid character '2' after object key:value pair",
        ),
        ("[1 2]", "invalid character '2' after array element"),
        (
            "[1,]",
            "invalid character ']' looking for beginning of value",
        ),
        ("{} x", "invalid character 'x' after top-level value"),
        // At the end Go's scanner feeds one space (`scanner.eof`), so a cut literal
        // reports that space rather than the end of input.
        (
            "tru",
            "invalid character ' ' in literal true (expecting 'e')",
        ),
        ("-", "invalid character ' ' in numeric literal"),
        (
            "trux",
            "invalid character 'x' in literal true (expecting 'e')",
        ),
        (
            "nul!",
            "invalid character '!' in literal null (expecting 'l')",
        ),
        ("-a", "invalid character 'a' in numeric literal"),
        (
            "1.x",
            "invalid character 'x' after decimal point in numeric literal",
        ),
        (
            "1ex",
            "invalid character 'x' in exponent of numeric literal",
        ),
        ("01", "invalid character '1' after top-level value"),
        ("\"a\nb\"", "invalid character '\\n' in string literal"),
        ("\"\\q\"", "invalid character 'q' in string escape code"),
        (
            "\"\\u12x4\"",
            "invalid character 'x' in \\u hexadecimal character escape",
        ),
        (
            "'a'",
            "invalid character '\\'' looking for beginning of value",
        ),
        ("\"", "unexpected end of JSON input"),
        (
            "\u{e9}",
            "invalid character 'Ã' looking for beginning of value",
        ),
        (
            "\u{7f}",
            "invalid character '\\x7f' looking for beginning of value",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(
            check_valid(input.as_bytes()).err().as_deref(),
            Some(*want),
            "input {input:?}"
        );
    }
    for ok in [
        "{}",
        " [1, 2.5e-3, -0, true, false, null, \"\\u00e9\"] ",
        "0",
    ] {
        assert_eq!(check_valid(ok.as_bytes()), Ok(()), "input {ok:?}");
    }
    let deep = "[".repeat(10001);
    assert_eq!(
        check_valid(deep.as_bytes()).unwrap_err(),
        "exceeded max depth"
    );
}

#[test]
fn unmarshal_checks_syntax_then_decodes() {
    assert_eq!(
        unmarshal(b" {\"a\":[1,\"x\"]} "),
        Ok(json!({"a": [1, "x"]}))
    );
    assert_eq!(
        unmarshal(b"{\"a\":}").unwrap_err(),
        "invalid character '}' looking for beginning of value"
    );
    // Go decodes invalid UTF-8 in a string one U+FFFD per byte.
    assert_eq!(
        unmarshal(b"\"a\xe2\x82b\""),
        Ok(json!("a\u{fffd}\u{fffd}b"))
    );
}

#[test]
fn coerces_invalid_utf8_per_byte() {
    assert!(matches!(coerce_utf8(b"plain"), Cow::Borrowed("plain")));
    assert_eq!(coerce_utf8(b"\xff\xfe"), "\u{fffd}\u{fffd}");
    assert_eq!(coerce_utf8(b"\xed\xa0\x80x"), "\u{fffd}\u{fffd}\u{fffd}x");
    assert_eq!(coerce_utf8(b"a\xe2\x82"), "a\u{fffd}\u{fffd}");
    assert_eq!(coerce_utf8("é\u{80}".as_bytes()), "é\u{80}");
}

#[test]
fn describes_json_kinds_as_go() {
    let words: Vec<&str> = [
        json!(null),
        json!(true),
        json!(1.5),
        json!("s"),
        json!([]),
        json!({}),
    ]
    .iter()
    .map(describe)
    .collect();
    assert_eq!(
        words,
        ["null", "bool", "number", "string", "array", "object"]
    );
}

#[test]
fn escapes_like_go() {
    let got = to_vec("a<b>&c\u{2028}\u{2029}\"\\\n\u{1}é").unwrap();
    assert_eq!(
        String::from_utf8(got).unwrap(),
        r#""a\u003cb\u003e\u0026c\u2028\u2029\"\\\n\u0001é""#
    );
    // Line separators before the HTML characters, and U+2027 (the same first byte) as is.
    let got = to_vec("\u{2029}x\u{2027}<\u{2028}&").unwrap();
    assert_eq!(
        String::from_utf8(got).unwrap(),
        "\"\\u2029x\u{2027}\\u003c\\u2028\\u0026\""
    );
}

#[test]
fn compact_maps_keep_field_order() {
    #[derive(serde::Serialize)]
    struct T {
        b: u8,
        a: &'static str,
    }
    let got = to_vec(&T { b: 1, a: "<x>" }).unwrap();
    assert_eq!(got, br#"{"b":1,"a":"\u003cx\u003e"}"#);
}

#[test]
fn floats_are_written_as_go_writes_them() {
    let f = |v: f64| format_float(v, 64);
    assert_eq!(f(1.0), "1");
    assert_eq!(f(-0.0), "-0");
    assert_eq!(f(0.5), "0.5");
    assert_eq!(f(1e20), "100000000000000000000");
    assert_eq!(f(1e21), "1e+21");
    assert_eq!(f(1.5e300), "1.5e+300");
    assert_eq!(f(0.000001), "0.000001");
    assert_eq!(f(1e-7), "1e-7");
    assert_eq!(f(-2.5e-10), "-2.5e-10");
    assert_eq!(f(1e-100), "1e-100");
    assert_eq!(format_float(f64::from(0.1f32), 32), "0.1");
    assert_eq!(format_float(f64::from(1e-7f32), 32), "1e-7");
    assert_eq!(to_vec(&json!([1.0, 2.5, 1e21])).unwrap(), b"[1,2.5,1e+21]");
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Formatter::new(true));
    json!({"a": [1.0]}).serialize(&mut ser).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\n  \"a\": [\n    1\n  ]\n}"
    );
}

#[test]
fn raw_values_are_compacted_with_html_escaping_as_go_marshals_them() {
    let mut out = Vec::new();
    let src = " { \"a\" : [1, 2],\n\t\"b\": \"<x> & \\\" \\\\ \u{2028}\u{2029} y\" } ";
    compact(&mut out, src.as_bytes()).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"{"a":[1,2],"b":"\u003cx\u003e \u0026 \" \\ \u2028\u2029 y"}"#
    );
    // What serde_json does with a `RawValue`.
    let mut out = Vec::new();
    serde_json::ser::Formatter::write_raw_fragment(
        &mut Formatter::new(false),
        &mut out,
        "{\"k\": \"a<b\"}",
    )
    .unwrap();
    assert_eq!(out, br#"{"k":"a\u003cb"}"#.to_vec());
}
