//! kube-apiserver's default storage, node and service-account admission plugins through
//! the aggregator, as kubectl and HTTP clients meet them: DefaultStorageClass,
//! StorageObjectInUseProtection, PersistentVolumeClaimResize, TaintNodesByCondition, and
//! ServiceAccount (which the launcher leaves off unless asked, as envtest does).

use std::time::{Duration, Instant};

use http::Method;
use kas_e2e::{TestCluster, start_cluster};
use serde_json::{Value, json};

/// `kubectl create -f -` of `manifest`: Ok(stdout) or Err(stderr).
fn create(c: &TestCluster, manifest: &Value) -> Result<String, String> {
    let out = c.kubectl_stdin(&["create"], &manifest.to_string());
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    if out.status.success() {
        Ok(text(&out.stdout))
    } else {
        Err(text(&out.stderr))
    }
}

fn claim(name: &str, class: Option<&str>) -> Value {
    let mut spec =
        json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}});
    if let Some(class) = class {
        spec["storageClassName"] = json!(class);
    }
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}, "spec": spec})
}

fn class(name: &str, annotations: Value) -> Value {
    json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
           "metadata": {"name": name, "annotations": annotations}, "provisioner": "example.com/disk"})
}

#[test]
fn storage_and_node_plugins_set_classes_finalizers_taints_and_guard_resizes() {
    let c = start_cluster(|_| {});

    // No default class: a claim without one keeps none; every claim and volume is
    // protected by its finalizer.
    create(&c, &class("plain", json!({}))).unwrap();
    create(&c, &claim("none", None)).unwrap();
    let none = c.kubectl_json(&["get", "pvc", "none"]);
    assert!(none["spec"].get("storageClassName").is_none(), "{none}");
    assert_eq!(
        none["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}});
    create(&c, &pv).unwrap();
    assert_eq!(
        c.kubectl_json(&["get", "pv", "pv1"])["metadata"]["finalizers"],
        json!(["kubernetes.io/pv-protection"])
    );

    // Two default classes (GA and beta annotation): the newer one is chosen.
    create(
        &c,
        &class(
            "old",
            json!({"storageclass.kubernetes.io/is-default-class": "true"}),
        ),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    create(
        &c,
        &class(
            "new",
            json!({"storageclass.beta.kubernetes.io/is-default-class": "true"}),
        ),
    )
    .unwrap();
    create(&c, &claim("auto", None)).unwrap();
    let auto = c.kubectl_json(&["get", "pvc", "auto"]);
    assert_eq!(auto["spec"]["storageClassName"], "new");
    // An empty class is a choice of none; the beta annotation is a choice too.
    create(&c, &claim("empty", Some(""))).unwrap();
    assert_eq!(
        c.kubectl_json(&["get", "pvc", "empty"])["spec"]["storageClassName"],
        ""
    );
    let mut annotated = claim("annotated", None);
    annotated["metadata"]["annotations"] =
        json!({"volume.beta.kubernetes.io/storage-class": "plain"});
    create(&c, &annotated).unwrap();
    assert!(
        c.kubectl_json(&["get", "pvc", "annotated"])["spec"]
            .get("storageClassName")
            .is_none()
    );

    // Growing a bound claim needs a class that allows expansion.
    let patch = |what: &[&str]| {
        let mut args = vec!["patch", "pvc", "auto", "--type=merge"];
        args.extend_from_slice(what);
        c.kubectl(&args)
    };
    assert!(
        patch(&["-p", r#"{"spec":{"volumeName":"pv1"}}"#])
            .status
            .success()
    );
    let bound = r#"{"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"}}}"#;
    assert!(
        patch(&["--subresource=status", "-p", bound])
            .status
            .success()
    );
    let grow = r#"{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}"#;
    let refused = patch(&["-p", grow]);
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "Error from server (Forbidden): persistentvolumeclaims \"auto\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize\n"
    );
    c.kubectl_ok(&[
        "patch",
        "storageclass",
        "new",
        "--type=merge",
        "-p",
        r#"{"allowVolumeExpansion":true}"#,
    ]);
    assert!(patch(&["-p", grow]).status.success());
    assert_eq!(
        c.kubectl_json(&["get", "pvc", "auto"])["spec"]["resources"]["requests"]["storage"],
        "2Gi"
    );

    // The finalizer holds a deleted claim until its controller (absent here) lets go.
    c.kubectl_ok(&["delete", "pvc", "auto", "--wait=false"]);
    let deleting = c.kubectl_json(&["get", "pvc", "auto"]);
    assert!(
        deleting["metadata"]["deletionTimestamp"].is_string(),
        "{deleting}"
    );
    assert!(
        patch(&["-p", r#"{"metadata":{"finalizers":null}}"#])
            .status
            .success()
    );
    let gone = c.kubectl(&["get", "pvc", "auto"]);
    assert!(!gone.status.success());

    // A node is created tainted not-ready, once.
    let node = |name: &str, spec: Value| json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec});
    let not_ready = json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"});
    create(&c, &node("n1", json!({}))).unwrap();
    assert_eq!(
        c.kubectl_json(&["get", "node", "n1"])["spec"]["taints"],
        json!([not_ready])
    );
    let gpu = json!({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"});
    create(&c, &node("n2", json!({"taints": [not_ready, gpu]}))).unwrap();
    assert_eq!(
        c.kubectl_json(&["get", "node", "n2"])["spec"]["taints"],
        json!([not_ready, gpu])
    );
}

fn pod(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "apps"}, "spec": spec})
}

fn containers() -> Value {
    json!([{"name": "app", "image": "nginx"}])
}

fn account(name: &str, rest: Value) -> Value {
    let mut sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": "apps"}});
    if let (Some(sa), Some(rest)) = (sa.as_object_mut(), rest.as_object()) {
        sa.extend(rest.clone());
    }
    sa
}

#[tokio::test]
async fn service_account_plugin_names_checks_and_mounts_accounts() {
    let c = start_cluster(|spec| spec.disabled_admission_plugins.clear());
    c.kubectl_ok(&["create", "namespace", "apps"]);

    // No `default` account (no controller makes one here): refused after upstream's
    // retries of the live read.
    let started = Instant::now();
    let err = create(&c, &pod("p0", json!({"containers": containers()}))).unwrap_err();
    assert_eq!(
        err,
        "Error from server (Forbidden): error when creating \"STDIN\": pods \"p0\" is forbidden: error looking up service account apps/default: serviceaccount \"default\" not found\n"
    );
    assert!(started.elapsed() >= Duration::from_millis(900));
    let err = create(
        &c,
        &pod(
            "p0",
            json!({"serviceAccountName": "ghost", "containers": containers()}),
        ),
    )
    .unwrap_err();
    assert!(
        err.contains("pods \"p0\" is forbidden: error looking up service account apps/ghost: serviceaccount \"ghost\" not found"),
        "{err}"
    );

    // With the account: named, token mounted everywhere but where a mount is, pull
    // secrets copied.
    create(
        &c,
        &account(
            "default",
            json!({"imagePullSecrets": [{"name": "registry"}]}),
        ),
    )
    .unwrap();
    let spec = json!({
        "initContainers": [{"name": "init", "image": "busybox"}],
        "containers": [
            {"name": "app", "image": "nginx"},
            {"name": "own", "image": "nginx", "volumeMounts": [
                {"name": "mine", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}
        ],
        "volumes": [{"name": "mine", "emptyDir": {}}]
    });
    create(&c, &pod("p1", spec)).unwrap();
    let p1 = c.kubectl_json(&["get", "pod", "p1", "-n", "apps"]);
    assert_eq!(p1["spec"]["serviceAccountName"], "default");
    assert_eq!(
        p1["spec"]["imagePullSecrets"],
        json!([{"name": "registry"}])
    );
    let volume = &p1["spec"]["volumes"][1];
    let volume_name = volume["name"].as_str().unwrap_or("");
    let suffix = volume_name.strip_prefix("kube-api-access-").unwrap_or("");
    assert!(
        suffix.len() == 5
            && suffix
                .chars()
                .all(|ch| "bcdfghjklmnpqrstvwxz2456789".contains(ch)),
        "{volume_name}"
    );
    assert_eq!(
        volume["projected"],
        json!({"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
        ]})
    );
    let mount = json!([{"name": volume_name, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]);
    assert_eq!(p1["spec"]["initContainers"][0]["volumeMounts"], mount);
    assert_eq!(p1["spec"]["containers"][0]["volumeMounts"], mount);
    assert_eq!(
        p1["spec"]["containers"][1]["volumeMounts"][0]["name"],
        "mine"
    );
    assert_eq!(
        p1["spec"]["containers"][1]["volumeMounts"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );

    // Opting out: the pod's choice wins over the account's.
    create(
        &c,
        &account("quiet", json!({"automountServiceAccountToken": false})),
    )
    .unwrap();
    let cases = [
        ("p2", json!({"automountServiceAccountToken": false}), false),
        ("p3", json!({"serviceAccountName": "quiet"}), false),
        (
            "p4",
            json!({"serviceAccountName": "quiet", "automountServiceAccountToken": true}),
            true,
        ),
    ];
    for (name, mut spec, mounted) in cases {
        spec["containers"] = containers();
        create(&c, &pod(name, spec)).unwrap();
        let got = c.kubectl_json(&["get", "pod", name, "-n", "apps"]);
        assert_eq!(got["spec"].get("volumes").is_some(), mounted, "{got}");
        assert_eq!(
            got["spec"]["containers"][0].get("volumeMounts").is_some(),
            mounted,
            "{got}"
        );
    }

    // Mirror pods reference no account or secret, and get nothing.
    let mirror = |name: &str, spec: Value| {
        let mut p = pod(name, spec);
        p["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "mirror"});
        p
    };
    let err = create(
        &c,
        &mirror(
            "m1",
            json!({"serviceAccountName": "default", "containers": containers()}),
        ),
    )
    .unwrap_err();
    assert!(
        err.contains("pods \"m1\" is forbidden: a mirror pod may not reference service accounts"),
        "{err}"
    );
    let secret_volume = json!([{"name": "s", "secret": {"secretName": "top"}}]);
    let err = create(
        &c,
        &mirror(
            "m1",
            json!({"containers": containers(), "volumes": secret_volume}),
        ),
    )
    .unwrap_err();
    assert!(
        err.contains("pods \"m1\" is forbidden: a mirror pod may not reference secrets"),
        "{err}"
    );
    create(&c, &mirror("m1", json!({"containers": containers()}))).unwrap();
    let m1 = c.kubectl_json(&["get", "pod", "m1", "-n", "apps"]);
    assert!(m1["spec"].get("serviceAccountName").is_none(), "{m1}");
    assert!(m1["spec"].get("volumes").is_none(), "{m1}");

    // An account that enforces mountable secrets.
    let strict = json!({"metadata": {"name": "strict", "namespace": "apps",
        "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}}, "secrets": [{"name": "ok"}]});
    create(&c, &account("strict", strict)).unwrap();
    let err = create(&c, &pod("p5", json!({"serviceAccountName": "strict", "containers": containers(), "volumes": secret_volume}))).unwrap_err();
    assert!(
        err.contains("pods \"p5\" is forbidden: volume with secret.secretName=\"top\" is not allowed because service account strict does not reference that secret"),
        "{err}"
    );
    create(
        &c,
        &pod(
            "p6",
            json!({"serviceAccountName": "strict", "containers": containers()}),
        ),
    )
    .unwrap();
    let debug = |secret: &str| {
        json!({"spec": {"ephemeralContainers": [{"name": "debug", "image": "busybox",
            "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"name": secret, "key": "k"}}}]}]}})
        .to_string()
    };
    let path = "/api/v1/namespaces/apps/pods/p6/ephemeralcontainers";
    let merge = [("content-type", "application/merge-patch+json")];
    let refused = c.send(Method::PATCH, path, &merge, &debug("top")).await;
    assert_eq!(
        (refused.status.as_u16(), refused.json()),
        (
            500,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "ephemeral container debug with envVar E referencing secret.secretName=\"top\" is not allowed because service account strict does not reference that secret",
            "code": 500})
        )
    );
    let admitted = c.send(Method::PATCH, path, &merge, &debug("ok")).await;
    assert_eq!(admitted.status.as_u16(), 200, "{}", admitted.text());
}
