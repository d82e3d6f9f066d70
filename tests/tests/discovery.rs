//! Discovery through the aggregator: aggregated discovery (`apidiscovery.k8s.io/v2`) for
//! clients that ask for it, as kubectl does, and the legacy documents for the others.

use http::Method;
use kas_e2e::client::{Proto, Tls, request};
use kas_e2e::{Role, start_cluster};

const KUBECTL_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

#[tokio::test(flavor = "multi_thread")]
async fn aggregated_discovery_answers_kubectl_in_two_requests() {
    let c = start_cluster(|_| {});
    let base = c.url(Role::Aggregator, 0);
    let bearer = c.bearer();
    let tls: Tls = c.admin_tls(Proto::H2);
    let get = |path: &'static str, accept: &'static str| {
        let (url, tls, bearer) = (format!("{base}{path}"), tls.clone(), bearer.clone());
        async move {
            let headers = [("authorization", bearer.as_str()), ("accept", accept)];
            request(&url, Method::GET, &headers, &tls, Proto::H2)
                .await
                .unwrap()
        }
    };

    let a = get("/apis", KUBECTL_ACCEPT).await;
    assert_eq!(a.status, 200);
    assert_eq!(
        a.headers["content-type"],
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    let apis = a.json();
    assert_eq!(apis["kind"], "APIGroupDiscoveryList");
    assert_eq!(apis["apiVersion"], "apidiscovery.k8s.io/v2");
    let group = apis["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "coordination.k8s.io")
        .expect("coordination.k8s.io");
    let leases = &group["versions"][0]["resources"][0];
    assert_eq!(group["versions"][0]["version"], "v1");
    assert_eq!(leases["resource"], "leases");
    assert_eq!(leases["scope"], "Namespaced");
    // Upstream converts a built-in group version's legacy list, whose entries name no
    // group or version of their own.
    assert_eq!(
        leases["responseKind"],
        serde_json::json!({"group": "", "version": "", "kind": "Lease"})
    );

    let core = get("/api", KUBECTL_ACCEPT).await.json();
    let v1 = &core["items"][0]["versions"][0];
    assert_eq!(v1["version"], "v1");
    let cm = v1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "configmaps")
        .expect("configmaps");
    assert_eq!(cm["shortNames"], serde_json::json!(["cm"]));
    let ns = v1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "namespaces")
        .expect("namespaces");
    assert_eq!(ns["scope"], "Cluster");

    // Plain JSON clients get the legacy documents.
    let legacy = get("/apis", "application/json").await;
    assert_eq!(legacy.headers["content-type"], "application/json");
    assert_eq!(legacy.json()["kind"], "APIGroupList");

    // kubectl discovers everything from /api and /apis alone.
    let cache = tempfile::tempdir().unwrap();
    let out = c.kubectl(&[
        "api-resources",
        "-v=6",
        "--cache-dir",
        cache.path().to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("configmaps"), "{stdout}");
    assert!(stdout.contains("leases"), "{stdout}");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("/apis?"), "{log}");
    for per_group in ["/api/v1?", "/apis/coordination.k8s.io/v1?"] {
        assert!(
            !log.contains(per_group),
            "kubectl fetched {per_group}:\n{log}"
        );
    }
}

/// What upstream 1.33's discovery says of resources that are not plainly stored and of
/// subresources: no storage version hash for reviews, bindings and component statuses
/// (REST objects that provide none), the hash of the version upstream stores in where it
/// no longer serves it (IPAddress, ServiceCIDR, CRDs: v1beta1), a subresource's group and
/// version only when they are not the resource's, and in aggregated discovery a built-in
/// resource's response kind without group or version and its subresources by name.
#[tokio::test(flavor = "multi_thread")]
async fn storage_versions_and_subresources_are_upstreams() {
    let c = start_cluster(|_| {});
    let json = |a: kas_e2e::client::Answer| a.json();
    let entry = |list: &serde_json::Value, name: &str| -> serde_json::Value {
        list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .clone()
    };
    let core = json(c.send(Method::GET, "/api/v1", &[], "").await);
    for unstored in ["bindings", "componentstatuses"] {
        assert_eq!(entry(&core, unstored).get("storageVersionHash"), None);
    }
    assert_eq!(
        entry(&core, "configmaps")["storageVersionHash"],
        "qFsyl6wFWjQ="
    );
    let binding = entry(&core, "pods/binding");
    assert_eq!(binding["kind"], "Binding");
    assert_eq!(binding.get("group"), None, "{binding}");
    assert_eq!(entry(&core, "pods/eviction")["group"], "policy");
    let reviews = json(
        c.send(Method::GET, "/apis/authentication.k8s.io/v1", &[], "")
            .await,
    );
    assert_eq!(
        entry(&reviews, "tokenreviews").get("storageVersionHash"),
        None
    );
    let networking = json(
        c.send(Method::GET, "/apis/networking.k8s.io/v1", &[], "")
            .await,
    );
    assert_eq!(
        entry(&networking, "ipaddresses")["storageVersionHash"],
        "O4H8VxQhW5Y="
    );
    assert_eq!(
        entry(&networking, "servicecidrs")["storageVersionHash"],
        "8ufAXOnr3Yg="
    );
    let crds = json(
        c.send(Method::GET, "/apis/apiextensions.k8s.io/v1", &[], "")
            .await,
    );
    assert_eq!(
        entry(&crds, "customresourcedefinitions")["storageVersionHash"],
        "jfWCUB31mvA="
    );

    let accept = [("accept", KUBECTL_ACCEPT)];
    let apis = json(c.send(Method::GET, "/apis", &accept, "").await);
    let apps = apis["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "apps")
        .expect("apps");
    let deployments = apps["versions"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "deployments")
        .expect("deployments");
    assert_eq!(
        deployments["responseKind"],
        serde_json::json!({"group": "", "version": "", "kind": "Deployment"})
    );
    assert_eq!(
        deployments["subresources"],
        serde_json::json!([
            {"subresource": "scale", "verbs": ["get", "patch", "update"],
                "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}},
            {"subresource": "status", "verbs": ["get", "patch", "update"],
                "responseKind": {"group": "", "version": "", "kind": "Deployment"}},
        ])
    );
}
