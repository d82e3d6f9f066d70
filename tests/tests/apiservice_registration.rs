//! The APIServices the aggregator registers itself, as upstream's autoregister and CRD
//! registration controllers do, and the `extension-apiserver-authentication` ConfigMap of
//! upstream's cluster-authentication-trust controller: what a fresh cluster lists, the
//! shape of one, a CRD's group version coming and going, APIServices the controllers do not
//! manage left alone, two aggregator replicas converging, and the ConfigMap's content and
//! who may read it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use kas_e2e::{TestCluster, kubectl_with, start_cluster};
use kas_local::kubeconfig::Credential;
use serde_json::{Value, json};

/// What `kubectl get apiservices` lists on a fresh upstream 1.33 cluster for the group
/// versions core serves by default: `v1.` for the legacy group and each group version of
/// core's discovery (extensions' apiextensions.k8s.io/v1 merged in) that upstream's
/// `apiVersionPriorities` names. This server serves upstream's default set (GA versions;
/// the beta and alpha ones are off by default, as upstream's), so every one of them is in
/// the table; nothing is registered for apiregistration.k8s.io itself, whose group no
/// delegate lists and the table does not name (real 1.33 clusters list none).
const EXPECTED: &[&str] = &[
    "v1.",
    "v1.admissionregistration.k8s.io",
    "v1.apiextensions.k8s.io",
    "v1.apps",
    "v1.authentication.k8s.io",
    "v1.authorization.k8s.io",
    "v1.autoscaling",
    "v1.batch",
    "v1.certificates.k8s.io",
    "v1.coordination.k8s.io",
    "v1.discovery.k8s.io",
    "v1.events.k8s.io",
    "v1.flowcontrol.apiserver.k8s.io",
    "v1.networking.k8s.io",
    "v1.node.k8s.io",
    "v1.policy",
    "v1.rbac.authorization.k8s.io",
    "v1.scheduling.k8s.io",
    "v1.storage.k8s.io",
    "v2.autoscaling",
];

const LABEL: &str = "kube-aggregator.kubernetes.io/automanaged";

fn crd(name: &str, group: &str, kind: &str, versions: &[(&str, bool)]) -> String {
    let plural = name.split('.').next().unwrap_or(name);
    let versions: Vec<Value> = versions
        .iter()
        .enumerate()
        .map(|(i, (v, served))| {
            json!({"name": v, "served": served, "storage": i == 0,
                   "schema": {"openAPIV3Schema": {"type": "object"}}})
        })
        .collect();
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": name},
           "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": plural, "kind": kind},
                    "versions": versions}})
    .to_string()
}

fn apply(c: &TestCluster, manifest: &str) {
    let out = c.kubectl_stdin(&["apply"], manifest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Each APIService's resourceVersion, by name.
fn versions(c: &TestCluster, kubeconfig: Option<&PathBuf>) -> BTreeMap<String, String> {
    let args = ["get", "apiservices", "-o", "json"];
    let list: Value = match kubeconfig {
        Some(k) => serde_json::from_slice(&kubectl_with(k, &args).stdout).unwrap(),
        None => c.kubectl_json(&args[..2]),
    };
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let meta = &a["metadata"];
            let name = meta["name"].as_str().unwrap().to_owned();
            (name, meta["resourceVersion"].as_str().unwrap().to_owned())
        })
        .collect()
}

