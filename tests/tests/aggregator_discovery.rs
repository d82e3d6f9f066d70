//! Discovery and OpenAPI at the aggregator, as upstream's kube-aggregator serves them: the
//! groups in upstream's priority order, a CRD's group within a second, and an aggregated
//! server's group version (its resources fetched from its discovery, its OpenAPI merged)
//! that degrades alone when the server dies.

use std::time::{Duration, Instant};

use http::{Method, StatusCode};
use kas_e2e::aggregated::{TestApiserver, TestApiserverSpec};
use kas_e2e::client::Answer;
use kas_e2e::{TestCluster, start_cluster};
use serde_json::Value;

const AGGREGATED_V2: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const KUBECTL_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

/// The groups a real kube-apiserver 1.33 lists in `/apis` (and in aggregated discovery)
/// for the groups this server serves, in its order: apiregistration.k8s.io first (the
/// aggregator's own, "it's good to be king"), then by `groupPriorityMinimum` of
/// kube-apiserver's `apiVersionPriorities` (apps 17800, events.k8s.io 17750, ...,
/// flowcontrol 16100), not by name. Read off `/apis` of an upstream v1.33 kube-apiserver
/// started on etcd alone; the preferred version is the first (autoscaling's v2: its
/// `versionPriority` 30 beats v1's 15).
const UPSTREAM_ORDER: &[(&str, &[&str])] = &[
    ("apiregistration.k8s.io", &["v1"]),
    ("apps", &["v1"]),
    ("events.k8s.io", &["v1"]),
    ("authentication.k8s.io", &["v1"]),
    ("authorization.k8s.io", &["v1"]),
    ("autoscaling", &["v2", "v1"]),
    ("batch", &["v1"]),
    ("certificates.k8s.io", &["v1"]),
    ("networking.k8s.io", &["v1"]),
    ("policy", &["v1"]),
    ("rbac.authorization.k8s.io", &["v1"]),
    ("storage.k8s.io", &["v1"]),
    ("admissionregistration.k8s.io", &["v1"]),
    ("apiextensions.k8s.io", &["v1"]),
    ("scheduling.k8s.io", &["v1"]),
    ("coordination.k8s.io", &["v1"]),
    ("node.k8s.io", &["v1"]),
    ("discovery.k8s.io", &["v1"]),
    ("flowcontrol.apiserver.k8s.io", &["v1"]),
];

async fn get(c: &TestCluster, path: &str, accept: &str) -> Answer {
    c.send(Method::GET, path, &[("accept", accept)], "").await
}

/// `(group, versions)` of a legacy `APIGroupList`, checking each preferred version is
/// the first.
fn legacy_groups(list: &Value) -> Vec<(String, Vec<String>)> {
    let groups = list["groups"].as_array().expect("groups");
    groups
        .iter()
        .map(|g| {
            assert_eq!(g["preferredVersion"], g["versions"][0], "{g}");
            let versions = g["versions"].as_array().unwrap().iter();
            let versions = versions.map(|v| v["version"].as_str().unwrap().to_owned());
            (g["name"].as_str().unwrap().to_owned(), versions.collect())
        })
        .collect()
}

/// `(group, versions)` of an aggregated discovery document.
fn aggregated_groups(doc: &Value) -> Vec<(String, Vec<String>)> {
    let items = doc["items"].as_array().expect("items");
    items
        .iter()
        .map(|g| {
            let versions = g["versions"].as_array().unwrap().iter();
            let versions = versions.map(|v| v["version"].as_str().unwrap().to_owned());
            let name = g["metadata"]["name"].as_str().unwrap().to_owned();
            (name, versions.collect())
        })
        .collect()
}

fn upstream_order() -> Vec<(String, Vec<String>)> {
    UPSTREAM_ORDER
        .iter()
        .map(|(g, v)| (g.to_string(), v.iter().map(|v| v.to_string()).collect()))
        .collect()
}

/// The version `group/version` of an aggregated document, if listed.
fn version<'a>(doc: &'a Value, group: &str, version: &str) -> Option<&'a Value> {
    let items = doc["items"].as_array()?;
    let g = items.iter().find(|g| g["metadata"]["name"] == group)?;
    g["versions"]
        .as_array()?
        .iter()
        .find(|v| v["version"] == version)
}

fn resources(v: &Value) -> Vec<&str> {
    let list = v["resources"].as_array().into_iter().flatten();
    list.filter_map(|r| r["resource"].as_str()).collect()
}

