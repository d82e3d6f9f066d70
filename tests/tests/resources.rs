//! Built-in resources through the aggregator, as users drive them: kubectl for the
//! everyday workflow, raw HTTP for the exact Status bodies.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use http::Method;
use kas_e2e::client::{Proto, Tls, request};
use kas_e2e::{Role, TestCluster, start_cluster};

fn ok(c: &TestCluster, args: &[&str]) -> String {
    let out = c.kubectl(args);
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fails(c: &TestCluster, args: &[&str]) -> String {
    let out = c.kubectl(args);
    assert!(!out.status.success(), "kubectl {args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn create(c: &TestCluster, manifest: &str) -> String {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(c.kubeconfig_path())
        .args(["create", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(manifest.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const DEMO: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\n  labels:\n    app: web\ndata:\n  a: \"1\"\n";

#[test]
fn kubectl_workflow_on_configmaps() {
    let c = start_cluster(|_| {});
    assert_eq!(create(&c, DEMO), "configmap/demo created\n");

    let table = ok(&c, &["get", "configmaps"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "DATA", "AGE"], "{table}");
    assert!(
        table.lines().nth(1).unwrap().starts_with("demo "),
        "{table}"
    );

    let yaml = ok(&c, &["get", "cm", "demo", "-o", "yaml"]);
    for line in [
        "apiVersion: v1",
        "kind: ConfigMap",
        "  a: \"1\"",
        "  name: demo",
        "  namespace: default",
        "  uid: ",
    ] {
        assert!(yaml.contains(line), "missing {line:?} in\n{yaml}");
    }
    assert_eq!(
        ok(&c, &["get", "cm", "demo", "-o", "jsonpath={.data.a}"]),
        "1"
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(&c, &["get", "cm", "demo", "-o", "json"])).unwrap();
    assert_eq!(json["metadata"]["labels"]["app"], "web");

    assert!(ok(&c, &["get", "cm", "-l", "app=web", "-o", "name"]).contains("configmap/demo"));
    assert_eq!(ok(&c, &["get", "cm", "-l", "app=db", "-o", "name"]), "");
    assert!(
        ok(
            &c,
            &[
                "get",
                "cm",
                "--field-selector",
                "metadata.name=demo",
                "-o",
                "name"
            ]
        )
        .contains("configmap/demo")
    );
    // ConfigMaps have no field label conversion upstream: the default one answers.
    let err = fails(&c, &["get", "cm", "--field-selector", "data.a=1"]);
    assert!(
        err.contains(
            r#""data.a" is not a known field selector: only "metadata.name", "metadata.namespace""#
        ),
        "{err}"
    );

    // kubectl diff asks for a server-side dry run; its answer keeps the live
    // resourceVersion, so only the change shows.
    let dir = tempfile::tempdir().unwrap();
    let changed = dir.path().join("demo.yaml");
    std::fs::write(&changed, DEMO.replace("a: \"1\"", "a: \"9\"")).unwrap();
    let out = c.kubectl(&["diff", "-f", changed.to_str().unwrap()]);
    let diff = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "kubectl diff: {diff}");
    let changes: Vec<&str> = diff
        .lines()
        .filter(|l| {
            (l.starts_with('-') || l.starts_with('+'))
                && !l.starts_with("--- ")
                && !l.starts_with("+++ ")
        })
        .collect();
    assert_eq!(changes, ["-  a: \"1\"", "+  a: \"9\""], "{diff}");
    assert_eq!(
        ok(&c, &["get", "cm", "demo", "-o", "jsonpath={.data.a}"]),
        "1",
        "the dry run stored nothing"
    );

    ok(&c, &["label", "cm", "demo", "tier=front"]);
    ok(&c, &["annotate", "cm", "demo", "note=hi"]);
    ok(&c, &["patch", "cm", "demo", "-p", r#"{"data":{"b":"2"}}"#]);
    ok(
        &c,
        &[
            "patch",
            "cm",
            "demo",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"c":"3"}}"#,
        ],
    );
    ok(
        &c,
        &[
            "patch",
            "cm",
            "demo",
            "--type",
            "json",
            "-p",
            r#"[{"op":"add","path":"/data/d","value":"4"}]"#,
        ],
    );
    let data: serde_json::Value =
        serde_json::from_str(&ok(&c, &["get", "cm", "demo", "-o", "jsonpath={.data}"])).unwrap();
    assert_eq!(
        data,
        serde_json::json!({"a": "1", "b": "2", "c": "3", "d": "4"})
    );
    assert_eq!(
        ok(
            &c,
            &[
                "get",
                "cm",
                "demo",
                "-o",
                "jsonpath={.metadata.labels.tier}/{.metadata.annotations.note}"
            ]
        ),
        "front/hi"
    );

    // replace with a stale resourceVersion: 409, upstream's message.
    let stale = ok(&c, &["get", "cm", "demo", "-o", "json"]);
    ok(&c, &["label", "cm", "demo", "x=y"]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stale.json");
    std::fs::write(&path, stale).unwrap();
    let err = fails(&c, &["replace", "-f", path.to_str().unwrap()]);
    assert!(
        err.contains("Operation cannot be fulfilled on configmaps \"demo\": the object has been modified; please apply your changes to the latest version and try again"),
        "{err}"
    );

    // paging
    for i in 0..5 {
        create(
            &c,
            &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: page-{i}\n"),
        );
    }
    let paged = ok(&c, &["get", "cm", "--chunk-size=2", "-o", "name"]);
    assert_eq!(paged.lines().count(), 6, "{paged}");

    // edit: kubectl opens the object's YAML in $KUBE_EDITOR and sends the change as a
    // strategic merge patch.
    let editor = dir.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/^  a: \"1\"$/  a: edited/' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(c.kubeconfig_path())
        .args(["edit", "cm", "demo"])
        .env("KUBE_EDITOR", &editor)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "configmap/demo edited\n"
    );
    assert_eq!(
        ok(&c, &["get", "cm", "demo", "-o", "jsonpath={.data.a}"]),
        "edited"
    );

    assert_eq!(
        ok(&c, &["delete", "cm", "demo"]),
        "configmap \"demo\" deleted\n"
    );
    assert!(fails(&c, &["get", "cm", "demo"]).contains("configmaps \"demo\" not found"));
}

#[test]
fn kubectl_get_watch_prints_added_modified_deleted() {
    let c = start_cluster(|_| {});
    create(&c, DEMO);
    let mut watch = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(c.kubeconfig_path())
        .args([
            "get",
            "cm",
            "-w",
            "--output-watch-events",
            "--request-timeout=20s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    ok(&c, &["label", "cm", "demo", "step=two"]);
    ok(&c, &["delete", "cm", "demo"]);
    std::thread::sleep(Duration::from_secs(1));
    let _ = watch.kill();
    let out = watch.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let events: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(events, ["ADDED", "MODIFIED", "DELETED"], "{text}");
}

#[tokio::test]
async fn api_errors_are_upstreams_status_bodies() {
    let c = start_cluster(|_| {});
    let base = format!(
        "{}/api/v1/namespaces/default/configmaps",
        c.url(Role::Aggregator, 0)
    );
    let bearer = c.bearer();
    let tls: Tls = c.admin_tls(Proto::H2);
    let json = [
        ("authorization", bearer.as_str()),
        ("content-type", "application/json"),
    ];

    let a = request(&format!("{base}/nope"), Method::GET, &json, &tls, Proto::H2)
        .await
        .unwrap();
    assert_eq!(a.status, 404);
    assert_eq!(
        a.json(),
        serde_json::json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"configmaps"},"code":404})
    );

    let post = |body: &'static str, query: &'static str| {
        let url = format!("{base}{query}");
        let tls = tls.clone();
        let bearer = bearer.clone();
        async move {
            kas_e2e::client::request_with_body(
                &url,
                Method::POST,
                &[
                    ("authorization", bearer.as_str()),
                    ("content-type", "application/json"),
                ],
                body.into(),
                &tls,
                Proto::H2,
            )
            .await
            .unwrap()
        }
    };
    let a = post(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}"#,
        "",
    )
    .await;
    assert_eq!(a.status, 422, "{}", a.text());
    let status = a.json();
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["details"]["causes"][0]["field"], "metadata.name");
    assert!(status["message"].as_str().unwrap().starts_with("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"), "{status}");

    // A value that does not fit the Go type is a 400 in encoding/json's words; a patch
    // that produces one is a 422 on the patch, and nothing is written.
    let a = post(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"typed","labels":{"a":[1]}}}"#,
        "",
    )
    .await;
    assert_eq!(a.status, 400, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type string"
    );
    let out = c.kubectl(&["create", "configmap", "typed", "--from-literal=a=1"]);
    assert!(out.status.success());
    let out = c.kubectl(&[
        "patch",
        "configmap",
        "typed",
        "--type=merge",
        "-p",
        r#"{"data":[1,2]}"#,
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("The request is invalid: patch: Invalid value: ")
            && err.contains(": json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"),
        "{err}"
    );
    let out = c.kubectl(&["get", "configmap", "typed", "-o", "jsonpath={.data.a}"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1");

    let a = post(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dry"}}"#,
        "?dryRun=All",
    )
    .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let a = request(&format!("{base}/dry"), Method::GET, &json, &tls, Proto::H2)
        .await
        .unwrap();
    assert_eq!(a.status, 404, "dryRun=All stored nothing");

    let a = post(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"gen-"}}"#,
        "",
    )
    .await;
    assert_eq!(a.status, 201);
    let name = a.json()["metadata"]["name"].as_str().unwrap().to_owned();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");

    // A LIST for curl is indented as json.MarshalIndent writes it (streamed from the
    // items); it holds what the compact LIST holds.
    let compact = request(&base, Method::GET, &json, &tls, Proto::H2)
        .await
        .unwrap();
    let curl = [
        ("authorization", bearer.as_str()),
        ("user-agent", "curl/8.5.0"),
    ];
    let pretty = request(&base, Method::GET, &curl, &tls, Proto::H2)
        .await
        .unwrap();
    assert_eq!(pretty.status, 200);
    let text = pretty.text();
    assert!(
        text.starts_with("{\n  \"kind\": \"ConfigMapList\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\n    \"resourceVersion\": \""),
        "{text}"
    );
    assert!(text.contains("\n  \"items\": [\n    {\n      \""), "{text}");
    assert!(text.ends_with("\n    }\n  ]\n}"), "{text}");
    assert_eq!(pretty.json(), compact.json());
    let empty = request(
        &base.replace("/default/", "/kube-public/"),
        Method::GET,
        &curl,
        &tls,
        Proto::H2,
    )
    .await
    .unwrap();
    assert!(
        empty.text().ends_with("\"\n  },\n  \"items\": []\n}"),
        "{}",
        empty.text()
    );

    let a = post(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"twice"}}"#,
        "",
    )
    .await;
    assert_eq!(a.status, 201);
    let a = post(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"twice"}}"#,
        "",
    )
    .await;
    assert_eq!(a.status, 409);
    assert_eq!(a.json()["reason"], "AlreadyExists");
    assert_eq!(a.json()["message"], "configmaps \"twice\" already exists");

    let a = post(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}"#,
        "",
    )
    .await;
    assert_eq!(a.status, 400, "{}", a.text());
    assert_eq!(a.json()["reason"], "BadRequest");

    let big = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"big"}},"data":{{"a":"{}"}}}}"#,
        "x".repeat(4 << 20)
    );
    let a =
        kas_e2e::client::request_with_body(&base, Method::POST, &json, big.into(), &tls, Proto::H2)
            .await
            .unwrap();
    assert_eq!(a.status, 413, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        "Request entity too large: limit is 3145728"
    );

    let a = request(
        &format!("{base}?labelSelector=a%20in%20(b"),
        Method::GET,
        &json,
        &tls,
        Proto::H2,
    )
    .await
    .unwrap();
    assert_eq!(a.status, 400, "{}", a.text());
}

