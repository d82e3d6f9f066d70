//! The kube crate's `CustomResource` derive, unchanged: the CRD it generates is accepted
//! and established, and its typed `Api` creates, reads, lists, patches (merge, apply,
//! status), watches and deletes the custom objects.

use std::time::{Duration, Instant};

use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kas_e2e::start_cluster;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{CustomResource, CustomResourceExt, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "kube.rs", version = "v1", kind = "Document", namespaced)]
#[kube(status = "DocumentStatus", shortname = "doc")]
#[kube(printcolumn = r#"{"name":"Title","type":"string","jsonPath":".spec.title"}"#)]
pub struct DocumentSpec {
    title: String,
    #[serde(default)]
    hidden: bool,
    pages: Option<i64>,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
pub struct DocumentStatus {
    published: bool,
}

async fn client(path: &std::path::Path) -> kube::Client {
    let kubeconfig = Kubeconfig::read_from(path).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("config");
    kube::Client::try_from(config).expect("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_custom_resource_derive_works_unchanged() {
    let c = start_cluster(|_| {});
    let client = client(c.kubeconfig_path()).await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Document::crd())
        .await
        .expect("the derived CRD");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let crd = crds.get("documents.kube.rs").await.expect("the CRD");
        let established = crd
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True");
        if established {
            break;
        }
        assert!(Instant::now() < deadline, "not established");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let docs: Api<Document> = Api::namespaced(client.clone(), "default");
    let doc = Document::new(
        "guide",
        DocumentSpec {
            title: "Guide".into(),
            hidden: false,
            pages: Some(3),
        },
    );
    let deadline = Instant::now() + Duration::from_secs(2);
    let created = loop {
        match docs.create(&PostParams::default(), &doc).await {
            Ok(created) => break created,
            Err(e) => {
                assert!(Instant::now() < deadline, "{e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    assert_eq!(created.spec.title, "Guide");
    assert!(created.status.is_none());
    let rv = created.resource_version().expect("resourceVersion");

    let mut events = docs
        .watch(&WatchParams::default().timeout(10), &rv)
        .await
        .expect("watch")
        .boxed();

    let patched = docs
        .patch(
            "guide",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"pages": 4}})),
        )
        .await
        .expect("merge patch");
    assert_eq!(patched.spec.pages, Some(4));
    assert_eq!(patched.metadata.generation, Some(2));

    let applied = docs
        .patch(
            "guide",
            &PatchParams::apply("docs-controller").force(),
            &Patch::Apply(serde_json::json!({
                "apiVersion": "kube.rs/v1", "kind": "Document",
                "spec": {"title": "Guide, second edition"}})),
        )
        .await
        .expect("server-side apply");
    assert_eq!(applied.spec.title, "Guide, second edition");
    let managers: Vec<String> = applied
        .managed_fields()
        .iter()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert!(
        managers.contains(&"docs-controller".to_owned()),
        "{managers:?}"
    );

    let status = docs
        .patch_status(
            "guide",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"status": {"published": true}})),
        )
        .await
        .expect("status patch");
    assert!(status.status.expect("status").published);

    let listed = docs.list(&ListParams::default()).await.expect("list");
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].name_any(), "guide");

    docs.delete("guide", &DeleteParams::default())
        .await
        .expect("delete");
    let mut seen = Vec::new();
    while let Some(event) = events.try_next().await.expect("watch event") {
        match event {
            WatchEvent::Modified(d) => seen.push(format!("MODIFIED {}", d.name_any())),
            WatchEvent::Deleted(d) => {
                seen.push(format!("DELETED {}", d.name_any()));
                break;
            }
            WatchEvent::Added(d) => seen.push(format!("ADDED {}", d.name_any())),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(
        seen,
        [
            "MODIFIED guide",
            "MODIFIED guide",
            "MODIFIED guide",
            "DELETED guide"
        ]
    );
}
