//! PartialObjectMetadata through the aggregator: GET, LIST, WATCH and PATCH answers with
//! the metadata Accept headers client-go's metadata client sends (protobuf first, then
//! JSON), YAML and meta.k8s.io/v1beta1, upstream's 406 for a kind mismatch, and kube-rs's
//! metadata calls.

use std::time::Duration;

use futures_util::{StreamExt, TryStreamExt};
use http::Method;
use k8s_openapi::api::core::v1::ConfigMap;
use kas_apimachinery::protobuf;
use kas_e2e::client::{Answer, Proto, Tls, request, request_with_body};
use kas_e2e::{Role, start_cluster};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};

const PB: &str = "application/vnd.kubernetes.protobuf";
/// client-go's metadata client, `Get`, `Watch` and `Patch`.
const CLIENT_GO_OBJECT: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
/// client-go's metadata client, `List`.
const CLIENT_GO_LIST: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
const JSON_OBJECT: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const JSON_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// Requests as the admin, with an Accept header.
struct Client {
    base: String,
    bearer: String,
    tls: Tls,
}

impl Client {
    async fn get(&self, path: &str, accept: &str) -> Answer {
        let headers = [("authorization", self.bearer.as_str()), ("accept", accept)];
        let url = format!("{}{path}", self.base);
        request(&url, Method::GET, &headers, &self.tls, Proto::H2)
            .await
            .unwrap()
    }

    async fn send(&self, method: Method, path: &str, content_type: &str, body: Value) -> Answer {
        let headers = [
            ("authorization", self.bearer.as_str()),
            ("content-type", content_type),
            ("accept", CLIENT_GO_OBJECT),
        ];
        let url = format!("{}{path}", self.base);
        let body = serde_json::to_vec(&body).unwrap().into();
        request_with_body(&url, method, &headers, body, &self.tls, Proto::H2)
            .await
            .unwrap()
    }
}

fn decode(body: &[u8], api_version: &str, kind: &str, schema: &'static kas_api::Message) -> Value {
    let unknown = protobuf::decode_envelope(body).expect("an envelope");
    assert_eq!(
        (unknown.api_version.as_str(), unknown.kind.as_str()),
        (api_version, kind)
    );
    protobuf::decode(&unknown.raw, schema).expect("decodes")
}

/// A PartialObjectMetadata in JSON: its type and metadata, nothing else.
fn assert_partial(v: &Value, api_version: &str, name: &str) {
    assert_eq!(v["kind"], "PartialObjectMetadata", "{v}");
    assert_eq!(v["apiVersion"], api_version, "{v}");
    assert_eq!(v["metadata"]["name"], name, "{v}");
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 3, "only kind, apiVersion, metadata: {v}");
}

const CMS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test(flavor = "multi_thread")]
async fn metadata_answers_in_json_yaml_and_protobuf() {
    let c = start_cluster(|_| {});
    let client = Client {
        base: c.url(Role::Aggregator, 0),
        bearer: c.bearer(),
        tls: c.admin_tls(Proto::H2),
    };
    let mut uids = Vec::new();
    for name in ["pa", "pb"] {
        let cm =
            json!({"metadata": {"name": name, "labels": {"set": "pom"}}, "data": {"secret": "s"}});
        let a = client.send(Method::POST, CMS, "application/json", cm).await;
        // A write answers in the transform too, in protobuf first.
        assert_eq!(a.status, 201, "{}", a.text());
        assert_eq!(a.headers["content-type"], PB);
        let v = decode(
            &a.body,
            "meta.k8s.io/v1",
            "PartialObjectMetadata",
            &kas_api::meta::v1::PARTIAL_OBJECT_METADATA,
        );
        uids.push(v["metadata"]["uid"].as_str().unwrap().to_owned());
    }

    get_answers(&client, &uids[0]).await;
    list_answers(&client, &uids).await;
    mismatches_are_406(&client).await;
}