/// Polls `check` every 100 ms until it holds or `limit` passes.
fn eventually(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !check() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn exists(c: &TestCluster, name: &str) -> bool {
    c.kubectl(&["get", "apiservice", name]).status.success()
}

#[test]
fn a_fresh_cluster_lists_upstreams_local_api_services_and_crds_come_and_go() {
    let c = start_cluster(|_| {});
    // Ready means every one registered at start was seen available.
    let ready = c.kubectl_ok(&["get", "--raw", "/readyz/autoregister-completion"]);
    assert_eq!(ready, "ok");
    let table = c.kubectl_ok(&["get", "apiservices"]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    let names: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(names, EXPECTED, "{table}");
    for row in &rows {
        assert_eq!(row[1..3], ["Local", "True"], "{table}");
    }

    // Upstream's shape: the label, the spec of its table, the Local condition, written by
    // the kube-apiserver manager.
    let apps = c.kubectl_json(&["get", "apiservice", "v1.apps", "--show-managed-fields"]);
    assert_eq!(apps["metadata"]["labels"], json!({LABEL: "onstart"}));
    assert_eq!(
        apps["spec"],
        json!({"group": "apps", "groupPriorityMinimum": 17800, "version": "v1",
               "versionPriority": 15})
    );
    let conditions = apps["status"]["conditions"].as_array().unwrap();
    assert_eq!(conditions.len(), 1, "{apps}");
    let mut condition = conditions[0].clone();
    assert!(condition["lastTransitionTime"].is_string(), "{apps}");
    condition
        .as_object_mut()
        .unwrap()
        .remove("lastTransitionTime");
    assert_eq!(
        condition,
        json!({"type": "Available", "status": "True", "reason": "Local",
               "message": "Local APIServices are always available"})
    );
    let managed = &apps["metadata"]["managedFields"][0];
    assert_eq!(
        (&managed["manager"], &managed["operation"]),
        (&json!("kube-apiserver"), &json!("Update"))
    );
    let legacy = c.kubectl_json(&["get", "apiservice", "v1."]);
    assert_eq!(
        legacy["spec"],
        json!({"groupPriorityMinimum": 18000, "version": "v1", "versionPriority": 1})
    );

    // APIServices the controllers do not manage: one without the label, one labelled to
    // sync on start but created after the start. Neither is touched. One labelled to sync
    // always that nothing wants is deleted.
    let manual = r#"{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1.manual.example.com"},
        "spec": {"group": "manual.example.com", "version": "v1",
                 "groupPriorityMinimum": 7, "versionPriority": 3}}"#;
    apply(&c, manual);
    apply(
        &c,
        &manual
            .replace("v1.manual", "v1.late")
            .replace("\"manual.", "\"late.")
            .replace(
                "{\"name\"",
                &format!("{{\"labels\": {{\"{LABEL}\": \"onstart\"}}, \"name\""),
            ),
    );
    apply(
        &c,
        &manual
            .replace("v1.manual", "v1.stray")
            .replace("\"manual.", "\"stray.")
            .replace(
                "{\"name\"",
                &format!("{{\"labels\": {{\"{LABEL}\": \"true\"}}, \"name\""),
            ),
    );
    eventually(
        "the stray APIService deleted",
        Duration::from_secs(10),
        || !exists(&c, "v1.stray.example.com"),
    );
    let before = versions(&c, None);

    // A CRD's served version is registered, its unserved one is not.
    apply(
        &c,
        &crd(
            "widgets.stable.example.com",
            "stable.example.com",
            "Widget",
            &[("v1", true), ("v2", false)],
        ),
    );
    eventually(
        "v1.stable.example.com registered",
        Duration::from_secs(10),
        || exists(&c, "v1.stable.example.com"),
    );
    let widget = c.kubectl_json(&["get", "apiservice", "v1.stable.example.com"]);
    assert_eq!(widget["metadata"]["labels"], json!({LABEL: "true"}));
    assert_eq!(
        widget["spec"],
        json!({"group": "stable.example.com", "groupPriorityMinimum": 1000, "version": "v1",
               "versionPriority": 100})
    );
    assert!(!exists(&c, "v2.stable.example.com"));
    // Serving v2 registers it.
    apply(
        &c,
        &crd(
            "widgets.stable.example.com",
            "stable.example.com",
            "Widget",
            &[("v1", true), ("v2", true)],
        ),
    );
    eventually(
        "v2.stable.example.com registered",
        Duration::from_secs(10),
        || exists(&c, "v2.stable.example.com"),
    );
    // The group version stays while another CRD serves it, and goes with the last.
    apply(
        &c,
        &crd(
            "gadgets.stable.example.com",
            "stable.example.com",
            "Gadget",
            &[("v1", true)],
        ),
    );
    c.kubectl_ok(&["delete", "crd", "widgets.stable.example.com"]);
    eventually(
        "v2.stable.example.com removed",
        Duration::from_secs(10),
        || !exists(&c, "v2.stable.example.com"),
    );
    assert!(exists(&c, "v1.stable.example.com"));
    c.kubectl_ok(&["delete", "crd", "gadgets.stable.example.com"]);
    eventually(
        "v1.stable.example.com removed",
        Duration::from_secs(10),
        || !exists(&c, "v1.stable.example.com"),
    );

    // Through all of it, nothing else was written.
    let after = versions(&c, None);
    assert_eq!(before, after);
    for name in ["v1.manual.example.com", "v1.late.example.com"] {
        assert!(after.contains_key(name), "{name} was deleted");
    }
}

#[test]
fn two_aggregator_replicas_converge_without_flapping() {
    let c = start_cluster(|spec| spec.aggregator_replicas = 2);
    let second = c.kubeconfig_for(1, "admin", Credential::Token(&c.pki().admin_token));
    let names = |v: &BTreeMap<String, String>| v.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&versions(&c, None)), EXPECTED);

    apply(
        &c,
        &crd(
            "widgets.stable.example.com",
            "stable.example.com",
            "Widget",
            &[("v1", true)],
        ),
    );
    eventually(
        "both replicas list the CRD's APIService",
        Duration::from_secs(10),
        || {
            versions(&c, None).contains_key("v1.stable.example.com")
                && versions(&c, Some(&second)).contains_key("v1.stable.example.com")
        },
    );
    // Settled: for a few seconds neither replica writes an APIService or the ConfigMap.
    let cm = || {
        c.kubectl_json(&[
            "-n",
            "kube-system",
            "get",
            "configmap",
            "extension-apiserver-authentication",
        ])["metadata"]["resourceVersion"]
            .clone()
    };
    let (settled, cm_settled) = (versions(&c, None), cm());
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(versions(&c, None), settled);
    assert_eq!(versions(&c, Some(&second)), settled);
    assert_eq!(cm(), cm_settled);

    c.kubectl_ok(&["delete", "crd", "widgets.stable.example.com"]);
    eventually(
        "the CRD's APIService removed",
        Duration::from_secs(10),
        || !versions(&c, None).contains_key("v1.stable.example.com"),
    );
    std::thread::sleep(Duration::from_secs(2));
    let now = versions(&c, None);
    assert_eq!(names(&now), EXPECTED, "it came back");
}

