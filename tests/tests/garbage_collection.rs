//! The garbage collector's side of DELETE, as upstream 1.33's generic store and namespace
//! storage answer it (each expectation read off a real kube-apiserver 1.33.12):
//! `propagationPolicy` and the deprecated `orphanDependents` set or drop the `orphan` and
//! `foregroundDeletion` finalizers, an object they hold is answered marked (200, or 202
//! for `orphanDependents=false`), each resource's default policy applies when the options
//! and the finalizers say nothing, and events are never held.

use http::Method;
use kas_e2e::client::Answer;
use kas_e2e::{TestCluster, start_cluster};
use serde_json::{Value, json};

const JSON: [(&str, &str); 1] = [("content-type", "application/json")];
const JOB_WARNING: &str = "299 - \"child pods are preserved by default when jobs are deleted; \
    set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning\"";

async fn post(c: &TestCluster, path: &str, obj: Value) {
    let a = c.send(Method::POST, path, &JSON, &obj.to_string()).await;
    assert_eq!(a.status, 201, "{}", a.text());
}

async fn delete(c: &TestCluster, path: &str) -> Answer {
    c.send(Method::DELETE, path, &[], "").await
}

/// The finalizers of an answer holding an object.
fn finalizers(a: &Answer) -> Value {
    a.json()["metadata"]["finalizers"].clone()
}

/// The answer is the object `kind`, marked for deletion with a zero grace period and held
/// by `held_by`.
fn assert_held(a: &Answer, status: u16, kind: &str, held_by: Value) {
    assert_eq!(a.status, status, "{}", a.text());
    let obj = a.json();
    assert_eq!(obj["kind"], kind, "{obj}");
    assert_eq!(obj["metadata"]["finalizers"], held_by, "{obj}");
    assert!(obj["metadata"]["deletionTimestamp"].is_string(), "{obj}");
    assert_eq!(obj["metadata"]["deletionGracePeriodSeconds"], 0, "{obj}");
}

/// The answer is the `Status` of a removed object.
fn assert_gone(a: &Answer) {
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["kind"], "Status", "{}", a.text());
    assert_eq!(a.json()["status"], "Success", "{}", a.text());
}

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"a": "b"}},
        "template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
}

