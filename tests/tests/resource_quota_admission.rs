//! The `ResourceQuota` admission plugin end to end: with a quota's status written by hand
//! (upstream's quota controller runs in kube-controller-manager), pods and configmaps
//! within it are admitted and charged, one over it is refused with upstream's message,
//! dry runs are checked but not charged, a pod's resize and a service's update are charged their growth, and a quota whose status lacks `used` refuses
//! with `status unknown`.

use kas_e2e::{TestCluster, start_cluster};
use serde_json::{Value, json};

const NS: &str = "quota";

fn set_status(c: &TestCluster, quota: &str, status: Value) {
    c.kubectl_ok(&[
        "-n",
        NS,
        "patch",
        "quota",
        quota,
        "--subresource=status",
        "--type=merge",
        "-p",
        &json!({ "status": status }).to_string(),
    ]);
}

fn used(c: &TestCluster, quota: &str) -> Value {
    c.kubectl_json(&["-n", NS, "get", "quota", quota])["status"]["used"].clone()
}

fn pod(name: &str, cpu: Option<&str>) -> String {
    let resources = match cpu {
        Some(cpu) => json!({"requests": {"cpu": cpu}}),
        None => json!({}),
    };
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"containers": [{"name": "c", "image": "busybox", "resources": resources}]}
    })
    .to_string()
}

/// kubectl create of the pod: whether it succeeded, and its stderr.
fn create_pod(c: &TestCluster, name: &str, cpu: Option<&str>, extra: &[&str]) -> (bool, String) {
    let mut args = vec!["create"];
    args.extend_from_slice(extra);
    let out = c.kubectl_stdin(&args, &pod(name, cpu));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn quotas_charge_and_refuse_writes() {
    let c = start_cluster(|_| {});
    c.kubectl_ok(&["create", "namespace", NS]);
    c.kubectl_ok(&[
        "-n",
        NS,
        "create",
        "quota",
        "compute",
        "--hard=pods=2,requests.cpu=1",
    ]);
    // Without status the quota constrains nothing (upstream matches on status.hard).
    assert!(create_pod(&c, "early", Some("2"), &[]).0);
    c.kubectl_ok(&["-n", NS, "delete", "pod", "early", "--wait=false"]);
    set_status(
        &c,
        "compute",
        json!({"hard": {"pods": "2", "requests.cpu": "1"}, "used": {"pods": "0", "requests.cpu": "0"}}),
    );

    let (ok, err) = create_pod(&c, "p1", Some("400m"), &[]);
    assert!(ok, "{err}");
    assert_eq!(
        used(&c, "compute"),
        json!({"pods": "1", "requests.cpu": "400m"})
    );

    // A dry run is checked but not charged.
    let (ok, err) = create_pod(&c, "p2", Some("400m"), &["--dry-run=server"]);
    assert!(ok, "{err}");
    assert_eq!(
        used(&c, "compute"),
        json!({"pods": "1", "requests.cpu": "400m"})
    );
    let (ok, err) = create_pod(&c, "p2", Some("700m"), &["--dry-run=server"]);
    assert!(!ok);
    assert!(
        err.contains(r#"pods "p2" is forbidden: exceeded quota: compute, requested: requests.cpu=700m, used: requests.cpu=400m, limited: requests.cpu=1"#),
        "{err}"
    );

    let (ok, err) = create_pod(&c, "p2", Some("400m"), &[]);
    assert!(ok, "{err}");
    assert_eq!(
        used(&c, "compute"),
        json!({"pods": "2", "requests.cpu": "800m"})
    );

    // One over: every exceeded resource is named, and nothing is charged or stored.
    let (ok, err) = create_pod(&c, "p3", Some("300m"), &[]);
    assert!(!ok);
    assert!(err.contains("Error from server (Forbidden)"), "{err}");
    assert!(
        err.contains(r#"pods "p3" is forbidden: exceeded quota: compute, requested: pods=1,requests.cpu=300m, used: pods=2,requests.cpu=800m, limited: pods=2,requests.cpu=1"#),
        "{err}"
    );
    assert_eq!(
        used(&c, "compute"),
        json!({"pods": "2", "requests.cpu": "800m"})
    );
    assert!(!c.kubectl(&["-n", NS, "get", "pod", "p3"]).status.success());

    // A quota on cpu requires every container to request it.
    let (ok, err) = create_pod(&c, "p4", None, &[]);
    assert!(!ok);
    assert!(
        err.contains(
            r#"pods "p4" is forbidden: failed quota: compute: must specify requests.cpu for: c"#
        ),
        "{err}"
    );

    // An in-place resize is charged its growth, and refused past the quota.
    let resize = |cpu: &str| {
        let patch = json!({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}});
        c.kubectl(&[
            "-n",
            NS,
            "patch",
            "pod",
            "p1",
            "--subresource",
            "resize",
            "-p",
            &patch.to_string(),
        ])
    };
    assert!(resize("500m").status.success());
    assert_eq!(
        used(&c, "compute"),
        json!({"pods": "2", "requests.cpu": "900m"})
    );
    let out = resize("800m");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r#"pods "p1" is forbidden: exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=900m, limited: requests.cpu=1"#),
        "{err}"
    );

    // count/configmaps: a status without `used` refuses, then the count is charged.
    c.kubectl_ok(&[
        "-n",
        NS,
        "create",
        "quota",
        "objects",
        "--hard=count/configmaps=1",
    ]);
    set_status(&c, "objects", json!({"hard": {"count/configmaps": "1"}}));
    let err = c.kubectl_fails(&["-n", NS, "create", "configmap", "c1"]);
    assert!(
        err.contains(r#"configmaps "c1" is forbidden: status unknown for quota: objects, resources: count/configmaps"#),
        "{err}"
    );
    set_status(
        &c,
        "objects",
        json!({"hard": {"count/configmaps": "1"}, "used": {"count/configmaps": "0"}}),
    );
    c.kubectl_ok(&["-n", NS, "create", "configmap", "c1"]);
    assert_eq!(used(&c, "objects"), json!({"count/configmaps": "1"}));
    let err = c.kubectl_fails(&["-n", NS, "create", "configmap", "c2"]);
    assert!(
        err.contains(r#"configmaps "c2" is forbidden: exceeded quota: objects, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1"#),
        "{err}"
    );
    // Services: an update that adds node ports is charged the difference.
    c.kubectl_ok(&[
        "-n",
        NS,
        "create",
        "quota",
        "ports",
        "--hard=services.nodeports=1",
    ]);
    set_status(
        &c,
        "ports",
        json!({"hard": {"services.nodeports": "1"}, "used": {"services.nodeports": "0"}}),
    );
    c.kubectl_ok(&[
        "-n",
        NS,
        "create",
        "service",
        "clusterip",
        "s1",
        "--tcp=80,81",
    ]);
    assert_eq!(used(&c, "ports"), json!({"services.nodeports": "0"}));
    let err = c.kubectl_fails(&[
        "-n",
        NS,
        "patch",
        "service",
        "s1",
        "-p",
        r#"{"spec":{"type":"NodePort"}}"#,
    ]);
    assert!(
        err.contains(r#"services "s1" is forbidden: exceeded quota: ports, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1"#),
        "{err}"
    );

    // Other namespaces are not constrained.
    c.kubectl_ok(&["-n", "default", "create", "configmap", "c2"]);
}
