//! certificates.k8s.io/v1 CertificateSigningRequests end to end: a request made with
//! openssl, kubectl's table, `kubectl certificate approve` and `deny` (PUTs of the
//! `approval` subresource), upstream's refusals, and a certificate written through
//! `status`.

use base64::Engine as _;
use http::Method;
use kas_e2e::{TestCluster, header_and_row, start_cluster};
use serde_json::{Value, json};

const PATH: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

/// A PEM made by `openssl req` with a fresh P-256 key for CN=alice (`extra` adds
/// `-x509` for a self-signed certificate).
fn openssl(extra: &[&str]) -> String {
    let out = std::process::Command::new("openssl")
        .args(["req", "-new", "-newkey", "ec", "-pkeyopt"])
        .args([
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-subj",
            "/CN=alice",
        ])
        .args(["-keyout", "/dev/null"])
        .args(extra)
        .output()
        .expect("openssl on PATH");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn csr(name: &str, request: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["request"] = json!(b64(request));
    json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": name}, "spec": spec})
}

fn client_spec() -> Value {
    json!({"signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"],
        "expirationSeconds": 86400, "username": "mallory", "groups": ["system:nodes"]})
}

fn create(c: &TestCluster, obj: &Value) -> std::process::Output {
    c.kubectl_stdin(&["create"], &obj.to_string())
}

async fn put(c: &TestCluster, path: &str, obj: &Value) -> kas_e2e::client::Answer {
    let headers = [("content-type", "application/json")];
    c.send(Method::PUT, path, &headers, &obj.to_string()).await
}

#[tokio::test]
async fn certificate_signing_requests_are_approved_denied_and_issued() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources", "--api-group=certificates.k8s.io"]);
    let (_, row) = header_and_row(&resources);
    assert_eq!(
        row,
        [
            "certificatesigningrequests",
            "csr",
            "certificates.k8s.io/v1",
            "false",
            "CertificateSigningRequest"
        ]
    );
    let request = openssl(&[]);

    let out = create(&c, &csr("alice", &request, client_spec()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = c.kubectl_ok(&["get", "csr", "alice"]);
    let (header, row) = header_and_row(&table);
    assert_eq!(
        header,
        [
            "NAME",
            "AGE",
            "SIGNERNAME",
            "REQUESTOR",
            "REQUESTEDDURATION",
            "CONDITION"
        ]
    );
    assert_eq!(row[0], "alice");
    assert_eq!(row[2], "kubernetes.io/kube-apiserver-client");
    assert_eq!(row[4..], ["24h", "Pending"]);
    let stored = c.kubectl_json(&["get", "csr", "alice"]);
    assert_eq!(stored["status"], json!({}));
    // The requestor is the user kubectl authenticated as, whatever the manifest said.
    let user = stored["spec"]["username"].as_str().unwrap();
    assert!(["kas-admin", "admin"].contains(&user), "{user}");
    assert_eq!(row[3], user);
    let groups = stored["spec"]["groups"].as_array().unwrap();
    assert!(groups.contains(&json!("system:masters")), "{groups:?}");
    assert!(
        groups.contains(&json!("system:authenticated")),
        "{groups:?}"
    );

    // The spec is immutable but through nothing: an update keeps it.
    c.kubectl_ok(&[
        "patch",
        "csr",
        "alice",
        "--type=merge",
        "-p",
        r#"{"spec":{"usages":["server auth"]},"metadata":{"labels":{"a":"b"}}}"#,
    ]);
    let patched = c.kubectl_json(&["get", "csr", "alice"]);
    assert_eq!(patched["spec"]["usages"], json!(["client auth"]));
    assert_eq!(patched["metadata"]["labels"], json!({"a": "b"}));
    let selected = c.kubectl_ok(&[
        "get",
        "csr",
        "-o",
        "name",
        "--field-selector",
        "spec.signerName=kubernetes.io/kube-apiserver-client",
    ]);
    assert_eq!(
        selected.trim(),
        "certificatesigningrequest.certificates.k8s.io/alice"
    );

    // kubectl certificate approve: a condition with kubectl's reason and the server's
    // timestamps.
    let out = c.kubectl_ok(&["certificate", "approve", "alice"]);
    assert!(
        out.contains("certificatesigningrequest.certificates.k8s.io/alice approved"),
        "{out}"
    );
    let approved = c.kubectl_json(&["get", "csr", "alice"]);
    let cond = &approved["status"]["conditions"][0];
    assert_eq!(cond["type"], "Approved");
    assert_eq!(cond["status"], "True");
    assert_eq!(cond["reason"], "KubectlApprove");
    assert!(
        cond["lastTransitionTime"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    assert!(cond["lastUpdateTime"].is_string());
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "csr", "alice"]));
    assert_eq!(row.last().unwrap(), "Approved");

    // Another, denied; approving it as well is refused.
    let out = create(&c, &csr("bob", &request, client_spec()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    c.kubectl_ok(&["certificate", "deny", "bob"]);
    let mut bob = c.kubectl_json(&["get", "csr", "bob"]);
    assert_eq!(bob["status"]["conditions"][0]["reason"], "KubectlDeny");
    bob["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "Approved", "status": "True"}));
    let a = put(&c, &format!("{PATH}/bob/approval"), &bob).await;
    assert_eq!(a.status, 422, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        "CertificateSigningRequest.certificates.k8s.io \"bob\" is invalid: status.conditions[1].type: Invalid value: \"Approved\": Approved and Denied conditions are mutually exclusive"
    );

    // The certificate goes through status only, once.
    let cert = openssl(&["-x509", "-days", "1"]);
    let mut alice = c.kubectl_json(&["get", "csr", "alice"]);
    alice["status"]["certificate"] = json!(b64(&cert));
    let main = put(&c, &format!("{PATH}/alice"), &alice).await;
    assert_eq!(main.status, 200, "{}", main.text());
    assert!(main.json()["status"].get("certificate").is_none());
    let a = put(&c, &format!("{PATH}/alice/status"), &alice).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["status"]["certificate"], json!(b64(&cert)));
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "csr", "alice"]));
    assert_eq!(row.last().unwrap(), "Approved,Issued");
    let mut again = a.json();
    again["status"]["certificate"] = json!(b64(&openssl(&["-x509", "-days", "1"])));
    let a = put(&c, &format!("{PATH}/alice/status"), &again).await;
    assert_eq!(a.status, 422, "{}", a.text());
    assert!(
        a.text().contains(
            "status.certificate: Forbidden: updates may not modify existing certificate content"
        ),
        "{}",
        a.text()
    );
}

