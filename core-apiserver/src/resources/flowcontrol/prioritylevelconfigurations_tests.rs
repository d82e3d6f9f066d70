use super::*;
use crate::resources::messages;
use kas_registry::Strategy as _;

fn level(name: &str, spec: Value) -> Value {
    let mut obj = json!({"metadata": {"name": name}, "spec": spec});
    Strategy.default(&mut obj);
    obj
}

#[test]
fn defaults() {
    let obj = level(
        "mine",
        json!({"type": "Limited",
        "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}),
    );
    assert_eq!(
        obj["spec"]["limited"],
        json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
            "limitResponse": {"type": "Queue",
                "queuing": {"handSize": 8, "queues": 64, "queueLengthLimit": 50}}})
    );
    assert!(Strategy.validate(&obj).is_empty());
    let zero = level(
        "zero",
        json!({"type": "Limited", "limited":
        {"nominalConcurrencyShares": 0, "limitResponse": {"type": "Reject"}}}),
    );
    assert_eq!(zero["spec"]["limited"]["nominalConcurrencyShares"], 0);
    assert!(Strategy.validate(&zero).is_empty());
    let exempt = level("exempt", json!({"type": "Exempt", "exempt": {}}));
    assert_eq!(
        exempt["spec"]["exempt"],
        json!({"nominalConcurrencyShares": 0, "lendablePercent": 0})
    );
    assert!(Strategy.validate(&exempt).is_empty());
}

#[test]
fn spec_rules() {
    let check = |name: &str, spec: Value| messages(&Strategy.validate(&level(name, spec)));
    assert_eq!(
        check("x", json!({"type": "Limited"})),
        vec!["spec.limited: Required value: must not be empty when type is Limited"]
    );
    assert_eq!(
        check("x", json!({"type": "Other"})),
        vec!["spec.type: Unsupported value: \"Other\": supported values: \"Exempt\", \"Limited\""]
    );
    assert_eq!(
        check(
            "x",
            json!({"type": "Limited", "limited": {"nominalConcurrencyShares": -1,
            "lendablePercent": 101, "borrowingLimitPercent": -2,
            "limitResponse": {"type": "Reject", "queuing": {}}}})
        ),
        vec![
            "spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
            "spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited",
            "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
            "spec.limited.borrowingLimitPercent: Invalid value: -2: if specified, must be a non-negative integer",
        ]
    );
    assert_eq!(
        check(
            "x",
            json!({"type": "Limited", "limited": {"limitResponse": {"type": "Queue"}}})
        ),
        vec![
            "spec.limited.limitResponse.queuing: Required value: must not be empty if limited.limitResponse.type is Limited"
        ]
    );
    let queuing = |q: Value| {
        json!({"type": "Limited", "limited":
        {"limitResponse": {"type": "Queue", "queuing": q}}})
    };
    assert_eq!(
        check(
            "x",
            queuing(json!({"queues": 512, "handSize": 8, "queueLengthLimit": 100}))
        ),
        vec![
            "spec.limited.limitResponse.queuing.handSize: Invalid value: 8: required entropy bits of deckSize 512 and handSize 8 should not be greater than 60"
        ]
    );
    assert_eq!(
        check("x", queuing(json!({"queues": 2147483647, "handSize": 3}))),
        vec![
            "spec.limited.limitResponse.queuing.queues: Invalid value: 2147483647: must not be greater than 10000000",
            "spec.limited.limitResponse.queuing.handSize: Invalid value: 3: required entropy bits of deckSize 2147483647 and handSize 3 should not be greater than 60",
        ]
    );
    assert_eq!(
        check(
            "x",
            queuing(json!({"queues": 4, "handSize": 5, "queueLengthLimit": -1}))
        ),
        vec![
            "spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -1: must be positive",
            "spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)",
        ]
    );
    assert_eq!(
        check("x", json!({"type": "Exempt"})),
        vec![
            "spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'"
        ]
    );
}

#[test]
fn mandatory_levels() {
    let check = |name: &str, spec: Value| messages(&Strategy.validate(&level(name, spec)));
    let bad = json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 42,
        "limitResponse": {"type": "Reject"}}});
    assert_eq!(
        check("exempt", bad.clone()),
        vec![
            "spec.type: Invalid value: \"Limited\": type must be 'Exempt' if and only if name is 'exempt'",
            "spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:\"Limited\", Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000000000), Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(nil)}: spec of 'exempt' except the 'spec.exempt' field must equal the fixed value",
        ]
    );
    assert_eq!(
        check("catch-all", bad),
        vec![
            "spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:\"Limited\", Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000000000), Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(nil)}: spec of 'catch-all' must equal the fixed value"
        ]
    );
    let catch_all = super::super::bootstrap::mandatory_priority_level("catch-all").unwrap();
    assert!(check("catch-all", catch_all).is_empty());
    assert!(
        check(
            "exempt",
            json!({"type": "Exempt",
            "exempt": {"nominalConcurrencyShares": 10, "lendablePercent": 10}})
        )
        .is_empty()
    );
    assert_eq!(
        check(
            "exempt",
            json!({"type": "Exempt",
            "exempt": {"nominalConcurrencyShares": -1, "lendablePercent": 101}})
        ),
        vec![
            "spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
            "spec.exempt.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
        ]
    );
}

#[test]
fn bootstrap_objects_validate_and_print() {
    let objects = super::super::bootstrap_objects();
    assert_eq!(objects.len(), 8 + 13);
    for (plural, obj) in objects {
        let mut obj = obj;
        let errs = if plural == "flowschemas" {
            let s = super::super::flowschemas::Strategy;
            s.default(&mut obj);
            s.validate(&obj)
        } else {
            Strategy.default(&mut obj);
            Strategy.validate(&obj)
        };
        assert!(
            errs.is_empty(),
            "{}: {:?}",
            kas_registry::meta::name(&obj),
            messages(&errs)
        );
        assert_eq!(
            obj["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"],
            "true"
        );
    }
    let mut system = super::super::bootstrap_objects()
        .into_iter()
        .find(|(_, o)| o["metadata"]["name"] == "system")
        .unwrap()
        .1;
    Strategy.default(&mut system);
    assert_eq!(
        Strategy.table_cells(&system)[..6],
        [
            json!("system"),
            json!("Limited"),
            json!(30),
            json!(64),
            json!(6),
            json!(50)
        ]
    );
    let exempt = level("exempt", json!({"type": "Exempt"}));
    assert_eq!(
        Strategy.table_cells(&exempt)[1..6],
        [
            json!("Exempt"),
            json!("<none>"),
            json!("<none>"),
            json!("<none>"),
            json!("<none>")
        ]
    );
}
