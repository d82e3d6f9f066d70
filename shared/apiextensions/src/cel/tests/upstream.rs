//! Cases of upstream's `TestValidationExpressions`, each group with its values (`val1`,
//! `val2`, ...) and schemas, as upstream's `objs` and `schemas` build them.

use serde_json::{Value as Json, json};

use super::check_rules;

/// Upstream `ValsEqualThemselvesAndDataLiteral`.
fn vals_equal(a: &str, b: &str, lit: &str) -> String {
    format!("{a} == {lit} && {lit} == {a} && {a} == {b}")
}

pub(super) fn run(vals: &[Json], schemas: &[Json], valid: &[&str], failing: &[(&str, &str)]) {
    let mut props = serde_json::Map::new();
    let mut obj = serde_json::Map::new();
    for (i, (v, s)) in vals.iter().zip(schemas).enumerate() {
        props.insert(format!("val{}", i + 1), s.clone());
        obj.insert(format!("val{}", i + 1), v.clone());
    }
    check_rules(Json::Object(props), Json::Object(obj), valid, failing);
}

pub(super) fn t(ty: &str) -> Json {
    json!({ "type": ty })
}

pub(super) fn f(format: &str) -> Json {
    json!({ "type": "string", "format": format })
}

#[test]
fn numeric_comparisons() {
    let (i, n) = (t("integer"), t("number"));
    run(
        &[json!(5), json!(10), json!(15), json!(10.0), json!(10)],
        &[i.clone(), i.clone(), i, n.clone(), n],
        &[
            "double(self.val1) < self.val4",
            "double(self.val2) == self.val4",
            "double(5) < 10.0",
            "10 == int(10.0)",
            "self.val1 < self.val4",
            "self.val3 >= self.val4",
            "self.val1 < self.val5",
            "self.val1 < int(self.val5)",
            "5 < 10.0",
            "self.val3 > 10.0",
        ],
        &[],
    );
}

#[test]
fn unicode_strings() {
    let s = t("string");
    let v = json!("Rook takes 👑");
    run(
        &[v.clone(), v],
        &[s.clone(), s],
        &[
            &vals_equal("self.val1", "self.val2", "'Rook takes 👑'"),
            "self.val1.startsWith('Rook')",
            "self.val1.contains('takes')",
            "self.val1.endsWith('👑')",
            "self.val1.matches('^[^0-9]*$')",
            "type(self.val1) == string",
            "size(self.val1) == 12",
            "self.val1.charAt(3) == 'k'",
            "self.val1.indexOf('o') == 1",
            "self.val1.indexOf('o', 2) == 2",
            "self.val1.replace(' ', 'x') == 'Rookxtakesx👑'",
            "self.val1.replace(' ', 'x', 1) == 'Rookxtakes 👑'",
            "self.val1.split(' ') == ['Rook', 'takes', '👑']",
            "self.val1.split(' ', 2) == ['Rook', 'takes 👑']",
            "self.val1.substring(5) == 'takes 👑'",
            "self.val1.substring(0, 4) == 'Rook'",
            "self.val1.substring(4, 10).trim() == 'takes'",
            "self.val1.upperAscii() == 'ROOK TAKES 👑'",
            "self.val1.lowerAscii() == 'rook takes 👑'",
            "'%d %s %s'.format([1, 'abc', duration('1m')]) == '1 abc 60s'",
            "'%o %o %o'.format([7, 8, 9]) == '7 10 11'",
            "'%b %b %b'.format([7, 8, 9]) == '111 1000 1001'",
        ],
        &[(
            "self.val1.matches(')')",
            "compile error: compilation failed: ERROR: <input>:1:19: invalid matches argument",
        )],
    );
}

#[test]
fn bytes_booleans_and_escapes() {
    run(
        &[
            json!("QUI="),
            json!("QUI="),
            json!(true),
            json!(false),
            json!("l1\nl2"),
        ],
        &[
            f("byte"),
            f("byte"),
            t("boolean"),
            t("boolean"),
            t("string"),
        ],
        &[
            "self.val1 == self.val2",
            "self.val1 == b'AB'",
            "self.val1 == bytes('AB')",
            "self.val1 == b'\\x41\\x42'",
            "type(self.val1) == bytes",
            "size(self.val1) == 2",
            "self.val3 != self.val4 && type(self.val3) == bool",
            "self.val5 == 'l1\\nl2'",
            "self.val5 == '''l1\nl2'''",
        ],
        &[],
    );
}

