//! Upstream's `TestValidateAndCompileMatchConditions` and the matcher's evaluation.

use serde_json::json;

use super::*;

fn conditions(exprs: &[&str]) -> Vec<WebhookMatchCondition> {
    exprs
        .iter()
        .map(|e| WebhookMatchCondition {
            expression: (*e).to_owned(),
        })
        .collect()
}

/// `ValidateAndCompileMatchConditions` (a nil path) and its aggregated error.
fn compile_all(exprs: &[&str]) -> (Option<Matcher>, String) {
    let (matcher, errs) = compile_match_conditions(&conditions(exprs), &Path::nil());
    let message = field::aggregate_message(&errs).unwrap_or_default();
    (matcher, message)
}

#[test]
fn upstreams_match_condition_cases() {
    let (m, err) = compile_all(&[
        "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kube-system'",
        "request.user == 'admin'",
    ]);
    assert_eq!(err, "");
    assert!(m.is_some());
    let (m, err) = compile_all(&[]);
    assert!(m.is_none() && err.is_empty());
    assert_eq!(
        compile_all(&["  "]).1,
        "matchConditions[0].expression: Required value"
    );
    assert_eq!(
        compile_all(&["request.user == 'admin'", "request.user == 'admin'"]).1,
        "matchConditions[1].expression: Duplicate value: \"request.user == 'admin'\""
    );
    assert_eq!(
        compile_all(&["test"]).1,
        "matchConditions[0].expression: Invalid value: \"test\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'test' (in container '')\n | test\n | ^"
    );
    assert_eq!(
        compile_all(&["request.user = 'test'"]).1,
        "matchConditions[0].expression: Invalid value: \"request.user = 'test'\": compilation failed: ERROR: <input>:1:14: Syntax error: token recognition error at: '= '\n | request.user = 'test'\n | .............^\nERROR: <input>:1:16: Syntax error: extraneous input ''test'' expecting <EOF>\n | request.user = 'test'\n | ...............^"
    );
}

#[test]
fn the_declared_type_of_request_is_checked() {
    assert_eq!(
        compile("request.user").unwrap_err(),
        "must evaluate to bool but got string"
    );
    assert_eq!(
        compile("request.groups").unwrap_err(),
        "must evaluate to bool but got list(string)"
    );
    assert_eq!(
        compile("request.resourceAttributes").unwrap_err(),
        "must evaluate to bool but got kubernetes.ResourceAttributes"
    );
    assert_eq!(
        compile("1").unwrap_err(),
        "must evaluate to bool but got int"
    );
    assert_eq!(
        compile("request.foo == 'x'").unwrap_err(),
        "compilation failed: ERROR: <input>:1:8: undefined field 'foo'\n | request.foo == 'x'\n | .......^"
    );
    for ok in [
        "'system:masters' in request.groups",
        "request.groups.exists(g, g == 'x')",
        "request.extra['k'][0] == 'v'",
        "has(request.resourceAttributes.fieldSelector) && request.resourceAttributes.fieldSelector.requirements.exists(r, r.key == 'spec.nodeName')",
        "size(request.groups) > 1",
        "request.?resourceAttributes.namespace.orValue('') == 'x'",
    ] {
        assert!(compile(ok).is_ok(), "{ok}: {:?}", compile(ok).err());
    }
}

fn matcher(exprs: &[&str]) -> Matcher {
    let (m, errs) = compile_match_conditions(&conditions(exprs), &Path::nil());
    assert!(errs.is_empty(), "{errs:?}");
    m.unwrap()
}

#[test]
fn evaluation_false_wins_then_errors_then_true() {
    let resource = json!({
        "resourceAttributes": {"namespace": "kube-system", "verb": "get", "resource": "pods"},
        "user": "alice",
        "groups": ["g"]
    });
    let non_resource =
        json!({"nonResourceAttributes": {"path": "/healthz", "verb": "get"}, "user": "alice"});
    let m = matcher(&[
        "has(request.resourceAttributes)",
        "request.resourceAttributes.namespace == 'kube-system'",
    ]);
    assert_eq!(m.eval(&resource), Ok(true));
    assert_eq!(m.eval(&non_resource), Ok(false));
    let m = matcher(&["request.resourceAttributes.namespace == 'kube-system'"]);
    assert_eq!(
        m.eval(&non_resource),
        Err("cel evaluation error: expression 'request.resourceAttributes.namespace == 'kube-system'' resulted in error: no such key: resourceAttributes".to_owned())
    );
    // A false condition wins over an earlier error.
    let m = matcher(&[
        "request.resourceAttributes.namespace == 'x'",
        "request.user == 'bob'",
    ]);
    assert_eq!(m.eval(&non_resource), Ok(false));
    // Two errors are aggregated.
    let m = matcher(&[
        "request.resourceAttributes.name == 'x'",
        "request.resourceAttributes.verb == 'x'",
    ]);
    let err = m.eval(&non_resource).unwrap_err();
    assert!(
        err.starts_with(
            "[cel evaluation error: expression 'request.resourceAttributes.name == 'x''"
        ),
        "{err}"
    );
    // Fields the SubjectAccessReview omits are empty strings and lists.
    let m = matcher(&[
        "request.uid == '' && request.resourceAttributes.subresource == '' && size(request.extra) == 0",
    ]);
    assert_eq!(m.eval(&resource), Ok(true));
    let m = matcher(&["size(request.groups) == 0"]);
    assert_eq!(m.eval(&non_resource), Ok(true));
}

#[test]
fn selectors_reach_conditions_that_read_them() {
    let spec = json!({
        "resourceAttributes": {
            "verb": "list",
            "resource": "pods",
            "fieldSelector": {"requirements": [{"key": "spec.nodeName", "operator": "In", "values": ["n1"]}]},
            "labelSelector": {"requirements": [{"key": "app", "operator": "Exists"}]}
        }
    });
    let m = matcher(&[
        "request.resourceAttributes.fieldSelector.requirements[0].values[0] == 'n1'",
        "request.resourceAttributes.labelSelector.requirements[0].values.size() == 0",
    ]);
    assert!(m.uses_field_selector && m.uses_label_selector);
    assert_eq!(m.eval(&spec), Ok(true));
    // has() selects the field too, as upstream's visitor counts it.
    let m = matcher(&["has(request.resourceAttributes.labelSelector)"]);
    assert!(m.uses_label_selector && !m.uses_field_selector);
    assert_eq!(m.eval(&spec), Ok(true));
    let m = matcher(&["request.resourceAttributes.verb == 'list'"]);
    assert!(!m.uses_label_selector && !m.uses_field_selector);
}
