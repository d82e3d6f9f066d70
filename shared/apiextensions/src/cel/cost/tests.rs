//! Expected costs from upstream's `TestCostEstimation` (compilation_test.go): each case
//! without bounds, then with `maxItems`/`maxProperties`/`maxLength` set.

use serde_json::{Value as Json, json};

use super::*;
use crate::cel::environment;

fn cost(schema: &Json, rule: &str) -> u64 {
    let program = environment::env().compile(rule).expect("rule compiles");
    estimate(program.expression(), Node(schema))
}

fn array(items: Json, max: Option<i64>) -> Json {
    let mut a = json!({ "type": "array", "items": items });
    if let Some(m) = max {
        a["maxItems"] = json!(m);
    }
    a
}

fn map(values: Json, max: Option<i64>) -> Json {
    let mut m = json!({ "type": "object", "additionalProperties": values });
    if let Some(n) = max {
        m["maxProperties"] = json!(n);
    }
    m
}

fn string(max: Option<i64>) -> Json {
    match max {
        Some(m) => json!({ "type": "string", "maxLength": m }),
        None => json!({ "type": "string" }),
    }
}

#[test]
fn comprehension_costs() {
    let number = json!({ "type": "number" });
    let cases: &[(Json, Json, &str, u64, u64)] = &[
        (
            array(number.clone(), None),
            array(number.clone(), Some(10)),
            "self.all(x, true)",
            4718591,
            32,
        ),
        (
            array(string(None), None),
            array(string(None), Some(20)),
            "self.all(x, true)",
            3145727,
            62,
        ),
        (
            array(json!({ "type": "boolean" }), None),
            array(json!({ "type": "boolean" }), Some(5)),
            "self.all(x, true)",
            1887437,
            17,
        ),
        (
            map(number.clone(), None),
            map(number.clone(), Some(10)),
            "self.all(x, true)",
            1348169,
            32,
        ),
        (
            map(string(None), None),
            map(string(None), Some(3)),
            "self.all(x, true)",
            1179647,
            11,
        ),
        (
            array(number.clone(), None),
            array(number.clone(), Some(10)),
            "self.all(x, self.all(y, true))",
            0,
            352,
        ),
        (
            array(number.clone(), None),
            array(number.clone(), Some(10)),
            "self.all(x, self.all(y, self.all(z, true)))",
            0,
            3552,
        ),
        (
            map(string(None), None),
            map(string(Some(10)), Some(10)),
            "self.all(x, x.contains(self[x]))",
            2752507,
            72,
        ),
        (
            array(number.clone(), None),
            array(number.clone(), Some(3 * 1024 * 2048)),
            "self.all(x, x == 0.0)",
            6291454,
            25165826,
        ),
        (
            array(json!({ "type": "string", "format": "date-time" }), None),
            array(json!({ "type": "string", "format": "date-time" }), Some(25)),
            "self.all(x, true)",
            428963,
            77,
        ),
        (
            array(json!({ "type": "string", "format": "date" }), None),
            array(json!({ "type": "string", "format": "date" }), Some(15)),
            "self.all(x, true)",
            725936,
            47,
        ),
        (
            array(json!({ "type": "string", "format": "duration" }), None),
            array(json!({ "type": "string", "format": "duration" }), Some(5)),
            "self.all(x, true)",
            2359295,
            17,
        ),
        (
            array(string(None), None),
            array(string(Some(10)), Some(10)),
            "self.isSorted() == true",
            329854432052,
            52,
        ),
    ];
    for (calc, set, rule, calc_cost, set_cost) in cases {
        if *calc_cost > 0 {
            assert_eq!(cost(calc, rule), *calc_cost, "{rule} unbounded");
        } else {
            assert!(cost(calc, rule) > 10_000_000, "{rule} unbounded");
        }
        assert_eq!(cost(set, rule), *set_cost, "{rule} bounded");
    }
}

#[test]
fn string_function_costs() {
    let cases: &[(&str, u64, i64, u64)] = &[
        ("self.contains('test')", 314574, 10, 5),
        ("self.startsWith('test')", 2, 15, 2),
        ("size(self + \"hello\") > size(\"hello\")", 314578, 4, 7),
        ("self.matches(\"x\")", 314574, 50, 22),
        ("\"\".matches(\"(((((((((())))))))))[0-9]\")", 7, 10, 7),
        ("self.matches(\"\")", 1, 100, 1),
        ("self.find('[0-9]+') == ''", 629147, 10, 11),
        ("self.lowerAscii() == 'lower!'", 314575, 10, 6),
        ("self == \"x\"", 2, 0, 1),
    ];
    for (rule, calc_cost, max, set_cost) in cases {
        assert_eq!(cost(&string(None), rule), *calc_cost, "{rule} unbounded");
        assert_eq!(cost(&string(Some(*max)), rule), *set_cost, "{rule} bounded");
    }
}

#[test]
fn index_costs() {
    let number = json!({ "type": "number" });
    assert_eq!(cost(&array(number.clone(), None), "self[1] == 0.0"), 2);
    assert_eq!(
        cost(&array(string(None), Some(8)), "self[1] == self[1]"),
        314577
    );
    assert_eq!(
        cost(
            &array(json!({ "x-kubernetes-int-or-string": true }), None),
            "self[0] == 5"
        ),
        3
    );
    let number_map = map(number, None);
    assert_eq!(cost(&array(number_map, None), "self[0].x > 2.0"), 4);
}

/// Two-variable comprehensions cost as their one-variable expansion over the target.
#[test]
fn two_variable_comprehension_costs() {
    let number = json!({ "type": "number" });
    let one = cost(&array(number.clone(), Some(10)), "self.all(x, true)");
    let two = cost(&array(number, Some(10)), "self.all(i, x, true)");
    assert!(two >= one && two < 10 * one, "{one} {two}");
}
