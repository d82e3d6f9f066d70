//! Webhook token authentication and authorization end to end: a TLS webhook in the test
//! answers TokenReviews (one token is alice's) and SubjectAccessReviews (alice may touch
//! configmaps); the aggregator and core run `--authentication-token-webhook-config-file`
//! and `--authorization-mode=Node,RBAC,Webhook` (the launcher's `Node,RBAC`, then
//! `Webhook` appended by a second flag, as pflag's string slices append). kubectl authenticates with the webhook's
//! token, the webhook's allow lets a request through RBAC's silence, and a denial carries
//! RBAC's and the webhook's reasons joined as upstream's union joins them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::Method;
use kas_e2e::client::{self, Proto};
use kas_e2e::tls_server::TlsServer;
use kas_e2e::{Role, kubectl_with, start_cluster};
use kas_local::kubeconfig::Credential;
use serde_json::{Value, json};

const ALICE_TOKEN: &str = "webhook-token-alice";

/// The webhook's decisions.
fn answer(path: &str, review: &Value) -> Value {
    let spec = &review["spec"];
    let status = match path {
        "/authn" if spec["token"] == ALICE_TOKEN => json!({
            "authenticated": true,
            "user": {"username": "alice-webhook", "uid": "42", "groups": ["webhook-group"],
                     "extra": {"scopes": ["read"]}}
        }),
        "/authn" => json!({"authenticated": false}),
        _ => {
            let resource = &spec["resourceAttributes"];
            match spec["user"].as_str() {
                Some("alice-webhook") if resource["resource"] == "configmaps" => {
                    json!({"allowed": true, "reason": "alice may"})
                }
                Some("alice-webhook") => {
                    json!({"allowed": false, "reason": "webhook: only configmaps"})
                }
                Some("bob") => json!({"allowed": false, "reason": "webhook: bob is not alice"}),
                _ => json!({"allowed": false}),
            }
        }
    };
    json!({"apiVersion": review["apiVersion"], "kind": review["kind"], "status": status})
}

/// Starts the webhook (kas-e2e's TLS server); its CA is written beside the kubeconfigs.
fn start_webhook(dir: &Path) -> TlsServer {
    let server = TlsServer::start(|req| {
        let review: Value = serde_json::from_slice(req.body()).unwrap_or(Value::Null);
        let out = answer(req.uri().path(), &review).to_string();
        http::Response::builder()
            .header("content-type", "application/json")
            .body(Bytes::from(out))
            .unwrap()
    });
    std::fs::write(dir.join("webhook-ca.pem"), &server.ca_pem).unwrap();
    server
}

/// A webhook kubeconfig for `url`, naming the CA by a path relative to the file.
fn webhook_kubeconfig(dir: &Path, name: &str, url: &str) -> PathBuf {
    let path = dir.join(format!("{name}.kubeconfig"));
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: hook\n  cluster:\n    server: {url}\n    certificate-authority: webhook-ca.pem\nusers:\n- name: apiserver\n  user: {{}}\ncontexts:\n- name: hook\n  context: {{cluster: hook, user: apiserver}}\ncurrent-context: hook\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn webhook_tokens_and_decisions_join_rbacs() {
    let dir = tempfile::tempdir().unwrap();
    let webhook = start_webhook(dir.path());
    let url = webhook.url("");
    let authn = webhook_kubeconfig(dir.path(), "authn", &format!("{url}/authn"));
    let authz = webhook_kubeconfig(dir.path(), "authz", &format!("{url}/authz"));
    let flags = vec![
        format!(
            "--authentication-token-webhook-config-file={}",
            authn.display()
        ),
        "--authentication-token-webhook-version=v1".to_owned(),
        "--authorization-mode=Webhook".to_owned(),
        format!("--authorization-webhook-config-file={}", authz.display()),
    ];
    let c = start_cluster(|s| {
        s.extra_args.insert(Role::Aggregator, flags.clone());
        s.extra_args.insert(Role::Core, flags.clone());
    });

    // The webhook's token authenticates alice, with everything the webhook said.
    let alice = c.kubeconfig_for(0, "alice-webhook", Credential::Token(ALICE_TOKEN));
    let out = kubectl_with(&alice, &["auth", "whoami", "-o", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let me: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        me["status"]["userInfo"],
        json!({"username": "alice-webhook", "uid": "42",
               "groups": ["webhook-group", "system:authenticated"],
               "extra": {"scopes": ["read"]}})
    );
    // A token the webhook does not know is no one.
    let stranger = c.kubeconfig_for(0, "stranger", Credential::Token("nope"));
    let out = kubectl_with(&stranger, &["get", "configmaps"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "error: You must be logged in to the server (the server has asked for the client to provide credentials)"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // RBAC grants alice nothing; the webhook allows configmaps, through both roles.
    let out = kubectl_with(
        &alice,
        &["get", "configmaps", "-n", "default", "-o", "name"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = kubectl_with(&alice, &["get", "secrets", "-n", "default"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error from server (Forbidden): secrets is forbidden: User \"alice-webhook\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\": webhook: only configmaps"
    );

    // TokenReviews answer for the webhook's users too.
    let review = c.kubectl_stdin(
        &["create", "-o", "json"],
        &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                "spec": {"token": ALICE_TOKEN}})
        .to_string(),
    );
    assert!(
        review.status.success(),
        "{}",
        String::from_utf8_lossy(&review.stderr)
    );
    let review: Value = serde_json::from_slice(&review.stdout).unwrap();
    assert_eq!(review["status"]["authenticated"], true);
    assert_eq!(review["status"]["user"]["username"], "alice-webhook");

    // Bob's binding names a missing role: RBAC's reason, then the webhook's, as upstream's
    // union joins them.
    c.kubectl_ok(&[
        "create",
        "rolebinding",
        "bob-missing",
        "--role=missing",
        "--user=bob",
        "-n",
        "default",
    ]);
    let bob = c.pki().issue_user("bob", None).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let tls = client::Tls::new(&c.pki().ca.cert, Some((&bob.cert, &bob.key)), Proto::H2).unwrap();
    let list = format!(
        "{}/api/v1/namespaces/default/configmaps",
        c.url(Role::Aggregator, 0)
    );
    let message = "configmaps is forbidden: User \"bob\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\": RBAC: role.rbac.authorization.k8s.io \"missing\" not found\nwebhook: bob is not alice";
    let start = Instant::now();
    let answer = loop {
        let answer = rt
            .block_on(client::request(&list, Method::GET, &[], &tls, Proto::H2))
            .unwrap();
        if answer.json()["message"] == message || start.elapsed() > Duration::from_secs(5) {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(answer.status, 403);
    assert_eq!(
        answer.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": message, "reason": "Forbidden",
               "details": {"kind": "configmaps"}, "code": 403})
    );
}
