//! Kubernetes protobuf through the aggregator, as client-go's typed clients speak it:
//! kubectl's typed `create` commands, and raw requests checked with the protobuf codec
//! (GET, LIST, WATCH frames, a protobuf DeleteOptions body, the 406 of an endpoint that
//! cannot answer protobuf).

use http::Method;
use kas_apimachinery::protobuf;
use kas_e2e::client::{Proto, Tls, request, request_with_body};
use kas_e2e::{Role, TestCluster, start_cluster};

const PB: &str = "application/vnd.kubernetes.protobuf";

fn ok(c: &TestCluster, args: &[&str]) -> String {
    let out = c.kubectl(args);
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn kubectl_typed_creates_send_protobuf() {
    let c = start_cluster(|_| {});
    ok(&c, &["create", "namespace", "pb"]);
    ok(
        &c,
        &[
            "create",
            "configmap",
            "cm",
            "-n",
            "pb",
            "--from-literal=a=b",
        ],
    );
    ok(
        &c,
        &[
            "create",
            "secret",
            "generic",
            "s",
            "-n",
            "pb",
            "--from-literal=x=y",
        ],
    );
    ok(&c, &["create", "serviceaccount", "sa", "-n", "pb"]);
    let cm: serde_json::Value =
        serde_json::from_str(&ok(&c, &["get", "cm", "cm", "-n", "pb", "-o", "json"])).unwrap();
    assert_eq!(cm["data"]["a"], "b");
    assert_eq!(cm["metadata"]["namespace"], "pb");
    let secret: serde_json::Value =
        serde_json::from_str(&ok(&c, &["get", "secret", "s", "-n", "pb", "-o", "json"])).unwrap();
    assert_eq!(secret["data"]["x"], "eQ==", "base64 of y");
    assert_eq!(secret["type"], "Opaque");
    ok(&c, &["get", "sa", "sa", "-n", "pb"]);
    ok(&c, &["delete", "namespace", "pb", "--wait=false"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn get_list_watch_and_delete_in_protobuf() {
    let c = start_cluster(|_| {});
    let base = format!(
        "{}/api/v1/namespaces/default/configmaps",
        c.url(Role::Aggregator, 0)
    );
    let bearer = c.bearer();
    let tls: Tls = c.admin_tls(Proto::H2);
    let cm =
        serde_json::json!({"metadata": {"name": "p", "labels": {"k": "v"}}, "data": {"a": "1"}});
    let body =
        protobuf::encode_object(&cm, &kas_api::core::v1::CONFIG_MAP, "v1", "ConfigMap").unwrap();
    let headers = [
        ("authorization", bearer.as_str()),
        ("content-type", PB),
        (
            "accept",
            "application/vnd.kubernetes.protobuf,application/json",
        ),
    ];
    let a = request_with_body(&base, Method::POST, &headers, body.into(), &tls, Proto::H2)
        .await
        .unwrap();
    assert_eq!(a.status, 201, "{}", a.text());
    assert_eq!(a.headers["content-type"], PB);
    let created = decode(&a.body, "ConfigMap", &kas_api::core::v1::CONFIG_MAP);
    assert_eq!(created["metadata"]["name"], "p");
    assert!(created["metadata"]["uid"].is_string());

    let a = request(&format!("{base}/p"), Method::GET, &headers, &tls, Proto::H2)
        .await
        .unwrap();
    assert_eq!(a.status, 200);
    let got = decode(&a.body, "ConfigMap", &kas_api::core::v1::CONFIG_MAP);
    assert_eq!(got["data"]["a"], "1");
    assert_eq!(
        got["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );

    let a = request(
        &format!("{base}?labelSelector=k%3Dv"),
        Method::GET,
        &headers,
        &tls,
        Proto::H2,
    )
    .await
    .unwrap();
    let list = decode(
        &a.body,
        "ConfigMapList",
        &kas_api::core::v1::CONFIG_MAP_LIST,
    );
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    assert_eq!(list["items"][0]["metadata"]["name"], "p");
    assert!(list["metadata"]["resourceVersion"].is_string());

    // A watch from the creation's version sees the deletion, framed.
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let watch_url = format!("{base}?watch=true&resourceVersion={rv}&timeoutSeconds=2");
    let watch = tokio::spawn({
        let (tls, bearer) = (tls.clone(), bearer.clone());
        async move {
            let headers = [("authorization", bearer.as_str()), ("accept", PB)];
            request(&watch_url, Method::GET, &headers, &tls, Proto::H2)
                .await
                .unwrap()
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let options = serde_json::json!({"preconditions": {"uid": created["metadata"]["uid"]}});
    let options = protobuf::encode_object(
        &options,
        &kas_api::meta::v1::DELETE_OPTIONS,
        "v1",
        "DeleteOptions",
    )
    .unwrap();
    let a = request_with_body(
        &format!("{base}/p"),
        Method::DELETE,
        &headers,
        options.into(),
        &tls,
        Proto::H2,
    )
    .await
    .unwrap();
    assert_eq!(a.status, 200, "{}", a.text());
    let status = decode(&a.body, "Status", &kas_api::meta::v1::STATUS);
    assert_eq!(status["status"], "Success");

    let w = watch.await.unwrap();
    assert_eq!(
        w.headers["content-type"],
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let (frame, rest) = protobuf::next_frame(&w.body).expect("one frame");
    assert!(
        rest.is_empty(),
        "only the deletion: {} bytes left",
        rest.len()
    );
    let event = protobuf::decode_watch_event(frame).unwrap();
    assert_eq!(event.event_type, "DELETED");
    let deleted = decode(&event.object, "ConfigMap", &kas_api::core::v1::CONFIG_MAP);
    assert_eq!(deleted["metadata"]["name"], "p");

    // Tables have no protobuf form: a protobuf-only Table request is refused.
    let table = [
        ("authorization", bearer.as_str()),
        (
            "accept",
            "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io",
        ),
    ];
    let a = request(&base, Method::GET, &table, &tls, Proto::H2)
        .await
        .unwrap();
    assert_eq!(a.status, 406, "{}", a.text());
}

fn decode(body: &[u8], kind: &str, schema: &'static kas_api::Message) -> serde_json::Value {
    let unknown = protobuf::decode_envelope(body).expect("an envelope");
    assert_eq!(unknown.kind, kind);
    protobuf::decode(&unknown.raw, schema).expect("decodes")
}
