//! kube-rs (the Rust client) works unchanged against the aggregator: typed CRUD, list
//! with a selector, watch, server-side apply as controllers use it, and upstream's error
//! Status.

use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};

async fn client(path: &std::path::Path) -> kube::Client {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let kubeconfig = Kubeconfig::read_from(path).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("config");
    kube::Client::try_from(config).expect("client")
}

#[tokio::test]
async fn kube_rs_works_unchanged() {
    let c = kas_e2e::start_cluster(|_| {});
    let client = client(c.kubeconfig_path()).await;

    let namespaces: Api<Namespace> = Api::all(client.clone());
    let names: Vec<String> = namespaces
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    assert!(names.contains(&"kube-system".to_owned()), "{names:?}");

    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("rs-demo".into());
    cm.metadata.labels = Some([("app".to_owned(), "rs".to_owned())].into());
    cm.data = Some([("k".to_owned(), "v".to_owned())].into());
    let created = cms.create(&PostParams::default(), &cm).await.unwrap();
    let rv = created.metadata.resource_version.clone().unwrap();

    let mut events = cms
        .watch(&WatchParams::default().labels("app=rs"), &rv)
        .await
        .unwrap()
        .boxed();

    let patched = cms
        .patch(
            "rs-demo",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"data": {"k2": "v2"}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data.unwrap().len(), 2);

    let listed = cms
        .list(&ListParams::default().labels("app=rs"))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 1);
    assert!(listed.metadata.resource_version.is_some());

    match cms.create(&PostParams::default(), &cm).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 409);
            assert_eq!(status.reason, "AlreadyExists");
        }
        other => panic!("second create: {other:?}"),
    }

    cms.delete("rs-demo", &DeleteParams::default())
        .await
        .unwrap();
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match tokio::time::timeout(std::time::Duration::from_secs(10), events.try_next()).await {
            Ok(Ok(Some(WatchEvent::Modified(o)))) => {
                seen.push(("MODIFIED", o.metadata.name.unwrap()))
            }
            Ok(Ok(Some(WatchEvent::Deleted(o)))) => {
                seen.push(("DELETED", o.metadata.name.unwrap()))
            }
            Ok(Ok(Some(other))) => panic!("unexpected event {other:?}"),
            other => panic!("watch ended: {other:?}"),
        }
    }
    assert_eq!(
        seen,
        [
            ("MODIFIED", "rs-demo".to_owned()),
            ("DELETED", "rs-demo".to_owned())
        ]
    );

    match cms.get("rs-demo").await {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 404),
        other => panic!("get after delete: {other:?}"),
    }

    // A controller's server-side apply: created by the first apply, updated by the
    // next, owned by the controller's field manager; without force, a field another
    // manager set to another value is a 409 naming it.
    let params = PatchParams::apply("rs-controller");
    let desired = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "rs-applied"}, "data": {"mode": "a"}});
    let applied = cms
        .patch("rs-applied", &params, &Patch::Apply(&desired))
        .await
        .unwrap();
    let managers = applied.metadata.managed_fields.unwrap_or_default();
    assert_eq!(managers.len(), 1);
    assert_eq!(managers[0].manager.as_deref(), Some("rs-controller"));
    assert_eq!(managers[0].operation.as_deref(), Some("Apply"));
    cms.patch(
        "rs-applied",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"data": {"mode": "b"}})),
    )
    .await
    .unwrap();
    match cms
        .patch("rs-applied", &params, &Patch::Apply(&desired))
        .await
    {
        Err(kube::Error::Api(status)) => {
            assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
            assert!(status.message.contains(".data.mode"), "{}", status.message);
        }
        other => panic!("conflicting apply: {other:?}"),
    }
    let forced = cms
        .patch(
            "rs-applied",
            &params.clone().force(),
            &Patch::Apply(&desired),
        )
        .await
        .unwrap();
    assert_eq!(forced.data.unwrap()["mode"], "a");
}
