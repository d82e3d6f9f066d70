use super::*;
use crate::resources::messages;
use kas_registry::Strategy as _;

const UID: &str = "0b4e2a39-7c1f-4d55-9c1e-3f7a3c2b1a00";

fn job() -> Value {
    let mut job = json!({"metadata": {"name": "pi", "namespace": "ns", "uid": UID},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "pi", "image": "perl"}]}}}});
    Strategy.default(&mut job);
    Strategy.prepare_for_create(&mut job);
    job
}

#[test]
fn defaults() {
    let mut j = json!({"spec": {"template": {"metadata": {"labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
    Strategy.default(&mut j);
    let spec = &j["spec"];
    assert_eq!(spec["completions"], 1);
    assert_eq!(spec["parallelism"], 1);
    assert_eq!(spec["backoffLimit"], 6);
    assert_eq!(spec["completionMode"], "NonIndexed");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["manualSelector"], false);
    assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");
    assert_eq!(j["metadata"]["labels"], json!({"a": "b"}));

    let mut k = json!({"spec": {"parallelism": 3, "backoffLimitPerIndex": 1,
        "podFailurePolicy": {"rules": [{"action": "Ignore",
            "onPodConditions": [{"type": "DisruptionTarget"}]}]}}});
    Strategy.default(&mut k);
    assert!(k["spec"].get("completions").is_none());
    assert_eq!(k["spec"]["parallelism"], 3);
    assert_eq!(k["spec"]["backoffLimit"], 2147483647);
    assert_eq!(k["spec"]["podReplacementPolicy"], "Failed");
    assert_eq!(
        k["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
        "True"
    );
}

#[test]
fn selector_is_generated_from_the_uid() {
    let j = job();
    assert_eq!(
        j["spec"]["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": UID}})
    );
    assert_eq!(
        j["spec"]["template"]["metadata"]["labels"],
        json!({"batch.kubernetes.io/controller-uid": UID, "batch.kubernetes.io/job-name": "pi",
            "controller-uid": UID, "job-name": "pi"})
    );
    assert_eq!(j["metadata"]["generation"], 1);
    assert_eq!(j["status"], json!({}));
    let errs = Strategy.validate(&j);
    assert!(errs.is_empty(), "{:?}", messages(&errs));

    // A conflicting label the user set stays, and validation refuses it.
    let mut bad = json!({"metadata": {"name": "pi", "namespace": "ns", "uid": UID},
        "spec": {"template": {"metadata": {"labels": {"job-name": "other"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl"}]}}}});
    Strategy.default(&mut bad);
    Strategy.prepare_for_create(&mut bad);
    let msgs = messages(&Strategy.validate(&bad));
    // The selector still selects the uid only, so it is no other's.
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(
        msgs[0].starts_with(
            "spec.template.metadata.labels[job-name]: Invalid value: map[string]string{"
        ),
        "{msgs:?}"
    );
    assert!(
        msgs[0].ends_with("\"job-name\":\"other\"}: must be 'pi'"),
        "{msgs:?}"
    );

    // Manual selectors are the user's.
    let mut manual = json!({"metadata": {"name": "m", "namespace": "ns", "uid": UID},
        "spec": {"manualSelector": true, "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "i"}]}}}});
    Strategy.default(&mut manual);
    Strategy.prepare_for_create(&mut manual);
    assert_eq!(
        messages(&Strategy.validate(&manual)),
        [
            "spec.selector: Required value",
            "spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match template `labels`",
        ]
    );
}

#[test]
fn spec_messages() {
    let mut j = job();
    let spec = j["spec"].as_object_mut().unwrap();
    spec.insert("parallelism".into(), json!(-1));
    spec.insert("activeDeadlineSeconds".into(), json!(-2));
    spec.insert("ttlSecondsAfterFinished".into(), json!(-3));
    spec.insert("completionMode".into(), json!("Sometimes"));
    j["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
    assert_eq!(
        messages(&Strategy.validate(&j)),
        [
            "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
            "spec.activeDeadlineSeconds: Invalid value: -2: must be greater than or equal to 0",
            "spec.ttlSecondsAfterFinished: Invalid value: -3: must be greater than or equal to 0",
            "spec.completionMode: Unsupported value: \"Sometimes\": supported values: \"NonIndexed\", \"Indexed\"",
            "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"",
        ]
    );
    j["spec"]["completionMode"] = json!("NonIndexed");
    j["spec"]["parallelism"] = json!(1);
    j["spec"]["activeDeadlineSeconds"] = json!(1);
    j["spec"]["ttlSecondsAfterFinished"] = json!(1);
    j["spec"]["template"]["spec"]["restartPolicy"] = json!("Sometimes");
    j["spec"]["backoffLimitPerIndex"] = json!(1);
    assert_eq!(
        messages(&Strategy.validate(&j)),
        [
            "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
            "spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
            "spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"OnFailure\", \"Never\"",
        ]
    );
}

#[test]
fn indexed_and_policies() {
    let mut j = job();
    j["metadata"]["name"] = json!("pi");
    j["spec"]["completionMode"] = json!("Indexed");
    j["spec"]["completions"] = json!(4);
    j["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure");
    j["spec"]["podFailurePolicy"] = json!({"rules": [
        {"action": "Explode", "onExitCodes": {"operator": "In", "values": [3, 0, 3]}},
        {"action": "FailJob"},
    ]});
    j["spec"]["podReplacementPolicy"] = json!("TerminatingOrFailed");
    j["spec"]["successPolicy"] =
        json!({"rules": [{"succeededIndexes": "0-2,1", "succeededCount": 5}]});
    assert_eq!(
        messages(&Strategy.validate(&j)),
        [
            "spec.podFailurePolicy.rules[0].action: Unsupported value: \"Explode\": supported values: \"Count\", \"FailIndex\", \"FailJob\", \"Ignore\"",
            "spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Invalid value: 0: must not be 0 for the In operator",
            "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3",
            "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{3, 0, 3}: must be ordered",
            "spec.podFailurePolicy.rules[1]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
            "spec.successPolicy.rules[0].succeededIndexes: Invalid value: \"0-2,1\": error parsing succeededIndexes: non-increasing order, previous: 2, current: 1",
            "spec.successPolicy.rules[0].succeededCount: Invalid value: 5: must be less than or equal to 4 (the number of specified completions)",
            "spec.successPolicy.rules[0].succeededCount: Invalid value: 5: must be less than or equal to 0 (the number of indexes in the specified succeededIndexes field)",
            "spec.podReplacementPolicy: Unsupported value: \"TerminatingOrFailed\": supported values: \"Failed\"",
            "spec.template.spec.restartPolicy: Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified",
        ]
    );
}

#[test]
fn updates() {
    let old = job();
    let mut new = old.clone();
    new["spec"]["parallelism"] = json!(3);
    Strategy.prepare_for_update(&mut new, &old);
    assert_eq!(new["metadata"]["generation"], 2);
    assert!(Strategy.validate_update(&new, &old).is_empty());

    let mut bad = old.clone();
    bad["spec"]["completions"] = json!(2);
    bad["spec"]["template"]["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    assert_eq!(
        messages(&Strategy.validate_update(&bad, &old)),
        [
            "spec.completions: Invalid value: 2: field is immutable",
            "spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable",
        ]
    );

    // A suspended job that never ran may move its pods.
    let mut suspended = old.clone();
    suspended["spec"]["suspend"] = json!(true);
    let mut moved = suspended.clone();
    moved["spec"]["template"]["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    assert!(Strategy.validate_update(&moved, &suspended).is_empty());
    moved["spec"]["template"]["spec"]["hostname"] = json!("h");
    assert_eq!(
        messages(&Strategy.validate_update(&moved, &suspended)).len(),
        1
    );

    let mut status = old.clone();
    status["status"] =
        json!({"active": -1, "uncountedTerminatedPods": {"succeeded": ["a", ""], "failed": ["a"]}});
    assert_eq!(
        messages(&Strategy.validate_status_update(&status, &old)),
        [
            "status.active: Invalid value: -1: must be greater than or equal to 0",
            "status.uncountedTerminatedPods.succeeded[1]: Invalid value: \"\": must not be empty",
            "status.uncountedTerminatedPods.failed[0]: Duplicate value: \"a\"",
        ]
    );

    // 1.33's Job controller completes every Job through SuccessCriteriaMet, NonIndexed
    // and without a success policy too (kube-controller-manager's status write).
    let mut complete = old.clone();
    let condition = |type_: &str| json!({"type": type_, "status": "True"});
    complete["status"] = json!({"succeeded": 1, "startTime": "2026-01-01T00:00:00Z",
        "completionTime": "2026-01-01T00:00:05Z",
        "conditions": [condition("SuccessCriteriaMet"), condition("Complete")]});
    assert_eq!(
        messages(&Strategy.validate_status_update(&complete, &old)),
        Vec::<String>::new()
    );
    complete["status"]["conditions"] =
        json!([condition("SuccessCriteriaMet"), condition("Failed")]);
    assert_eq!(
        messages(&Strategy.validate_status_update(&complete, &old)),
        [
            "status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and Failed=true conditions"
        ]
    );
}

#[test]
fn printer_cells_and_fields() {
    let mut j = job();
    j["status"] = json!({"succeeded": 1, "startTime": "2024-01-01T00:00:00Z",
        "completionTime": "2024-01-01T00:01:30Z",
        "conditions": [{"type": "Complete", "status": "True"}]});
    let cells = Strategy.table_cells(&j);
    assert_eq!(cells.len(), DESCRIPTOR.table_columns.len());
    assert_eq!(
        cells[..4],
        [json!("pi"), json!("Complete"), json!("1/1"), json!("90s")]
    );
    assert_eq!(
        cells[5..],
        [
            json!("pi"),
            json!("perl"),
            json!(format!("batch.kubernetes.io/controller-uid={UID}"))
        ]
    );
    assert_eq!(Strategy.field_set(&j)["status.successful"], "1");

    let running = json!({"metadata": {"name": "r"}, "spec": {"parallelism": 3}});
    let cells = Strategy.table_cells(&running);
    assert_eq!(
        cells[1..4],
        [json!("Running"), json!("0/1 of 3"), json!("")]
    );
    assert_eq!(cells[7], "<none>");
}
