//! The `LimitRanger` admission plugin end to end: a LimitRange created with kubectl gives
//! a pod without resources its default requests and limits and the
//! `kubernetes.io/limit-ranger` annotation; a pod (or its resize) below the container
//! minimum or above its maximum, and a claim above the storage maximum, are refused with
//! upstream's Forbidden (403); namespaces without a LimitRange are left alone.

use http::Method;
use kas_e2e::{TestCluster, start_cluster};
use serde_json::{Value, json};

const NS: &str = "ranged";

const RANGE: &str = "apiVersion: v1
kind: LimitRange
metadata:
  name: bounds
spec:
  limits:
  - type: Container
    default:
      cpu: 500m
      memory: 256Mi
    defaultRequest:
      cpu: 200m
      memory: 128Mi
    min:
      cpu: 100m
    max:
      memory: 1Gi
  - type: PersistentVolumeClaim
    max:
      storage: 2Gi
";

fn pod(name: &str, resources: Value) -> String {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": resources}]}
    })
    .to_string()
}

fn claim(name: &str, size: &str) -> String {
    json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": size}}
        }
    })
    .to_string()
}

/// `kubectl create` of `manifest` in `namespace`: whether it worked, and its stderr.
fn create(c: &TestCluster, namespace: &str, manifest: &str) -> (bool, String) {
    let out = c.kubectl_stdin(&["-n", namespace, "create"], manifest);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn limit_ranges_default_and_bound_pods_and_claims() {
    let c = start_cluster(|_| {});
    c.kubectl_ok(&["create", "namespace", NS]);
    c.kubectl_ok(&["create", "namespace", "free"]);
    let (ok, err) = create(&c, NS, RANGE);
    assert!(ok, "{err}");

    // Defaults and the annotation saying what was set.
    let (ok, err) = create(&c, NS, &pod("web", json!({})));
    assert!(ok, "{err}");
    let web = c.kubectl_json(&["-n", NS, "get", "pod", "web"]);
    assert_eq!(
        web["spec"]["containers"][0]["resources"],
        json!({
            "limits": {"cpu": "500m", "memory": "256Mi"},
            "requests": {"cpu": "200m", "memory": "128Mi"}
        })
    );
    assert_eq!(
        web["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu, memory request for container nginx; cpu, memory limit for container nginx"
    );

    // A resize is checked too: above the maximum refused, within it taken.
    let resize = |limit: &str| {
        let patch = json!({"spec": {"containers": [
            {"name": "nginx", "resources": {"limits": {"memory": limit}}}
        ]}})
        .to_string();
        c.kubectl(&[
            "-n",
            NS,
            "patch",
            "pod",
            "web",
            "--subresource",
            "resize",
            "-p",
            &patch,
        ])
    };
    let out = resize("2Gi");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains(
            "pods \"web\" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi"
        ),
        "{err}"
    );
    let out = resize("512Mi");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // What a container sets itself stays; only the rest is defaulted.
    let own = json!({"requests": {"cpu": "300m"}, "limits": {"cpu": "1"}});
    let (ok, err) = create(&c, NS, &pod("own", own));
    assert!(ok, "{err}");
    let own = c.kubectl_json(&["-n", NS, "get", "pod", "own"]);
    assert_eq!(
        own["spec"]["containers"][0]["resources"],
        json!({
            "limits": {"cpu": "1", "memory": "256Mi"},
            "requests": {"cpu": "300m", "memory": "128Mi"}
        })
    );
    assert_eq!(
        own["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: memory request for container nginx; memory limit for container nginx"
    );

    // Below the minimum: refused, nothing stored.
    let low = json!({"requests": {"cpu": "50m"}, "limits": {"cpu": "50m"}});
    let (ok, err) = create(&c, NS, &pod("low", low));
    assert!(!ok);
    assert!(
        err.contains(
            "Error from server (Forbidden): error when creating \"STDIN\": pods \"low\" is forbidden: minimum cpu usage per Container is 100m, but request is 50m"
        ),
        "{err}"
    );
    assert!(
        c.kubectl_fails(&["-n", NS, "get", "pod", "low"])
            .contains("NotFound")
    );

    // Above the maximum, over HTTP: upstream's Status.
    let big = pod("big", json!({"limits": {"memory": "2Gi"}}));
    let path = format!("/api/v1/namespaces/{NS}/pods");
    let answer = c
        .send(
            Method::POST,
            &path,
            &[("content-type", "application/json")],
            &big,
        )
        .await;
    assert_eq!(answer.status.as_u16(), 403, "{}", answer.text());
    let status = answer.json();
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"big\" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi"
    );
    assert_eq!(status["details"], json!({"name": "big", "kind": "pods"}));

    // Claims: within the maximum created, above it refused.
    let (ok, err) = create(&c, NS, &claim("small", "1Gi"));
    assert!(ok, "{err}");
    let (ok, err) = create(&c, NS, &claim("huge", "5Gi"));
    assert!(!ok);
    assert!(
        err.contains(
            "persistentvolumeclaims \"huge\" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi"
        ),
        "{err}"
    );

    // A namespace without a LimitRange: nothing set, nothing refused.
    let (ok, err) = create(&c, "free", &pod("bare", json!({})));
    assert!(ok, "{err}");
    let bare = c.kubectl_json(&["-n", "free", "get", "pod", "bare"]);
    assert!(bare["metadata"].get("annotations").is_none(), "{bare}");
    let (ok, err) = create(&c, "free", &claim("huge", "5Gi"));
    assert!(ok, "{err}");
}
