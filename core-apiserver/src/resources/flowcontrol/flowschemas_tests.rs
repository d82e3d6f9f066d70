use super::*;
use crate::resources::messages;
use kas_registry::Strategy as _;

fn schema(name: &str, spec: Value) -> Value {
    let mut obj = json!({"metadata": {"name": name}, "spec": spec});
    Strategy.default(&mut obj);
    obj
}

fn rule() -> Value {
    json!({"subjects": [{"kind": "User", "user": {"name": "alice"}}],
        "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"],
            "namespaces": ["default"]}]})
}

#[test]
fn defaults_and_valid_schema() {
    let obj = schema(
        "mine",
        json!({"priorityLevelConfiguration": {"name": "global-default"},
        "rules": [rule()]}),
    );
    assert_eq!(obj["spec"]["matchingPrecedence"], 1000);
    assert!(Strategy.validate(&obj).is_empty());
}

#[test]
fn spec_rules() {
    let obj = schema(
        "mine",
        json!({"matchingPrecedence": 1,
        "distinguisherMethod": {"type": "ByGroup"},
        "priorityLevelConfiguration": {"name": ""},
        "rules": [{"subjects": [{"kind": "Robot"}, {"kind": "Group", "user": {"name": "x"}},
                {"kind": "ServiceAccount", "serviceAccount": {"name": "*"}}]},
            {"subjects": [],
             "resourceRules": [{"verbs": ["*", "get"], "apiGroups": [],
                "resources": ["*", "pods"]}],
             "nonResourceRules": [{"verbs": ["fly"], "nonResourceURLs": ["healthz", "/a*b"]}]}]}),
    );
    assert_eq!(
        messages(&Strategy.validate(&obj)),
        vec![
            "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
            "spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:\"ByGroup\"}: supported values: \"ByNamespace\", \"ByUser\"",
            "spec.priorityLevelConfiguration.name: Required value: must reference a priority level",
            "spec.rules[0].subjects[0].kind: Unsupported value: \"Robot\": supported values: \"Group\", \"ServiceAccount\", \"User\"",
            "spec.rules[0].subjects[1].group: Required value: group is required when subject kind is 'Group'",
            "spec.rules[0].subjects[1].user: Forbidden: user is forbidden when subject kind is not 'User'",
            "spec.rules[0].subjects[2].serviceAccount.namespace: Required value: must specify namespace for service account",
            "spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty",
            "spec.rules[1].subjects: Required value: subjects must contain at least one value",
            "spec.rules[1].resourceRules[0].verbs: Invalid value: []string{\"*\", \"get\"}: if '*' is present, must not specify other verbs",
            "spec.rules[1].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group",
            "spec.rules[1].resourceRules[0].resources: Invalid value: []string{\"*\", \"pods\"}: if '*' is present, must not specify other resources",
            "spec.rules[1].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace",
            "spec.rules[1].nonResourceRules[0].verbs: Unsupported value: []string{\"fly\"}: supported values: \"create\", \"delete\", \"deletecollection\", \"get\", \"list\", \"patch\", \"proxy\", \"update\", \"watch\"",
            "spec.rules[1].nonResourceRules[0].nonResourceURLs[0]: Invalid value: \"healthz\": must start with slash",
            "spec.rules[1].nonResourceRules[0].nonResourceURLs[1]: Invalid value: \"/a*b\": wildcard can only do suffix matching",
        ]
    );
    let high = schema(
        "mine",
        json!({"matchingPrecedence": 10001,
        "priorityLevelConfiguration": {"name": "x"}}),
    );
    assert_eq!(
        messages(&Strategy.validate(&high)),
        vec!["spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000"]
    );
}

#[test]
fn mandatory_schemas_keep_their_spec() {
    let exempt = super::super::bootstrap::mandatory_flow_schema("exempt").unwrap();
    assert!(
        Strategy
            .validate(&schema("exempt", exempt.clone()))
            .is_empty()
    );
    let mut changed = exempt;
    changed["matchingPrecedence"] = json!(3);
    let msgs = messages(&Strategy.validate(&schema("exempt", changed)));
    assert_eq!(msgs.len(), 1);
    assert!(msgs[0].starts_with("spec: Invalid value: flowcontrol.FlowSchemaSpec{PriorityLevelConfiguration:flowcontrol.PriorityLevelConfigurationReference{Name:\"exempt\"}, MatchingPrecedence:3, DistinguisherMethod:(*flowcontrol.FlowDistinguisherMethod)(nil), Rules:[]flowcontrol.PolicyRulesWithSubjects{flowcontrol.PolicyRulesWithSubjects{Subjects:[]flowcontrol.Subject{flowcontrol.Subject{Kind:\"Group\""), "{msgs:?}");
    assert!(msgs[0].ends_with(": spec of 'exempt' must equal the fixed value"));
}

#[test]
fn status_generation_and_cells() {
    let mut obj = schema(
        "mine",
        json!({"priorityLevelConfiguration": {"name": "pl"},
        "rules": [rule()]}),
    );
    obj["status"] = json!({"conditions": [{"type": "Dangling", "status": "True"}]});
    Strategy.prepare_for_create(&mut obj);
    assert_eq!(obj["status"], json!({}));
    assert_eq!(obj["metadata"]["generation"], 1);
    assert_eq!(
        Strategy.table_cells(&obj)[1..4],
        [json!("pl"), json!(1000), json!("<none>")]
    );
    assert_eq!(Strategy.table_cells(&obj)[5], json!("?"));
    let mut stored = obj.clone();
    stored["status"] = json!({"conditions": [{"type": "Dangling", "status": "False"}]});
    let mut new = obj.clone();
    new["spec"]["matchingPrecedence"] = json!(7);
    Strategy.prepare_for_update(&mut new, &stored);
    assert_eq!(new["status"], stored["status"]);
    assert_eq!(new["metadata"]["generation"], 2);
    assert_eq!(Strategy.table_cells(&new)[5], json!("False"));
    let mut dup = new.clone();
    dup["status"] = json!({"conditions": [{"type": "A"}, {"type": "A"}, {}]});
    assert_eq!(
        messages(&Strategy.validate_status_update(&dup, &new)),
        vec![
            "status.conditions[1].type: Duplicate value: \"A\"",
            "status.conditions[2].type: Required value: must not be empty",
        ]
    );
}
