use std::collections::BTreeMap;

use serde_json::json;

use super::*;

fn set(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn req(key: &str, op: Operator, values: &[&str]) -> Requirement {
    let mut values: Vec<String> = values.iter().map(|v| (*v).to_owned()).collect();
    values.sort();
    Requirement::new(key, op, values).unwrap()
}

fn parse_err(s: &str) -> String {
    parse(s).unwrap_err().to_string()
}

#[test]
fn good_selectors_round_trip() {
    let good = [
        "x=a,y=b,z=c",
        "",
        "x!=a,y=b",
        "x=",
        "x= ",
        "x=,z= ",
        "x= ,z= ",
        "!x",
        "x>1",
        "x>1,z<5",
    ];
    for s in good {
        let sel = parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(sel.to_string(), s.replace(' ', ""), "{s}");
    }
}

#[test]
fn bad_selectors() {
    for s in ["x=a||y=b", "x==a==b", "!x=a", "x<a"] {
        assert!(parse(s).is_err(), "{s}");
    }
}

#[test]
fn deterministic_order() {
    assert_eq!(
        parse("x=a,a=x").unwrap().to_string(),
        parse("a=x,x=a").unwrap().to_string()
    );
    assert_eq!(parse("x=a,a=x").unwrap().to_string(), "a=x,x=a");
}

fn expect_match(sel: &str, labels: &BTreeMap<String, String>, want: bool) {
    let s = parse(sel).unwrap_or_else(|e| panic!("{sel}: {e}"));
    assert_eq!(s.matches(labels), want, "{sel} vs {labels:?}");
}

#[test]
fn selector_matches() {
    expect_match("", &set(&[("x", "y")]), true);
    expect_match("x=y", &set(&[("x", "y")]), true);
    expect_match("x=y,z=w", &set(&[("x", "y"), ("z", "w")]), true);
    expect_match("x!=y,z!=w", &set(&[("x", "z"), ("z", "a")]), true);
    expect_match("notin=in", &set(&[("notin", "in")]), true);
    expect_match("x", &set(&[("x", "z")]), true);
    expect_match("!x", &set(&[("y", "z")]), true);
    expect_match("x>1", &set(&[("x", "2")]), true);
    expect_match("x<1", &set(&[("x", "0")]), true);
    expect_match("x=z", &set(&[]), false);
    expect_match("x=y", &set(&[("x", "z")]), false);
    expect_match("x=y,z=w", &set(&[("x", "w"), ("z", "w")]), false);
    expect_match("x!=y,z!=w", &set(&[("x", "z"), ("z", "w")]), false);
    expect_match("x", &set(&[("y", "z")]), false);
    expect_match("!x", &set(&[("x", "z")]), false);
    expect_match("x>1", &set(&[("x", "0")]), false);
    expect_match("x<1", &set(&[("x", "2")]), false);
    expect_match("x>1", &set(&[]), false);
    expect_match("x>1", &set(&[("x", "a")]), false);
    expect_match("x!=y", &set(&[]), true);
    expect_match("x notin (a)", &set(&[]), true);
    expect_match("x in (a,b)", &set(&[("x", "b")]), true);
    expect_match("x in (a,b)", &set(&[("x", "c")]), false);
    expect_match("x=", &set(&[("x", "")]), true);
    expect_match("x=", &set(&[]), false);

    let labels = set(&[("foo", "bar"), ("baz", "blah")]);
    expect_match("foo=bar", &labels, true);
    expect_match("baz=blah", &labels, true);
    expect_match("foo=bar,baz=blah", &labels, true);
    expect_match("foo=blah", &labels, false);
    expect_match("baz=bar", &labels, false);
    expect_match("foo=bar,foobar=bar,baz=blah", &labels, false);
}

#[test]
fn everything_and_nothing() {
    let e = Selector::everything();
    assert!(e.matches(&set(&[("x", "y")])));
    assert!(e.is_empty());
    assert_eq!(e.to_string(), "");
    assert_eq!(e.requirements(), Some(&[][..]));
    let n = Selector::nothing();
    assert!(!n.matches(&set(&[])));
    assert!(!n.is_empty());
    assert!(n.matches_nothing());
    assert_eq!(n.to_string(), "");
    assert_eq!(n.requirements(), None);
    assert!(n.add([req("a", Operator::Exists, &[])]).matches_nothing());
    assert!(parse("").unwrap().is_empty());
    assert!(!parse("a").unwrap().is_empty());
}

#[test]
fn set_selectors() {
    let labels = set(&[("foo", "bar"), ("baz", "blah")]);
    for sel in [
        set(&[]),
        set(&[("foo", "bar")]),
        set(&[("baz", "blah")]),
        set(&[("foo", "bar"), ("baz", "blah")]),
    ] {
        assert!(selector_from_set(&sel).matches(&labels));
    }
    assert!(!selector_from_set(&set(&[("foo", "x")])).matches(&labels));
    assert!(selector_from_set(&set(&[])).is_empty());
    assert_eq!(
        selector_from_set(&set(&[("b", "2"), ("a", "1")])).to_string(),
        "a=1,b=2"
    );
    assert!(validated_selector_from_set(&set(&[("a", "-bad")])).is_err());
    assert!(validated_selector_from_set(&set(&[("a", "ok")])).is_ok());
}

#[test]
fn requirement_constructor() {
    let cases: Vec<(&str, Operator, Vec<&str>, Option<&str>)> = vec![
        (
            "x1",
            Operator::In,
            vec![],
            Some(
                "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
            ),
        ),
        (
            "x2",
            Operator::NotIn,
            vec![],
            Some(
                "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
            ),
        ),
        ("x3", Operator::In, vec!["foo"], None),
        ("x4", Operator::NotIn, vec!["foo"], None),
        (
            "x5",
            Operator::Equals,
            vec!["bar", "foo"],
            Some(
                "values: Invalid value: []string{\"bar\", \"foo\"}: exact-match compatibility requires one single value",
            ),
        ),
        ("x6", Operator::Exists, vec![], None),
        ("x7", Operator::DoesNotExist, vec![], None),
        (
            "x8",
            Operator::Exists,
            vec!["foo"],
            Some(
                "values: Invalid value: []string{\"foo\"}: values set must be empty for exists and does not exist",
            ),
        ),
        ("x9", Operator::In, vec!["bar"], None),
        ("1foo", Operator::In, vec!["bar"], None),
        ("1234", Operator::In, vec!["bar"], None),
        ("x11", Operator::GreaterThan, vec!["1"], None),
        ("x12", Operator::LessThan, vec!["6"], None),
        (
            "x13",
            Operator::GreaterThan,
            vec![],
            Some(
                "values: Invalid value: []string{}: for 'Gt', 'Lt' operators, exactly one value is required",
            ),
        ),
        (
            "x14",
            Operator::GreaterThan,
            vec!["bar"],
            Some(
                "values[0]: Invalid value: \"bar\": for 'Gt', 'Lt' operators, the value must be an integer",
            ),
        ),
        (
            "x15",
            Operator::LessThan,
            vec!["bar"],
            Some(
                "values[0]: Invalid value: \"bar\": for 'Gt', 'Lt' operators, the value must be an integer",
            ),
        ),
        (
            "x17",
            Operator::Equals,
            vec!["a b"],
            Some(
                "values[0][x17]: Invalid value: \"a b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ),
        ),
    ];
    for (key, op, vals, want) in cases {
        let vals: Vec<String> = vals.into_iter().map(str::to_owned).collect();
        let got = Requirement::new(key, op, vals);
        match want {
            None => assert!(got.is_ok(), "{key}: {:?}", got),
            Some(msg) => assert_eq!(got.unwrap_err().to_string(), msg, "{key}"),
        }
    }
    let long_key = "a".repeat(254);
    let err = Requirement::new(&long_key, Operator::Exists, vec![]).unwrap_err();
    assert!(
        err.to_string().starts_with(&format!(
            "key: Invalid value: \"{long_key}\": name part must be no more than 63 characters"
        )),
        "{err}"
    );
    let err = Requirement::new("x", Operator::Equals, vec!["a".repeat(64)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "values[0][x]: Invalid value: \"{}\": must be no more than 63 characters",
            "a".repeat(64)
        )
    );
    // Several errors aggregate as "[a, b]".
    let err = Requirement::new("-k", Operator::GreaterThan, vec!["-1x".into()]).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("[key: Invalid value: \"-k\": name part must consist"),
        "{msg}"
    );
    assert!(msg.contains(", values[0]: Invalid value: \"-1x\": for 'Gt', 'Lt' operators, the value must be an integer, values[0][-k]: Invalid value: \"-1x\": a valid label"), "{msg}");
    assert!(msg.ends_with(']'));
}

#[test]
fn to_string() {
    let cases = [
        (
            vec![
                req("x", Operator::In, &["abc", "def"]),
                req("y", Operator::NotIn, &["jkl"]),
                req("z", Operator::Exists, &[]),
            ],
            "x in (abc,def),y notin (jkl),z",
        ),
        (
            vec![
                req("x", Operator::NotIn, &["abc", "def"]),
                req("y", Operator::NotEquals, &["jkl"]),
                req("z", Operator::DoesNotExist, &[]),
            ],
            "x notin (abc,def),y!=jkl,!z",
        ),
        (
            vec![
                req("x", Operator::NotIn, &["abc"]),
                req("y", Operator::In, &["jkl", "mno"]),
                req("z", Operator::NotIn, &[""]),
            ],
            "x notin (abc),y in (jkl,mno),z notin ()",
        ),
        (
            vec![
                req("x", Operator::Equals, &["abc"]),
                req("y", Operator::DoubleEquals, &["jkl"]),
                req("z", Operator::NotEquals, &["a"]),
                req("z", Operator::Exists, &[]),
            ],
            "x=abc,y==jkl,z!=a,z",
        ),
        (
            vec![
                req("x", Operator::GreaterThan, &["2"]),
                req("y", Operator::LessThan, &["8"]),
                req("z", Operator::Exists, &[]),
            ],
            "x>2,y<8,z",
        ),
    ];
    for (reqs, want) in cases {
        assert_eq!(Selector::everything().add(reqs).to_string(), want);
    }
    // Values given unsorted print sorted, and stay as given in memory.
    let r = Requirement::new("x", Operator::In, vec!["b".into(), "a".into(), "b".into()]).unwrap();
    assert_eq!(r.to_string(), "x in (a,b,b)");
    assert_eq!(r.values(), ["b", "a", "b"]);
}

#[test]
fn requirement_matching() {
    let cases = [
        (
            set(&[("x", "foo"), ("y", "baz")]),
            vec![
                req("x", Operator::In, &["foo"]),
                req("y", Operator::NotIn, &["alpha"]),
            ],
            true,
        ),
        (
            set(&[("x", "foo"), ("y", "baz")]),
            vec![
                req("x", Operator::In, &["foo"]),
                req("y", Operator::In, &["alpha"]),
            ],
            false,
        ),
        (
            set(&[("y", "")]),
            vec![
                req("x", Operator::NotIn, &[""]),
                req("y", Operator::Exists, &[]),
            ],
            true,
        ),
        (
            set(&[("y", "")]),
            vec![
                req("x", Operator::DoesNotExist, &[]),
                req("y", Operator::Exists, &[]),
            ],
            true,
        ),
        (
            set(&[("y", "")]),
            vec![
                req("x", Operator::NotIn, &[""]),
                req("y", Operator::DoesNotExist, &[]),
            ],
            false,
        ),
        (
            set(&[("y", "baz")]),
            vec![req("x", Operator::In, &[""])],
            false,
        ),
        (
            set(&[("z", "2")]),
            vec![req("z", Operator::GreaterThan, &["1"])],
            true,
        ),
        (
            set(&[("z", "v2")]),
            vec![req("z", Operator::GreaterThan, &["1"])],
            false,
        ),
        (
            set(&[("z", "-5")]),
            vec![req("z", Operator::LessThan, &["1"])],
            true,
        ),
    ];
    for (labels, reqs, want) in cases {
        let sel = Selector::everything().add(reqs);
        assert_eq!(sel.matches(&labels), want, "{sel} vs {labels:?}");
    }
}

#[test]
fn set_selector_parser() {
    let cases: Vec<(&str, Vec<Requirement>)> = vec![
        ("", vec![]),
        ("\rx", vec![req("x", Operator::Exists, &[])]),
        (
            "this-is-a-dns.domain.com/key-with-dash",
            vec![req(
                "this-is-a-dns.domain.com/key-with-dash",
                Operator::Exists,
                &[],
            )],
        ),
        (
            "this-is-another-dns.domain.com/key-with-dash in (so,what)",
            vec![req(
                "this-is-another-dns.domain.com/key-with-dash",
                Operator::In,
                &["so", "what"],
            )],
        ),
        (
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            vec![req(
                "0.1.2.domain/99",
                Operator::NotIn,
                &["10.10.100.1", "tick.tack.clock"],
            )],
        ),
        ("foo  in\t (abc)", vec![req("foo", Operator::In, &["abc"])]),
        ("x notin\n (abc)", vec![req("x", Operator::NotIn, &["abc"])]),
        (
            "x  notin\t\t\t(abc,def)",
            vec![req("x", Operator::NotIn, &["abc", "def"])],
        ),
        (
            "x in (abc,def)",
            vec![req("x", Operator::In, &["abc", "def"])],
        ),
        ("x in (abc,)", vec![req("x", Operator::In, &["abc", ""])]),
        ("x in ()", vec![req("x", Operator::In, &[""])]),
        (
            "x notin (abc,,def),bar,z in (),w",
            vec![
                req("bar", Operator::Exists, &[]),
                req("w", Operator::Exists, &[]),
                req("x", Operator::NotIn, &["abc", "", "def"]),
                req("z", Operator::In, &[""]),
            ],
        ),
        ("x=a", vec![req("x", Operator::Equals, &["a"])]),
        ("x>1", vec![req("x", Operator::GreaterThan, &["1"])]),
        ("x<7", vec![req("x", Operator::LessThan, &["7"])]),
        (
            "x=a,y!=b",
            vec![
                req("x", Operator::Equals, &["a"]),
                req("y", Operator::NotEquals, &["b"]),
            ],
        ),
        (
            "x=a,y!=b,z in (h,i,j)",
            vec![
                req("x", Operator::Equals, &["a"]),
                req("y", Operator::NotEquals, &["b"]),
                req("z", Operator::In, &["h", "i", "j"]),
            ],
        ),
        ("x notin ( )", vec![req("x", Operator::NotIn, &[""])]),
        ("x notin (, a)", vec![req("x", Operator::NotIn, &["", "a"])]),
        ("a ", vec![req("a", Operator::Exists, &[])]),
        (
            "a in (x,y,notin, z,in)",
            vec![req("a", Operator::In, &["in", "notin", "x", "y", "z"])],
        ),
        (
            "x,y",
            vec![
                req("x", Operator::Exists, &[]),
                req("y", Operator::Exists, &[]),
            ],
        ),
        ("x==a", vec![req("x", Operator::DoubleEquals, &["a"])]),
        ("x in (a,a,b)", vec![req("x", Operator::In, &["a", "b"])]),
        (
            "x in (a,,,b)",
            vec![req("x", Operator::In, &["", "a", "b"])],
        ),
    ];
    for (s, want) in cases {
        let sel = parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        assert_eq!(sel.requirements().unwrap(), want.as_slice(), "{s:?}");
    }
    // Order is by key only: "x,y in (a)" sorts to x first.
    let sel = parse("y in (a),x").unwrap();
    assert_eq!(sel.to_string(), "x,y in (a)");
}

#[test]
fn parse_error_messages() {
    let cases = [
        (
            "x=a,||y=b",
            "unable to parse requirement: <nil>: Invalid value: \"||y\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        ("x==a==b", "found '==', expected: ',' or 'end of string'"),
        ("!x=a", "found '=', expected: ',' or 'end of string'"),
        (
            ",x,y",
            "found ',', expected: !, identifier, or 'end of string'",
        ),
        (
            "x nott in (y)",
            "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt",
        ),
        ("a in (xyz),", "found '', expected: identifier after ','"),
        (
            "a in (xyz)b notin ()",
            "found 'b', expected: ',' or 'end of string'",
        ),
        (
            "a in (xyz abc)",
            "unable to parse requirement: found 'abc', expected: ',' or ')'",
        ),
        (
            "a notin(",
            "unable to parse requirement: found '', expected: ',', ')' or identifier",
        ),
        (
            "a (",
            "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt",
        ),
        (
            "(",
            "found '(', expected: !, identifier, or 'end of string'",
        ),
        (
            "app=(",
            "unable to parse requirement: found '(', expected: identifier",
        ),
        (
            "x in a",
            "unable to parse requirement: found 'a' expected: '('",
        ),
        (
            "x in (a=)",
            "unable to parse requirement: found '=', expected: ',' or ')'",
        ),
        (
            "x in (=)",
            "unable to parse requirement: found '=', expected: ',', ')' or identifier",
        ),
        (
            "x in (,=)",
            "unable to parse requirement: found '=', expected: ',', or identifier",
        ),
        (
            "!",
            "unable to parse requirement: found '', expected: identifier",
        ),
        (
            "!=a",
            "found '!=', expected: !, identifier, or 'end of string'",
        ),
        (
            "!!a",
            "unable to parse requirement: found '!', expected: identifier",
        ),
        (
            "type=app,versionv1.0.1)",
            "unable to parse requirement: found ')', expected: in, notin, =, ==, !=, gt, lt",
        ),
        (
            "component not in (kube-apiserver)",
            "unable to parse requirement: found 'not', expected: in, notin, =, ==, !=, gt, lt",
        ),
        ("x,", "found '', expected: identifier after ','"),
        ("x,,y", "found ',', expected: identifier after ','"),
        (
            "test-label=====service1",
            "unable to parse requirement: found '==', expected: identifier",
        ),
        (
            "env IN (a)",
            "unable to parse requirement: found 'IN', expected: in, notin, =, ==, !=, gt, lt",
        ),
    ];
    for (s, want) in cases {
        assert_eq!(parse_err(s), want, "{s:?}");
    }
}

#[test]
fn parse_validation_messages() {
    assert_eq!(
        parse_err("x/y/z=a"),
        "unable to parse requirement: <nil>: Invalid value: \"x/y/z\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    );
    assert_eq!(
        parse_err("/a"),
        "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part must be non-empty"
    );
    assert_eq!(
        parse_err("x<a"),
        "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer"
    );
    // A negative number is an integer but no label value.
    assert!(parse_err("x>-1").starts_with(
        "unable to parse requirement: values[0][x]: Invalid value: \"-1\": a valid label must be"
    ));
    assert!(parse_err("x=-a").starts_with(
        "unable to parse requirement: values[0][x]: Invalid value: \"-a\": a valid label"
    ));
    assert!(
        matches!(parse("x=-a"), Err(Error::Requirement(inner)) if matches!(*inner, Error::Invalid(_)))
    );
    // Keys are checked in the lexer's split: "é" is one identifier.
    assert!(parse_err("é").starts_with(
        "unable to parse requirement: <nil>: Invalid value: \"é\": name part must consist"
    ));
}

#[test]
fn nul_ends_input_like_upstream() {
    // Upstream's lexer reads a NUL byte where a token starts as the end of the string,
    // and one inside an identifier as a separator that is swallowed.
    assert_eq!(parse("a \0b=c").unwrap().to_string(), "a");
    assert_eq!(
        parse_err("a, \0b"),
        "found '', expected: identifier after ','"
    );
    // After an operator symbol the NUL is swallowed too.
    assert_eq!(parse("a,\0b").unwrap().to_string(), "a,b");
    assert_eq!(
        parse_err("a\0b=c"),
        "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
    );
    // "|" is no operator: "a||y" is one value, and not a valid one.
    assert!(parse_err("x=a||y=b").starts_with(
        "unable to parse requirement: values[0][x]: Invalid value: \"a||y\": a valid label"
    ));
}

#[test]
fn requires_exact_match() {
    let s = parse("a=1,b in (2),c in (3,4),d!=5,e==6").unwrap();
    assert_eq!(s.requires_exact_match("a"), Some("1"));
    assert_eq!(s.requires_exact_match("b"), Some("2"));
    assert_eq!(s.requires_exact_match("c"), None);
    assert_eq!(s.requires_exact_match("d"), None);
    assert_eq!(s.requires_exact_match("e"), Some("6"));
    assert_eq!(s.requires_exact_match("f"), None);
    // Only the first requirement on the key counts.
    let s = parse("a,a=1").unwrap();
    assert_eq!(s.requires_exact_match("a"), None);
}

#[test]
fn add_sorts_by_key() {
    let s = Selector::everything().add([req("key", Operator::In, &["value"])]);
    assert_eq!(
        s.requirements().unwrap(),
        [req("key", Operator::In, &["value"])]
    );
    let s = s.add([req("a", Operator::Equals, &["value2"])]);
    assert_eq!(s.to_string(), "a=value2,key in (value)");
}

#[test]
fn matches_json_objects() {
    let s = parse("app=web,!canary").unwrap();
    let obj = json!({"metadata": {"name": "x", "labels": {"app": "web"}}});
    assert!(s.matches_json(&obj));
    let obj = json!({"metadata": {"labels": {"app": "web", "canary": "true"}}});
    assert!(!s.matches_json(&obj));
    assert!(!s.matches_json(&json!({"metadata": {}})));
    assert!(parse("!x").unwrap().matches_json(&json!({})));
    assert!(Selector::everything().matches_json(&json!({})));
    assert!(
        !parse("a")
            .unwrap()
            .matches_json(&json!({"metadata": {"labels": {"a": 1}}}))
    );
}

#[test]
fn label_selector_conversion() {
    assert!(from_label_selector(&Value::Null).unwrap().matches_nothing());
    assert!(from_label_selector(&json!({})).unwrap().is_empty());
    assert!(
        from_label_selector(&json!({"matchLabels": {}, "matchExpressions": []}))
            .unwrap()
            .is_empty()
    );
    let s = from_label_selector(&json!({
        "matchLabels": {"b": "2", "a": "1"},
        "matchExpressions": [
            {"key": "c", "operator": "In", "values": ["y", "x"]},
            {"key": "d", "operator": "NotIn", "values": ["z"]},
            {"key": "e", "operator": "Exists"},
            {"key": "f", "operator": "DoesNotExist", "values": []},
        ]
    }))
    .unwrap();
    assert_eq!(s.to_string(), "a=1,b=2,c in (x,y),d notin (z),e,!f");
    assert!(s.matches(&set(&[("a", "1"), ("b", "2"), ("c", "x"), ("e", "")])));
    assert!(!s.matches(&set(&[("a", "1"), ("b", "2"), ("c", "x")])));
}

#[test]
fn label_selector_errors() {
    let err = from_label_selector(
        &json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}),
    );
    assert_eq!(
        err.unwrap_err().to_string(),
        "\"Gt\" is not a valid label selector operator"
    );
    let err = from_label_selector(&json!({"matchExpressions": [{"key": "a", "operator": "In"}]}));
    assert_eq!(
        err.unwrap_err().to_string(),
        "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
    );
    let err = from_label_selector(
        &json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}),
    );
    assert_eq!(
        err.unwrap_err().to_string(),
        "values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not exist"
    );
    let err = from_label_selector(&json!({"matchLabels": {"a/b/c": "x"}}));
    assert!(
        err.unwrap_err()
            .to_string()
            .starts_with("key: Invalid value: \"a/b/c\": a qualified name must")
    );
    let err = from_label_selector(&json!({"matchLabels": {"a": "-x"}}));
    assert!(
        err.unwrap_err()
            .to_string()
            .starts_with("values[0][a]: Invalid value: \"-x\": a valid label")
    );
    assert!(matches!(
        from_label_selector(&json!([])),
        Err(Error::Malformed(_))
    ));
    assert!(matches!(
        from_label_selector(&json!({"matchLabels": {"a": 1}})),
        Err(Error::Malformed(_))
    ));
}
