//! A CRD kept from `apiextensions.k8s.io/v1beta1` with `spec.preserveUnknownFields: true`
//! (v1 refuses to set it, so the test writes it to etcd as an old cluster left it): its
//! objects keep the fields the schema does not declare, as upstream's coercer skips
//! pruning for it, and strict field validation has nothing to report.

use std::time::{Duration, Instant};

use kas_e2e::start_cluster;
use serde_json::Value;

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
"#;

fn gadget(name: &str) -> String {
    format!(
        "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {{name: {name}}}\nspec: {{size: 1, colour: red}}\n"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crd_preserving_unknown_fields_prunes_nothing() {
    let c = start_cluster(|_| {});
    let out = c.kubectl_stdin(&["apply"], CRD);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = c.kubectl_stdin(&["create", "--validate=ignore"], &gadget("pruned"));
        if out.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pruned = c.kubectl_json(&["get", "gadgets", "pruned"]);
    assert_eq!(pruned["spec"], serde_json::json!({"size": 1}));

    // As a cluster that served v1beta1 left it (a spec change: the next generation).
    let mut client = etcd_client::Client::connect([c.etcd_url()], None)
        .await
        .unwrap();
    let key = "/registry/apiextensions.k8s.io/customresourcedefinitions/gadgets.example.com";
    let stored = client.get(key, None).await.unwrap();
    let mut crd: Value = serde_json::from_slice(stored.kvs()[0].value()).unwrap();
    crd["spec"]["preserveUnknownFields"] = Value::Bool(true);
    let generation = crd["metadata"]["generation"].as_i64().unwrap_or(1);
    crd["metadata"]["generation"] = (generation + 1).into();
    client
        .put(key, serde_json::to_vec(&crd).unwrap(), None)
        .await
        .unwrap();

    // Strict field validation refuses `spec.colour` until the server reads the change.
    let deadline = Instant::now() + Duration::from_secs(10);
    for attempt in 0.. {
        let name = format!("kept-{attempt}");
        let out = c.kubectl_stdin(
            &["create", "--validate=strict", "-o", "json"],
            &gadget(&name),
        );
        if out.status.success() {
            let created: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(
                created["spec"],
                serde_json::json!({"size": 1, "colour": "red"})
            );
            let read = c.kubectl_json(&["get", "gadgets", &name]);
            assert_eq!(read["spec"], created["spec"]);
            break;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(r#"unknown field "spec.colour""#), "{err}");
        assert!(
            Instant::now() < deadline,
            "unknown fields still refused: {err}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
