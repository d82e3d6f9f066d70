//! core/v1 Endpoints through the aggregator, as kubectl drives them.

use kas_e2e::{TestCluster, header_and_row, start_cluster};

const DEPRECATED: &str =
    "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice";

/// kubectl's stdout and stderr; fails the test when kubectl fails.
fn stdin_ok(c: &TestCluster, verb: &str, manifest: &str) -> (String, String) {
    let out = c.kubectl_stdin(&[verb], manifest);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "kubectl {verb}: {stderr}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

#[test]
fn endpoints_as_kubectl_uses_them() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources", "--api-group="]);
    assert!(
        resources
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["endpoints", "ep", "v1", "true", "Endpoints"]),
        "{resources}"
    );

    // Ports default to TCP.
    let manifest = r#"{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"web"},
        "subsets":[{"addresses":[{"ip":"10.0.0.1"},{"ip":"10.0.0.2"},{"ip":"10.0.0.3"},
            {"ip":"10.0.0.4"}],"notReadyAddresses":[{"ip":"10.0.0.9"}],
            "ports":[{"name":"http","port":80}]}]}"#;
    let (stdout, _) = stdin_ok(&c, "create", manifest);
    assert_eq!(stdout, "endpoints/web created\n");
    let ep = c.kubectl_json(&["get", "endpoints", "web"]);
    assert_eq!(ep["subsets"][0]["ports"][0]["protocol"], "TCP", "{ep}");
    assert_eq!(ep["subsets"][0]["addresses"][3]["ip"], "10.0.0.4", "{ep}");

    // The printer: three endpoints and a count of the rest.
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "ep"]));
    assert_eq!(header, ["NAME", "ENDPOINTS", "AGE"]);
    assert_eq!(
        row[..2],
        ["web", "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 1 more..."]
    );

    // PUT of a missing Endpoints creates it (AllowCreateOnUpdate); an empty one prints
    // <none>.
    let (stdout, _) = stdin_ok(
        &c,
        "replace",
        r#"{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"empty"}}"#,
    );
    assert_eq!(stdout, "endpoints/empty replaced\n");
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "endpoints", "empty"]));
    assert_eq!(row[..2], ["empty", "<none>"]);

    // A legacy IPv4 form (leading zeros) is still accepted: StrictIPCIDRValidation is
    // off in 1.33.
    let legacy = r#"{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"empty"},
        "subsets":[{"addresses":[{"ip":"010.0.0.5"}]}]}"#;
    stdin_ok(&c, "replace", legacy);
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "endpoints", "empty"]));
    assert_eq!(row[..2], ["empty", "010.0.0.5"]);

    // Special addresses are refused with upstream's field paths and messages.
    let bad = r#"{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"bad"},
        "subsets":[{"addresses":[{"ip":"127.0.0.1"}],"ports":[{"port":80,"protocol":"HTTP"}]}]}"#;
    let out = c.kubectl_stdin(&["create"], bad);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("The Endpoints \"bad\" is invalid"), "{err}");
    for expected in [
        "subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
        "subsets[0].ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
    ] {
        assert!(err.contains(expected), "{expected} in {err}");
    }
    let missing = c.kubectl_fails(&["get", "endpoints", "bad"]);
    assert!(missing.contains("endpoints \"bad\" not found"), "{missing}");

    c.kubectl_ok(&["delete", "endpoints", "web", "empty"]);
    assert_eq!(c.kubectl_ok(&["get", "endpoints", "-o", "name"]), "");
}

/// Upstream 1.33 warns on every write of v1 Endpoints (the installer's deprecation
/// warning, then the strategy's `endpointsWarnings` for non-standard IPs). The strategy
/// returns both, but the store does not send strategy warnings yet.
#[test]
fn writes_warn_as_upstream_does() {
    let c = start_cluster(|_| {});
    let manifest = r#"{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"web"},
        "subsets":[{"addresses":[{"ip":"10.0.0.1"}],"ports":[{"port":80}]}]}"#;
    let (_, stderr) = stdin_ok(&c, "create", manifest);
    assert!(stderr.contains(DEPRECATED), "{stderr}");
    let legacy = r#"{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"web"},
        "subsets":[{"addresses":[{"ip":"010.0.0.5"}]}]}"#;
    let (_, stderr) = stdin_ok(&c, "replace", legacy);
    assert!(stderr.contains(DEPRECATED), "{stderr}");
    assert!(
        stderr.contains(
            "Warning: subsets[0].addresses[0].ip: non-standard IP address \"010.0.0.5\" will be considered invalid in a future Kubernetes release: use \"10.0.0.5\""
        ),
        "{stderr}"
    );
}
