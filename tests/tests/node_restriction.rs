//! The NodeRestriction admission plugin, on as kubeadm turns it on: a kubelet (a client
//! certificate for `system:node:<name>` in `system:nodes`) registers and writes only its
//! own Node, creates only mirror pods bound to itself that reference no secret, evicts
//! and requests tokens only for pods on its node; the refusals are upstream's 403 bodies.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::Method;
use kas_e2e::client::{Proto, Tls, request_with_body};
use kas_e2e::{Role, TestCluster, start_cluster};
use serde_json::{Value, json};

/// A kubelet's client: its certificate, as the cluster's CA issues it.
fn kubelet(c: &TestCluster, node: &str) -> Tls {
    let cert = c
        .pki()
        .issue_user(&format!("system:node:{node}"), Some("system:nodes"))
        .expect("node certificate");
    Tls::new(&c.pki().ca.cert, Some((&cert.cert, &cert.key)), Proto::H2).expect("tls")
}

/// One request as the kubelet; the status code and the body.
async fn send(
    c: &TestCluster,
    tls: &Tls,
    method: Method,
    path: &str,
    content_type: &str,
    body: Value,
) -> (u16, Value) {
    let url = format!("{}{path}", c.url(Role::Aggregator, 0));
    let headers = [("content-type", content_type)];
    let body = Bytes::from(body.to_string());
    let a = request_with_body(&url, method, &headers, body, tls, Proto::H2)
        .await
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let body = serde_json::from_slice(&a.body).unwrap_or(Value::String(a.text()));
    (a.status.as_u16(), body)
}

async fn post(c: &TestCluster, tls: &Tls, path: &str, body: Value) -> (u16, Value) {
    send(c, tls, Method::POST, path, "application/json", body).await
}

/// Upstream's Forbidden Status for `name` of `kind` (a resource, in the core group).
fn forbidden(name: &str, kind: &str, message: &str) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!("{kind} \"{name}\" is forbidden: {message}"),
        "reason": "Forbidden",
        "details": {"name": name, "kind": kind},
        "code": 403
    })
}

fn node(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name,
        "labels": {"kubernetes.io/hostname": name}}})
}

/// A mirror pod of `node` (whose UID is `uid`), with `spec` merged in.
fn mirror_pod(name: &str, node: &str, uid: &str, spec: Value) -> Value {
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name,
        "annotations": {"kubernetes.io/config.mirror": "hash"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node, "uid": uid,
            "controller": true}]},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}});
    for (k, v) in spec.as_object().into_iter().flatten() {
        pod["spec"][k] = v.clone();
    }
    pod
}

#[tokio::test]
async fn a_kubelet_writes_only_its_own_node_and_mirror_pods() {
    let c = start_cluster(|_| {});
    let n1 = kubelet(&c, "n1");

    // A kubelet registers its own Node, not another one.
    let (status, created) = post(&c, &n1, "/api/v1/nodes", node("n1")).await;
    assert_eq!(status, 201, "{created}");
    let uid = created["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (status, body) = post(&c, &n1, "/api/v1/nodes", node("n2")).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body,
        forbidden(
            "n2",
            "nodes",
            r#"node "n1" is not allowed to modify node "n2""#
        )
    );
    // Nor may it give itself a restricted label.
    let path = "/api/v1/nodes/n1";
    let patch = json!({"metadata": {"labels": {"node-restriction.kubernetes.io/trusted": "yes"}}});
    let merge = "application/merge-patch+json";
    let (status, body) = send(&c, &n1, Method::PATCH, path, merge, patch).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["message"],
        r#"nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/trusted"#
    );

    // Its own status, not another node's.
    let out = c.kubectl_stdin(&["create"], &node("n2").to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ready = json!({"status": {"conditions": [{"type": "Ready", "status": "True",
        "reason": "KubeletReady", "message": "ok"}]}});
    let path = "/api/v1/nodes/n1/status";
    let (status, body) = send(&c, &n1, Method::PATCH, path, merge, ready.clone()).await;
    assert_eq!(status, 200, "{body}");
    let path = "/api/v1/nodes/n2/status";
    let (status, body) = send(&c, &n1, Method::PATCH, path, merge, ready).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body,
        forbidden(
            "n2",
            "nodes",
            r#"node "n1" is not allowed to modify node "n2""#
        )
    );
    // An update that changes nothing is admitted too, as upstream's.
    let path = "/api/v1/nodes/n2";
    let (status, body) = send(&c, &n1, Method::PATCH, path, merge, json!({})).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body,
        forbidden(
            "n2",
            "nodes",
            r#"node "n1" is not allowed to modify node "n2""#
        )
    );

    // Mirror pods: bound to itself, referencing no secret.
    let pods = "/api/v1/namespaces/default/pods";
    let (status, body) = post(&c, &n1, pods, mirror_pod("m1", "n1", &uid, json!({}))).await;
    assert_eq!(status, 201, "{body}");
    let other = mirror_pod("m2", "n2", &uid, json!({}));
    let (status, body) = post(&c, &n1, pods, other).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body,
        forbidden(
            "m2",
            "pods",
            r#"node "n1" can only create pods with spec.nodeName set to itself"#
        )
    );
    let secret = json!({"volumes": [{"name": "s", "secret": {"secretName": "creds"}}]});
    let (status, body) = post(&c, &n1, pods, mirror_pod("m3", "n1", &uid, secret)).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body,
        forbidden(
            "m3",
            "pods",
            r#"node "n1" can not create pods that reference secrets"#
        )
    );
    let plain = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]}});
    let (status, body) = post(&c, &n1, pods, plain).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["message"],
        r#"pods "p" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods"#
    );
}

#[tokio::test]
async fn a_kubelet_evicts_and_gets_tokens_only_for_pods_on_its_node() {
    let c = start_cluster(|_| {});
    for (name, node) in [("a", "n1"), ("b", "n2")] {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node, "serviceAccountName": "default",
                "containers": [{"name": "c", "image": "busybox"}]}});
        let out = c.kubectl_stdin(&["create"], &pod.to_string());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let b_uid = c.kubectl_json(&["get", "pod", "b"])["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let n1 = kubelet(&c, "n1");

    let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "b", "namespace": "default"}});
    let path = "/api/v1/namespaces/default/pods/b/eviction";
    let (status, body) = post(&c, &n1, path, eviction).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body,
        forbidden(
            "b",
            "pods",
            "node n1 can only evict pods with spec.nodeName set to itself"
        )
    );
    assert_eq!(
        c.kubectl_json(&["get", "pod", "b"])["metadata"]["uid"],
        json!(b_uid)
    );

    // The Node authorizer lets n1 ask for the account its pod `a` runs as, once its graph
    // has the pod; the token must then be bound to a pod on n1.
    let path = "/api/v1/namespaces/default/serviceaccounts/default/token";
    let request = |uid: &str| {
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "b", "uid": uid}}})
    };
    let message = "node requested token bound to a pod scheduled on a different node";
    let start = Instant::now();
    loop {
        let (status, body) = post(&c, &n1, path, request(&b_uid)).await;
        if status == 403
            && body["message"]
                .as_str()
                .is_some_and(|m| m.ends_with(message))
        {
            assert_eq!(body, forbidden("default", "serviceaccounts", message));
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "never refused by admission: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, body) = post(&c, &n1, path, request("")).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body,
        forbidden(
            "default",
            "serviceaccounts",
            "node requested token with a pod binding without a uid"
        )
    );
}