#[tokio::test(flavor = "multi_thread")]
async fn propagation_policies_set_the_garbage_collectors_finalizers() {
    let c = start_cluster(|_| {});
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    post(&c, deployments, deployment("d1")).await;

    // Foreground: held by foregroundDeletion, the generation bumped by the mark.
    let a = delete(
        &c,
        &format!("{deployments}/d1?propagationPolicy=Foreground"),
    )
    .await;
    assert_held(&a, 200, "Deployment", json!(["foregroundDeletion"]));
    assert_eq!(a.json()["metadata"]["generation"], 2);
    let a = c
        .send(Method::GET, &format!("{deployments}/d1"), &[], "")
        .await;
    assert_eq!(finalizers(&a), json!(["foregroundDeletion"]));

    // Another delete switches to Orphan; a dry run of Background changes nothing.
    let a = delete(&c, &format!("{deployments}/d1?propagationPolicy=Orphan")).await;
    assert_held(&a, 200, "Deployment", json!(["orphan"]));
    assert_eq!(a.json()["metadata"]["generation"], 2, "marked once");
    let a = delete(
        &c,
        &format!("{deployments}/d1?propagationPolicy=Background&dryRun=All"),
    )
    .await;
    // Upstream answers the kind's empty object here (the dry-run mark stopped before it
    // filled one).
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["kind"], "Deployment", "{}", a.text());
    assert_eq!(a.json()["metadata"], json!({"creationTimestamp": null}));
    let a = c
        .send(Method::GET, &format!("{deployments}/d1"), &[], "")
        .await;
    assert_eq!(finalizers(&a), json!(["orphan"]));

    // Background in the body drops the finalizer: nothing holds it, it is gone.
    let a = c
        .send(
            Method::DELETE,
            &format!("{deployments}/d1"),
            &JSON,
            r#"{"propagationPolicy":"Background"}"#,
        )
        .await;
    assert_gone(&a);
    let a = c
        .send(Method::GET, &format!("{deployments}/d1"), &[], "")
        .await;
    assert_eq!(a.status, 404);

    // `orphanDependents=false` is not foreground deletion in the generic store: it drops
    // the finalizers, and the object goes.
    post(&c, deployments, deployment("d2")).await;
    let a = delete(
        &c,
        &format!("{deployments}/d2?propagationPolicy=Foreground"),
    )
    .await;
    assert_held(&a, 200, "Deployment", json!(["foregroundDeletion"]));
    let a = delete(&c, &format!("{deployments}/d2?orphanDependents=false")).await;
    assert_gone(&a);

    // A finalizer of the object's own stays with the garbage collector's.
    let configmaps = "/api/v1/namespaces/default/configmaps";
    post(
        &c,
        configmaps,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c1", "finalizers": ["example.com/x"]}}),
    )
    .await;
    let c1 = format!("{configmaps}/c1");
    let a = delete(&c, &format!("{c1}?propagationPolicy=Orphan")).await;
    assert_held(&a, 200, "ConfigMap", json!(["example.com/x", "orphan"]));
    let a = delete(&c, &c1).await;
    assert_held(&a, 200, "ConfigMap", json!(["example.com/x", "orphan"]));
    let a = delete(&c, &format!("{c1}?propagationPolicy=Background")).await;
    assert_held(&a, 200, "ConfigMap", json!(["example.com/x"]));
    let a = delete(&c, &format!("{c1}?propagationPolicy=Foreground")).await;
    assert_held(
        &a,
        200,
        "ConfigMap",
        json!(["example.com/x", "foregroundDeletion"]),
    );
    // An object being deleted takes no new finalizer, and its grace period is fixed.
    let merge = [("content-type", "application/merge-patch+json")];
    for (patch, message) in [
        (
            r#"{"metadata":{"finalizers":["example.com/x","example.com/y","a.b/c"]}}"#,
            "ConfigMap \"c1\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"a.b/c\", \"example.com/y\"}",
        ),
        (
            r#"{"metadata":{"deletionGracePeriodSeconds":5}}"#,
            "ConfigMap \"c1\" is invalid: metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable",
        ),
    ] {
        let a = c.send(Method::PATCH, &c1, &merge, patch).await;
        assert_eq!(a.status, 422, "{}", a.text());
        assert_eq!(a.json()["message"], message);
    }
    // Removing the finalizers of an object marked with a zero grace period deletes it.
    let a = c
        .send(
            Method::PATCH,
            &c1,
            &merge,
            r#"{"metadata":{"finalizers":null}}"#,
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let a = c.send(Method::GET, &c1, &[], "").await;
    assert_eq!(a.status, 404, "{}", a.text());

    // DELETECOLLECTION applies the policy to each object and answers the list as listed.
    for name in ["c2", "c3"] {
        post(
            &c,
            configmaps,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"k": "v"}}}),
        )
        .await;
    }
    let a = delete(
        &c,
        &format!("{configmaps}?labelSelector=k%3Dv&propagationPolicy=Foreground"),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let listed = a.json();
    assert_eq!(listed["kind"], "ConfigMapList");
    assert_eq!(
        listed["items"].as_array().map(Vec::len),
        Some(2),
        "{listed}"
    );
    assert!(listed["items"][0]["metadata"]["finalizers"].is_null());
    for name in ["c2", "c3"] {
        let a = c
            .send(Method::GET, &format!("{configmaps}/{name}"), &[], "")
            .await;
        assert_eq!(finalizers(&a), json!(["foregroundDeletion"]), "{name}");
    }
    let a = delete(
        &c,
        &format!("{configmaps}?labelSelector=k%3Dv&propagationPolicy=Background"),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let a = c
        .send(Method::GET, &format!("{configmaps}/c2"), &[], "")
        .await;
    assert_eq!(a.status, 404, "{}", a.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn each_resource_has_upstreams_default_policy() {
    let c = start_cluster(|_| {});

    // batch/v1 Jobs orphan their pods by default, with upstream's warning.
    let jobs = "/apis/batch/v1/namespaces/default/jobs";
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j1"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "x"}]}}}});
    post(&c, jobs, job).await;
    let a = delete(&c, &format!("{jobs}/j1?dryRun=All")).await;
    assert_held(&a, 200, "Job", json!(["orphan"]));
    let a = delete(&c, &format!("{jobs}/j1")).await;
    assert_held(&a, 200, "Job", json!(["orphan"]));
    assert_eq!(a.json()["metadata"]["generation"], 2);
    let warnings: Vec<_> = a.headers.get_all("warning").iter().collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0], JOB_WARNING);
    let a = delete(&c, &format!("{jobs}/j1?propagationPolicy=Background")).await;
    assert_gone(&a);
    assert!(a.headers.get("warning").is_none(), "{:?}", a.headers);

    // v1 ReplicationControllers too, without a warning.
    let rcs = "/api/v1/namespaces/default/replicationcontrollers";
    let rc = json!({"apiVersion": "v1", "kind": "ReplicationController",
        "metadata": {"name": "r1"}, "spec": {"selector": {"a": "b"},
        "template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "x"}]}}}});
    post(&c, rcs, rc).await;
    let a = delete(&c, &format!("{rcs}/r1")).await;
    assert_held(&a, 200, "ReplicationController", json!(["orphan"]));
    assert!(a.headers.get("warning").is_none(), "{:?}", a.headers);

    // Deployments delete their dependents in the background: nothing holds them.
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    post(&c, deployments, deployment("d1")).await;
    assert_gone(&delete(&c, &format!("{deployments}/d1")).await);

    // Events are never garbage collected: no policy holds them.
    let events = "/api/v1/namespaces/default/events";
    let event = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "R", "message": "m"});
    post(&c, events, event).await;
    let a = delete(&c, &format!("{events}/e1?propagationPolicy=Foreground")).await;
    assert_gone(&a);
    let a = c.send(Method::GET, &format!("{events}/e1"), &[], "").await;
    assert_eq!(a.status, 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn namespaces_take_the_finalizers_on_their_first_delete() {
    let c = start_cluster(|_| {});
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gcns"}});
    post(&c, "/api/v1/namespaces", ns).await;
    let a = delete(&c, "/api/v1/namespaces/gcns?propagationPolicy=Orphan").await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(finalizers(&a), json!(["orphan"]));
    assert_eq!(a.json()["status"]["phase"], "Terminating");
    // Later deletes wait for spec.finalizers and change nothing; the deprecated
    // `orphanDependents=false` on an object left in place is answered 202.
    let a = delete(&c, "/api/v1/namespaces/gcns?orphanDependents=false").await;
    assert_eq!(a.status, 202, "{}", a.text());
    assert_eq!(finalizers(&a), json!(["orphan"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_delete_options_are_upstreams_422() {
    let c = start_cluster(|_| {});
    let d1 = "/apis/apps/v1/namespaces/default/deployments/d1";
    let a = delete(
        &c,
        &format!("{d1}?propagationPolicy=Orphan&orphanDependents=true"),
    )
    .await;
    assert_eq!(a.status, 422, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: \"Orphan\": orphanDependents and deletionPropagation cannot be both set"
    );
    assert_eq!(
        a.json()["details"]["causes"][0]["reason"],
        "FieldValueInvalid"
    );
    let a = delete(&c, &format!("{d1}?propagationPolicy=Bogus")).await;
    assert_eq!(a.status, 422, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Bogus\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
    );
    assert_eq!(
        a.json()["details"],
        json!({"group": "meta.k8s.io", "kind": "DeleteOptions", "causes": [{
            "reason": "FieldValueNotSupported",
            "message": "Unsupported value: \"Bogus\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
            "field": "propagationPolicy"}]})
    );
}
