//! Who a request is and what it may do, as kubectl asks: `kubectl auth whoami` and
//! `auth can-i` (SelfSubjectReview, SelfSubjectAccessReview, SelfSubjectRulesReview),
//! impersonation with `--as`, SubjectAccessReview and TokenReview, and service-account
//! tokens from `kubectl create token` whose permissions follow RoleBindings and which stop
//! working when the Pod they are bound to is gone.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kas_e2e::{TestCluster, kubectl_with, start_cluster};
use kas_local::kubeconfig::Credential;
use serde_json::{Value, json};

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_owned()
}

/// A kubeconfig for `name` with a client certificate of the cluster's CA.
fn cert_user(c: &TestCluster, name: &str) -> PathBuf {
    let cert = c.pki().issue_user(name, None).unwrap();
    c.kubeconfig_for(0, name, Credential::Certificate(&cert))
}

/// A kubeconfig that presents `token`.
fn token_user(c: &TestCluster, name: &str, token: &str) -> PathBuf {
    c.kubeconfig_for(0, name, Credential::Token(token))
}

fn whoami(kubeconfig: &Path) -> Value {
    let out = kubectl_with(kubeconfig, &["auth", "whoami", "-o", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// Runs `args` with `kubeconfig` until it succeeds (a grant reaching the index) or 5 s pass.
fn until_ok(kubeconfig: &Path, args: &[&str]) -> std::process::Output {
    let start = Instant::now();
    loop {
        let out = kubectl_with(kubeconfig, args);
        if out.status.success() || start.elapsed() > Duration::from_secs(5) {
            return out;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn whoami_can_i_impersonation_and_access_reviews() {
    let c = start_cluster(|_| {});
    let admin = c.kubeconfig_path().to_path_buf();
    let alice = cert_user(&c, "alice");

    let me = whoami(&admin);
    assert_eq!(me["kind"], "SelfSubjectReview");
    assert_eq!(me["apiVersion"], "authentication.k8s.io/v1");
    assert_eq!(me["status"]["userInfo"]["username"], "admin");
    assert_eq!(
        me["status"]["userInfo"]["groups"],
        json!(["system:masters", "system:authenticated"])
    );
    let me = whoami(&alice);
    let info = &me["status"]["userInfo"];
    assert_eq!(
        (&info["username"], &info["groups"]),
        (&json!("alice"), &json!(["system:authenticated"]))
    );
    let credential = info["extra"]["authentication.kubernetes.io/credential-id"][0]
        .as_str()
        .unwrap_or_default();
    assert!(credential.starts_with("X509SHA256="), "{me}");

    assert_eq!(
        stdout(&c.kubectl(&["auth", "can-i", "list", "secrets"])),
        "yes"
    );
    let out = kubectl_with(&alice, &["auth", "can-i", "list", "secrets"]);
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(1), "no"));
    let out = c.kubectl(&["auth", "can-i", "list", "secrets", "--as", "alice"]);
    assert_eq!(stdout(&out), "no");

    c.kubectl_ok(&[
        "create",
        "role",
        "secret-reader",
        "--verb=get,list",
        "--resource=secrets",
    ]);
    c.kubectl_ok(&[
        "create",
        "rolebinding",
        "alice-reads-secrets",
        "--role=secret-reader",
        "--user=alice",
    ]);
    let out = until_ok(&alice, &["auth", "can-i", "list", "secrets"]);
    assert_eq!(stdout(&out), "yes");
    assert_eq!(
        stdout(&c.kubectl(&["auth", "can-i", "list", "secrets", "--as", "alice"])),
        "yes"
    );
    assert_eq!(
        stdout(&c.kubectl(&[
            "auth",
            "can-i",
            "list",
            "secrets",
            "--as",
            "alice",
            "-n",
            "kube-system"
        ])),
        "no"
    );
    // SelfSubjectRulesReview: alice's rules in default include the role's.
    let rules = kubectl_with(&alice, &["auth", "can-i", "--list"]);
    assert!(rules.status.success(), "{}", stderr(&rules));
    let listed = stdout(&rules);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("secrets ") && l.contains("[get list]")),
        "{listed}"
    );
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("selfsubjectreviews.authentication.k8s.io")),
        "{listed}"
    );

    // Impersonation needs the impersonate verb.
    let out = kubectl_with(&alice, &["get", "pods", "--as", "bob"]);
    assert!(!out.status.success());
    assert_eq!(
        stderr(&out),
        r#"Error from server (Forbidden): users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope"#
    );
    let out = c.kubectl(&["get", "secrets", "--as", "alice", "-n", "kube-system"]);
    assert_eq!(
        stderr(&out),
        r#"Error from server (Forbidden): secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "kube-system""#
    );

    // SubjectAccessReview, as an admission webhook or aggregated server sends it.
    let sar = json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "alice", "resourceAttributes": {"namespace": "default", "verb": "get", "resource": "secrets", "name": "s"}},
    });
    let out = c.kubectl_stdin(&["create", "-o", "json"], &sar.to_string());
    assert!(out.status.success(), "{}", stderr(&out));
    let answered: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        answered["status"],
        json!({"allowed": true, "reason": r#"RBAC: allowed by RoleBinding "alice-reads-secrets/default" of Role "secret-reader" to User "alice""#})
    );
    let mut denied = sar.clone();
    denied["spec"]["resourceAttributes"]["verb"] = json!("delete");
    let out = c.kubectl_stdin(&["create", "-o", "json"], &denied.to_string());
    let answered: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(answered["status"], json!({"allowed": false}));
    // Nothing was stored: reviews are answered, not kept.
    let out = c.kubectl(&["get", "subjectaccessreviews"]);
    assert!(!out.status.success());
}

