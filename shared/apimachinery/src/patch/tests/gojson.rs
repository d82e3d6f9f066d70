use serde_json::json;

use crate::patch::gojson::{go_float, go_v, syntax_error};

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
        ("tru", "unexpected end of JSON input"),
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
    ];
    for (input, want) in cases {
        assert_eq!(
            syntax_error(input.as_bytes()).as_deref(),
            Some(*want),
            "input {input:?}"
        );
    }
    for ok in [
        "{}",
        " [1, 2.5e-3, -0, true, false, null, \"\\u00e9\"] ",
        "0",
    ] {
        assert_eq!(syntax_error(ok.as_bytes()), None, "input {ok:?}");
    }
}

#[test]
fn percent_v_matches_go() {
    assert_eq!(
        go_v(&json!({"b": [1, "x"], "a": null, "c": {"d": true}})),
        "map[a:<nil> b:[1 x] c:map[d:true]]"
    );
    assert_eq!(go_float(1.5), "1.5");
    assert_eq!(go_float(100000.0), "100000");
    assert_eq!(go_float(1234567.0), "1.234567e+06");
    assert_eq!(go_float(0.0001), "0.0001");
    assert_eq!(go_float(0.00001), "1e-05");
    assert_eq!(go_float(-2.0), "-2");
}
