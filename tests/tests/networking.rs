//! networking.k8s.io/v1 Ingresses, IngressClasses and NetworkPolicies through the
//! aggregator, as kubectl drives them.

use kas_e2e::{header_and_row, start_cluster};
use serde_json::json;

fn created(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused(out: std::process::Output) -> String {
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn networking_resources_as_kubectl_uses_them() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources", "--api-group=networking.k8s.io"]);
    for expected in [
        vec![
            "ingressclasses",
            "networking.k8s.io/v1",
            "false",
            "IngressClass",
        ],
        vec![
            "ingresses",
            "ing",
            "networking.k8s.io/v1",
            "true",
            "Ingress",
        ],
        vec![
            "networkpolicies",
            "netpol",
            "networking.k8s.io/v1",
            "true",
            "NetworkPolicy",
        ],
    ] {
        assert!(
            resources
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == expected),
            "{resources}"
        );
    }

    // Ingress: kubectl's generator, upstream's first generation and empty status.
    assert_eq!(
        c.kubectl_ok(&["create", "ingress", "web", "--rule=foo.com/bar=svc1:8080"]),
        "ingress.networking.k8s.io/web created\n"
    );
    let ing = c.kubectl_json(&["get", "ingress", "web"]);
    assert_eq!(ing["metadata"]["generation"], 1);
    assert_eq!(
        ing["spec"]["rules"][0]["http"]["paths"][0],
        json!({"path": "/bar", "pathType": "Exact",
            "backend": {"service": {"name": "svc1", "port": {"number": 8080}}}})
    );
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "ingress"]));
    assert_eq!(
        header,
        ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    );
    // The address is empty, so the row has one cell fewer.
    assert_eq!(row[..4], ["web", "<none>", "foo.com", "80"]);

    let bad_path = r#"{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "bad"},
        "spec": {"rules": [{"host": "foo.com", "http": {"paths": [{"path": "bar",
            "pathType": "Prefix",
            "backend": {"service": {"name": "svc1", "port": {"number": 80}}}}]}}]}}"#;
    let err = refused(c.kubectl_stdin(&["create"], bad_path));
    assert!(
        err.contains(
            "The Ingress \"bad\" is invalid: spec.rules[0].http.paths[0].path: \
             Invalid value: \"bar\": must be an absolute path"
        ),
        "{err}"
    );
    let no_rules = r#"{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "empty"}, "spec": {}}"#;
    let err = refused(c.kubectl_stdin(&["create"], no_rules));
    assert!(
        err.contains(
            "spec: Invalid value: []networking.IngressRule(nil): \
             either `defaultBackend` or `rules` must be specified"
        ),
        "{err}"
    );

    // IngressClass: cluster-scoped, parameters default to the cluster scope.
    let class = r#"{"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
        "metadata": {"name": "nginx"},
        "spec": {"controller": "example.com/ingress-controller",
            "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters",
                "name": "external-lb"}}}"#;
    assert_eq!(
        created(c.kubectl_stdin(&["create"], class)),
        "ingressclass.networking.k8s.io/nginx created\n"
    );
    let ic = c.kubectl_json(&["get", "ingressclass", "nginx"]);
    assert_eq!(ic["spec"]["parameters"]["scope"], "Cluster");
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "ingressclass"]));
    assert_eq!(header, ["NAME", "CONTROLLER", "PARAMETERS", "AGE"]);
    assert_eq!(
        row[..3],
        [
            "nginx",
            "example.com/ingress-controller",
            "IngressParameters.k8s.example.com/external-lb"
        ]
    );
    let err = c.kubectl_fails(&[
        "patch",
        "ingressclass",
        "nginx",
        "--type=merge",
        "-p",
        r#"{"spec":{"controller":"example.com/other"}}"#,
    ]);
    assert!(
        err.contains("spec.controller: Invalid value: \"example.com/other\": field is immutable"),
        "{err}"
    );

    // NetworkPolicy: port protocol and policy types defaulted.
    let policy = r#"{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "db"},
        "spec": {"podSelector": {"matchLabels": {"role": "db"}},
            "ingress": [{"from": [{"ipBlock": {"cidr": "172.17.0.0/16",
                "except": ["172.17.1.0/24"]}}], "ports": [{"port": 6379}]}],
            "egress": [{"to": [{"podSelector": {}}]}]}}"#;
    assert_eq!(
        created(c.kubectl_stdin(&["create"], policy)),
        "networkpolicy.networking.k8s.io/db created\n"
    );
    let np = c.kubectl_json(&["get", "netpol", "db"]);
    assert_eq!(np["spec"]["ingress"][0]["ports"][0]["protocol"], "TCP");
    assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(np["metadata"]["generation"], 1);
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "networkpolicy"]));
    assert_eq!(header, ["NAME", "POD-SELECTOR", "AGE"]);
    assert_eq!(row[..2], ["db", "role=db"]);

    let bad_cidr = r#"{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "bad"},
        "spec": {"podSelector": {},
            "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/33"}}]}]}}"#;
    let err = refused(c.kubectl_stdin(&["create"], bad_cidr));
    assert!(
        err.contains(
            "spec.ingress[0].from[0].ipBlock.cidr: Invalid value: \"10.0.0.0/33\": \
             must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
        ),
        "{err}"
    );
}
