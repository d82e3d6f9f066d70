//! The rules of CertificateSigningRequests, with upstream's messages and field paths.

use base64::Engine as _;
use kas_registry::Strategy as _;
use serde_json::{Value, json};

use super::*;
use crate::resources::messages;

const CSR: &str = "-----BEGIN CERTIFICATE REQUEST-----\nMIHKMHICAQAwEDEOMAwGA1UEAwwFYWxpY2UwWTATBgcqhkjOPQIBBggqhkjOPQMB\nBwNCAAS3dKWcWMNej0WvdLvNF2pj2Q3+Ex28g9RcV2preJJLhJqBEcj8ifoys6g+\nEn9fxJfIORWdQ/+MEpvYj/NTCy5qoAAwCgYIKoZIzj0EAwIDSAAwRQIgL4fd/0It\nZ4bIqWEfWgtZf6CBFBMcgqWz4pi4k2BHgKgCIQD3oAx9BzPmNScb4I7WqZ15vrCe\nVdhQ1bQom5y0whfo/A==\n-----END CERTIFICATE REQUEST-----\n";
const CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIBdDCCARugAwIBAgIUAJ5AjtjNye/Vaxi7ZHNxvdRfN3YwCgYIKoZIzj0EAwIw\nEDEOMAwGA1UEAwwFYWxpY2UwHhcNMjYxMTI1MjI1NjAzWhcNMjYxMTI2MjI1NjAz\nWjAQMQ4wDAYDVQQDDAVhbGljZTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABLd0\npZxYw16PRa90u80XamPZDf4THbyD1FxXamt4kkuEmoERyPyJ+jKzqD4Sf1/El8g5\nFZ1D/4wSm9iP81MLLmqjUzBRMB0GA1UdDgQWBBR9NPxbo9zEm/Y6s2eom2K+dJn3\nhzAfBgNVHSMEGDAWgBR9NPxbo9zEm/Y6s2eom2K+dJn3hzAPBgNVHRMBAf8EBTAD\nAQH/MAoGCCqGSM49BAMCA0cAMEQCIFZgWcipKruY/jsTpGIpAWMseBwDRAo/V4d7\nXiJQqfJqAiBmOlBw0FI/ZLfFPFrvWfAMOnGxHoczNpwo4W7cE01GAw==\n-----END CERTIFICATE-----\n";

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn csr(spec: Value) -> Value {
    let mut spec = spec;
    if spec.get("request").is_none() {
        spec["request"] = json!(b64(CSR));
    }
    json!({"metadata": {"name": "alice"}, "spec": spec})
}

fn ok_spec() -> Value {
    json!({"signerName": "example.com/signer", "usages": ["client auth"]})
}

#[test]
fn a_valid_request_passes_and_is_cleared_of_user_and_status() {
    let mut obj = csr(ok_spec());
    obj["spec"]["username"] = json!("mallory");
    obj["status"] = json!({"conditions": [{"type": "Approved", "status": "True"}]});
    Strategy.prepare_for_create(&mut obj);
    assert_eq!(obj["status"], json!({}));
    assert!(obj["spec"].get("username").is_none());
    assert_eq!(messages(&Strategy.validate(&obj)), Vec::<String>::new());
    let user = kas_auth::UserInfo {
        name: "alice".into(),
        groups: vec!["system:authenticated".into()],
        ..Default::default()
    };
    Strategy.prepare_for_create_by(&mut obj, Some(&user));
    assert_eq!(obj["spec"]["username"], "alice");
    assert!(obj["spec"].get("uid").is_none());
    assert_eq!(obj["spec"]["groups"], json!(["system:authenticated"]));
    assert!(obj["spec"].get("extra").is_none());
    assert_eq!(Strategy.table_cells(&obj)[3], json!("alice"));
}

#[test]
fn spec_rules() {
    let bad = csr(
        json!({"request": b64("hello"), "signerName": "example.com/a/b",
        "usages": ["client auth", "bogus", "client auth"], "expirationSeconds": 599}),
    );
    let msgs = messages(&Strategy.validate(&bad));
    assert_eq!(
        msgs[0],
        "spec.request: Invalid value: []byte{0x68, 0x65, 0x6c, 0x6c, 0x6f}: PEM block type must be CERTIFICATE REQUEST"
    );
    assert!(msgs[1].starts_with("spec.usages[1]: Unsupported value: \"bogus\": supported values: \"any\", \"cert sign\", \"client auth\","), "{}", msgs[1]);
    assert_eq!(
        msgs[2..],
        [
            "spec.usages[2]: Duplicate value: \"client auth\"",
            "spec.signerName: Invalid value: \"example.com/a/b\": must be a fully qualified domain and path of the form 'example.com/signer-name'",
            "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)",
        ]
    );
    let empty = json!({"metadata": {"name": "x"}, "spec": {}});
    assert_eq!(
        messages(&Strategy.validate(&empty)),
        [
            "spec.request: Invalid value: []byte(nil): PEM block type must be CERTIFICATE REQUEST",
            "spec.usages: Required value",
            "spec.signerName: Required value",
        ]
    );
    let signer = |name: &str| {
        let mut spec = ok_spec();
        spec["signerName"] = json!(name);
        messages(&Strategy.validate(&csr(spec)))
    };
    assert_eq!(
        signer("kubernetes.io/legacy-unknown"),
        [
            "spec.signerName: Invalid value: \"kubernetes.io/legacy-unknown\": the legacy signerName is not allowed via this API version"
        ]
    );
    assert_eq!(
        signer("example/signer"),
        [
            "spec.signerName: Invalid value: \"example\": should be a domain with at least two segments separated by dots"
        ]
    );
    assert!(signer("kubernetes.io/kube-apiserver-client").is_empty());
    let mut tampered = CSR.replace("L4fd", "L4fe");
    tampered.truncate(tampered.len());
    let mut spec = ok_spec();
    spec["request"] = json!(b64(&tampered));
    let msgs = messages(&Strategy.validate(&csr(spec)));
    assert_eq!(msgs.len(), 1);
    assert!(
        msgs[0].ends_with(": x509: ECDSA verification failure"),
        "{msgs:?}"
    );
}