/// Polls `check` until it gives a value, for at most `within`.
async fn eventually<T>(
    within: Duration,
    what: &str,
    mut check: impl AsyncFnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "{what} within {within:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn kubectl_cached(
    c: &TestCluster,
    cache: &tempfile::TempDir,
    args: &[&str],
) -> std::process::Output {
    let mut all = args.to_vec();
    all.extend(["--cache-dir", cache.path().to_str().unwrap()]);
    c.kubectl(&all)
}

#[tokio::test(flavor = "multi_thread")]
async fn groups_come_in_upstreams_order_and_a_crd_joins_within_a_second() {
    let c = start_cluster(|_| {});

    let legacy = get(&c, "/apis", "application/json").await;
    assert_eq!(legacy.status, StatusCode::OK);
    assert_eq!(legacy.json()["kind"], "APIGroupList");
    assert_eq!(legacy_groups(&legacy.json()), upstream_order());

    let aggregated = get(&c, "/apis", KUBECTL_ACCEPT).await;
    assert_eq!(aggregated.headers["content-type"], AGGREGATED_V2);
    assert_eq!(aggregated.headers["cache-control"], "public");
    let doc = aggregated.json();
    assert_eq!(aggregated_groups(&doc), upstream_order());
    let apps = version(&doc, "apps", "v1").unwrap();
    assert_eq!(apps["freshness"], "Current");
    assert!(resources(apps).contains(&"deployments"), "{apps}");
    let etag = aggregated.headers["etag"].to_str().unwrap().to_owned();
    let again = c
        .send(
            Method::GET,
            "/apis",
            &[("accept", KUBECTL_ACCEPT), ("if-none-match", &etag)],
            "",
        )
        .await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers["etag"], etag);

    // The aggregator's own group document; another group's is core's.
    let own = get(&c, "/apis/apiregistration.k8s.io", "application/json").await;
    assert_eq!(
        own.json()["preferredVersion"]["groupVersion"],
        "apiregistration.k8s.io/v1"
    );
    let autoscaling = get(&c, "/apis/autoscaling", "application/json").await;
    assert_eq!(autoscaling.json()["preferredVersion"]["version"], "v2");

    let crd = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"#;
    let out = c.kubectl_stdin(&["apply"], crd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Custom groups (priority 1000) come after every built-in one, in both documents.
    let within = Duration::from_secs(1);
    let listed = eventually(within, "example.com in /apis", async || {
        let list = get(&c, "/apis", "application/json").await.json();
        legacy_groups(&list)
            .last()
            .filter(|(g, _)| g == "example.com")
            .cloned()
    })
    .await;
    assert_eq!(listed.1, ["v1"]);
    let widgets = eventually(within, "example.com in aggregated discovery", async || {
        let doc = get(&c, "/apis", KUBECTL_ACCEPT).await.json();
        let last = doc["items"].as_array()?.last()?.clone();
        (last["metadata"]["name"] == "example.com").then_some(last)
    })
    .await;
    assert_eq!(resources(&widgets["versions"][0]), ["widgets"]);
    let cache = tempfile::tempdir().unwrap();
    let out = kubectl_cached(&c, &cache, &["api-resources", "--api-group=example.com"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("widgets"), "{stdout}");
}

/// The backend registered and Available, and its group version's resources fetched.
async fn registered(c: &TestCluster) -> TestApiserver {
    let backend = TestApiserver::start(TestApiserverSpec::for_cluster(c));
    for manifest in [backend.service_manifests(), backend.apiservice_manifest()] {
        let out = c.kubectl_stdin(&["apply"], &manifest);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    backend
}

async fn wardle(c: &TestCluster) -> Value {
    let doc = get(c, "/apis", KUBECTL_ACCEPT).await.json();
    version(&doc, "wardle.example.com", "v1alpha1")
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_aggregated_servers_group_is_discovered_explained_and_degrades_alone() {
    let c = start_cluster(|_| {});
    let mut backend = registered(&c).await;
    let long = Duration::from_secs(30);

    // Its resources, from its own aggregated discovery, once it is available.
    let current = eventually(long, "wardle's resources", async || {
        let v = wardle(&c).await;
        (v["freshness"] == "Current" && !resources(&v).is_empty()).then_some(v)
    })
    .await;
    assert_eq!(resources(&current), ["fischers", "flunders"]);
    let legacy = get(&c, "/apis", "application/json").await.json();
    let groups = legacy_groups(&legacy);
    // groupPriorityMinimum 1000: after every built-in group.
    assert_eq!(
        groups.last().unwrap(),
        &("wardle.example.com".to_owned(), vec!["v1alpha1".to_owned()])
    );
    assert_eq!(groups[..groups.len() - 1], upstream_order()[..]);
    let group = get(&c, "/apis/wardle.example.com", "application/json").await;
    assert_eq!(group.status, StatusCode::OK);
    assert_eq!(group.json()["kind"], "APIGroup");
    assert_eq!(
        group.json()["preferredVersion"]["groupVersion"],
        "wardle.example.com/v1alpha1"
    );

    let cache = tempfile::tempdir().unwrap();
    let out = kubectl_cached(
        &c,
        &cache,
        &["api-resources", "--api-group=wardle.example.com"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("flunders"));

    // Its OpenAPI: merged into /openapi/v2, its v3 document proxied; kubectl explains it.
    eventually(long, "flunders in /openapi/v2", async || {
        let v2 = get(&c, "/openapi/v2", "application/json").await.json();
        let paths = v2["paths"].as_object()?;
        paths
            .contains_key("/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders")
            .then_some(())
    })
    .await;
    let explained = eventually(long, "kubectl explain flunders", async || {
        let out = kubectl_cached(&c, &cache, &["explain", "flunders"]);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    })
    .await;
    assert!(explained.contains("KIND:       Flunder"), "{explained}");
    assert!(explained.contains("wardle.example.com"), "{explained}");

    // Killed: its group version turns Stale without resources (upstream's discovery
    // manager on the proxy's 503); nothing else changes.
    backend.kill();
    let stale = eventually(long, "wardle Stale", async || {
        let v = wardle(&c).await;
        (v["freshness"] == "Stale").then_some(v)
    })
    .await;
    assert!(resources(&stale).is_empty(), "{stale}");
    let doc = get(&c, "/apis", KUBECTL_ACCEPT).await.json();
    let mut groups = aggregated_groups(&doc);
    assert_eq!(groups.pop().unwrap().0, "wardle.example.com");
    assert_eq!(groups, upstream_order());
    for item in doc["items"].as_array().unwrap() {
        if item["metadata"]["name"] != "wardle.example.com" {
            assert_eq!(item["versions"][0]["freshness"], "Current", "{item}");
        }
    }
    // kubectl lists what discovery still has (it skips a Stale group version).
    let fresh = tempfile::tempdir().unwrap();
    let out = kubectl_cached(&c, &fresh, &["api-resources"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("deployments") && !stdout.contains("flunders"),
        "{stdout}"
    );
    c.kubectl_ok(&["get", "configmaps", "-A"]);
    // Its last OpenAPI stays in v2; its v3 document is its server's to give.
    let v2 = get(&c, "/openapi/v2", "application/json").await.json();
    assert!(
        v2["definitions"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k.contains("Flunder"))
    );
    let v3 = get(
        &c,
        "/openapi/v3/apis/wardle.example.com/v1alpha1",
        "application/json",
    )
    .await;
    assert_eq!(v3.status, StatusCode::SERVICE_UNAVAILABLE, "{}", v3.text());
    let apps = get(&c, "/openapi/v3/apis/apps/v1", "application/json").await;
    assert_eq!(apps.status, StatusCode::OK);

    // Back: current again.
    backend.restart();
    eventually(long, "wardle Current again", async || {
        let v = wardle(&c).await;
        (v["freshness"] == "Current" && !resources(&v).is_empty()).then_some(())
    })
    .await;
}

/// A server without aggregated discovery: its group version's resources come from its
/// legacy `/apis/<group>/<version>`, converted as upstream's discovery manager converts it.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_without_aggregated_discovery_is_read_from_its_legacy_documents() {
    let c = start_cluster(|_| {});
    let mut spec = TestApiserverSpec::for_cluster(&c);
    spec.extra_args.push("--legacy-discovery-only".to_owned());
    let backend = TestApiserver::start(spec);
    for manifest in [backend.service_manifests(), backend.apiservice_manifest()] {
        let out = c.kubectl_stdin(&["apply"], &manifest);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let current = eventually(Duration::from_secs(30), "wardle's resources", async || {
        let v = wardle(&c).await;
        (v["freshness"] == "Current" && !resources(&v).is_empty()).then_some(v)
    })
    .await;
    assert_eq!(resources(&current), ["fischers", "flunders"]);
    let flunders = &current["resources"][1];
    assert_eq!(flunders["scope"], "Namespaced");
    assert_eq!(flunders["singularResource"], "flunder");
    // The legacy list names no group or version for its resources.
    assert_eq!(
        flunders["responseKind"],
        serde_json::json!({"group": "", "version": "", "kind": "Flunder"})
    );
    assert_eq!(flunders["subresources"][0]["subresource"], "echo");
    assert!(
        backend
            .log()
            .contains("GET /apis/wardle.example.com/v1alpha1: 200")
    );
}