/// `fieldValidation`: Strict refuses unknown and duplicate fields with upstream's message,
/// Warn stores without the unknown fields and says so in `Warning` headers, and a patch
/// that adds an unknown field is checked the same way.
#[tokio::test(flavor = "multi_thread")]
async fn field_validation_reports_and_drops_unknown_fields() {
    let c = start_cluster(|_| {});
    let base = format!(
        "{}/api/v1/namespaces/default/configmaps",
        c.url(Role::Aggregator, 0)
    );
    let bearer = c.bearer();
    let tls: Tls = c.admin_tls(Proto::H2);
    let send = |method: Method, url: String, content_type: &'static str, body: &'static str| {
        let tls = tls.clone();
        let bearer = bearer.clone();
        async move {
            kas_e2e::client::request_with_body(
                &url,
                method,
                &[
                    ("authorization", bearer.as_str()),
                    ("content-type", content_type),
                ],
                body.into(),
                &tls,
                Proto::H2,
            )
            .await
            .unwrap()
        }
    };
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv","name":"fv","unknownMeta":1},"spec":{"a":1},"data":{"k":"v"}}"#;
    let json = "application/json";

    let a = send(
        Method::POST,
        format!("{base}?fieldValidation=Strict"),
        json,
        body,
    )
    .await;
    assert_eq!(a.status, 400, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "metadata.name", unknown field "metadata.unknownMeta", unknown field "spec""#
    );

    let a = send(Method::POST, base.clone(), json, body).await;
    assert_eq!(a.status, 201, "{}", a.text());
    let warnings: Vec<_> = a
        .headers
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        warnings,
        [
            r#"299 - "duplicate field \"metadata.name\"""#,
            r#"299 - "unknown field \"metadata.unknownMeta\"""#,
            r#"299 - "unknown field \"spec\"""#,
        ]
    );
    let stored = a.json();
    assert!(stored.get("spec").is_none(), "{stored}");
    assert!(stored["metadata"].get("unknownMeta").is_none(), "{stored}");
    assert_eq!(stored["data"]["k"], "v");

    let merge = "application/merge-patch+json";
    let a = send(
        Method::PATCH,
        format!("{base}/fv?fieldValidation=Strict"),
        merge,
        r#"{"extra":{"x":1},"data":{"k":"w"}}"#,
    )
    .await;
    // Upstream's patcher: a 422 on `patch`, the patched document as its value.
    assert_eq!(a.status, 422, "{}", a.text());
    let message = a.json()["message"].as_str().unwrap_or_default().to_owned();
    assert!(
        message.starts_with(r#" "" is invalid: patch: Invalid value: "{"#),
        "{message}"
    );
    assert!(
        message.ends_with(r#"": strict decoding error: unknown field "extra""#),
        "{message}"
    );
    assert_eq!(a.json()["details"]["causes"][0]["field"], "patch");
    assert_eq!(
        a.json()["details"]["causes"][0]["reason"],
        "FieldValueInvalid"
    );
    // Nothing was written.
    let a = send(Method::GET, format!("{base}/fv"), json, "").await;
    assert_eq!(a.json()["data"]["k"], "v");
    let a = send(
        Method::PATCH,
        format!("{base}/fv?fieldValidation=Ignore"),
        merge,
        r#"{"extra":{"x":1},"data":{"k":"w"}}"#,
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert!(a.headers.get("warning").is_none());
    assert!(a.json().get("extra").is_none());
    assert_eq!(a.json()["data"]["k"], "w");
}

#[test]
fn system_namespaces_secrets_and_the_other_first_resources() {
    let c = start_cluster(|_| {});
    let names = ok(&c, &["get", "namespaces", "-o", "name"]);
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        assert!(names.contains(&format!("namespace/{ns}")), "{names}");
    }
    let table = ok(&c, &["get", "ns", "kube-system"]);
    assert!(table.contains("Active"), "{table}");

    create(
        &c,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n",
    );
    create(
        &c,
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s1\n  namespace: team-a\nstringData:\n  password: hunter2\n",
    );
    // stringData is write-only: it lands base64-encoded in data.
    assert_eq!(
        ok(
            &c,
            &[
                "get",
                "secret",
                "s1",
                "-n",
                "team-a",
                "-o",
                "jsonpath={.data.password}/{.type}"
            ]
        ),
        "aHVudGVyMg==/Opaque"
    );
    let table = ok(&c, &["get", "secrets", "-n", "team-a"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "TYPE", "DATA", "AGE"], "{table}");

    create(
        &c,
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n  namespace: team-a\n",
    );
    create(
        &c,
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: leader\n  namespace: team-a\nspec:\n  holderIdentity: pod-1\n  leaseDurationSeconds: 15\n",
    );
    assert!(ok(&c, &["get", "sa", "-n", "team-a", "-o", "name"]).contains("serviceaccount/robot"));
    assert_eq!(
        ok(
            &c,
            &[
                "get",
                "lease",
                "leader",
                "-n",
                "team-a",
                "-o",
                "jsonpath={.spec.holderIdentity}"
            ]
        ),
        "pod-1"
    );
    let resources = ok(&c, &["api-resources", "--no-headers"]);
    for r in [
        "configmaps",
        "events",
        "namespaces",
        "secrets",
        "serviceaccounts",
        "leases",
    ] {
        assert!(
            resources.lines().any(|l| l.starts_with(r)),
            "{r} missing from discovery:\n{resources}"
        );
    }

    // Deleting a namespace leaves it Terminating until the namespace controller clears
    // spec.finalizers through the finalize subresource; then it is gone.
    assert_eq!(
        ok(&c, &["delete", "ns", "team-a", "--wait=false"]),
        "namespace \"team-a\" deleted\n"
    );
    assert_eq!(
        ok(
            &c,
            &["get", "ns", "team-a", "-o", "jsonpath={.status.phase}"]
        ),
        "Terminating"
    );
    let mut ns: serde_json::Value =
        serde_json::from_str(&ok(&c, &["get", "ns", "team-a", "-o", "json"])).unwrap();
    assert!(ns["metadata"]["deletionTimestamp"].is_string());
    ns["spec"]["finalizers"] = serde_json::json!([]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("finalize.json");
    std::fs::write(&path, ns.to_string()).unwrap();
    ok(
        &c,
        &[
            "replace",
            "--raw",
            "/api/v1/namespaces/team-a/finalize",
            "-f",
            path.to_str().unwrap(),
        ],
    );
    assert!(fails(&c, &["get", "ns", "team-a"]).contains("namespaces \"team-a\" not found"));
}