#[test]
fn extension_apiserver_authentication_holds_the_trust_of_aggregated_servers() {
    let c = start_cluster(|_| {});
    let get = || {
        c.kubectl_json(&[
            "-n",
            "kube-system",
            "get",
            "configmap",
            "extension-apiserver-authentication",
        ])
    };
    let cm = get();
    let data = cm["data"].as_object().unwrap();
    let keys: Vec<&str> = data.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "client-ca-file",
            "requestheader-allowed-names",
            "requestheader-client-ca-file",
            "requestheader-extra-headers-prefix",
            "requestheader-group-headers",
            "requestheader-uid-headers",
            "requestheader-username-headers",
        ]
    );
    // The CAs: the clients' (the aggregator's --client-ca-file) and the front proxy's that
    // signs the aggregator's proxy client certificate, as PEM.
    let der =
        |pem: &Value| kas_tls::certs_from_pem(pem.as_str().unwrap().as_bytes(), "bundle").unwrap();
    let pki = c.pki();
    assert_eq!(
        der(&data["client-ca-file"]),
        kas_tls::load_certs(&pki.ca.cert).unwrap()
    );
    assert_eq!(
        der(&data["requestheader-client-ca-file"]),
        kas_tls::load_certs(&pki.front_proxy_ca.cert).unwrap()
    );
    assert_eq!(
        data["requestheader-allowed-names"],
        r#"["front-proxy-client"]"#
    );
    assert_eq!(
        data["requestheader-username-headers"],
        r#"["X-Remote-User"]"#
    );
    assert_eq!(data["requestheader-uid-headers"], r#"["X-Remote-Uid"]"#);
    assert_eq!(data["requestheader-group-headers"], r#"["X-Remote-Group"]"#);
    assert_eq!(
        data["requestheader-extra-headers-prefix"],
        r#"["X-Remote-Extra-"]"#
    );

    // Upstream's bootstrap Role, and a user bound to it reads the ConfigMap and nothing else.
    let role = c.kubectl_json(&[
        "-n",
        "kube-system",
        "get",
        "role",
        "extension-apiserver-authentication-reader",
    ]);
    assert_eq!(
        role["rules"],
        json!([{"apiGroups": [""], "resources": ["configmaps"],
                "resourceNames": ["extension-apiserver-authentication"],
                "verbs": ["get", "list", "watch"]}])
    );
    let cert = pki.issue_user("aggregated-server", None).unwrap();
    let user = c.kubeconfig_for(0, "aggregated-server", Credential::Certificate(&cert));
    let read = [
        "-n",
        "kube-system",
        "get",
        "configmap",
        "extension-apiserver-authentication",
    ];
    assert!(!kubectl_with(&user, &read).status.success());
    c.kubectl_ok(&[
        "-n",
        "kube-system",
        "create",
        "rolebinding",
        "aggregated-server-auth",
        "--role=extension-apiserver-authentication-reader",
        "--user=aggregated-server",
    ]);
    eventually("the bound user reads it", Duration::from_secs(5), || {
        kubectl_with(&user, &read).status.success()
    });
    let other = kubectl_with(&user, &["-n", "kube-system", "get", "configmap", "other"]);
    assert!(
        String::from_utf8_lossy(&other.stderr).contains("Forbidden"),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );

    // Deleted, it is written again (upstream's controller syncs on delete).
    c.kubectl_ok(&[
        "-n",
        "kube-system",
        "delete",
        "configmap",
        "extension-apiserver-authentication",
    ]);
    eventually(
        "the ConfigMap written again",
        Duration::from_secs(10),
        || c.kubectl(&read).status.success(),
    );
    assert_eq!(get()["data"], cm["data"]);
}