async fn get_answers(client: &Client, uid: &str) {
    let a = client.get(&format!("{CMS}/pa"), JSON_OBJECT).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.headers["content-type"], "application/json");
    let v = a.json();
    assert_partial(&v, "meta.k8s.io/v1", "pa");
    assert_eq!(v["metadata"]["uid"], uid);
    assert_eq!(v["metadata"]["labels"]["set"], "pom");
    assert!(v["metadata"]["resourceVersion"].is_string());

    let a = client.get(&format!("{CMS}/pa"), CLIENT_GO_OBJECT).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.headers["content-type"], PB);
    let v = decode(
        &a.body,
        "meta.k8s.io/v1",
        "PartialObjectMetadata",
        &kas_api::meta::v1::PARTIAL_OBJECT_METADATA,
    );
    assert_eq!(v["metadata"]["uid"], uid);
    assert_eq!(v["metadata"]["namespace"], "default");
    assert!(v.get("data").is_none());

    let beta = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1";
    assert_partial(
        &client.get(&format!("{CMS}/pa"), beta).await.json(),
        "meta.k8s.io/v1beta1",
        "pa",
    );

    let yaml = "application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
    let a = client.get(&format!("{CMS}/pa"), yaml).await;
    assert_eq!(a.headers["content-type"], "application/yaml");
    let text = a.text();
    assert!(text.contains("kind: PartialObjectMetadata\n"), "{text}");
    // The data is left out; its managed fields are metadata.
    assert!(!text.contains("\ndata:"), "{text}");
    assert!(text.contains("f:secret: {}"), "{text}");

    // The object is looked up first: a missing one is 404, not a transform error.
    assert_eq!(
        client.get(&format!("{CMS}/nope"), JSON_OBJECT).await.status,
        404
    );
}

async fn list_answers(client: &Client, uids: &[String]) {
    let path = format!("{CMS}?labelSelector=set%3Dpom");
    let v = client.get(&path, JSON_LIST).await.json();
    assert_eq!(v["kind"], "PartialObjectMetadataList", "{v}");
    assert_eq!(v["apiVersion"], "meta.k8s.io/v1");
    assert!(v["metadata"]["resourceVersion"].is_string());
    let items = v["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{v}");
    assert_partial(&items[0], "meta.k8s.io/v1", "pa");
    assert_partial(&items[1], "meta.k8s.io/v1", "pb");
    assert_eq!(items[1]["metadata"]["uid"], uids[1].as_str());

    let a = client.get(&path, CLIENT_GO_LIST).await;
    assert_eq!(a.headers["content-type"], PB);
    let v = decode(
        &a.body,
        "meta.k8s.io/v1",
        "PartialObjectMetadataList",
        &kas_api::meta::v1::PARTIAL_OBJECT_METADATA_LIST,
    );
    assert!(v["metadata"]["resourceVersion"].is_string());
    let names: Vec<&Value> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["metadata"]["name"])
        .collect();
    assert_eq!(names, ["pa", "pb"]);

    // v1beta1's list has its own protobuf numbers.
    let beta =
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1";
    let v = decode(
        &client.get(&path, beta).await.body,
        "meta.k8s.io/v1beta1",
        "PartialObjectMetadataList",
        &kas_api::meta::v1beta1::PARTIAL_OBJECT_METADATA_LIST,
    );
    assert_eq!(v["items"][1]["metadata"]["uid"], uids[1].as_str());
    assert!(v["metadata"]["resourceVersion"].is_string());

    // Paging carries the list metadata over.
    let v = client
        .get(&format!("{path}&limit=1"), JSON_LIST)
        .await
        .json();
    assert_eq!(v["items"].as_array().unwrap().len(), 1);
    assert!(v["metadata"]["continue"].is_string(), "{v}");

    // Upstream's transform leaves no items as a nil slice.
    let a = client
        .get(&format!("{CMS}?labelSelector=set%3Dnone"), JSON_LIST)
        .await;
    assert!(a.text().ends_with(",\"items\":null}\n"), "{}", a.text());
}

async fn mismatches_are_406(client: &Client) {
    let a = client.get(&format!("{CMS}/pa"), JSON_LIST).await;
    assert_eq!(a.status, 406, "{}", a.text());
    let v = a.json();
    assert_eq!(v["reason"], "NotAcceptable");
    assert_eq!(
        v["message"],
        "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)"
    );
    let a = client.get(CMS, JSON_OBJECT).await;
    assert_eq!(a.status, 406, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)"
    );
    // Another meta kind or version is not served at all.
    let a = client
        .get(
            CMS,
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2",
        )
        .await;
    assert_eq!(a.status, 406);
}

