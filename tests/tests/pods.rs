//! Pods and pod templates through the aggregator, as kubectl drives them.

use kas_e2e::{header_and_row, start_cluster};
use serde_json::{Value, json};

#[test]
fn pods_as_kubectl_uses_them() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources", "--api-group="]);
    for expected in [
        vec!["pods", "po", "v1", "true", "Pod"],
        vec!["podtemplates", "v1", "true", "PodTemplate"],
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
            "run",
            "web",
            "--image=nginx:1.27",
            "--port=80",
            "--labels=app=web"
        ]),
        "pod/web created\n"
    );
    // Upstream's defaults, and a status the server owns.
    let pod = c.kubectl_json(&["get", "pod", "web"]);
    let spec = &pod["spec"];
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["dnsPolicy"], "ClusterFirst");
    assert_eq!(spec["terminationGracePeriodSeconds"], 30);
    assert_eq!(spec["schedulerName"], "default-scheduler");
    assert_eq!(spec["enableServiceLinks"], true);
    assert_eq!(spec["securityContext"], json!({}));
    let container = &spec["containers"][0];
    assert_eq!(container["imagePullPolicy"], "IfNotPresent");
    assert_eq!(container["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(
        container["ports"][0],
        json!({"containerPort": 80, "protocol": "TCP"})
    );
    assert_eq!(
        pod["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
    // The default admission plugins: Priority and DefaultTolerationSeconds.
    assert_eq!(spec["priority"], 0);
    assert_eq!(spec["preemptionPolicy"], "PreemptLowerPriority");
    assert_eq!(
        spec["tolerations"],
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ])
    );

    // The printer, narrow and wide.
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "pods"]));
    assert_eq!(header, ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]);
    assert_eq!(row[..4], ["web", "0/1", "Pending", "0"]);
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "pods", "-o", "wide"]));
    assert_eq!(
        header,
        [
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED NODE",
            "READINESS GATES"
        ]
    );
    assert_eq!(row[5..], ["<none>", "<none>", "<none>", "<none>"]);

    // Field selectors on pod fields.
    assert_eq!(
        c.kubectl_ok(&[
            "get",
            "pods",
            "--field-selector=status.phase=Pending",
            "-o",
            "name"
        ]),
        "pod/web\n"
    );
    assert_eq!(
        c.kubectl_ok(&[
            "get",
            "pods",
            "--field-selector=spec.nodeName=n1",
            "-o",
            "name"
        ]),
        ""
    );
    let refused = c.kubectl_fails(&["get", "pods", "--field-selector=spec.image=x"]);
    assert!(
        refused.contains("field label not supported: spec.image"),
        "{refused}"
    );

    // The status subresource writes status only; the pod's own writes keep it.
    c.kubectl_ok(&[
        "patch", "pod", "web", "--subresource=status", "--type=merge", "-p",
        r#"{"status":{"phase":"Running","podIP":"10.1.2.3","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"web","image":"nginx:1.27","imageID":"","ready":true,"restartCount":2,"state":{"running":{}}}]}}"#,
    ]);
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "pods", "-o", "wide"]));
    assert_eq!(row[1..4], ["1/1", "Running", "2"]);
    assert_eq!(row[5], "10.1.2.3");
    assert_eq!(
        c.kubectl_ok(&["get", "pod", "web", "-o", "jsonpath={.status.podIPs[0].ip}"]),
        "10.1.2.3"
    );

    // A running pod's image may change, its other fields not.
    c.kubectl_ok(&["set", "image", "pod/web", "web=nginx:1.28"]);
    let refused = c.kubectl_fails(&[
        "patch",
        "pod",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec":{"restartPolicy":"Never"}}"#,
    ]);
    assert!(
        refused.contains("spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`"),
        "{refused}"
    );
    let refused = c.kubectl_fails(&[
        "patch",
        "pod",
        "web",
        "--type=json",
        "-p",
        r#"[{"op":"add","path":"/spec/containers/-","value":{"name":"b","image":"busybox"}}]"#,
    ]);
    assert!(
        refused
            .contains("spec.containers: Forbidden: pod updates may not add or remove containers"),
        "{refused}"
    );

    // describe reads the pod as upstream's does.
    let described = c.kubectl_ok(&["describe", "pod", "web"]);
    let lines: Vec<Vec<&str>> = described
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    for expected in [
        vec!["Image:", "nginx:1.28"],
        vec!["Restart", "Count:", "2"],
        vec!["QoS", "Class:", "BestEffort"],
        vec!["IP:", "10.1.2.3"],
    ] {
        assert!(lines.contains(&expected), "{expected:?} in {described}");
    }

    c.kubectl_ok(&["delete", "pod", "web"]);
    assert_eq!(c.kubectl_ok(&["get", "pods", "-o", "name"]), "");
}

