//! The default-on PodSecurity admission plugin through the aggregator, as kubectl users
//! meet it: namespace labels choose the levels, the enforce level refuses pods with
//! upstream's message, the warn level and workloads give Warning headers.

use kas_e2e::{TestCluster, start_cluster};

/// kubectl's (success, stdout, stderr).
fn run(c: &TestCluster, args: &[&str], manifest: Option<&str>) -> (bool, String, String) {
    let out = match manifest {
        Some(m) => c.kubectl_stdin(args, m),
        None => c.kubectl(args),
    };
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const RESTRICTED_BARE: &str = concat!(
    r#"allowPrivilegeEscalation != false (container "C" must set securityContext.allowPrivilegeEscalation=false), "#,
    r#"unrestricted capabilities (container "C" must set securityContext.capabilities.drop=["ALL"]), "#,
    r#"runAsNonRoot != true (pod or container "C" must set securityContext.runAsNonRoot=true), "#,
    r#"seccompProfile (pod or container "C" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#,
);

fn restricted_bare(container: &str) -> String {
    RESTRICTED_BARE.replace("\"C\"", &format!("\"{container}\""))
}

#[test]
fn pod_security_labels_enforce_and_warn() {
    let c = start_cluster(|_| {});
    c.kubectl_ok(&["create", "namespace", "psa"]);
    c.kubectl_ok(&["run", "web", "-n", "psa", "--image=nginx"]);

    // Tightening the enforce level warns about the pods already there.
    let (ok, _, stderr) = run(
        &c,
        &[
            "label",
            "ns",
            "psa",
            "pod-security.kubernetes.io/enforce=restricted",
        ],
        None,
    );
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains(r#"Warning: existing pods in namespace "psa" violate the new PodSecurity enforce level "restricted:latest""#),
        "{stderr}"
    );
    assert!(
        stderr.contains("Warning: web: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"),
        "{stderr}"
    );

    // Invalid labels are refused with upstream's field error.
    let (ok, _, stderr) = run(
        &c,
        &[
            "label",
            "ns",
            "psa",
            "pod-security.kubernetes.io/warn=bogus",
        ],
        None,
    );
    assert!(!ok);
    assert!(
        stderr.contains(r#"Namespace "psa" is invalid: metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "bogus": must be one of privileged, baseline, restricted"#),
        "{stderr}"
    );

    // A privileged pod is refused with upstream's message; nothing is stored.
    let privileged = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"priv"},
        "spec":{"containers":[{"name":"c","image":"nginx","securityContext":{"privileged":true}}]}}"#;
    let (ok, _, stderr) = run(&c, &["create", "-n", "psa"], Some(privileged));
    assert!(!ok);
    let expected = format!(
        r#"Error from server (Forbidden): error when creating "STDIN": pods "priv" is forbidden: violates PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true), {}"#,
        restricted_bare("c")
    );
    assert_eq!(stderr.trim_end(), expected);
    assert!(
        c.kubectl_fails(&["get", "pod", "priv", "-n", "psa"])
            .contains("NotFound")
    );

    // A compliant pod is admitted without warnings.
    let compliant = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"good"},
        "spec":{"securityContext":{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}},
          "containers":[{"name":"c","image":"nginx","securityContext":{
            "allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}]}}"#;
    let (ok, stdout, stderr) = run(&c, &["create", "-n", "psa"], Some(compliant));
    assert!(ok, "{stderr}");
    assert_eq!(
        (stdout.as_str(), stderr.as_str()),
        ("pod/good created\n", "")
    );

    // The old pod: a label change is not evaluated, a new image is.
    c.kubectl_ok(&["label", "pod", "web", "-n", "psa", "tier=front"]);
    let stderr = c.kubectl_fails(&["set", "image", "pod/web", "web=nginx:1.28", "-n", "psa"]);
    assert!(
        stderr.contains(r#"pods "web" is forbidden: violates PodSecurity "restricted:latest": "#),
        "{stderr}"
    );

    // An ephemeral container (the pods/ephemeralcontainers subresource) is evaluated too;
    // the pod-level runAsNonRoot and seccompProfile cover it.
    let stderr = c.kubectl_fails(&["debug", "good", "-n", "psa", "--image=busybox", "-c", "dbg"]);
    assert!(
        stderr.ends_with(concat!(
            r#"Error from server (Forbidden): pods "good" is forbidden: violates PodSecurity "restricted:latest": "#,
            r#"allowPrivilegeEscalation != false (container "dbg" must set securityContext.allowPrivilegeEscalation=false), "#,
            r#"unrestricted capabilities (container "dbg" must set securityContext.capabilities.drop=["ALL"])"#,
            "\n"
        )),
        "{stderr}"
    );

    // Invalid labels on a new namespace: 422 and nothing created.
    let bad_ns = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bad",
        "labels":{"pod-security.kubernetes.io/enforce-version":"v2.0"}}}"#;
    let (ok, _, stderr) = run(&c, &["create"], Some(bad_ns));
    assert!(!ok);
    assert!(
        stderr.contains(r#"Namespace "bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "v2.0": must be "latest" or "v1.x""#),
        "{stderr}"
    );

    // warn=baseline: the pod is created, kubectl shows the Warning.
    c.kubectl_ok(&["create", "namespace", "psw"]);
    c.kubectl_ok(&[
        "label",
        "ns",
        "psw",
        "pod-security.kubernetes.io/warn=baseline",
    ]);
    let host = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"host"},
        "spec":{"hostNetwork":true,"containers":[{"name":"c","image":"nginx"}]}}"#;
    let (ok, stdout, stderr) = run(&c, &["create", "-n", "psw"], Some(host));
    assert!(ok, "{stderr}");
    assert_eq!(stdout, "pod/host created\n");
    assert_eq!(
        stderr,
        "Warning: would violate PodSecurity \"baseline:latest\": host namespaces (hostNetwork)\n"
    );

    // Workloads are never enforced: a violating template is created, with the warning.
    c.kubectl_ok(&[
        "label",
        "ns",
        "psa",
        "pod-security.kubernetes.io/warn=restricted",
    ]);
    let (ok, stdout, stderr) = run(
        &c,
        &["create", "deployment", "dep", "-n", "psa", "--image=nginx"],
        None,
    );
    assert!(ok, "{stderr}");
    assert_eq!(stdout, "deployment.apps/dep created\n");
    assert_eq!(
        stderr,
        format!(
            "Warning: would violate PodSecurity \"restricted:latest\": {}\n",
            restricted_bare("nginx")
        )
    );
}
