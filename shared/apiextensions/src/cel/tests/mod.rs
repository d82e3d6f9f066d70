//! Tests with upstream's messages (`pkg/apiserver/schema/cel/validation_test.go`,
//! `compilation_test.go`, and CRD validation's CEL cases).

mod access;
mod check;
mod compile;
mod e2e;
mod library;
mod lists;
mod upstream;
mod validate;

use kas_apimachinery::validation::field::Path;
use serde_json::{Value as Json, json};

use super::Validator;

/// An object schema with the given properties and, on the object, the given rules.
pub(crate) fn object(props: Json, rules: &[&str]) -> Json {
    let rules: Vec<Json> = rules.iter().map(|r| json!({ "rule": r })).collect();
    json!({ "type": "object", "properties": props, "x-kubernetes-validations": rules })
}

/// Validates `new` (and `old`) at `root`, each error as upstream's `Error()` prints it.
pub(crate) fn errors(schema: &Json, new: Json, old: Option<Json>) -> Vec<String> {
    let v = Validator::new(schema);
    v.validate(&Path::new("root"), &new, old.as_ref())
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Runs each rule alone on `obj` and returns its errors.
pub(crate) fn rule_errors(props: &Json, obj: &Json, rule: &str) -> Vec<String> {
    errors(&object(props.clone(), &[rule]), obj.clone(), None)
}

/// Asserts that every rule holds and that each failing rule's error contains its text.
pub(crate) fn check_rules(props: Json, obj: Json, valid: &[&str], failing: &[(&str, &str)]) {
    for rule in valid {
        let errs = rule_errors(&props, &obj, rule);
        assert!(errs.is_empty(), "{rule}: {errs:?}");
    }
    for (rule, want) in failing {
        let errs = rule_errors(&props, &obj, rule);
        assert_eq!(errs.len(), 1, "{rule}: {errs:?}");
        assert!(
            errs[0].contains(want),
            "{rule}: {errs:?} does not contain {want}"
        );
    }
}
