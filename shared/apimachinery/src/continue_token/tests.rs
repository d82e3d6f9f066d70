use super::*;

fn raw(v: &str, rv: i64, start: &str) -> String {
    let json = serde_json::json!({"v": v, "rv": rv, "start": start}).to_string();
    RAW_URL_ENCODING.encode_to_string(json.as_bytes())
}

#[test]
fn encodes_like_upstream() {
    // {"v":"meta.k8s.io/v1","rv":1,"start":"key"} through RawURLEncoding.
    let token = encode("key", 1);
    assert_eq!(
        token,
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJrZXkifQ"
    );
    assert!(!token.contains('='));
    assert_eq!(
        RAW_URL_ENCODING.decode_string(&token).unwrap(),
        br#"{"v":"meta.k8s.io/v1","rv":1,"start":"key"}"#
    );
    // Go's encoder escapes HTML characters; the key round-trips either way.
    let token = encode("a<b>&c\u{e9}", 7);
    let json = String::from_utf8(RAW_URL_ENCODING.decode_string(&token).unwrap()).unwrap();
    assert!(json.contains(r"a\u003cb\u003e\u0026c"), "{json}");
    assert_eq!(
        decode(&token, "/p/").unwrap(),
        ("/p/a<b>&c\u{e9}".to_owned(), 7)
    );
}

#[test]
fn encode_continue_requires_prefix() {
    let token = encode_continue("/registry/pods/ns/a", "/registry/pods/", 42).unwrap();
    assert_eq!(
        decode(&token, "/registry/pods/").unwrap(),
        ("/registry/pods/ns/a".to_owned(), 42)
    );
    assert_eq!(
        encode_continue("/other/a", "/registry/pods/", 1)
            .unwrap_err()
            .to_string(),
        "unable to encode next field: the key and key prefix do not match /registry/pods/ /other/a"
    );
    assert!(encode_continue("/a", "", 1).is_err());
}

#[test]
fn decode_cases() {
    let prefix = "/test/";
    let ok = [
        (raw("meta.k8s.io/v1", 1, "key"), "/test/key", 1),
        (raw("meta.k8s.io/v1", 1, "/"), "/test/", 1),
        (raw("meta.k8s.io/v1", 5, "/key"), "/test/key", 5),
        (raw("meta.k8s.io/v1", -3, "a/b"), "/test/a/b", -3),
    ];
    for (token, key, rv) in ok {
        assert_eq!(decode(&token, prefix).unwrap(), (key.to_owned(), rv));
    }
    let cases = [
        (raw("", 1, "key"), Error::UnrecognizedVersion(String::new())),
        (raw("v1", 1, "key"), Error::UnrecognizedVersion("v1".into())),
        (raw("meta.k8s.io/v1", 0, "key"), Error::InvalidStartRv),
        (raw("meta.k8s.io/v1", 1, ""), Error::EmptyStartKey),
        (
            raw("meta.k8s.io/v1", 1, "../key"),
            Error::InvalidKey("../key".into()),
        ),
        (
            raw("meta.k8s.io/v1", 1, "./key"),
            Error::InvalidKey("./key".into()),
        ),
        (
            raw("meta.k8s.io/v1", 1, "./../key"),
            Error::InvalidKey("./../key".into()),
        ),
        (
            raw("meta.k8s.io/v1", 1, "key/../.."),
            Error::InvalidKey("key/../..".into()),
        ),
        (
            raw("meta.k8s.io/v1", 1, "a//b"),
            Error::InvalidKey("a//b".into()),
        ),
        (
            raw("meta.k8s.io/v1", 1, "key/"),
            Error::InvalidKey("key/".into()),
        ),
    ];
    for (token, want) in cases {
        assert_eq!(decode(&token, prefix).unwrap_err(), want);
    }
}

#[test]
fn error_texts() {
    assert_eq!(
        Error::InvalidStartRv.to_string(),
        "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
    );
    assert_eq!(
        Error::EmptyStartKey.to_string(),
        "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"
    );
    assert_eq!(
        decode(&raw("v2", 1, "k"), "/").unwrap_err().to_string(),
        "continue key is not valid: server does not recognize this encoded version v2"
    );
    assert_eq!(
        decode(&raw("meta.k8s.io/v1", 1, "../x"), "/")
            .unwrap_err()
            .to_string(),
        "continue key is not valid: ../x"
    );
}

#[test]
fn base64_errors_like_go() {
    assert_eq!(
        decode("abc=", "/").unwrap_err().to_string(),
        "continue key is not valid: illegal base64 data at input byte 3"
    );
    assert_eq!(
        decode("ab+c", "/").unwrap_err().to_string(),
        "continue key is not valid: illegal base64 data at input byte 2"
    );
    // One character left over after full quanta.
    assert_eq!(
        decode("abcde", "/").unwrap_err().to_string(),
        "continue key is not valid: illegal base64 data at input byte 4"
    );
}

#[test]
fn json_errors_like_go() {
    let enc = |s: &str| RAW_URL_ENCODING.encode_to_string(s.as_bytes());
    let err = |s: &str| decode(&enc(s), "/").unwrap_err().to_string();
    assert_eq!(
        err(""),
        "continue key is not valid: unexpected end of JSON input"
    );
    assert_eq!(
        err("{\"v\":"),
        "continue key is not valid: unexpected end of JSON input"
    );
    assert_eq!(
        err("xyz"),
        "continue key is not valid: invalid character 'x' looking for beginning of value"
    );
    assert_eq!(
        err("{} x"),
        "continue key is not valid: invalid character 'x' after top-level value"
    );
    assert_eq!(
        err("{\"v\" 1}"),
        "continue key is not valid: invalid character '1' after object key"
    );
    assert_eq!(
        err("[]"),
        "continue key is not valid: json: cannot unmarshal array into Go value of type storage.continueToken"
    );
    assert_eq!(
        err(r#"{"v":"meta.k8s.io/v1","rv":"1","start":"a"}"#),
        "continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64"
    );
    assert_eq!(
        err(r#"{"v":1}"#),
        "continue key is not valid: json: cannot unmarshal number into Go struct field continueToken.v of type string"
    );
    assert_eq!(
        err(r#"{"v":"meta.k8s.io/v1","rv":1.5,"start":"a"}"#),
        "continue key is not valid: json: cannot unmarshal number 1.5 into Go struct field continueToken.rv of type int64"
    );
    // null leaves the zero value; names match case-insensitively; extra fields are ignored.
    assert_eq!(
        err("null"),
        "continue key is not valid: server does not recognize this encoded version "
    );
    assert_eq!(
        decode(
            &enc(r#"{"V":"meta.k8s.io/v1","RV":9,"Start":"k","x":[]}"#),
            "/p/"
        )
        .unwrap(),
        ("/p/k".to_owned(), 9)
    );
}