#[test]
fn durations_and_timestamps() {
    let dt = json!("2011-08-18T19:03:37.010000000+01:00");
    run(
        &[json!("1h2m3s4ms"), json!("1997-07-16"), dt.clone(), dt],
        &[f("duration"), f("date"), f("date-time"), f("date-time")],
        &[
            "self.val1 == duration('1h2m') + duration('3s4ms')",
            "self.val1.getHours() == 1",
            "self.val1.getMinutes() == 62",
            "self.val1.getSeconds() == 3723",
            "self.val1.getMilliseconds() == 3723004",
            "type(self.val1) == google.protobuf.Duration",
            &vals_equal(
                "self.val2",
                "self.val2",
                "timestamp('1997-07-16T00:00:00.000Z')",
            ),
            "self.val2.getDate() == 16",
            "self.val2.getMonth() == 06",
            "self.val2.getFullYear() == 1997",
            "type(self.val2) == google.protobuf.Timestamp",
            &vals_equal(
                "self.val3",
                "self.val4",
                "timestamp('2011-08-18T19:03:37.010+01:00')",
            ),
            "self.val3 == timestamp('2011-08-18T00:00:00.000+01:00') + duration('19h3m37s10ms')",
            "self.val3.getDate('01:00') == 18",
            "self.val3.getMonth('01:00') == 7",
            "self.val3.getHours('01:00') == 19",
            "self.val3.getHours('UTC') == 18",
        ],
        &[
            (
                "duration('1') == duration('1s')",
                "compilation failed: ERROR: <input>:1:10: invalid duration argument",
            ),
            (
                "duration('1d') == duration('1s')",
                "compilation failed: ERROR: <input>:1:10: invalid duration argument",
            ),
            (
                "duration('1us') < duration('1nns')",
                "compilation failed: ERROR: <input>:1:28: invalid duration argument",
            ),
            (
                "timestamp('1000-00-00T00:00:00Z') == timestamp('1000-01-01T00:00:00Z')",
                "compilation failed: ERROR: <input>:1:11: invalid timestamp",
            ),
            (
                "timestamp('1000-01-01T00:00:00ZZ') == timestamp('1000-01-01T00:00:00Z')",
                "compilation failed: ERROR: <input>:1:11: invalid timestamp",
            ),
        ],
    );
}

#[test]
fn conversions() {
    run(
        &[
            json!(10),
            json!(10.0),
            json!(10.49),
            json!(10.5),
            json!(true),
            json!("10"),
            json!("MTA="),
            json!("3723.004s"),
            json!("1h2m3s4ms"),
            json!("2011-08-18T19:03:37.01+01:00"),
            json!("2011-08-18T19:03:37.01+01:00"),
            json!("2011-08-18T00:00:00Z"),
            json!("2011-08-18"),
        ],
        &[
            t("integer"),
            t("number"),
            t("number"),
            t("number"),
            t("boolean"),
            t("string"),
            f("byte"),
            t("string"),
            f("duration"),
            t("string"),
            f("date-time"),
            t("string"),
            f("date"),
        ],
        &[
            "int(self.val2) == self.val1",
            "int(self.val3) == self.val1",
            "int(self.val4) == self.val1",
            "int(self.val6) == self.val1",
            "double(self.val1) == self.val2",
            "double(self.val6) == self.val2",
            "bytes(self.val6) == self.val7",
            "string(self.val1) == self.val6",
            "string(self.val2) == '10'",
            "string(self.val3) == '10.49'",
            "string(self.val4) == '10.5'",
            "string(self.val5) == 'true'",
            "string(self.val7) == self.val6",
            "duration(self.val8) == self.val9",
            "string(self.val9) == self.val8",
            "timestamp(self.val10) == self.val11",
            "timestamp(self.val12) == self.val13",
            "string(self.val13) == self.val12",
        ],
        &[],
    );
}

#[test]
fn lists_and_sets() {
    let ints = json!({ "type": "array", "items": { "type": "integer" } });
    let strs = json!({ "type": "array", "items": { "type": "string" } });
    run(
        &[json!([1, 2, 3]), json!([1, 2, 3]), json!(["a", "b", "c"])],
        &[ints.clone(), ints, strs],
        &[
            &vals_equal("self.val1", "self.val2", "[1, 2, 3]"),
            "1 in self.val1",
            "self.val2[0] in self.val1",
            "!(0 in self.val1)",
            "self.val1 + self.val2 == [1, 2, 3, 1, 2, 3]",
            "self.val1 + [4, 5] == [1, 2, 3, 4, 5]",
            "self.val3.join('-') == 'a-b-c'",
            "['a', 'b', 'c'].join('-') == 'a-b-c'",
            "self.val3.join() == 'abc'",
            "sets.contains(['a', 'b'], [])",
            "sets.contains(['a', 'b'], ['b'])",
            "!sets.contains(['a', 'b'], ['c'])",
            "sets.equivalent([], [])",
            "sets.equivalent(['c', 'b', 'a'], ['b', 'c', 'a'])",
            "!sets.equivalent(['a', 'b'], ['b', 'c'])",
            "sets.intersects(['a', 'b'], ['b', 'c'])",
            "!sets.intersects([], [])",
        ],
        &[(
            "[1, 'a', false].filter(x, string(x) == 'a').size() == 1",
            "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'",
        )],
    );
}