#[test]
fn conditions_and_certificate() {
    let mut obj = csr(ok_spec());
    obj["status"] = json!({"certificate": b64("junk"), "conditions": [
        {"type": "Approved", "status": "False"},
        {"type": "Denied", "status": "True"},
        {"type": "Denied", "status": ""},
        {"type": "", "status": "Maybe"},
    ]});
    assert_eq!(
        messages(&Strategy.validate(&obj)),
        [
            "status.conditions[0].status: Unsupported value: \"False\": supported values: \"True\"",
            "status.conditions[1].type: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive",
            "status.conditions[2].status: Required value",
            "status.conditions[2].type: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive",
            "status.conditions[2].type: Duplicate value: \"Denied\"",
            "status.conditions[3].type: Required value",
            "status.conditions[3].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"",
            "status.certificate: Invalid value: \"<certificate data>\": must contain at least one CERTIFICATE PEM block",
        ]
    );
    assert!(pem::check_certificates(CERT.as_bytes()).is_ok());
    assert_eq!(
        pem::check_certificates(CSR.as_bytes()),
        Err("only CERTIFICATE PEM blocks are allowed, found \"CERTIFICATE REQUEST\"".to_owned())
    );
}

#[test]
fn updates_keep_spec_and_status_and_subresources_their_parts() {
    let mut old = csr(ok_spec());
    Strategy.prepare_for_create(&mut old);
    let mut new = old.clone();
    new["spec"]["usages"] = json!(["server auth"]);
    new["status"] = json!({"certificate": b64(CERT)});
    Strategy.prepare_for_update(&mut new, &old);
    assert_eq!(new, old);

    // approval: only the conditions, with their timestamps filled in.
    let mut sent = old.clone();
    sent["status"] = json!({"certificate": b64(CERT), "conditions": [
        {"type": "Approved", "status": "True", "reason": "KubectlApprove"}]});
    let approved = Strategy
        .subresource_update("approval", &sent, &old)
        .unwrap();
    assert!(approved["status"].get("certificate").is_none());
    let c = &approved["status"]["conditions"][0];
    assert!(
        c["lastUpdateTime"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    assert_eq!(c["lastTransitionTime"], c["lastUpdateTime"]);
    assert!(
        Strategy
            .validate_subresource_update("approval", &approved, &old)
            .is_empty()
    );
    // ... which the main resource and the status may not add.
    assert_eq!(
        messages(&Strategy.validate_update(&approved, &old)),
        ["status.conditions: Forbidden: updates may not add a condition of type \"Approved\""]
    );

    // status: the certificate, the approval conditions kept as stored.
    let mut sent = approved.clone();
    sent["status"] = json!({"certificate": b64(CERT), "conditions": [
        {"type": "Denied", "status": "True"}]});
    let written = Strategy
        .subresource_update("status", &sent, &approved)
        .unwrap();
    assert_eq!(
        messages(&Strategy.validate_subresource_update("status", &written, &approved)),
        [
            "status.conditions: Forbidden: updates may not remove a condition of type \"Approved\"",
            "status.conditions: Forbidden: updates may not add a condition of type \"Denied\"",
        ]
    );
    let mut sent = approved.clone();
    sent["status"]["certificate"] = json!(b64(CERT));
    sent["status"]["conditions"][0]["reason"] = json!("Changed");
    let issued = Strategy
        .subresource_update("status", &sent, &approved)
        .unwrap();
    assert_eq!(
        issued["status"]["conditions"],
        approved["status"]["conditions"]
    );
    assert!(
        Strategy
            .validate_subresource_update("status", &issued, &approved)
            .is_empty()
    );
    let mut again = issued.clone();
    again["status"]["certificate"] = json!(b64(&CERT.replace("MIIB", "MIIC")));
    assert_eq!(
        messages(&Strategy.validate_subresource_update("status", &again, &issued)),
        [
            "status.certificate: Invalid value: \"<certificate data>\": x509: malformed certificate",
            "status.certificate: Forbidden: updates may not modify existing certificate content",
        ]
    );
    assert_eq!(
        Strategy.table_cells(&issued)[2..],
        [
            json!("example.com/signer"),
            json!(""),
            json!("<none>"),
            json!("Approved,Issued")
        ]
    );
}
