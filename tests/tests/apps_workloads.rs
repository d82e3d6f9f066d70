//! StatefulSets, DaemonSets and ControllerRevisions through the aggregator, as kubectl
//! drives them.

use kas_e2e::{TestCluster, header_and_row, start_cluster};
use serde_json::json;

fn create(c: &TestCluster, manifest: &str) {
    let out = c.kubectl_stdin(&["create"], manifest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const STATEFUL_SET: &str = r#"{"apiVersion":"apps/v1","kind":"StatefulSet",
    "metadata":{"name":"web"},
    "spec":{"serviceName":"web","replicas":2,
        "selector":{"matchLabels":{"app":"web"}},
        "template":{"metadata":{"labels":{"app":"web"}},
            "spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}},
        "volumeClaimTemplates":[{"metadata":{"name":"data"},
            "spec":{"accessModes":["ReadWriteOnce"],
                "resources":{"requests":{"storage":"1Gi"}}}}]}}"#;

const DAEMON_SET: &str = r#"{"apiVersion":"apps/v1","kind":"DaemonSet",
    "metadata":{"name":"agent"},
    "spec":{"selector":{"matchLabels":{"app":"agent"}},
        "template":{"metadata":{"labels":{"app":"agent"}},
            "spec":{"nodeSelector":{"disk":"ssd"},
                "containers":[{"name":"agent","image":"agent:1"}]}}}}"#;

const REVISION: &str = r#"{"apiVersion":"apps/v1","kind":"ControllerRevision",
    "metadata":{"name":"web-1","ownerReferences":[{"apiVersion":"apps/v1",
        "kind":"StatefulSet","name":"web","uid":"00000000-0000-0000-0000-000000000001",
        "controller":true}]},
    "data":{"spec":{"template":{}}},"revision":1}"#;

#[test]
fn apps_workloads_as_kubectl_uses_them() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources", "--api-group=apps"]);
    for expected in [
        vec!["statefulsets", "sts", "apps/v1", "true", "StatefulSet"],
        vec!["daemonsets", "ds", "apps/v1", "true", "DaemonSet"],
        vec![
            "controllerrevisions",
            "apps/v1",
            "true",
            "ControllerRevision",
        ],
    ] {
        assert!(
            resources
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == expected),
            "{resources}"
        );
    }

    // A StatefulSet with a claim template: upstream's defaults, the claim's included.
    create(&c, STATEFUL_SET);
    let sts = c.kubectl_json(&["get", "statefulset", "web"]);
    let spec = &sts["spec"];
    assert_eq!(spec["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        spec["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(
        spec["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    let claim = &spec["volumeClaimTemplates"][0];
    assert_eq!(claim["spec"]["volumeMode"], "Filesystem");
    assert_eq!(claim["status"]["phase"], "Pending");
    assert_eq!(sts["metadata"]["generation"], 1);
    assert_eq!(sts["status"]["replicas"], 0);

    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "sts"]));
    assert_eq!(header, ["NAME", "READY", "AGE"]);
    assert_eq!(row[..2], ["web", "0/2"]);
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "sts", "-o", "wide"]));
    assert_eq!(header, ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]);
    assert_eq!(row[3..], ["nginx", "nginx:1.27"]);

    // Scaling goes through the scale subresource.
    assert_eq!(
        c.kubectl_ok(&["scale", "sts", "web", "--replicas=3"]),
        "statefulset.apps/web scaled\n"
    );
    let sts = c.kubectl_json(&["get", "sts", "web"]);
    assert_eq!(sts["spec"]["replicas"], 3);
    assert_eq!(sts["metadata"]["generation"], 2);
    let scale: serde_json::Value = serde_json::from_str(&c.kubectl_ok(&[
        "get",
        "--raw",
        "/apis/apps/v1/namespaces/default/statefulsets/web/scale",
    ]))
    .expect("a Scale");
    assert_eq!(scale["status"]["selector"], "app=web");

    // Only some of the spec may change.
    let refused = c.kubectl_fails(&[
        "patch",
        "sts",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec":{"serviceName":"other"}}"#,
    ]);
    assert!(
        refused.contains(
            "The StatefulSet \"web\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
        ),
        "{refused}"
    );
    c.kubectl_ok(&[
        "patch",
        "sts",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec":{"minReadySeconds":5}}"#,
    ]);

    // A DaemonSet: defaults, template generation, printer.
    create(&c, DAEMON_SET);
    let ds = c.kubectl_json(&["get", "ds", "agent"]);
    assert_eq!(
        ds["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!(
        ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"],
        "1"
    );
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "ds"]));
    assert_eq!(
        header,
        [
            "NAME",
            "DESIRED",
            "CURRENT",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "NODE SELECTOR",
            "AGE"
        ]
    );
    assert_eq!(row[..7], ["agent", "0", "0", "0", "0", "0", "disk=ssd"]);
    c.kubectl_ok(&["set", "image", "ds/agent", "agent=agent:2"]);
    let ds = c.kubectl_json(&["get", "ds", "agent"]);
    assert_eq!(
        ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"],
        "2"
    );
    assert_eq!(ds["metadata"]["generation"], 2);

    // A ControllerRevision: its data does not change.
    create(&c, REVISION);
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "controllerrevisions"]));
    assert_eq!(header, ["NAME", "CONTROLLER", "REVISION", "AGE"]);
    assert_eq!(row[..3], ["web-1", "statefulset.apps/web", "1"]);
    let refused = c.kubectl_fails(&[
        "patch",
        "controllerrevision",
        "web-1",
        "--type=merge",
        "-p",
        r#"{"data":{"spec":{"replicas":2}}}"#,
    ]);
    assert!(
        refused.contains("The ControllerRevision \"web-1\" is invalid: data: Invalid value:")
            && refused.contains("field is immutable"),
        "{refused}"
    );
    c.kubectl_ok(&[
        "patch",
        "controllerrevision",
        "web-1",
        "--type=merge",
        "-p",
        r#"{"revision":2}"#,
    ]);
}
