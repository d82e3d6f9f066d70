//! The OpenAPI documents through the aggregator, as kubectl uses them: strict validation
//! decided from `/openapi/v3` (no `--validate=false` anywhere), client-side validation of
//! `kind: List` from the protobuf `/openapi/v2`, `kubectl explain`, and `kubectl apply`'s
//! strategic merge patch; then the HTTP caching semantics with a raw client.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use http::Method;
use kas_e2e::client::{Proto, request};
use kas_e2e::{Role, TestCluster, start_cluster};

/// kubectl with `manifest` on stdin (`-f -`).
fn kubectl_stdin(c: &TestCluster, args: &[&str], manifest: &str) -> Output {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(c.kubeconfig_path())
        .args(args)
        .args(["-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl on PATH");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(manifest.as_bytes())
        .expect("write manifest");
    child.wait_with_output().expect("kubectl output")
}

fn stdout(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr_of_failure(out: &Output, what: &str) -> String {
    assert!(
        !out.status.success(),
        "{what} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ok(c: &TestCluster, args: &[&str]) -> String {
    stdout(&c.kubectl(args), &format!("kubectl {args:?}"))
}

fn config_map(name: &str, value: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: \"{value}\"\n")
}

#[test]
fn kubectl_validates_and_applies_without_validate_false() {
    let c = start_cluster(|_| {});

    // kubectl's default --validate=strict finds fieldValidation on the PATCH operation of
    // ConfigMap in /openapi/v3/api/v1 and leaves validation to the server.
    let out = kubectl_stdin(&c, &["create"], &config_map("created", "1"));
    assert_eq!(stdout(&out, "create"), "configmap/created created\n");
    let out = kubectl_stdin(&c, &["apply"], &config_map("applied", "1"));
    assert_eq!(
        stdout(&out, "apply (create)"),
        "configmap/applied created\n"
    );
    // The second apply patches: a strategic merge patch computed from the v3 schema.
    let out = kubectl_stdin(&c, &["apply"], &config_map("applied", "2"));
    assert_eq!(
        stdout(&out, "apply (patch)"),
        "configmap/applied configured\n"
    );
    assert_eq!(
        ok(&c, &["get", "cm", "applied", "-o", "jsonpath={.data.a}"]),
        "2"
    );

    // Server-side strict validation: the server's error, not kubectl's.
    let bad = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\nunknownField: x\n";
    let err = stderr_of_failure(&kubectl_stdin(&c, &["create"], bad), "create bad");
    assert!(
        err.contains(r#"strict decoding error: unknown field "unknownField""#),
        "{err}"
    );

    // A List cannot be checked on the server, so kubectl validates it against the
    // protobuf /openapi/v2.
    let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: listed\n- apiVersion: coordination.k8s.io/v1\n  kind: Lease\n  metadata:\n    name: listed\n  spec:\n    holderIdentity: me\n";
    let out = kubectl_stdin(&c, &["create"], list);
    assert_eq!(
        stdout(&out, "create list"),
        "configmap/listed created\nlease.coordination.k8s.io/listed created\n"
    );
    let bad_list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: bad-listed\n  bogus: 1\n";
    let err = stderr_of_failure(&kubectl_stdin(&c, &["create"], bad_list), "bad list");
    assert!(
        err.contains(r#"unknown field "bogus" in io.k8s.api.core.v1.ConfigMap"#),
        "{err}"
    );
}

#[test]
fn kubectl_explain_reads_the_schemas() {
    let c = start_cluster(|_| {});
    let explain = ok(&c, &["explain", "configmap"]);
    for line in [
        "KIND:       ConfigMap",
        "VERSION:    v1",
        "  data\t<map[string]string>",
        "  metadata\t<ObjectMeta>",
    ] {
        assert!(explain.contains(line), "missing {line:?} in\n{explain}");
    }
    // The descriptions are upstream's own text, from the generated tables.
    assert!(
        explain.contains("ConfigMap holds configuration data for pods to consume."),
        "{explain}"
    );
    let labels = ok(&c, &["explain", "configmap.metadata.labels"]);
    assert!(
        labels.contains("FIELD: labels <map[string]string>"),
        "{labels}"
    );
    let spec = ok(&c, &["explain", "lease.spec"]);
    for line in [
        "GROUP:      coordination.k8s.io",
        "KIND:       Lease",
        "FIELD: spec <LeaseSpec>",
        "  holderIdentity\t<string>",
        "  renewTime\t<string>",
    ] {
        assert!(spec.contains(line), "missing {line:?} in\n{spec}");
    }
    let v2 = ok(
        &c,
        &["explain", "--output", "plaintext-openapiv2", "configmap"],
    );
    assert!(v2.contains("KIND:     ConfigMap"), "{v2}");

    let index: serde_json::Value =
        serde_json::from_str(&ok(&c, &["get", "--raw", "/openapi/v3"])).expect("JSON index");
    for key in ["api/v1", "apis/coordination.k8s.io/v1"] {
        let url = index["paths"][key]["serverRelativeURL"].as_str();
        assert!(
            url.is_some_and(|u| u.starts_with(&format!("/openapi/v3/{key}?hash="))),
            "{key} in {index}"
        );
    }
}

#[tokio::test]
async fn openapi_http_caching_through_the_aggregator() {
    let c = start_cluster(|_| {});
    let base = c.url(Role::Aggregator, 0);
    let bearer = c.bearer();
    let tls = c.admin_tls(Proto::H2);
    let get = |path: String, extra: Vec<(&'static str, String)>| {
        let (tls, bearer) = (tls.clone(), bearer.clone());
        let url = format!("{base}{path}");
        async move {
            let mut headers = vec![("authorization", bearer.as_str())];
            headers.extend(extra.iter().map(|(k, v)| (*k, v.as_str())));
            request(&url, Method::GET, &headers, &tls, Proto::H2)
                .await
                .expect("request")
        }
    };
    let header = |a: &kas_e2e::client::Answer, name: &str| {
        a.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };

    let index = get("/openapi/v3".into(), vec![]).await;
    assert_eq!(index.status, 200);
    let url = index.json()["paths"]["api/v1"]["serverRelativeURL"]
        .as_str()
        .expect("api/v1 in the index")
        .to_owned();
    let hashed = get(url.clone(), vec![]).await;
    assert_eq!(hashed.status, 200);
    assert_eq!(header(&hashed, "content-type"), "application/json");
    assert_eq!(header(&hashed, "cache-control"), "public, immutable");
    let etag = header(&hashed, "etag");
    assert_eq!(format!("\"{}\"", url.rsplit('=').next().unwrap()), etag);

    let again = get(
        "/openapi/v3/api/v1".into(),
        vec![("if-none-match", etag.clone())],
    )
    .await;
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    let stale = get("/openapi/v3/api/v1?hash=0".into(), vec![]).await;
    assert_eq!(stale.status, 301);
    assert_eq!(header(&stale, "location"), url);
    let missing = get(
        "/openapi/v3/apis/storagemigration.k8s.io/v1alpha1".into(),
        vec![],
    )
    .await;
    assert_eq!(missing.status, 404);
    assert!(missing.body.is_empty());

    let json = get("/openapi/v2".into(), vec![]).await;
    assert_eq!(json.status, 200);
    assert_eq!(json.json()["swagger"], "2.0");
    let protobuf_accept = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
    let proto = get(
        "/openapi/v2".into(),
        vec![("accept", protobuf_accept.into())],
    )
    .await;
    assert_eq!(
        header(&proto, "content-type"),
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    );
    assert_eq!(header(&proto, "etag"), header(&json, "etag"));
    let html = get("/openapi/v2".into(), vec![("accept", "text/html".into())]).await;
    assert_eq!(html.status, 406);
}
