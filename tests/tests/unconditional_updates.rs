//! Updates without `metadata.resourceVersion`, as upstream 1.33's `Store.Update` decides
//! them by the strategy's `AllowUnconditionalUpdate`: custom resources, webhook
//! configurations and CSINodes refuse them (422, the resource named and the value printed
//! as `%#v` of a `uint64` zero), most built-in resources take the stored version, also
//! through `status`; a quota's status written so is enforced at the next create.

use http::Method;
use kas_e2e::start_cluster;
use serde_json::{Value, json};

const JSON: [(&str, &str); 1] = [("content-type", "application/json")];

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.size, statusReplicasPath: .status.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
          status: {type: object, properties: {replicas: {type: integer}}}
"#;

/// `obj` without its resourceVersion.
fn unversioned(mut obj: Value) -> String {
    if let Some(meta) = obj["metadata"].as_object_mut() {
        meta.remove("resourceVersion");
    }
    obj.to_string()
}

/// Creates `CRD` and waits until its resources are served.
fn widgets_served(c: &kas_e2e::TestCluster) {
    let out = c.kubectl_stdin(&["apply"], CRD);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    c.kubectl_ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
    ]);
    for _ in 0..50 {
        if c.kubectl(&["get", "widgets"]).status.success() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("widgets are not served");
}

#[tokio::test(flavor = "multi_thread")]
async fn updates_without_a_resource_version_follow_the_strategy() {
    let c = start_cluster(|_| {});
    widgets_served(&c);
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    let w = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1"}, "spec": {"size": 1}});
    let a = c.send(Method::POST, widgets, &JSON, &w.to_string()).await;
    assert_eq!(a.status, 201, "{}", a.text());
    let stored = a.json();

    // A custom resource's update must name the version it read.
    let a = c
        .send(
            Method::PUT,
            &format!("{widgets}/w1"),
            &JSON,
            &unversioned(stored.clone()),
        )
        .await;
    assert_eq!(a.status, 422, "{}", a.text());
    assert_eq!(
        a.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "widgets.example.com \"w1\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update",
            "reason": "Invalid",
            "details": {"name": "w1", "group": "example.com", "kind": "widgets", "causes": [{
                "reason": "FieldValueInvalid",
                "message": "Invalid value: 0x0: must be specified for an update",
                "field": "metadata.resourceVersion"}]},
            "code": 422})
    );
    // So must a write of its status.
    let mut with_status = stored.clone();
    with_status["status"] = json!({"replicas": 1});
    let a = c
        .send(
            Method::PUT,
            &format!("{widgets}/w1/status"),
            &JSON,
            &unversioned(with_status),
        )
        .await;
    assert_eq!(a.status, 422, "{}", a.text());
    // A Scale without one leaves the object's: upstream's `scaleUpdatedObjectInfo` sets
    // only a version the client gave.
    let scale = json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "w1", "namespace": "default"}, "spec": {"replicas": 3}});
    let a = c
        .send(
            Method::PUT,
            &format!("{widgets}/w1/scale"),
            &JSON,
            &scale.to_string(),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["spec"]["replicas"], 3);

    // Webhook configurations refuse it too, naming their resource.
    let hooks = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    let hook = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "h"}});
    let a = c.send(Method::POST, hooks, &JSON, &hook.to_string()).await;
    assert_eq!(a.status, 201, "{}", a.text());
    let a = c
        .send(
            Method::PUT,
            &format!("{hooks}/h"),
            &JSON,
            &unversioned(a.json()),
        )
        .await;
    assert_eq!(a.status, 422, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        "validatingwebhookconfigurations.admissionregistration.k8s.io \"h\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );

    // A ConfigMap takes the stored version.
    let cms = "/api/v1/namespaces/default/configmaps";
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let a = c.send(Method::POST, cms, &JSON, &cm.to_string()).await;
    let mut cm = a.json();
    cm["data"] = json!({"k": "v"});
    let a = c
        .send(Method::PUT, &format!("{cms}/c"), &JSON, &unversioned(cm))
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["data"], json!({"k": "v"}));
}

/// A quota's status written without a version (as upstream's e2e writes it) counts: the
/// next create beyond it is refused with the quota admission's words.
#[tokio::test(flavor = "multi_thread")]
async fn a_quota_status_written_without_a_version_is_enforced() {
    let c = start_cluster(|_| {});
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "q1"}});
    let a = c
        .send(Method::POST, "/api/v1/namespaces", &JSON, &ns.to_string())
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let quotas = "/api/v1/namespaces/q1/resourcequotas";
    let quota = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
        "spec": {"hard": {"configmaps": "1"}}});
    let a = c
        .send(Method::POST, quotas, &JSON, &quota.to_string())
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let status = json!({"apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "q", "namespace": "q1"},
        "spec": {"hard": {"configmaps": "1"}},
        "status": {"hard": {"configmaps": "1"}, "used": {"configmaps": "1"}}});
    let a = c
        .send(
            Method::PUT,
            &format!("{quotas}/q/status"),
            &JSON,
            &status.to_string(),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["status"]["used"], json!({"configmaps": "1"}));

    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}});
    let a = c
        .send(
            Method::POST,
            "/api/v1/namespaces/q1/configmaps",
            &JSON,
            &cm.to_string(),
        )
        .await;
    assert_eq!(a.status, 403, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        "configmaps \"c1\" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=1, limited: configmaps=1"
    );
}
