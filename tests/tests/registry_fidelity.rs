//! The store's behaviour where upstream's generic registry and its namespace storage are
//! particular: delete preconditions, deletecollection's answer, deletion marks, the
//! delete that replaces an update emptying the finalizers, and the write options'
//! validation; all through the aggregator against real etcd.

use http::Method;
use kas_e2e::start_cluster;
use serde_json::{Value, json};

const JSON: [(&str, &str); 1] = [("content-type", "application/json")];
const MERGE: [(&str, &str); 1] = [("content-type", "application/merge-patch+json")];
const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn configmap(name: &str, extra: Value) -> String {
    let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"set": "a"}}});
    if let (Some(cm), Some(extra)) = (cm.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            if k == "metadata" {
                for (mk, mv) in v.as_object().into_iter().flatten() {
                    cm["metadata"][mk] = mv.clone();
                }
            } else {
                cm.insert(k.clone(), v.clone());
            }
        }
    }
    cm.to_string()
}

#[tokio::test]
async fn delete_preconditions_and_collections_answer_as_upstream() {
    let c = start_cluster(|_| {});
    let a = c
        .send(Method::POST, CMS, &JSON, &configmap("c1", json!({})))
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let (uid, rv) = (
        a.json()["metadata"]["uid"].as_str().unwrap().to_owned(),
        a.json()["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned(),
    );

    // BeforeDelete's checks, naming the kind.
    let stale_uid = json!({"preconditions": {"uid": "nope"}}).to_string();
    let a = c
        .send(Method::DELETE, &format!("{CMS}/c1"), &JSON, &stale_uid)
        .await;
    assert_eq!(a.status, 409, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        format!(
            "Operation cannot be fulfilled on ConfigMap \"c1\": the UID in the precondition (nope) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
        )
    );
    assert_eq!(
        a.json()["details"],
        json!({"name": "c1", "kind": "ConfigMap"})
    );
    let stale_rv = json!({"preconditions": {"resourceVersion": "1"}}).to_string();
    let a = c
        .send(Method::DELETE, &format!("{CMS}/c1"), &JSON, &stale_rv)
        .await;
    assert_eq!(
        a.json()["message"],
        format!(
            "Operation cannot be fulfilled on ConfigMap \"c1\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({rv}). The object might have been modified"
        )
    );

    // A namespace checks its preconditions itself, with storage's words.
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}});
    let a = c
        .send(Method::POST, "/api/v1/namespaces", &JSON, &ns.to_string())
        .await;
    let ns_uid = a.json()["metadata"]["uid"].as_str().unwrap().to_owned();
    let a = c
        .send(Method::DELETE, "/api/v1/namespaces/gone", &JSON, &stale_uid)
        .await;
    assert_eq!(a.status, 409);
    assert_eq!(
        a.json()["message"],
        format!(
            "Operation cannot be fulfilled on namespaces \"gone\": Precondition failed: UID in precondition: nope, UID in object meta: {ns_uid}"
        )
    );
    assert_eq!(a.json()["details"]["kind"], "namespaces");

    // DeleteCollection answers the items as they were listed, not their deletions.
    for name in ["c2", "c3"] {
        let a = c
            .send(Method::POST, CMS, &JSON, &configmap(name, json!({})))
            .await;
        assert_eq!(a.status, 201);
    }
    let listed = c
        .send(
            Method::GET,
            &format!("{CMS}?labelSelector=set%3Da"),
            &[],
            "",
        )
        .await;
    let a = c
        .send(
            Method::DELETE,
            &format!("{CMS}?labelSelector=set%3Da"),
            &[],
            "",
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["kind"], "ConfigMapList");
    assert_eq!(a.json()["items"], listed.json()["items"]);
    let after = c
        .send(
            Method::GET,
            &format!("{CMS}?labelSelector=set%3Da"),
            &[],
            "",
        )
        .await;
    assert_eq!(after.json()["items"], json!([]));
}

