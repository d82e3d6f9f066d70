use super::*;

const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

#[test]
fn regex_error_formats() {
    assert_eq!(
        regex_error("m", "f", &[]),
        "m (regex used for validation is 'f')"
    );
    assert_eq!(
        regex_error("m", "f", &["a"]),
        "m (e.g. 'a', regex used for validation is 'f')"
    );
    // Upstream joins "'a', " and "'b', " with " or ", which leaves the odd comma.
    assert_eq!(
        regex_error("m", "f", &["a", "b"]),
        "m (e.g. 'a',  or 'b', regex used for validation is 'f')"
    );
}

#[test]
fn dns1123_label() {
    let good = [
        "a",
        "ab",
        "abc",
        "a1",
        "a-1",
        "a--1--2--b",
        "0",
        "01",
        "012",
        "1a",
        "1-a",
        "1--a--b--2",
    ];
    for v in good.iter().copied().chain([&*"a".repeat(63)]) {
        assert!(is_dns1123_label(v).is_empty(), "{v}");
    }
    let bad = [
        "", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_", "_a",
        "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "1.", ".1", " ", "a ", " a", "a b", "1 ", " 1",
        "1 2", "é",
    ];
    for v in bad {
        assert_eq!(is_dns1123_label(v), vec![LABEL_MSG.to_owned()], "{v:?}");
    }
    assert_eq!(is_dns1123_label("a.b"), vec!["must not contain dots"]);
    assert_eq!(is_dns1123_label("1.2"), vec!["must not contain dots"]);
    assert_eq!(
        is_dns1123_label(&"a".repeat(64)),
        vec!["must be no more than 63 characters"]
    );
    assert_eq!(
        is_dns1123_label(&"A".repeat(64)),
        vec![
            "must be no more than 63 characters".to_owned(),
            LABEL_MSG.to_owned()
        ]
    );
}

#[test]
fn dns1123_subdomain() {
    let good = [
        "a",
        "ab",
        "abc",
        "a1",
        "a-1",
        "a--1--2--b",
        "0",
        "01",
        "012",
        "1a",
        "1-a",
        "1--a--b--2",
        "a.a",
        "ab.a",
        "abc.a",
        "a1.a",
        "a-1.a",
        "a--1--2--b.a",
        "a.1",
        "ab.1",
        "abc.1",
        "a1.1",
        "a-1.1",
        "a--1--2--b.1",
        "0.a",
        "01.a",
        "012.a",
        "1a.a",
        "1-a.a",
        "0.1",
        "01.1",
        "012.1",
        "1a.1",
        "1-a.1",
        "1--a--b--2.1",
        "a.b.c.d.e",
        "aa.bb.cc.dd.ee",
        "1.2.3.4.5",
        "11.22.33.44.55",
    ];
    for v in good.iter().copied().chain([&*"a".repeat(253)]) {
        assert!(is_dns1123_subdomain(v).is_empty(), "{v}");
    }
    let msg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    let bad = [
        "",
        "A",
        "ABC",
        "aBc",
        "A1",
        "A-1",
        "1-A",
        "-",
        "a-",
        "-a",
        "1-",
        "-1",
        "_",
        "a_",
        "_a",
        "a_b",
        "1_",
        "_1",
        "1_2",
        ".",
        "a.",
        ".a",
        "a..b",
        "1.",
        ".1",
        "1..2",
        " ",
        "a ",
        " a",
        "a b",
        "1 ",
        " 1",
        "1 2",
        "A.a",
        "aB.a",
        "ab.A",
        "A1.a",
        "a1.A",
        "A.1",
        "aB.1",
        "A1.1",
        "1A.1",
        "0.A",
        "01.A",
        "012.A",
        "1A.a",
        "1a.A",
        "A.B.C.D.E",
        "AA.BB.CC.DD.EE",
        "a.B.c.d.e",
        "aa.bB.cc.dd.ee",
        "a@b",
        "a,b",
        "a;b",
        "a:b",
        "a%b",
        "a?b",
        "a$b",
    ];
    for v in bad {
        assert_eq!(is_dns1123_subdomain(v), vec![msg.to_owned()], "{v:?}");
    }
    assert_eq!(
        is_dns1123_subdomain(&"a".repeat(254)),
        vec!["must be no more than 253 characters"]
    );
}

#[test]
fn dns1035_label() {
    for v in ["a", "ab", "abc", "a1", "a-1", "a--1--2--b"] {
        assert!(is_dns1035_label(v).is_empty(), "{v}");
    }
    let msg = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    for v in ["0", "01", "1a", "1-a", "", "A", "a-", "a.b", "-a"] {
        assert_eq!(is_dns1035_label(v), vec![msg.to_owned()], "{v:?}");
    }
}

#[test]
fn qualified_names() {
    let good = [
        "simple",
        "now-with-dashes",
        "1-starts-with-num",
        "1234",
        "simple/simple",
        "now-with-dashes/simple",
        "now-with-dashes/now-with-dashes",
        "now.with.dots/simple",
        "now-with.dashes-and.dots/simple",
        "1-num.2-num/3-num",
        "1234/5678",
        "1.2.3.4/5678",
        "Uppercase_Is_OK_123",
        "example.com/Uppercase_Is_OK_123",
        "requests.storage-foo",
    ];
    let long_ok = format!("{}/{}", "a".repeat(253), "b".repeat(63));
    for v in good.iter().copied().chain([&*"a".repeat(63), &*long_ok]) {
        assert!(is_qualified_name(v).is_empty(), "{v}");
    }
    let bad = [
        "nospecialchars%^=@",
        "cantendwithadash-",
        "-cantstartwithadash-",
        "only/one/slash",
        "Example.com/abc",
        "example_com/abc",
        "example.com/",
        "/simple",
    ];
    let long_prefix = format!("{}/abc", "a".repeat(254));
    for v in bad.iter().copied().chain([&*"a".repeat(64), &*long_prefix]) {
        assert!(!is_qualified_name(v).is_empty(), "{v}");
    }
}

#[test]
fn qualified_name_messages() {
    let name_re = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    assert_eq!(is_qualified_name("-a"), vec![name_re]);
    assert_eq!(
        is_qualified_name(""),
        vec!["name part must be non-empty", name_re]
    );
    assert_eq!(
        is_qualified_name("/a"),
        vec!["prefix part must be non-empty"]
    );
    assert_eq!(
        is_qualified_name(&"a".repeat(64)),
        vec!["name part must be no more than 63 characters"]
    );
    assert_eq!(
        is_qualified_name("a/b/c"),
        vec![
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    );
    assert_eq!(
        is_qualified_name("Example.com/a"),
        vec![
            "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ]
    );
}

#[test]
fn label_values() {
    for v in [
        "simple",
        "now-with-dashes",
        "1-starts-with-num",
        "end-with-num-1",
        "1234",
        "",
        &"a".repeat(63),
    ] {
        assert!(is_valid_label_value(v).is_empty(), "{v}");
    }
    let msg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    for v in [
        "nospecialchars%^=@",
        "Tama-nui-te-rā.is.Māori.sun",
        "\\backslashes\\are\\bad",
        "-starts-with-dash",
        "ends-with-dash-",
        ".starts.with.dot",
        "ends.with.dot.",
    ] {
        assert_eq!(is_valid_label_value(v), vec![msg.to_owned()], "{v:?}");
    }
    assert_eq!(
        is_valid_label_value(&"a".repeat(64)),
        vec!["must be no more than 63 characters"]
    );
}