#[tokio::test]
async fn invalid_requests_are_refused_with_upstreams_messages() {
    let c = start_cluster(|_| {});
    let bad = csr("bad", "not a csr", client_spec());
    let out = create(&c, &bad);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("The CertificateSigningRequest \"bad\" is invalid: spec.request: Invalid value: []byte{0x6e, 0x6f, 0x74, 0x20, 0x61, 0x20, 0x63, 0x73, 0x72}: PEM block type must be CERTIFICATE REQUEST"),
        "{err}"
    );

    // CertificateSubjectRestriction: no system:masters through the apiserver-client signer.
    let masters = std::process::Command::new("openssl")
        .args([
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args([
            "-nodes",
            "-subj",
            "/O=system:masters/CN=mallory",
            "-keyout",
            "/dev/null",
        ])
        .output()
        .expect("openssl on PATH");
    let masters = String::from_utf8(masters.stdout).expect("a PEM");
    let out = create(&c, &csr("root", &masters, client_spec()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("certificatesigningrequests.certificates.k8s.io \"root\" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"),
        "{err}"
    );

    let spec = json!({"signerName": "example", "usages": ["client auth", "client auth", "magic"],
        "expirationSeconds": 60});
    let body = csr("worse", &openssl(&[]), spec);
    let headers = [("content-type", "application/json")];
    let a = c
        .send(Method::POST, PATH, &headers, &body.to_string())
        .await;
    assert_eq!(a.status, 422, "{}", a.text());
    let causes: Vec<(String, String)> = a.json()["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("").to_owned();
            (s("field"), s("message"))
        })
        .collect();
    let fields: Vec<&str> = causes.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        fields,
        [
            "spec.usages[2]",
            "spec.usages[1]",
            "spec.signerName",
            "spec.expirationSeconds"
        ]
    );
    assert!(
        causes[0]
            .1
            .starts_with("Unsupported value: \"magic\": supported values: \"any\"")
    );
    assert_eq!(causes[1].1, "Duplicate value: \"client auth\"");
    assert_eq!(
        causes[2].1,
        "Invalid value: \"example\": must be a fully qualified domain and path of the form 'example.com/signer-name'"
    );
    assert_eq!(
        causes[3].1,
        "Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)"
    );
}