#[test]
fn pod_templates_are_defaulted_and_printed() {
    let c = start_cluster(|_| {});
    let manifest = r#"{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"t1"},
        "template":{"metadata":{"labels":{"app":"web"}},
            "spec":{"containers":[{"name":"a","image":"nginx"},{"name":"b","image":"busybox:1"}]}}}"#;
    let out = c.kubectl_stdin(&["create"], manifest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = c.kubectl_json(&["get", "podtemplate", "t1"]);
    assert_eq!(t["metadata"]["generation"], 1);
    assert_eq!(t["template"]["spec"]["restartPolicy"], "Always");
    assert_eq!(
        t["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "Always"
    );
    // A template's pods get pod-only defaults when they are created, not here.
    assert!(
        t["template"]["spec"].get("enableServiceLinks").is_none(),
        "{t}"
    );
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "podtemplates"]));
    assert_eq!(header, ["NAME", "CONTAINERS", "IMAGES", "POD LABELS"]);
    assert_eq!(row, ["t1", "a,b", "nginx,busybox:1", "app=web"]);
    c.kubectl_ok(&[
        "patch",
        "podtemplate",
        "t1",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/template/spec/containers/0/image","value":"nginx:2"}]"#,
    ]);
    assert_eq!(
        c.kubectl_ok(&[
            "get",
            "podtemplate",
            "t1",
            "-o",
            "jsonpath={.metadata.generation}"
        ]),
        "2"
    );
}

#[test]
fn a_scheduled_pod_is_deleted_gracefully() {
    let c = start_cluster(|_| {});
    let manifest = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bound"},
        "spec":{"nodeName":"n1","containers":[{"name":"a","image":"nginx"}]}}"#;
    let out = c.kubectl_stdin(&["create"], manifest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A node runs it: the deletion waits for its grace period.
    c.kubectl_ok(&["delete", "pod", "bound", "--wait=false"]);
    let pod = c.kubectl_json(&["get", "pod", "bound"]);
    assert_eq!(pod["metadata"]["deletionGracePeriodSeconds"], 30, "{pod}");
    assert!(pod["metadata"]["deletionTimestamp"].is_string(), "{pod}");
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "pods"]));
    assert_eq!(row[2], "Terminating");
    // A longer period does not move it; --force with zero deletes it now.
    c.kubectl_ok(&[
        "delete",
        "pod",
        "bound",
        "--wait=false",
        "--grace-period=60",
    ]);
    let again = c.kubectl_json(&["get", "pod", "bound"]);
    assert_eq!(
        again["metadata"]["deletionGracePeriodSeconds"], 30,
        "{again}"
    );
    let out = c.kubectl(&["delete", "pod", "bound", "--grace-period=0", "--force"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let missing = c.kubectl_fails(&["get", "pod", "bound"]);
    assert!(missing.contains("pods \"bound\" not found"), "{missing}");
}

#[test]
fn an_unknown_priority_class_is_forbidden() {
    let c = start_cluster(|_| {});
    let manifest = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"vip"},
        "spec":{"priorityClassName":"gold","containers":[{"name":"a","image":"nginx"}]}}"#;
    let out = c.kubectl_stdin(&["create"], manifest);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pods \"vip\" is forbidden: no PriorityClass with name gold was found"),
        "{err}"
    );
}

#[test]
fn invalid_pods_are_refused_with_upstreams_field_paths() {
    let c = start_cluster(|_| {});
    let manifest = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bad"},
        "spec":{"restartPolicy":"Sometimes","containers":[
            {"name":"Web_1","image":"nginx","ports":[{"containerPort":70000}],
             "volumeMounts":[{"name":"missing","mountPath":"/data"}]}]}}"#;
    let out = c.kubectl_stdin(&["create"], manifest);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("The Pod \"bad\" is invalid"), "{err}");
    for expected in [
        "spec.containers[0].name: Invalid value: \"Web_1\": a lowercase RFC 1123 label must consist of",
        "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        "spec.containers[0].volumeMounts[0].name: Not found: \"missing\"",
        "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
    ] {
        assert!(err.contains(expected), "{expected} in {err}");
    }
    let missing = c.kubectl_fails(&["get", "pod", "bad"]);
    assert!(missing.contains("not found"), "{missing}");
}

