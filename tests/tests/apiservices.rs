//! apiregistration.k8s.io/v1 APIServices, served by the aggregator from etcd as upstream's
//! kube-aggregator serves them: kubectl's view, upstream's validation messages, the status
//! subresource, and what every aggregator replica sees.

use std::time::{Duration, Instant};

use kas_e2e::start_cluster;
use serde_json::{Value, json};

const LOCAL: &str = r#"{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
 "metadata": {"name": "v1.example.com"},
 "spec": {"group": "example.com", "version": "v1", "groupPriorityMinimum": 1000, "versionPriority": 15}}"#;

const BACKED: &str = r#"{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
 "metadata": {"name": "v1alpha1.wardle.example.com"},
 "spec": {"group": "wardle.example.com", "version": "v1alpha1", "groupPriorityMinimum": 1000,
          "versionPriority": 15, "insecureSkipTLSVerify": true,
          "service": {"namespace": "wardle", "name": "api"}}}"#;

#[test]
fn kubectl_creates_lists_and_validates_api_services() {
    let c = start_cluster(|_| {});
    let out = c.kubectl_stdin(&["create"], LOCAL);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = c.kubectl_stdin(&["create"], BACKED);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A local APIService is available at once; a service's port defaults to 443.
    let local = c.kubectl_json(&["get", "apiservice", "v1.example.com"]);
    let condition = &local["status"]["conditions"][0];
    assert_eq!(condition["type"], "Available");
    assert_eq!(condition["status"], "True");
    assert_eq!(condition["reason"], "Local");
    assert_eq!(
        condition["message"],
        "Local APIServices are always available"
    );
    let backed = c.kubectl_json(&["get", "apiservice", "v1alpha1.wardle.example.com"]);
    assert_eq!(backed["spec"]["service"]["port"], 443, "{backed}");
    // Its Service does not exist: the availability controller says so.
    let table = eventually(&c, "v1alpha1.wardle.example.com", "False (ServiceNotFound)");
    assert!(table.contains("wardle/api"), "{table}");

    let table = c.kubectl_ok(&[
        "get",
        "apiservices",
        "v1.example.com",
        "v1alpha1.wardle.example.com",
    ]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "SERVICE", "AVAILABLE", "AGE"], "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("v1.example.com") && l.contains("Local") && l.contains("True")),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("v1alpha1.wardle.example.com") && l.contains("wardle/api")),
        "{table}"
    );

    // Upstream's validation messages.
    let bad = LOCAL.replace("\"v1.example.com\"", "\"v2.example.com\"");
    let err = String::from_utf8_lossy(&c.kubectl_stdin(&["create"], &bad).stderr).into_owned();
    assert!(
        err.contains(r#"The APIService "v2.example.com" is invalid: metadata.name: Invalid value: "v2.example.com": must be `spec.version+"."+spec.group`: "v1.example.com""#),
        "{err}"
    );
    let bad = BACKED
        .replace(
            "\"insecureSkipTLSVerify\": true,",
            "\"insecureSkipTLSVerify\": true, \"caBundle\": \"Y2E=\",",
        )
        .replace("\"name\": \"api\"}", "\"name\": \"api\", \"port\": 0}")
        .replace(
            "\"groupPriorityMinimum\": 1000",
            "\"groupPriorityMinimum\": 20001",
        );
    let err = String::from_utf8_lossy(&c.kubectl_stdin(&["create"], &bad).stderr).into_owned();
    for msg in [
        "spec.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000",
        "spec.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
        "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present",
    ] {
        assert!(err.contains(msg), "{msg}: {err}");
    }

    // An update without a resourceVersion is refused (AllowUnconditionalUpdate is false).
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let put = runtime.block_on(c.send(
        http::Method::PUT,
        "/apis/apiregistration.k8s.io/v1/apiservices/v1.example.com",
        &[("content-type", "application/json")],
        LOCAL,
    ));
    assert_eq!(put.status, 422);
    // Upstream's `Store.Update` names the resource, and prints the uint64 zero as `%#v`.
    assert_eq!(
        put.json()["message"],
        "apiservices.apiregistration.k8s.io \"v1.example.com\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );

    // The status subresource writes the status only; the main resource keeps it. The
    // availability controller owns the Available condition; another type stays.
    let patch = json!({"status": {"conditions": [
        {"type": "Available", "status": "False", "reason": "ServiceNotFound",
         "message": "service/api in \"wardle\" is not present"},
        {"type": "Registered", "status": "True", "reason": "ByHand", "message": "test"}]},
        "spec": {"versionPriority": 99}});
    c.kubectl_ok(&[
        "patch",
        "apiservice",
        "v1alpha1.wardle.example.com",
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch.to_string(),
    ]);
    let backed = c.kubectl_json(&["get", "apiservice", "v1alpha1.wardle.example.com"]);
    assert_eq!(backed["spec"]["versionPriority"], 15);
    assert_eq!(
        backed["status"]["conditions"][1]["reason"], "ByHand",
        "{backed}"
    );
    let spec_patch = json!({"spec": {"versionPriority": 20}, "status": {"conditions": []}});
    c.kubectl_ok(&[
        "patch",
        "apiservice",
        "v1alpha1.wardle.example.com",
        "--type=merge",
        "-p",
        &spec_patch.to_string(),
    ]);
    let backed = c.kubectl_json(&["get", "apiservice", "v1alpha1.wardle.example.com"]);
    assert_eq!(backed["spec"]["versionPriority"], 20);
    assert_eq!(
        backed["status"]["conditions"][1]["reason"], "ByHand",
        "{backed}"
    );
    let bad_status = json!({"status": {"conditions": [{"type": "Available", "status": "Maybe"}]}});
    let out = c.kubectl(&[
        "patch",
        "apiservice",
        "v1alpha1.wardle.example.com",
        "--subresource=status",
        "--type=merge",
        "-p",
        &bad_status.to_string(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r#"status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown""#),
        "{err}"
    );

    // Protobuf, as upstream serves it.
    let pb = c.kubectl_ok(&["get", "apiservice", "v1.example.com", "-o", "name"]);
    assert_eq!(
        pb.trim(),
        "apiservice.apiregistration.k8s.io/v1.example.com"
    );
}

/// Polls `kubectl get apiservice name` until its row contains `want`; the row.
fn eventually(c: &kas_e2e::TestCluster, name: &str, want: &str) -> String {
    poll(&format!("{name}: {want}"), || {
        let table = c.kubectl_ok(&["get", "apiservice", name]);
        table.contains(want).then_some(table.clone()).ok_or(table)
    })
}

/// `probe`'s answer once it has one (its last miss is in the failure), within 20 s.
fn poll<T>(what: &str, mut probe: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match probe() {
            Ok(found) => return found,
            Err(seen) => assert!(Instant::now() < deadline, "{what}: {seen}"),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every reason the availability controller gives before it reaches a backend, as
/// upstream 1.33's remote availability controller words it (over the Service's Endpoints:
/// 1.34 moved it to EndpointSlices).
#[test]
fn availability_follows_the_service_and_its_endpoints() {
    let c = start_cluster(|_| {});
    c.kubectl_ok(&["create", "namespace", "wardle"]);
    let out = c.kubectl_stdin(&["create"], BACKED);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let name = "v1alpha1.wardle.example.com";
    eventually(&c, name, "False (ServiceNotFound)");
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "api", "namespace": "wardle"},
        "spec": {"ports": [{"name": "https", "port": 8443}]}});
    let out = c.kubectl_stdin(&["create"], &service.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eventually(&c, name, "False (ServicePortError)");
    let condition = c.kubectl_json(&["get", "apiservice", name])["status"]["conditions"][0].clone();
    assert_eq!(
        condition["message"],
        "service/api in \"wardle\" is not listening on port 443"
    );
    c.kubectl_ok(&[
        "patch",
        "service",
        "api",
        "-n",
        "wardle",
        "--type=json",
        "-p",
        r#"[{"op": "replace", "path": "/spec/ports/0/port", "value": 443}]"#,
    ]);
    eventually(&c, name, "False (EndpointsNotFound)");
    let condition = c.kubectl_json(&["get", "apiservice", name])["status"]["conditions"][0].clone();
    assert_eq!(
        condition["message"],
        "cannot find endpoints for service/api in \"wardle\""
    );
    let endpoints = json!({"apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "api", "namespace": "wardle"},
        "subsets": [{"notReadyAddresses": [{"ip": "10.99.0.2"}],
                     "ports": [{"name": "https", "port": 8443}]}]});
    let out = c.kubectl_stdin(&["create"], &endpoints.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eventually(&c, name, "False (MissingEndpoints)");
    let condition = c.kubectl_json(&["get", "apiservice", name])["status"]["conditions"][0].clone();
    assert_eq!(
        condition["message"],
        "endpoints for service/api in \"wardle\" have no addresses with port name \"https\""
    );
    // Turned local, it is available at once.
    c.kubectl_ok(&["patch", "apiservice", name, "--type=json", "-p",
        r#"[{"op": "remove", "path": "/spec/service"}, {"op": "remove", "path": "/spec/insecureSkipTLSVerify"}]"#]);
    eventually(&c, name, "True");
    let condition = c.kubectl_json(&["get", "apiservice", name])["status"]["conditions"][0].clone();
    assert_eq!(condition["reason"], "Local");

    // The metrics: no unavailable change was counted yet (a new APIService that is not
    // available did not change), every checked APIService has its gauge.
    let gauge = format!("aggregator_unavailable_apiservice{{name=\"{name}\"}}");
    let counted = format!(
        "aggregator_unavailable_apiservice_total{{name=\"{name}\",reason=\"MissingEndpoints\"}} 1\n"
    );
    let metrics = c.kubectl_ok(&["get", "--raw", "/metrics"]);
    assert!(metrics.contains(&format!("{gauge} 0\n")), "{metrics}");
    assert!(metrics.contains("aggregator_unavailable_apiservice{name=\"v1.\"} 0\n"));
    assert!(!metrics.contains(&counted), "{metrics}");
    // Available, then not: counted once, with the reason.
    c.kubectl_ok(&["patch", "apiservice", name, "--type=merge", "-p",
        r#"{"spec": {"insecureSkipTLSVerify": true, "service": {"namespace": "wardle", "name": "api"}}}"#]);
    eventually(&c, name, "False (MissingEndpoints)");
    let metrics = poll(&counted, || {
        let metrics = c.kubectl_ok(&["get", "--raw", "/metrics"]);
        metrics
            .contains(&counted)
            .then_some(metrics.clone())
            .ok_or(metrics)
    });
    assert!(metrics.contains(&format!("{gauge} 1\n")), "{metrics}");
    // Gone: its gauge is forgotten.
    c.kubectl_ok(&["delete", "apiservice", name]);
    poll(&format!("{gauge} gone"), || {
        let metrics = c.kubectl_ok(&["get", "--raw", "/metrics"]);
        (!metrics.contains(&gauge)).then_some(()).ok_or(metrics)
    });
}

#[test]
fn every_aggregator_replica_serves_the_same_api_services() {
    let c = start_cluster(|spec| spec.aggregator_replicas = 2);
    let out = c.kubectl_stdin(&["create"], LOCAL);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let second = c.kubeconfig_for(
        1,
        "admin",
        kas_local::kubeconfig::Credential::Token(&c.pki().admin_token),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = kas_e2e::kubectl_with(
            &second,
            &["get", "apiservice", "v1.example.com", "-o", "json"],
        );
        if out.status.success() {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["spec"]["group"], "example.com");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
