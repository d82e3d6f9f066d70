//! Upstream's default-on `DefaultIngressClass` and `RuntimeClass` admission plugins, end to
//! end through kubectl: an Ingress without a class gets the default IngressClass, a pod
//! naming a RuntimeClass gets its overhead, node selector and tolerations, and an unknown
//! RuntimeClass is refused with upstream's message.

use kas_e2e::{TestCluster, start_cluster};
use serde_json::{Value, json};

fn create(c: &TestCluster, manifest: Value) -> std::process::Output {
    c.kubectl_stdin(&["create"], &manifest.to_string())
}

fn create_ok(c: &TestCluster, manifest: Value) {
    let out = create(c, manifest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn pod(name: &str, class: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "runtimeClassName": class,
            "nodeSelector": {"zone": "a"},
            "containers": [{"name": "c", "image": "busybox"}]
        }
    })
}

#[test]
fn ingress_and_runtime_classes_are_applied_on_create() {
    let c = start_cluster(|_| {});

    // DefaultIngressClass: no default yet, then the default class is filled in.
    c.kubectl_ok(&["create", "ingress", "before", "--rule=a.example/=svc:80"]);
    let before = c.kubectl_json(&["get", "ingress", "before"]);
    assert_eq!(before.pointer("/spec/ingressClassName"), None);
    create_ok(
        &c,
        json!({
            "apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": "nginx", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
            "spec": {"controller": "example.com/nginx"}
        }),
    );
    c.kubectl_ok(&["create", "ingress", "web", "--rule=a.example/=svc:80"]);
    let web = c.kubectl_json(&["get", "ingress", "web"]);
    assert_eq!(web["spec"]["ingressClassName"], "nginx");
    c.kubectl_ok(&[
        "create",
        "ingress",
        "legacy",
        "--rule=a.example/=svc:80",
        "--annotation=kubernetes.io/ingress.class=other",
    ]);
    let legacy = c.kubectl_json(&["get", "ingress", "legacy"]);
    assert_eq!(legacy.pointer("/spec/ingressClassName"), None);

    // RuntimeClass: overhead, node selector and tolerations come from the class.
    create_ok(
        &c,
        json!({
            "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": {"name": "gvisor"}, "handler": "runsc",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
            "scheduling": {
                "nodeSelector": {"sandbox": "gvisor"},
                "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]
            }
        }),
    );
    create_ok(&c, pod("sandboxed", "gvisor"));
    let got = c.kubectl_json(&["get", "pod", "sandboxed"]);
    assert_eq!(
        got["spec"]["overhead"],
        json!({"cpu": "250m", "memory": "120Mi"})
    );
    assert_eq!(
        got["spec"]["nodeSelector"],
        json!({"sandbox": "gvisor", "zone": "a"})
    );
    let tolerations = got["spec"]["tolerations"].as_array().unwrap();
    assert!(
        tolerations
            .contains(&json!({"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"})),
        "{tolerations:?}"
    );

    // A conflicting node selector and an unknown class are refused.
    let mut conflict = pod("conflict", "gvisor");
    conflict["spec"]["nodeSelector"]["sandbox"] = json!("kata");
    let out = create(&c, conflict);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pods \"conflict\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; pod.spec.nodeSelector[sandbox] = kata"),
        "{err}"
    );
    let out = create(&c, pod("unknown", "nope"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "pods \"unknown\" is forbidden: pod rejected: RuntimeClass \"nope\" not found"
        ),
        "{err}"
    );
    let missing = c.kubectl(&["get", "pod", "unknown"]);
    assert!(!missing.status.success());
}
