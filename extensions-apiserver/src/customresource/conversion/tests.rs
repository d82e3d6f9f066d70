use super::*;

fn converter() -> WebhookConverter {
    WebhookConverter {
        client: kas_webhook::Client::new(&kas_webhook::TlsConfig::default(), TIMEOUT).unwrap(),
        url: "https://127.0.0.1:1/convert".to_owned(),
        review_version: Some("v1"),
        kind: "Widget",
    }
}

fn widget(version: &str) -> Value {
    json!({"apiVersion": format!("example.com/{version}"), "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns", "uid": "u1", "resourceVersion": "7",
            "labels": {"a": "b"}},
        "spec": {}})
}

#[test]
fn answers_are_checked_as_upstream_checks_them() {
    let review = |response: Value| json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": response});
    assert_eq!(
        converted_objects(&json!({"apiVersion": "v1", "kind": "Review"}), "v1", "x").unwrap_err(),
        "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got v1, Kind=Review"
    );
    assert_eq!(
        converted_objects(&review(Value::Null), "v1", "x").unwrap_err(),
        "no response provided"
    );
    assert_eq!(
        converted_objects(&review(json!({"uid": "y"})), "v1", "x").unwrap_err(),
        "expected response.uid=\"x\", got \"y\""
    );
    assert_eq!(
        converted_objects(
            &review(json!({"uid": "x", "result": {"status": "Failure"}})),
            "v1",
            "x"
        )
        .unwrap_err(),
        "response.result.status was 'Failure', not 'Success'"
    );
    assert_eq!(
        converted_objects(
            &review(json!({"uid": "x", "result": {"status": "Failure", "message": "no way"}})),
            "v1",
            "x"
        )
        .unwrap_err(),
        "no way"
    );
    // v1beta1 answers are not checked for their kind and uid, as upstream's.
    let objects = converted_objects(
        &json!({"response": {"uid": "other", "result": {"status": "Success"}, "convertedObjects": [{}]}}),
        "v1beta1",
        "x",
    )
    .unwrap();
    assert_eq!(objects.len(), 1);
}

#[test]
fn converted_objects_keep_the_original_metadata_but_labels_and_annotations() {
    let c = converter();
    let mut converted = widget("v2");
    converted["metadata"] = json!({"name": "w", "namespace": "ns", "uid": "u1",
        "resourceVersion": "99", "labels": {"a": "c"}, "annotations": {"x": "y"}});
    let restored = c
        .checked(&widget("v1"), converted, "example.com/v2")
        .ok()
        .unwrap();
    assert_eq!(
        restored["metadata"],
        json!({"name": "w", "namespace": "ns", "uid": "u1", "resourceVersion": "7",
            "labels": {"a": "c"}, "annotations": {"x": "y"}})
    );

    let wrong = |edit: fn(&mut Value)| {
        let mut converted = widget("v2");
        edit(&mut converted);
        match c.checked(&widget("v1"), converted, "example.com/v2") {
            Err((_, e)) => e,
            Ok(v) => panic!("accepted {v}"),
        }
    };
    assert_eq!(
        wrong(|o| o["apiVersion"] = json!("example.com/v3")),
        "invalid groupVersion (expected example.com/v2, received example.com/v3)"
    );
    assert_eq!(
        wrong(|o| o["kind"] = json!("Gadget")),
        "invalid kind (expected Widget, received Gadget)"
    );
    assert_eq!(
        wrong(|o| o["metadata"]["name"] = json!("other")),
        "must have the same name: w != other"
    );
    assert_eq!(
        wrong(|o| o["metadata"]["labels"] = json!({"a": 1})),
        "metadata.labels[a] must be a string, but is int64 in converted object"
    );
    assert!(
        wrong(|o| o["metadata"]["labels"] = json!({"a": "not valid!"}))
            .starts_with("metadata.labels: Invalid value: \"not valid!\"")
    );
    assert_eq!(
        wrong(|o| {
            o.as_object_mut().unwrap().remove("metadata");
            o["metadata"] = json!("x");
        }),
        "must have the same name: w != "
    );
}

#[test]
fn objects_already_in_the_desired_version_are_not_sent() {
    // The converter's URL refuses connections: only a call would fail.
    let c = converter();
    let objects = vec![widget("v2"), widget("v2")];
    assert_eq!(
        c.convert(objects.clone(), "example.com/v2", true).unwrap(),
        objects
    );
    let empty = json!({"apiVersion": "example.com/v1", "kind": "Widget"});
    assert_eq!(
        c.convert(vec![empty.clone()], "example.com/v2", false)
            .unwrap(),
        vec![empty]
    );
    // Outside a multi-threaded runtime the call cannot block: an error, not a panic.
    assert_eq!(
        c.convert(vec![widget("v1")], "example.com/v2", false)
            .unwrap_err(),
        "conversion webhook for example.com/v1, Kind=Widget failed: there is no reactor running, must be called from the context of a Tokio 1.x runtime"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_that_cannot_be_reached_fails_in_go_words() {
    let c = converter();
    let err = c
        .convert(vec![widget("v1")], "example.com/v2", false)
        .unwrap_err();
    assert_eq!(
        err,
        "conversion webhook for example.com/v1, Kind=Widget failed: Post \"https://127.0.0.1:1/convert\": dial tcp 127.0.0.1:1: connect: connection refused"
    );
}

#[test]
fn type_meta_goes_first_and_comes_off() {
    let typed = with_type(
        json!({"metadata": {}, "kind": "x"}),
        "example.com/v1",
        "Widget",
    );
    assert_eq!(
        serde_json::to_string(&typed).unwrap(),
        r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{}}"#
    );
    assert_eq!(without_type(typed), json!({"metadata": {}}));
}