#[test]
fn service_account_tokens_follow_bindings_and_their_bound_pod() {
    let c = start_cluster(|_| {});
    c.kubectl_ok(&["create", "serviceaccount", "builder"]);
    let token = c.kubectl_ok(&["create", "token", "builder"]);
    let builder = token_user(&c, "builder", token.trim());
    let me = whoami(&builder);
    let info = &me["status"]["userInfo"];
    assert_eq!(info["username"], "system:serviceaccount:default:builder");
    assert_eq!(
        info["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    let uid = c.kubectl_json(&["get", "serviceaccount", "builder"])["metadata"]["uid"].clone();
    assert_eq!(info["uid"], uid);
    let credential = info["extra"]["authentication.kubernetes.io/credential-id"][0]
        .as_str()
        .unwrap_or_default();
    assert!(credential.starts_with("JTI="), "{me}");

    let out = kubectl_with(&builder, &["get", "configmaps"]);
    assert_eq!(
        stderr(&out),
        r#"Error from server (Forbidden): configmaps is forbidden: User "system:serviceaccount:default:builder" cannot list resource "configmaps" in API group "" in the namespace "default""#
    );
    c.kubectl_ok(&[
        "create",
        "rolebinding",
        "builder-views",
        "--clusterrole=view",
        "--serviceaccount=default:builder",
    ]);
    let out = until_ok(&builder, &["get", "configmaps"]);
    assert!(out.status.success(), "{}", stderr(&out));

    // TokenReview answers for the token as the aggregator authenticates it.
    let review = json!({
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "spec": {"token": token.trim()},
    });
    let out = c.kubectl_stdin(&["create", "-o", "json"], &review.to_string());
    assert!(out.status.success(), "{}", stderr(&out));
    let reviewed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(reviewed["status"]["authenticated"], true, "{reviewed}");
    assert_eq!(
        reviewed["status"]["user"]["username"],
        "system:serviceaccount:default:builder"
    );
    assert_eq!(
        reviewed["status"]["audiences"],
        json!([kas_local::cluster::SERVICE_ACCOUNT_ISSUER])
    );
    // The server's authenticator finds the user, so they are in `system:authenticated`.
    assert_eq!(
        reviewed["status"]["user"]["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    // A token requested for another audience is authenticated for that audience when the
    // review asks for it, and not for the server's.
    let other = c.kubectl_ok(&[
        "create",
        "token",
        "builder",
        "--audience=acceptance.example.com",
    ]);
    let review_for = |audiences: Value| {
        let mut spec = json!({"token": other.trim()});
        if !audiences.is_null() {
            spec["audiences"] = audiences;
        }
        let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": spec});
        let out = c.kubectl_stdin(&["create", "-o", "json"], &review.to_string());
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_str::<Value>(&stdout(&out)).unwrap()["status"].clone()
    };
    let status = review_for(json!(["acceptance.example.com"]));
    assert_eq!(status["authenticated"], true, "{status}");
    assert_eq!(status["audiences"], json!(["acceptance.example.com"]));
    assert_eq!(
        status["user"]["username"],
        "system:serviceaccount:default:builder"
    );
    let status = review_for(Value::Null);
    assert_eq!(status["authenticated"], Value::Null, "{status}");
    assert!(
        status["error"].as_str().unwrap_or("").contains(
            "token audiences [\"acceptance.example.com\"] is invalid for the target audiences"
        ),
        "{status}"
    );
    let bogus = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "spec": {"token": "not-a-token"}});
    let out = c.kubectl_stdin(&["create", "-o", "json"], &bogus.to_string());
    let reviewed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        reviewed["status"]["authenticated"],
        Value::Null,
        "{reviewed}"
    );

    // A token bound to a pod works while the pod exists.
    c.kubectl_ok(&[
        "run",
        "p",
        "--image=busybox",
        "--restart=Never",
        "--overrides",
        r#"{"spec": {"serviceAccountName": "builder"}}"#,
    ]);
    let bound = c.kubectl_ok(&[
        "create",
        "token",
        "builder",
        "--bound-object-kind=Pod",
        "--bound-object-name=p",
    ]);
    let pod_bound = token_user(&c, "pod-bound", bound.trim());
    let me = whoami(&pod_bound);
    assert_eq!(
        me["status"]["userInfo"]["extra"]["authentication.kubernetes.io/pod-name"],
        json!(["p"])
    );
    c.kubectl_ok(&["delete", "pod", "p", "--grace-period=0", "--force"]);
    // Upstream's token cache remembers a success for 10 s.
    let start = Instant::now();
    loop {
        let out = kubectl_with(&pod_bound, &["auth", "whoami"]);
        if !out.status.success() {
            assert_eq!(
                stderr(&out),
                "error: You must be logged in to the server (Unauthorized)"
            );
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "the token outlived its pod"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    // The unbound token keeps working.
    assert!(
        kubectl_with(&builder, &["get", "configmaps"])
            .status
            .success()
    );
}

#[test]
fn bootstrap_tokens_authenticate_from_their_secrets() {
    use base64::Engine as _;
    let c = start_cluster(|_| {});
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "bootstrap-token-abcdef", "namespace": "kube-system"},
        "type": "bootstrap.kubernetes.io/token",
        "data": {
            "token-id": b64("abcdef"),
            "token-secret": b64("0123456789abcdef"),
            "usage-bootstrap-authentication": b64("true"),
            "auth-extra-groups": b64("system:bootstrappers:kubeadm:default-node-token"),
        },
    });
    let out = c.kubectl_stdin(&["create"], &secret.to_string());
    assert!(out.status.success(), "{}", stderr(&out));
    let node = token_user(&c, "bootstrap", "abcdef.0123456789abcdef");
    let me = whoami(&node);
    assert_eq!(
        me["status"]["userInfo"],
        json!({
            "username": "system:bootstrap:abcdef",
            "groups": ["system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", "system:authenticated"],
        })
    );
    // A wrong secret half is a 401.
    let wrong = token_user(&c, "wrong", "abcdef.0123456789abcdee");
    let out = kubectl_with(&wrong, &["auth", "whoami"]);
    assert_eq!(
        stderr(&out),
        "error: You must be logged in to the server (Unauthorized)"
    );
}

