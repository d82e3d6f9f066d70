//! Rules of the webhook configurations: defaults, messages and field paths.

use kas_registry::Strategy as _;
use serde_json::{Value, json};

use super::mutatingwebhookconfigurations::STRATEGY as MUTATING;
use super::validatingwebhookconfigurations::STRATEGY as VALIDATING;
use crate::resources::messages;

fn hook(extra: Value) -> Value {
    let mut h = json!({
        "name": "webhook.cert-manager.io",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "clientConfig": {"service": {"name": "cert-manager-webhook", "namespace": "cert-manager", "path": "/validate"}},
        "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["cert-manager.io"],
                   "apiVersions": ["v1"], "resources": ["*/*"]}],
    });
    for (k, v) in extra.as_object().unwrap() {
        if v.is_null() {
            h.as_object_mut().unwrap().remove(k);
        } else {
            h[k] = v.clone();
        }
    }
    h
}

fn config(hooks: Vec<Value>, mutating: bool) -> Value {
    let mut obj = json!({"metadata": {"name": "cert-manager-webhook"}, "webhooks": hooks});
    if mutating {
        MUTATING.default(&mut obj);
    } else {
        VALIDATING.default(&mut obj);
    }
    obj
}

#[test]
fn defaults_are_set() {
    let obj = config(vec![hook(json!({}))], true);
    let h = &obj["webhooks"][0];
    assert_eq!(h["failurePolicy"], "Fail");
    assert_eq!(h["matchPolicy"], "Equivalent");
    assert_eq!(h["namespaceSelector"], json!({}));
    assert_eq!(h["objectSelector"], json!({}));
    assert_eq!(h["timeoutSeconds"], 10);
    assert_eq!(h["reinvocationPolicy"], "Never");
    assert_eq!(h["rules"][0]["scope"], "*");
    assert_eq!(h["clientConfig"]["service"]["port"], 443);
    assert!(MUTATING.validate(&obj).is_empty());
    let obj = config(vec![hook(json!({}))], false);
    assert!(obj["webhooks"][0].get("reinvocationPolicy").is_none());
    assert!(VALIDATING.validate(&obj).is_empty());
    assert_eq!(VALIDATING.table_cells(&obj), vec![json!(1)]);
}

#[test]
fn webhook_rules() {
    let obj = config(
        vec![
            hook(
                json!({"name": "webhook", "sideEffects": "Some", "timeoutSeconds": 31,
                "admissionReviewVersions": ["v2"], "failurePolicy": "Never"}),
            ),
            hook(json!({"sideEffects": null, "admissionReviewVersions": [],
                "clientConfig": {"url": "http://user@example.com/x?a=b#frag"}})),
            hook(json!({"clientConfig": {}, "reinvocationPolicy": "Always",
                "rules": [{"operations": ["*", "CREATE"], "apiGroups": [], "apiVersions": ["v1"],
                           "resources": ["pods"], "scope": "Everywhere"}]})),
        ],
        true,
    );
    assert_eq!(
        messages(&MUTATING.validate(&obj)),
        [
            "webhooks[0].name: Invalid value: \"webhook\": should be a domain with at least three segments separated by dots",
            "webhooks[0].failurePolicy: Unsupported value: \"Never\": supported values: \"Fail\", \"Ignore\"",
            "webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\"",
            "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
            "webhooks[0].admissionReviewVersions: Invalid value: []string{\"v2\"}: must include at least one of v1, v1beta1",
            "webhooks[1].sideEffects: Required value: must specify one of None, NoneOnDryRun",
            "webhooks[1].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
            "webhooks[1].clientConfig.url: Invalid value: \"user\": user information is not permitted in the URL",
            "webhooks[1].clientConfig.url: Invalid value: \"frag\": fragments are not permitted in the URL",
            "webhooks[1].clientConfig.url: Invalid value: \"a=b\": query parameters are not permitted in the URL",
            "webhooks[1].admissionReviewVersions: Required value: must specify one of v1, v1beta1",
            "webhooks[2].rules[0].operations: Invalid value: []admissionregistration.OperationType{\"*\", \"CREATE\"}: if '*' is present, must not specify other operations",
            "webhooks[2].rules[0].apiGroups: Required value",
            "webhooks[2].rules[0].scope: Unsupported value: \"Everywhere\": supported values: \"*\", \"Cluster\", \"Namespaced\"",
            "webhooks[2].reinvocationPolicy: Unsupported value: \"Always\": supported values: \"IfNeeded\", \"Never\"",
            "webhooks[2].clientConfig: Required value: exactly one of url or service is required",
            "webhooks[2].name: Duplicate value: \"webhook.cert-manager.io\"",
        ]
    );
}

#[test]
fn service_rules_and_generation() {
    let obj = config(
        vec![hook(
            json!({"clientConfig": {"service": {"name": "", "namespace": "ns",
            "port": 0, "path": "validate//x"}}}),
        )],
        false,
    );
    assert_eq!(
        messages(&VALIDATING.validate(&obj)),
        [
            "webhooks[0].clientConfig.service.name: Required value",
            "webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
            "webhooks[0].clientConfig.service.path: Invalid value: \"validate//x\": must start with a '/'",
            "webhooks[0].clientConfig.service.path: Invalid value: \"validate//x\": segment[1] may not be empty",
        ]
    );
    let mut old = config(vec![hook(json!({}))], false);
    VALIDATING.prepare_for_create(&mut old);
    assert_eq!(old["metadata"]["generation"], 1);
    let mut new = config(vec![hook(json!({"timeoutSeconds": 5}))], false);
    VALIDATING.prepare_for_update(&mut new, &old);
    assert_eq!(new["metadata"]["generation"], 2);
}

#[test]
fn policy_and_binding_rules() {
    use super::validatingadmissionpolicies::Strategy as Policy;
    use super::validatingadmissionpolicybindings::Strategy as Binding;
    let mut p = json!({"metadata": {"name": "p"}, "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": {"resourceRules": [{"operations": ["CREATE"]}]}}});
    Policy.default(&mut p);
    assert_eq!(p["spec"]["failurePolicy"], "Fail");
    assert_eq!(
        p["spec"]["matchConstraints"]["resourceRules"][0]["scope"],
        "*"
    );
    assert_eq!(
        Policy.table_cells(&p),
        vec![json!(0), json!("v1/ConfigMap")]
    );
    assert_eq!(
        messages(&Policy.validate(&p)),
        [
            "spec.validations: Required value: validations or auditAnnotations must contain at least one item",
            "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item",
        ]
    );
    let b = json!({"metadata": {"name": "b"}, "spec": {"validationActions": ["Deny", "Deny"],
        "paramRef": {"name": "cm"}}});
    assert_eq!(
        messages(&Binding.validate(&b)),
        [
            "spec.policyName: Required value",
            "spec.validationActions[1]: Duplicate value: \"Deny\"",
        ]
    );
    assert_eq!(Binding.table_cells(&b), vec![json!(""), json!("*/cm")]);
}
