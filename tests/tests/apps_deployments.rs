//! apps/v1 Deployments and ReplicaSets through the aggregator, as kubectl drives them.

use kas_e2e::{header_and_row, start_cluster};
use serde_json::json;

#[test]
fn deployments_and_replica_sets_as_kubectl_uses_them() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources", "--api-group=apps"]);
    for expected in [
        vec!["deployments", "deploy", "apps/v1", "true", "Deployment"],
        vec!["replicasets", "rs", "apps/v1", "true", "ReplicaSet"],
    ] {
        assert!(
            resources
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == expected),
            "{resources}"
        );
    }

    assert_eq!(
        c.kubectl_ok(&[
            "create",
            "deployment",
            "web",
            "--image=nginx:1.27",
            "--replicas=2"
        ]),
        "deployment.apps/web created\n"
    );
    // Upstream's defaults, a first generation and a status the server owns.
    let d = c.kubectl_json(&["get", "deployment", "web"]);
    let spec = &d["spec"];
    assert_eq!(spec["replicas"], 2);
    assert_eq!(spec["selector"], json!({"matchLabels": {"app": "web"}}));
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Always");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["containers"][0]["imagePullPolicy"], "IfNotPresent");
    assert_eq!(d["metadata"]["generation"], 1);
    assert_eq!(d["status"], json!({}));

    // The printer, narrow and wide.
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "deploy"]));
    assert_eq!(header, ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]);
    assert_eq!(row[..4], ["web", "0/2", "0", "0"]);
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "deploy", "-o", "wide"]));
    assert_eq!(
        header,
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert_eq!(row[5..], ["nginx", "nginx:1.27", "app=web"]);

    // Scaling goes through the scale subresource; a new spec is a new generation.
    assert_eq!(
        c.kubectl_ok(&["scale", "deployment", "web", "--replicas=5"]),
        "deployment.apps/web scaled\n"
    );
    let d = c.kubectl_json(&["get", "deployment", "web"]);
    assert_eq!(d["spec"]["replicas"], 5);
    assert_eq!(d["metadata"]["generation"], 2);
    let scale: serde_json::Value = serde_json::from_str(&c.kubectl_ok(&[
        "get",
        "--raw",
        "/apis/apps/v1/namespaces/default/deployments/web/scale",
    ]))
    .expect("a Scale");
    assert_eq!(scale["spec"]["replicas"], 5);
    assert_eq!(scale["status"]["selector"], "app=web");
    // A missing parent is the store's NotFound, naming the resource as the request does
    // (1.33's `ScaleREST.Get` returns the store's error; older releases named
    // `deployments/scale`).
    let out = c.kubectl(&[
        "get",
        "--raw",
        "/apis/apps/v1/namespaces/default/deployments/missing/scale",
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(r#"deployments.apps "missing" not found"#),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    assert_eq!(
        c.kubectl_ok(&["set", "image", "deployment/web", "nginx=nginx:1.28"]),
        "deployment.apps/web image updated\n"
    );
    let d = c.kubectl_json(&["get", "deployment", "web"]);
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.28"
    );
    assert_eq!(d["metadata"]["generation"], 3);

    // The selector is immutable in apps/v1.
    let refused = c.kubectl_fails(&[
        "patch",
        "deployment",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec":{"selector":{"matchLabels":{"app":"web","tier":"x"}},
            "template":{"metadata":{"labels":{"app":"web","tier":"x"}}}}}"#,
    ]);
    assert!(
        refused.contains(
            "The Deployment \"web\" is invalid: spec.selector: Invalid value: \
             v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\", \"tier\":\"x\"}, \
             MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
        ),
        "{refused}"
    );
    // A template the selector does not select is refused on create.
    let bad = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"bad"},
        "spec":{"selector":{"matchLabels":{"app":"a"}},
            "template":{"metadata":{"labels":{"app":"b"}},
                "spec":{"containers":[{"name":"c","image":"nginx"}]}}}}"#;
    let out = c.kubectl_stdin(&["create"], bad);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"b\"}: \
             `selector` does not match template `labels`"
        ),
        "{err}"
    );

    // A ReplicaSet from a manifest.
    let manifest = r#"{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"front"},
        "spec":{"selector":{"matchLabels":{"tier":"front"}},
            "template":{"metadata":{"labels":{"tier":"front"}},
                "spec":{"containers":[{"name":"php","image":"php:8"}]}}}}"#;
    let out = c.kubectl_stdin(&["create"], manifest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "replicaset.apps/front created\n"
    );
    let rs = c.kubectl_json(&["get", "rs", "front"]);
    assert_eq!(rs["spec"]["replicas"], 1);
    assert_eq!(rs["metadata"]["generation"], 1);
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "rs"]));
    assert_eq!(header, ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]);
    assert_eq!(row[..4], ["front", "1", "0", "0"]);
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "rs", "-o", "wide"]));
    assert_eq!(row[5..], ["php", "php:8", "tier=front"]);
    assert_eq!(
        c.kubectl_ok(&["scale", "rs", "front", "--replicas=3"]),
        "replicaset.apps/front scaled\n"
    );
    let rs = c.kubectl_json(&["get", "rs", "front"]);
    assert_eq!(rs["spec"]["replicas"], 3);
    assert_eq!(rs["metadata"]["generation"], 2);

    c.kubectl_ok(&["delete", "deployment", "web"]);
    c.kubectl_ok(&["delete", "rs", "front"]);
    assert_eq!(c.kubectl_ok(&["get", "deploy,rs", "-o", "name"]), "");
}
