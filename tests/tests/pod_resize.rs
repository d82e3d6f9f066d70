//! `pods/resize` (in-place pod vertical scaling, beta in 1.33) through kubectl.

use kas_e2e::start_cluster;

#[test]
fn resize_changes_only_cpu_and_memory() {
    let c = start_cluster(|_| {});
    let manifest = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"r"},
        "spec":{"containers":[{"name":"app","image":"nginx",
            "resources":{"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"memory":"128Mi"}}}]}}"#;
    let out = c.kubectl_stdin(&["create"], manifest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A resize of the cpu request: taken; the image in the same patch is not.
    let patch = r#"{"spec":{"containers":[{"name":"app","image":"evil",
        "resources":{"requests":{"cpu":"200m"}}}]}}"#;
    c.kubectl_ok(&["patch", "pod", "r", "--subresource", "resize", "-p", patch]);
    let pod = c.kubectl_json(&["get", "pod", "r"]);
    let app = &pod["spec"]["containers"][0];
    assert_eq!(app["resources"]["requests"]["cpu"], "200m", "{pod}");
    assert_eq!(app["image"], "nginx", "{pod}");
    // Reading the subresource gives the pod.
    let read = c.kubectl_json(&["get", "pod", "r", "--subresource", "resize"]);
    assert_eq!(read["kind"], "Pod");

    // Upstream's refusals.
    let err = c.kubectl_fails(&[
        "patch",
        "pod",
        "r",
        "--subresource",
        "resize",
        "-p",
        r#"{"spec":{"containers":[{"name":"app","resources":{"limits":{"memory":"100Mi"}}}]}}"#,
    ]);
    assert!(
        err.contains("spec.containers[0].resources.limits[memory]: Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer"),
        "{err}"
    );
    let err = c.kubectl_fails(&[
        "patch",
        "pod",
        "r",
        "--subresource",
        "resize",
        "-p",
        r#"{"spec":{"containers":[{"name":"app","resources":{"requests":{"ephemeral-storage":"1Gi"}}}]}}"#,
    ]);
    assert!(
        err.contains("spec: Forbidden: only cpu and memory resources are mutable"),
        "{err}"
    );
    // The main resource still refuses resource changes (they go through resize).
    let err = c.kubectl_fails(&[
        "patch",
        "pod",
        "r",
        "-p",
        r#"{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}]}}"#,
    ]);
    assert!(err.contains("pod updates may not change fields"), "{err}");
}
