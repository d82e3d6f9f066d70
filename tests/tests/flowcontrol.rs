//! flowcontrol.apiserver.k8s.io/v1 end to end: the mandatory and suggested FlowSchemas
//! and PriorityLevelConfigurations core-apiserver creates at start, kubectl's tables of
//! them, a custom FlowSchema and PriorityLevelConfiguration with their defaults, and
//! upstream's refusals.

use http::Method;
use kas_e2e::{TestCluster, header_and_row, start_cluster};
use serde_json::{Value, json};

fn create(c: &TestCluster, obj: &Value) -> std::process::Output {
    c.kubectl_stdin(&["create"], &obj.to_string())
}

fn row<'a>(table: &'a str, name: &str) -> Vec<&'a str> {
    let line = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("{name} in {table}"));
    line.split_whitespace().collect()
}

#[tokio::test]
async fn flow_schemas_and_priority_levels() {
    let c = start_cluster(|_| {});

    let table = c.kubectl_ok(&["get", "flowschemas"]);
    let (header, _) = header_and_row(&table);
    assert_eq!(
        header,
        [
            "NAME",
            "PRIORITYLEVEL",
            "MATCHINGPRECEDENCE",
            "DISTINGUISHERMETHOD",
            "AGE",
            "MISSINGPL"
        ]
    );
    let names: Vec<&str> = table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names.len(), 13, "{table}");
    let exempt = row(&table, "exempt");
    assert_eq!(exempt[..4], ["exempt", "exempt", "1", "<none>"]);
    assert_eq!(exempt[5], "False");
    assert_eq!(
        row(&table, "endpoint-controller")[..4],
        ["endpoint-controller", "workload-high", "150", "ByUser"]
    );
    assert_eq!(
        row(&table, "kube-scheduler")[..4],
        ["kube-scheduler", "workload-high", "800", "ByNamespace"]
    );
    assert_eq!(
        row(&table, "catch-all")[..4],
        ["catch-all", "catch-all", "10000", "ByUser"]
    );
    let probes = c.kubectl_json(&["get", "flowschema", "probes"]);
    assert_eq!(
        probes["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"],
        "true"
    );
    let dangling = &probes["status"]["conditions"][0];
    assert_eq!(dangling["type"], "Dangling");
    assert_eq!(dangling["status"], "False");
    assert_eq!(dangling["reason"], "Found");
    assert_eq!(
        dangling["message"],
        r#"This FlowSchema references the PriorityLevelConfiguration object named "exempt" and it exists"#
    );
    assert_eq!(
        probes["spec"]["rules"][0]["nonResourceRules"],
        json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}])
    );

    let table = c.kubectl_ok(&["get", "prioritylevelconfigurations"]);
    let (header, _) = header_and_row(&table);
    assert_eq!(
        header,
        [
            "NAME",
            "TYPE",
            "NOMINALCONCURRENCYSHARES",
            "QUEUES",
            "HANDSIZE",
            "QUEUELENGTHLIMIT",
            "AGE"
        ]
    );
    assert_eq!(table.lines().count(), 9, "{table}");
    assert_eq!(
        row(&table, "exempt")[..6],
        ["exempt", "Exempt", "<none>", "<none>", "<none>", "<none>"]
    );
    assert_eq!(
        row(&table, "catch-all")[..6],
        ["catch-all", "Limited", "5", "<none>", "<none>", "<none>"]
    );
    assert_eq!(
        row(&table, "leader-election")[..6],
        ["leader-election", "Limited", "10", "16", "4", "50"]
    );
    let workload_low = c.kubectl_json(&["get", "prioritylevelconfiguration", "workload-low"]);
    assert_eq!(workload_low["spec"]["limited"]["lendablePercent"], 90);

    // A custom priority level and flow schema, with upstream's defaults.
    let pl = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "PriorityLevelConfiguration", "metadata": {"name": "mine"},
        "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}});
    let out = create(&c, &pl);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stored = c.kubectl_json(&["get", "prioritylevelconfiguration", "mine"]);
    assert_eq!(
        stored["spec"]["limited"],
        json!({"nominalConcurrencyShares": 30, "lendablePercent": 0, "limitResponse":
            {"type": "Queue", "queuing": {"handSize": 8, "queues": 64, "queueLengthLimit": 50}}})
    );
    let fs = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "mine"},
        "spec": {"priorityLevelConfiguration": {"name": "mine"},
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [{"subjects": [{"kind": "User", "user": {"name": "alice"}}],
                "resourceRules": [{"verbs": ["get", "list"], "apiGroups": [""],
                    "resources": ["pods"], "namespaces": ["default"]}]}]},
        "status": {"conditions": [{"type": "Dangling", "status": "True"}]}});
    // A create ignores the status (the answer has none; the APF configuration consumer
    // writes the Dangling condition afterwards).
    let answer = c
        .send(
            Method::POST,
            "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
            &[("content-type", "application/json")],
            &fs.to_string(),
        )
        .await;
    assert_eq!(
        answer.status,
        201,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let stored = answer.json();
    assert_eq!(stored["spec"]["matchingPrecedence"], 1000);
    assert_eq!(stored["metadata"]["generation"], 1);
    assert!(
        stored["status"].as_object().is_none_or(|s| s.is_empty()),
        "{stored}"
    );
    c.kubectl_ok(&[
        "patch",
        "flowschema",
        "mine",
        "--type=merge",
        "-p",
        r#"{"spec":{"matchingPrecedence":1500}}"#,
    ]);
    let patched = c.kubectl_json(&["get", "flowschema", "mine"]);
    assert_eq!(patched["metadata"]["generation"], 2);
    // The status subresource writes the status, which the printer's MissingPL reads.
    let status = json!({"status": {"conditions": [{"type": "Dangling", "status": "False",
        "reason": "Found"}]}});
    let answer = c
        .send(
            Method::PATCH,
            "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/mine/status",
            &[("content-type", "application/merge-patch+json")],
            &status.to_string(),
        )
        .await;
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let table = c.kubectl_ok(&["get", "flowschema", "mine"]);
    assert_eq!(row(&table, "mine")[..4], ["mine", "mine", "1500", "ByUser"]);
    assert_eq!(row(&table, "mine")[5], "False");

    // Upstream's refusals.
    let mut bad = fs.clone();
    bad["metadata"]["name"] = json!("bad");
    bad["spec"]["matchingPrecedence"] = json!(1);
    bad["spec"]["distinguisherMethod"] = json!({"type": "ByGroup"});
    bad["spec"]["rules"][0]["subjects"][0] = json!({"kind": "Robot"});
    let out = create(&c, &bad);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(r#"The FlowSchema "bad" is invalid"#),
        "{stderr}"
    );
    for expected in [
        "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
        r#"spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:"ByGroup"}: supported values: "ByNamespace", "ByUser""#,
        r#"spec.rules[0].subjects[0].kind: Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User""#,
    ] {
        assert!(stderr.contains(expected), "{expected} in {stderr}");
    }
    let out = c.kubectl(&[
        "patch",
        "flowschema",
        "catch-all",
        "--type=merge",
        "-p",
        r#"{"spec":{"matchingPrecedence":9999}}"#,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("spec of 'catch-all' must equal the fixed value"),
        "{stderr}"
    );
    let out = c.kubectl(&[
        "patch",
        "prioritylevelconfiguration",
        "exempt",
        "--type=merge",
        "-p",
        r#"{"spec":{"type":"Limited"}}"#,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("type must be 'Exempt' if and only if name is 'exempt'"),
        "{stderr}"
    );
    assert!(
        stderr
            .contains("spec of 'exempt' except the 'spec.exempt' field must equal the fixed value"),
        "{stderr}"
    );
    // The exempt level's `exempt` field may change.
    c.kubectl_ok(&[
        "patch",
        "prioritylevelconfiguration",
        "exempt",
        "--type=merge",
        "-p",
        r#"{"spec":{"exempt":{"lendablePercent":10}}}"#,
    ]);
    let mut queuing = pl.clone();
    queuing["metadata"]["name"] = json!("wide");
    queuing["spec"]["limited"]["limitResponse"]["queuing"] = json!({"queues": 512, "handSize": 8});
    let out = create(&c, &queuing);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("spec.limited.limitResponse.queuing.handSize: Invalid value: 8: required entropy bits of deckSize 512 and handSize 8 should not be greater than 60"), "{stderr}");
}
