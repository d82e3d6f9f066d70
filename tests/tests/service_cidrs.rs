//! networking.k8s.io/v1 ServiceCIDRs and IPAddresses (MultiCIDRServiceAllocator, GA in
//! 1.33): the default ServiceCIDR, and the IPAddress objects behind Services' cluster IPs.

use kas_e2e::{header_and_row, start_cluster};
use serde_json::json;

#[test]
fn service_cidrs_and_ip_addresses() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&[
        "api-resources",
        "--api-group=networking.k8s.io",
        "-o",
        "name",
    ]);
    for name in [
        "ipaddresses.networking.k8s.io",
        "servicecidrs.networking.k8s.io",
    ] {
        assert!(resources.lines().any(|l| l == name), "{resources}");
    }

    // The default ServiceCIDR holds the flag's range and is Ready.
    let default = c.kubectl_json(&["get", "servicecidr", "kubernetes"]);
    assert_eq!(default["spec"]["cidrs"], json!(["10.0.0.0/24"]));
    let ready = &default["status"]["conditions"][0];
    assert_eq!(ready["type"], "Ready");
    assert_eq!(ready["status"], "True");
    assert_eq!(ready["message"], "Kubernetes default Service CIDR is ready");
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "servicecidr", "kubernetes"]));
    assert_eq!(header, ["NAME", "CIDRS", "AGE"]);
    assert_eq!(row[..2], ["kubernetes", "10.0.0.0/24"]);

    // A Service's cluster IP is an IPAddress object.
    c.kubectl_ok(&["create", "service", "clusterip", "web", "--tcp=80:8080"]);
    let svc = c.kubectl_json(&["get", "svc", "web"]);
    let ip = svc["spec"]["clusterIP"]
        .as_str()
        .expect("a cluster IP")
        .to_owned();
    let addr = c.kubectl_json(&["get", "ipaddress", &ip]);
    assert_eq!(
        addr["spec"]["parentRef"],
        json!({"resource": "services", "namespace": "default", "name": "web"})
    );
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "ipaddress", &ip]));
    assert_eq!(header, ["NAME", "PARENTREF", "AGE"]);
    assert_eq!(row[..2], [ip.as_str(), "services/default/web"]);

    // An IPAddress created through the API reserves its IP for Services too.
    let manifest = r#"{"apiVersion":"networking.k8s.io/v1","kind":"IPAddress",
        "metadata":{"name":"10.0.0.200"},
        "spec":{"parentRef":{"group":"","resource":"services","namespace":"default","name":"other"}}}"#;
    let out = c.kubectl_stdin(&["create"], manifest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let taken = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"taken"},
        "spec":{"clusterIP":"10.0.0.200","ports":[{"port":80}]}}"#;
    let out = c.kubectl_stdin(&["create"], taken);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("failed to allocate IP 10.0.0.200"),
        "{err}"
    );

    // Upstream's validation.
    let bad = r#"{"apiVersion":"networking.k8s.io/v1","kind":"IPAddress",
        "metadata":{"name":"2001:DB8::1"},"spec":{"parentRef":{"resource":"services","name":"x"}}}"#;
    let err = String::from_utf8_lossy(&c.kubectl_stdin(&["create"], bad).stderr).into_owned();
    assert!(
        err.contains("metadata.name: Invalid value: \"2001:DB8::1\": must be in canonical form (\"2001:db8::1\")"),
        "{err}"
    );
    let cidr = r#"{"apiVersion":"networking.k8s.io/v1","kind":"ServiceCIDR",
        "metadata":{"name":"extra"},"spec":{"cidrs":["10.1.0.0/24","fd00::/108"]}}"#;
    let out = c.kubectl_stdin(&["create"], cidr);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = c.kubectl_fails(&[
        "patch",
        "servicecidr",
        "extra",
        "--type=merge",
        "-p",
        r#"{"spec":{"cidrs":["10.2.0.0/24"]}}"#,
    ]);
    assert!(
        err.contains("spec.cidrs: Invalid value: []string{\"10.2.0.0/24\"}: field is immutable"),
        "{err}"
    );
}