#[tokio::test]
async fn deletion_marks_and_the_delete_that_replaces_an_update() {
    let c = start_cluster(|_| {});
    // The generic store's mark: a zero grace period with the deletionTimestamp.
    let held = configmap(
        "held",
        json!({"metadata": {"finalizers": ["example.com/hold"]}}),
    );
    assert_eq!(c.send(Method::POST, CMS, &JSON, &held).await.status, 201);
    let a = c
        .send(Method::DELETE, &format!("{CMS}/held"), &[], "")
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let marked = a.json();
    assert!(marked["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 0);
    let rv = marked["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    // Removing the last finalizer deletes it instead of writing the update; the answer is
    // the updated object at the revision it updated.
    let patch = json!({"metadata": {"finalizers": null}}).to_string();
    let a = c
        .send(Method::PATCH, &format!("{CMS}/held"), &MERGE, &patch)
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["metadata"]["resourceVersion"], rv.as_str());
    assert!(a.json()["metadata"].get("finalizers").is_none());
    assert_eq!(
        c.send(Method::GET, &format!("{CMS}/held"), &[], "")
            .await
            .status,
        404
    );

    // A namespace's delete sets the deletionTimestamp and the phase, nothing else.
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fin"}});
    assert_eq!(
        c.send(Method::POST, "/api/v1/namespaces", &JSON, &ns.to_string())
            .await
            .status,
        201
    );
    let a = c
        .send(Method::DELETE, "/api/v1/namespaces/fin", &[], "")
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let terminating = a.json();
    assert!(terminating["metadata"]["deletionTimestamp"].is_string());
    assert!(
        terminating["metadata"]
            .get("deletionGracePeriodSeconds")
            .is_none(),
        "{terminating}"
    );
    assert_eq!(terminating["status"]["phase"], "Terminating");
    // Emptying spec.finalizers through finalize deletes it at once and echoes the
    // revision it had.
    let rv = terminating["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut finalized = terminating.clone();
    finalized["spec"]["finalizers"] = json!([]);
    let a = c
        .send(
            Method::PUT,
            "/api/v1/namespaces/fin/finalize",
            &JSON,
            &finalized.to_string(),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["metadata"]["resourceVersion"], rv.as_str());
    // Go omits the empty list.
    assert!(a.json()["spec"].get("finalizers").is_none(), "{}", a.text());
    let gone = c.send(Method::GET, "/api/v1/namespaces/fin", &[], "").await;
    assert_eq!(gone.status, 404, "{}", gone.text());
}

#[tokio::test]
async fn write_options_and_bodies_are_validated_as_upstream() {
    let c = start_cluster(|_| {});
    let body = configmap("v", json!({}));
    let a = c
        .send(
            Method::POST,
            &format!("{CMS}?fieldValidation=Sometimes"),
            &JSON,
            &body,
        )
        .await;
    assert_eq!(a.status, 422, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        r#"CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Sometimes": supported values: "", "Ignore", "Strict", "Warn""#
    );
    let a = c
        .send(
            Method::POST,
            &format!("{CMS}?dryRun=Some&dryRun=All"),
            &JSON,
            &body,
        )
        .await;
    assert_eq!(
        a.json()["message"],
        r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some", "All"}: supported values: "All""#
    );
    assert_eq!(
        c.send(Method::GET, &format!("{CMS}/v"), &[], "")
            .await
            .status,
        404
    );

    // A key in both maps is reported on data.
    let both = configmap(
        "both",
        json!({"data": {"a": "1"}, "binaryData": {"a": "MQ=="}}),
    );
    let a = c.send(Method::POST, CMS, &JSON, &both).await;
    assert_eq!(a.status, 422, "{}", a.text());
    assert_eq!(a.json()["details"]["causes"][0]["field"], "data[a]");

    // A Secret patched with stringData: the patched object is converted before the
    // field manager sees it, so its keys are owned under data.
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}});
    let secrets = "/api/v1/namespaces/default/secrets";
    assert_eq!(
        c.send(Method::POST, secrets, &JSON, &secret.to_string())
            .await
            .status,
        201
    );
    let patch = json!({"stringData": {"k": "v"}}).to_string();
    let a = c
        .send(
            Method::PATCH,
            &format!("{secrets}/s?fieldManager=patcher"),
            &MERGE,
            &patch,
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["data"]["k"], "dg==");
    let managed = a.json()["metadata"]["managedFields"].clone();
    let entry = managed
        .as_array()
        .and_then(|m| m.iter().find(|e| e["manager"] == "patcher"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        entry["fieldsV1"],
        json!({"f:data": {".": {}, "f:k": {}}}),
        "{managed}"
    );
}