#[test]
fn token_reviews_know_static_token_users_when_core_reads_the_token_file() {
    // The launcher keeps the token file at the aggregator (core trusts only the front
    // proxy); an operator who gives core `--token-auth-file` too gets its users reviewed.
    let c = start_cluster(|spec| {
        let tokens = spec.state_dir.join("pki").join("tokens.csv");
        spec.extra_args.insert(
            kas_local::Role::Core,
            vec![format!("--token-auth-file={}", tokens.display())],
        );
    });
    let admin_token = c.bearer().trim_start_matches("Bearer ").to_owned();
    let review = |token: &str| {
        let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": token}});
        let out = c.kubectl_stdin(&["create", "-o", "json"], &review.to_string());
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_str::<Value>(&stdout(&out)).unwrap()["status"].clone()
    };
    let status = review(&admin_token);
    assert_eq!(status["authenticated"], true, "{status}");
    assert_eq!(status["user"]["username"], kas_local::pki::ADMIN_TOKEN_USER);
    assert_eq!(status["user"]["uid"], kas_local::pki::ADMIN_TOKEN_UID);
    assert_eq!(review("not-the-token")["authenticated"], Value::Null);
}

/// A review has no table conversion: asked for a Table it is upstream's 406 before it is
/// evaluated (upstream's `should return a 406 for a backend which does not implement
/// metadata`).
#[tokio::test(flavor = "multi_thread")]
async fn reviews_are_not_served_as_tables() {
    let c = start_cluster(|_| {});
    let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}}});
    let a = c
        .send(
            http::Method::POST,
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            &[
                ("content-type", "application/json"),
                ("accept", "application/json;as=Table;v=v1;g=meta.k8s.io"),
            ],
            &review.to_string(),
        )
        .await;
    assert_eq!(a.status, 406, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    // A stored resource's create still answers a Table.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"}});
    let a = c
        .send(
            http::Method::POST,
            "/api/v1/namespaces/default/configmaps",
            &[
                ("content-type", "application/json"),
                ("accept", "application/json;as=Table;v=v1;g=meta.k8s.io"),
            ],
            &cm.to_string(),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    assert_eq!(a.json()["kind"], "Table");
}