/// Starts a watch from `rv` that lasts two seconds.
fn watch(client: &Client, rv: &str, accept: &'static str) -> tokio::task::JoinHandle<Answer> {
    let url = format!(
        "{}{CMS}?watch=true&resourceVersion={rv}&timeoutSeconds=2",
        client.base
    );
    let (tls, bearer) = (client.tls.clone(), client.bearer.clone());
    tokio::spawn(async move {
        let headers = [("authorization", bearer.as_str()), ("accept", accept)];
        request(&url, Method::GET, &headers, &tls, Proto::H2)
            .await
            .unwrap()
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn watches_and_patches_carry_metadata_only() {
    let c = start_cluster(|_| {});
    let client = Client {
        base: c.url(Role::Aggregator, 0),
        bearer: c.bearer(),
        tls: c.admin_tls(Proto::H2),
    };
    let cm = json!({"metadata": {"name": "w"}, "data": {"secret": "s"}});
    let a = client.send(Method::POST, CMS, "application/json", cm).await;
    assert_eq!(a.status, 201, "{}", a.text());
    let rv = client.get(CMS, JSON_LIST).await.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();

    let json_watch = watch(&client, &rv, JSON_OBJECT);
    let proto_watch = watch(&client, &rv, CLIENT_GO_OBJECT);
    let list_watch = watch(&client, &rv, JSON_LIST);
    tokio::time::sleep(Duration::from_millis(300)).await;

    // The garbage collector's patch: an owner reference, answered as metadata.
    let patch = json!({"metadata": {"labels": {"gc": "seen"}}});
    let a = client
        .send(
            Method::PATCH,
            &format!("{CMS}/w"),
            "application/merge-patch+json",
            patch,
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let v = decode(
        &a.body,
        "meta.k8s.io/v1",
        "PartialObjectMetadata",
        &kas_api::meta::v1::PARTIAL_OBJECT_METADATA,
    );
    assert_eq!(v["metadata"]["labels"]["gc"], "seen");
    let a = client
        .send(
            Method::DELETE,
            &format!("{CMS}/w"),
            "application/json",
            json!({}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());

    let w = json_watch.await.unwrap();
    assert_eq!(w.headers["content-type"], "application/json");
    let events: Vec<Value> = w
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&Value> = events.iter().map(|e| &e["type"]).collect();
    assert_eq!(types, ["MODIFIED", "DELETED"], "{events:?}");
    for e in &events {
        assert_partial(&e["object"], "meta.k8s.io/v1", "w");
    }
    assert_eq!(events[0]["object"]["metadata"]["labels"]["gc"], "seen");

    let w = proto_watch.await.unwrap();
    assert_eq!(
        w.headers["content-type"],
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let mut rest = &w.body[..];
    let mut seen = Vec::new();
    while let Some((frame, more)) = protobuf::next_frame(rest) {
        let event = protobuf::decode_watch_event(frame).unwrap();
        let v = decode(
            &event.object,
            "meta.k8s.io/v1",
            "PartialObjectMetadata",
            &kas_api::meta::v1::PARTIAL_OBJECT_METADATA,
        );
        seen.push((event.event_type, v["metadata"]["name"].clone()));
        rest = more;
    }
    assert_eq!(
        seen,
        [
            ("MODIFIED".to_owned(), json!("w")),
            ("DELETED".to_owned(), json!("w"))
        ]
    );

    // A list transform cannot encode a watch's objects: upstream's stream ends empty.
    let w = list_watch.await.unwrap();
    assert_eq!(w.status, 200);
    assert!(w.body.is_empty(), "{}", w.text());
}

async fn kube_client(path: &std::path::Path) -> kube::Client {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let kubeconfig = Kubeconfig::read_from(path).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("config");
    kube::Client::try_from(config).expect("client")
}

#[tokio::test]
async fn kube_rs_metadata_calls_work() {
    let c = start_cluster(|_| {});
    let cms: Api<ConfigMap> = Api::namespaced(kube_client(c.kubeconfig_path()).await, "default");
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("meta-rs".into());
    cm.metadata.labels = Some([("app".to_owned(), "meta".to_owned())].into());
    cm.data = Some([("k".to_owned(), "v".to_owned())].into());
    let created = cms.create(&PostParams::default(), &cm).await.unwrap();

    let got = cms.get_metadata("meta-rs").await.unwrap();
    assert_eq!(got.types.as_ref().unwrap().kind, "PartialObjectMetadata");
    assert_eq!(got.metadata.uid, created.metadata.uid);

    let listed = cms
        .list_metadata(&ListParams::default().labels("app=meta"))
        .await
        .unwrap();
    assert_eq!(listed.types.kind, "PartialObjectMetadataList");
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].metadata.name.as_deref(), Some("meta-rs"));
    let rv = listed.metadata.resource_version.clone().unwrap();
    let none = cms
        .list_metadata(&ListParams::default().labels("app=none"))
        .await
        .unwrap();
    assert!(none.items.is_empty());

    let mut events = cms
        .watch_metadata(&WatchParams::default().labels("app=meta"), &rv)
        .await
        .unwrap()
        .boxed();
    let patched = cms
        .patch_metadata(
            "meta-rs",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"a": "b"}}})),
        )
        .await
        .unwrap();
    assert_eq!(
        patched.types.as_ref().unwrap().kind,
        "PartialObjectMetadata"
    );
    match tokio::time::timeout(Duration::from_secs(10), events.try_next()).await {
        Ok(Ok(Some(WatchEvent::Modified(o)))) => {
            assert_eq!(o.types.as_ref().unwrap().kind, "PartialObjectMetadata");
            assert_eq!(o.metadata.annotations.unwrap()["a"], "b");
        }
        other => panic!("watch: {other:?}"),
    }
}