#[test]
fn replication_controllers_scale_and_print() {
    let c = start_cluster(|_| {});
    let manifest = r#"{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"web"},
        "spec":{"template":{"metadata":{"labels":{"app":"web"}},
            "spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}}}"#;
    let out = c.kubectl_stdin(&["create"], manifest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rc = c.kubectl_json(&["get", "rc", "web"]);
    assert_eq!(rc["spec"]["selector"], json!({"app": "web"}));
    assert_eq!(rc["spec"]["replicas"], 1);
    assert_eq!(rc["metadata"]["generation"], 1);
    assert_eq!(
        c.kubectl_ok(&["scale", "rc", "web", "--replicas=3"]),
        "replicationcontroller/web scaled\n"
    );
    let rc = c.kubectl_json(&["get", "rc", "web"]);
    assert_eq!(rc["spec"]["replicas"], 3);
    assert_eq!(rc["metadata"]["generation"], 2);
    let scale: Value = serde_json::from_str(&c.kubectl_ok(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/replicationcontrollers/web/scale",
    ]))
    .expect("json");
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["spec"]["replicas"], 3);
    assert_eq!(scale["status"]["selector"], "app=web");
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "rc", "-o", "wide"]));
    assert_eq!(
        header,
        [
            "NAME",
            "DESIRED",
            "CURRENT",
            "READY",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert_eq!(row[..4], ["web", "3", "0", "0"]);
    assert_eq!(row[5..], ["c", "nginx:1.27", "app=web"]);
    let refused = c.kubectl_fails(&[
        "patch",
        "rc",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec":{"selector":{"app":"db"}}}"#,
    ]);
    assert!(
        refused.contains("spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`"),
        "{refused}"
    );
}

#[test]
fn a_scheduler_binds_pods_through_the_binding_subresource() {
    let c = start_cluster(|_| {});
    c.kubectl_ok(&["run", "web", "--image=nginx"]);
    let resources = c.kubectl_ok(&["get", "--raw", "/api/v1"]);
    let discovery: Value = serde_json::from_str(&resources).expect("json");
    let binding = discovery["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == "pods/binding"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(binding["kind"], "Binding", "{binding}");
    assert_eq!(binding["verbs"], json!(["create"]), "{binding}");

    let body = r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web","annotations":{"scheduler":"test"}},"target":{"kind":"Node","name":"n1"}}"#;
    let out = c.kubectl_stdin(
        &[
            "create",
            "--raw",
            "/api/v1/namespaces/default/pods/web/binding",
        ],
        body,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(status["status"], "Success");
    assert_eq!(status["code"], 201);
    let pod = c.kubectl_json(&["get", "pod", "web"]);
    assert_eq!(pod["spec"]["nodeName"], "n1");
    assert_eq!(pod["metadata"]["annotations"]["scheduler"], "test");
    assert_eq!(pod["status"]["conditions"][0]["type"], "PodScheduled");
    assert_eq!(pod["status"]["conditions"][0]["status"], "True");

    let out = c.kubectl_stdin(
        &[
            "create",
            "--raw",
            "/api/v1/namespaces/default/pods/web/binding",
        ],
        body,
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pod web is already assigned to node \"n1\""),
        "{err}"
    );
}

#[test]
fn evictions_delete_pods_with_their_options() {
    let c = start_cluster(|_| {});
    let discovery: Value =
        serde_json::from_str(&c.kubectl_ok(&["get", "--raw", "/api/v1"])).expect("json");
    let eviction = discovery["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == "pods/eviction"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&eviction["group"], &eviction["version"], &eviction["kind"]),
        (&json!("policy"), &json!("v1"), &json!("Eviction")),
        "{eviction}"
    );
    let evict = |name: &str, options: &str| {
        let body = format!(
            r#"{{"apiVersion":"policy/v1","kind":"Eviction","metadata":{{"name":"{name}"}}{options}}}"#
        );
        c.kubectl_stdin(
            &[
                "create",
                "--raw",
                &format!("/api/v1/namespaces/default/pods/{name}/eviction"),
            ],
            &body,
        )
    };
    // An unscheduled pod goes at once.
    c.kubectl_ok(&["run", "loose", "--image=nginx"]);
    let out = evict("loose", "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        (&status["status"], &status["code"]),
        (&json!("Success"), &json!(201))
    );
    assert!(
        c.kubectl_fails(&["get", "pod", "loose"])
            .contains("not found")
    );
    // A running one waits its grace period, unless the eviction says otherwise.
    let manifest = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bound"},
        "spec":{"nodeName":"n1","containers":[{"name":"a","image":"nginx"}]}}"#;
    assert!(c.kubectl_stdin(&["create"], manifest).status.success());
    let out = evict("bound", "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pod = c.kubectl_json(&["get", "pod", "bound"]);
    assert_eq!(pod["metadata"]["deletionGracePeriodSeconds"], 30, "{pod}");
    let out = evict("bound", r#","deleteOptions":{"gracePeriodSeconds":0}"#);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        c.kubectl_fails(&["get", "pod", "bound"])
            .contains("not found")
    );
    // The name in the body must be the pod's.
    c.kubectl_ok(&["run", "web", "--image=nginx"]);
    let body = r#"{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"other"}}"#;
    let out = c.kubectl_stdin(
        &[
            "create",
            "--raw",
            "/api/v1/namespaces/default/pods/web/eviction",
        ],
        body,
    );
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("name in URL does not match name in Eviction object")
    );
}

#[test]
fn kubectl_debug_adds_an_ephemeral_container() {
    let c = start_cluster(|_| {});
    c.kubectl_ok(&["run", "web", "--image=nginx"]);
    assert_eq!(
        c.kubectl_ok(&["get", "pod", "web", "-o", "jsonpath={.metadata.generation}"]),
        "1"
    );
    // A label is no spec change.
    c.kubectl_ok(&["label", "pod", "web", "tier=front"]);
    assert_eq!(
        c.kubectl_ok(&["get", "pod", "web", "-o", "jsonpath={.metadata.generation}"]),
        "1"
    );
    let out = c.kubectl(&["debug", "web", "--image=busybox:1.36", "--container=dbg"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pod = c.kubectl_json(&["get", "pod", "web"]);
    // 1.33 counts a pod's spec changes in its generation, through subresources too.
    assert_eq!(pod["metadata"]["generation"], 2, "{pod}");
    let ephemeral = &pod["spec"]["ephemeralContainers"][0];
    assert_eq!(ephemeral["name"], "dbg", "{pod}");
    assert_eq!(ephemeral["image"], "busybox:1.36");
    // Ephemeral containers get a container's defaults.
    assert_eq!(ephemeral["terminationMessagePolicy"], "File");
    // Once added, an ephemeral container stays as it is.
    let refused = c.kubectl_fails(&[
        "patch",
        "pod",
        "web",
        "--subresource=ephemeralcontainers",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/spec/ephemeralContainers/0"}]"#,
    ]);
    assert!(
        refused.contains("existing ephemeral containers \"dbg\" may not be removed"),
        "{refused}"
    );
    // The pod's own containers cannot change through the subresource.
    c.kubectl_ok(&[
        "patch",
        "pod",
        "web",
        "--subresource=ephemeralcontainers",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/containers/0/image","value":"nginx:2"}]"#,
    ]);
    assert_eq!(
        c.kubectl_ok(&[
            "get",
            "pod",
            "web",
            "-o",
            "jsonpath={.spec.containers[0].image}"
        ]),
        "nginx"
    );
}

/// `kubectl replace` of the manifest a pod was created from: what admission set on create
/// (priority, default tolerations) is set again, so only the image change is an update.
#[test]
fn a_pod_replaced_from_its_manifest_keeps_what_admission_set() {
    let c = start_cluster(|_| {});
    let manifest = |image: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"web"}},
            "spec":{{"containers":[{{"name":"a","image":"{image}"}}]}}}}"#
        )
    };
    assert!(
        c.kubectl_stdin(&["create"], &manifest("nginx:1"))
            .status
            .success()
    );
    let out = c.kubectl_stdin(&["replace"], &manifest("nginx:2"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pod = c.kubectl_json(&["get", "pod", "web"]);
    assert_eq!(pod["spec"]["containers"][0]["image"], "nginx:2");
    assert_eq!(pod["spec"]["priority"], 0);
    assert_eq!(pod["spec"]["tolerations"].as_array().map(Vec::len), Some(2));
}
