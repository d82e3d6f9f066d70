//! The schemas and objects of upstream's conformance tests
//! (`test/e2e/apimachinery/crd_validation_rules.go`).

use kas_apimachinery::validation::field::Path;
use serde_json::{Value as Json, json};

use super::errors;
use crate::cel::compile_errors;

fn schema_with_validation_expression() -> Json {
    json!({ "type": "object", "properties": {
        "spec": { "type": "object",
            "x-kubernetes-validations": [
                { "rule": "self.x + self.y > 0" },
                { "rule": "self.firstArray.isSorted() && self.secondArray.isSorted() && ((self.firstArray.sum() + self.secondArray.sum()) % 2 == 0)" },
                { "rule": "self.largeArray.all(x, self.largeArray.all(y, y == x))" },
            ],
            "properties": {
                "x": { "type": "integer" },
                "y": { "type": "integer" },
                "firstArray": { "type": "array", "maxItems": 1000, "items": { "type": "integer" } },
                "secondArray": { "type": "array", "maxItems": 1000, "items": { "type": "integer" } },
                "largeArray": { "type": "array", "maxItems": 725, "items": { "type": "integer" } },
            } },
        "status": { "type": "object",
            "x-kubernetes-validations": [{ "rule": "self.health == 'ok' || self.health == 'unhealthy'" }],
            "properties": { "health": { "type": "string" } } },
    } })
}

fn schema_path() -> Path {
    Path::new("spec")
        .child("versions")
        .index(0)
        .child("schema")
        .child("openAPIV3Schema")
}

#[test]
fn rules_satisfied_and_violated() {
    let schema = schema_with_validation_expression();
    assert_eq!(compile_errors(&schema, &schema_path()), Vec::new());
    let ok = json!({ "apiVersion": "g/v1", "kind": "K", "metadata": { "name": "cr-1" },
        "spec": { "x": 1, "y": 0, "firstArray": [3, 4], "secondArray": [5, 10], "largeArray": [2, 2] } });
    assert_eq!(errors(&schema, ok, None), Vec::<String>::new());
    let bad = json!({ "spec": { "x": 0, "y": 0 } });
    let errs = errors(&schema, bad, None);
    assert!(
        errs.contains(
            &"root.spec: Invalid value: \"object\": failed rule: self.x + self.y > 0".to_owned()
        ),
        "{errs:?}"
    );
}

#[test]
fn runtime_cost_limit() {
    let schema = schema_with_validation_expression();
    let large = json!({ "spec": { "largeArray": vec![20; 725] } });
    let errs = errors(&schema, large, None);
    assert!(
        errs.iter().any(|e| e.ends_with("'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.largeArray.all(x, self.largeArray.all(y, y == x))")),
        "{errs:?}"
    );
}

#[test]
fn unknown_property_syntax_error_and_cost() {
    let unknown = json!({ "type": "object", "properties": { "spec": { "type": "object",
        "x-kubernetes-validations": [{ "rule": "self.z == 100" }],
        "properties": { "x": { "type": "integer" } } } } });
    let errs: Vec<String> = compile_errors(&unknown, &schema_path())
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        errs.len() == 1 && errs[0].contains("undefined field 'z'"),
        "{errs:?}"
    );
    let syntax = json!({ "type": "object", "properties": { "spec": { "type": "object",
        "x-kubernetes-validations": [{ "rule": "self = 42" }] } } });
    let errs: Vec<String> = compile_errors(&syntax, &schema_path())
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        errs.len() == 1 && errs[0].contains("Syntax error"),
        "{errs:?}"
    );
    let expensive = json!({ "type": "object", "properties": { "spec": { "type": "object",
        "properties": { "x": { "type": "array", "items": { "type": "array",
            "items": { "type": "string" },
            "x-kubernetes-validations": [{ "rule": "self.all(s, s == 'string constant')" }] } } } } } });
    let errs: Vec<String> = compile_errors(&expensive, &schema_path())
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        errs.iter().any(|e| e.contains("exceeds budget")),
        "{errs:?}"
    );
}

#[test]
fn transition_rule() {
    let schema = json!({ "type": "object", "properties": { "spec": { "type": "object",
        "properties": { "num": { "type": "integer", "x-kubernetes-validations": [{ "rule": "self > oldSelf" }] } } } } });
    assert!(errors(&schema, json!({ "spec": { "num": 10 } }), None).is_empty());
    assert_eq!(
        errors(
            &schema,
            json!({ "spec": { "num": 9 } }),
            Some(json!({ "spec": { "num": 10 } }))
        ),
        ["root.spec.num: Invalid value: \"integer\": failed rule: self > oldSelf"]
    );
}

/// Upstream's per-request budget (`RuntimeCELCostBudget`): rules stop, with one error,
/// once the costs of all evaluations so far exceed it.
#[test]
fn runtime_budget() {
    let s = json!({ "type": "string" });
    let schema = json!({ "type": "object", "properties": { "l": { "type": "array",
        "items": { "type": "object", "properties": { "s": s, "t": s },
            "x-kubernetes-validations": [{ "rule": "self.s.contains(self.t)" }] } } } });
    let long = "a".repeat(8000);
    let items: Vec<Json> = (0..20).map(|_| json!({ "s": long, "t": long })).collect();
    assert_eq!(
        errors(&schema, json!({ "l": items }), None),
        [
            "root.l[15]: Invalid value: \"object\": validation failed due to running out of cost budget, no further validation rules will be run"
        ]
    );
}
