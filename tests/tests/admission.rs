//! kube-apiserver's default admission through the aggregator: NamespaceLifecycle refuses
//! content in missing or terminating namespaces and the deletion of the immortal ones,
//! with upstream's Status bodies.

use http::Method;
use kas_e2e::client::{Proto, Tls, request, request_with_body};
use kas_e2e::{Role, TestCluster, start_cluster};
use serde_json::json;

fn kubectl(c: &TestCluster, args: &[&str]) -> (bool, String) {
    let out = c.kubectl(args);
    let text = if out.status.success() {
        out.stdout
    } else {
        out.stderr
    };
    (
        out.status.success(),
        String::from_utf8_lossy(&text).into_owned(),
    )
}

async fn post(
    c: &TestCluster,
    tls: &Tls,
    namespace: &str,
    body: serde_json::Value,
) -> kas_e2e::client::Answer {
    let url = format!(
        "{}/api/v1/namespaces/{namespace}/configmaps",
        c.url(Role::Aggregator, 0)
    );
    let bearer = c.bearer();
    request_with_body(
        &url,
        Method::POST,
        &[
            ("authorization", bearer.as_str()),
            ("content-type", "application/json"),
        ],
        body.to_string().into(),
        tls,
        Proto::H2,
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn namespace_lifecycle_guards_creates_and_the_immortal_namespaces() {
    let c = start_cluster(|_| {});
    let tls = c.admin_tls(Proto::H2);

    // A namespace that does not exist: 404 for the namespace, before validation (the
    // body's name is invalid too), and nothing stored.
    let a = post(
        &c,
        &tls,
        "nope",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}}),
    )
    .await;
    assert_eq!(
        (a.status.as_u16(), a.json()),
        (
            404,
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"namespaces"},"code":404})
        )
    );
    let (ok, text) = kubectl(&c, &["create", "configmap", "x", "-n", "nope"]);
    assert!(
        !ok && text.contains("namespaces \"nope\" not found"),
        "{text}"
    );
    let url = format!(
        "{}/api/v1/namespaces/nope/configmaps",
        c.url(Role::Aggregator, 0)
    );
    let bearer = c.bearer();
    let list = request(
        &url,
        Method::GET,
        &[("authorization", bearer.as_str())],
        &tls,
        Proto::H2,
    )
    .await
    .unwrap();
    assert_eq!(list.json()["items"], json!([]));

    // A namespace created a moment ago is found (from the cache or, failing that, etcd).
    assert!(kubectl(&c, &["create", "namespace", "team-b"]).0);
    let a = post(&c, &tls, "team-b", json!({"metadata": {"name": "early"}})).await;
    assert_eq!(a.status, 201, "{}", a.text());

    // Deleted, it is Terminating (its finalizer holds it): creates are refused at once,
    // with the NamespaceTerminating cause, naming the generateName when there is no name.
    let (ok, text) = kubectl(&c, &["delete", "namespace", "team-b", "--wait=false"]);
    assert!(ok, "{text}");
    let a = post(&c, &tls, "team-b", json!({"metadata": {"name": "late"}})).await;
    assert_eq!(
        (a.status.as_u16(), a.json()),
        (
            403,
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"late\" is forbidden: unable to create new content in namespace team-b because it is being terminated","reason":"Forbidden","details":{"name":"late","kind":"configmaps","causes":[{"reason":"NamespaceTerminating","message":"namespace team-b is being terminated","field":"metadata.namespace"}]},"code":403})
        )
    );
    let a = post(
        &c,
        &tls,
        "team-b",
        json!({"metadata": {"generateName": "gen-"}}),
    )
    .await;
    assert_eq!(a.status, 403);
    assert_eq!(a.json()["details"]["name"], "gen-");
    // What was there may still change and go.
    assert!(kubectl(&c, &["label", "configmap", "early", "-n", "team-b", "a=b"]).0);
    assert!(kubectl(&c, &["delete", "configmap", "early", "-n", "team-b"]).0);

    // default, kube-system and kube-public may not be deleted; they stay Active.
    for ns in ["default", "kube-system", "kube-public"] {
        let (ok, text) = kubectl(&c, &["delete", "namespace", ns, "--wait=false"]);
        assert!(!ok, "deleting {ns} succeeded");
        assert!(
            text.contains(&format!(
                "namespaces \"{ns}\" is forbidden: this namespace may not be deleted"
            )),
            "{text}"
        );
        let (_, phase) = kubectl(
            &c,
            &["get", "namespace", ns, "-o", "jsonpath={.status.phase}"],
        );
        assert_eq!(phase, "Active");
    }
}
