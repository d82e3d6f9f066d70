//! Reviews, answers, patches, denials, failure policies and webhooks called over HTTP.

use super::*;

// Upstream's ToStatusErr and NewDryRunUnsupportedErr.
#[test]
fn denials_and_failures_read_as_upstreams() {
    let status = to_status_err(
        "deny.kas.test",
        Some(&json!({"message": "no", "code": 403, "reason": "Forbidden"})),
    );
    assert_eq!(status.code, 403);
    assert_eq!(
        status.message.as_deref(),
        Some("admission webhook \"deny.kas.test\" denied the request: no")
    );
    assert_eq!(status.status.as_deref(), Some("Failure"));
    let status = to_status_err(
        "deny.kas.test",
        Some(&json!({"reason": "Because", "code": 200, "status": "Success"})),
    );
    assert_eq!(status.code, 400, "below 400 becomes 400");
    assert_eq!(status.status.as_deref(), Some("Failure"));
    assert_eq!(
        status.message.as_deref(),
        Some("admission webhook \"deny.kas.test\" denied the request: Because")
    );
    let status = to_status_err("deny.kas.test", None);
    assert_eq!(status.code, 400);
    assert_eq!(
        status.message.as_deref(),
        Some("admission webhook \"deny.kas.test\" denied the request without explanation")
    );
    let status = dry_run_unsupported("se.kas.test");
    assert_eq!(status.code, 400);
    assert_eq!(
        status.message.as_deref(),
        Some("admission webhook \"se.kas.test\" does not support dry run")
    );
    let status = CallError::calling("w.kas.test", "failed to call webhook: boom").into_status();
    assert_eq!(status.code, 500);
    assert_eq!(
        status.message.as_deref(),
        Some(
            "Internal error occurred: failed calling webhook \"w.kas.test\": failed to call webhook: boom"
        )
    );
}

#[test]
fn reviews_carry_the_request_as_upstreams() {
    let alice = user();
    let old = json!({"metadata": {"name": "cm", "namespace": "team", "resourceVersion": "5"}});
    let object = json!({"metadata": {"name": "cm", "namespace": "team"}, "data": {"a": "b"}});
    let mut req = request("UPDATE", &alice, Some(&old));
    req.dry_run = true;
    let review = body("v1", "uid-1", &req, Some(&object));
    assert_eq!(
        review,
        json!({
            "kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
            "request": {
                "uid": "uid-1",
                "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "requestResource": {"group": "", "version": "v1", "resource": "configmaps"},
                "name": "cm", "namespace": "team", "operation": "UPDATE",
                "userInfo": {"username": "alice", "uid": "7", "groups": ["devs"], "extra": {"scopes": ["read"]}},
                "object": {"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "cm", "namespace": "team", "resourceVersion": "5"},
                           "data": {"a": "b"}},
                "oldObject": {"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "cm", "namespace": "team", "resourceVersion": "5"}},
                "dryRun": true,
                "options": {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "dryRun": ["All"]}
            }
        })
    );
    let mut status = request("UPDATE", &alice, None);
    status.descriptor = &PODS;
    status.kind = ("", "v1", "Pod");
    status.subresource = "status";
    let review = body("v1beta1", "uid-2", &status, None);
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1beta1");
    assert_eq!(review["request"]["subResource"], "status");
    assert_eq!(review["request"]["requestSubResource"], "status");
    assert_eq!(review["request"]["object"], Value::Null);
    assert_eq!(review["request"]["oldObject"], Value::Null);
    assert_eq!(
        review::review_version(&["v2".into()]).unwrap_err(),
        "webhook does not accept known AdmissionReview versions (v1, v1beta1)"
    );
    assert_eq!(
        review::review_version(&["v2".into(), "v1beta1".into(), "v1".into()]),
        Ok("v1beta1")
    );
}

// Upstream's VerifyAdmissionResponse.
#[test]
fn answers_are_verified_as_upstreams() {
    let v1 = |response: Value| json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response});
    assert_eq!(
        verify(
            "v1",
            "u",
            false,
            &json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"})
        )
        .unwrap_err(),
        "webhook response was absent"
    );
    assert_eq!(
        verify("v1", "u", false, &v1(json!({"uid": "x", "allowed": true}))).unwrap_err(),
        "expected response.uid=\"u\", got \"x\""
    );
    assert_eq!(
        verify("v1", "u", false, &json!({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "response": {"uid": "u"}})).unwrap_err(),
        "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview"
    );
    // "[]" in base64.
    let patch = "W10=";
    assert_eq!(
        verify(
            "v1",
            "u",
            true,
            &v1(json!({"uid": "u", "allowed": true, "patch": patch}))
        )
        .unwrap_err(),
        "webhook returned response.patch but not response.patchType"
    );
    assert_eq!(
        verify(
            "v1",
            "u",
            true,
            &v1(json!({"uid": "u", "allowed": true, "patchType": "JSONPatch"}))
        )
        .unwrap_err(),
        "webhook returned response.patchType but not response.patch"
    );
    assert_eq!(
        verify(
            "v1",
            "u",
            false,
            &v1(json!({"uid": "u", "allowed": true, "patch": patch}))
        )
        .unwrap_err(),
        "validating webhook may not return response.patch"
    );
    assert_eq!(
        verify(
            "v1",
            "u",
            false,
            &v1(json!({"uid": "u", "allowed": true, "patchType": "JSONPatch"}))
        )
        .unwrap_err(),
        "validating webhook may not return response.patchType"
    );
    let ok = verify("v1", "u", true, &v1(json!({"uid": "u", "allowed": true, "patch": patch, "patchType": "JSONPatch", "warnings": ["w1"]}))).unwrap();
    assert!(ok.allowed);
    assert_eq!(ok.patch, b"[]");
    assert_eq!(ok.warnings, ["w1"]);
    // v1beta1: no uid or type check; a patch is a JSONPatch.
    let refused = verify(
        "v1",
        "u",
        false,
        &v1(json!({"uid": "u", "allowed": false, "status": {"message": "no"}})),
    )
    .unwrap();
    assert_eq!(refused.result, Some(json!({"message": "no"})));
    let beta = verify(
        "v1beta1",
        "u",
        true,
        &json!({"response": {"allowed": false, "patch": patch}}),
    )
    .unwrap();
    assert!(!beta.allowed);
    assert_eq!(beta.patch_type, "JSONPatch");
}

#[test]
fn patches_apply_in_order_and_say_whether_they_changed_the_object() {
    let plugin = webhooks(json!([]));
    let hook = &hooks_of(&config(
        "c",
        json!([{"name": "p.kas.test", "clientConfig": {"url": "https://h/"}}]),
    ))[0];
    let alice = user();
    let req = request("CREATE", &alice, None);
    let mut object = json!({"metadata": {"name": "cm", "namespace": "team"}});
    let answer = |patch: &str, patch_type: &str| review::Response {
        allowed: true,
        patch: patch.as_bytes().to_vec(),
        patch_type: patch_type.to_owned(),
        ..Default::default()
    };
    let add = answer(
        r#"[{"op":"add","path":"/metadata/labels","value":{"a":"1"}}]"#,
        "JSONPatch",
    );
    assert!(
        plugin
            .apply_patch(hook, &req, &add, Some(&mut object))
            .unwrap()
    );
    assert_eq!(
        object,
        json!({"metadata": {"name": "cm", "namespace": "team", "labels": {"a": "1"}}})
    );
    let same = answer(
        r#"[{"op":"replace","path":"/metadata/labels/a","value":"1"}]"#,
        "JSONPatch",
    );
    assert!(
        !plugin
            .apply_patch(hook, &req, &same, Some(&mut object))
            .unwrap()
    );
    let bad = answer(r#"[{"op":"remove","path":"/spec/x"}]"#, "JSONPatch");
    let CallError::Status(status) = plugin
        .apply_patch(hook, &req, &bad, Some(&mut object))
        .unwrap_err()
    else {
        panic!("a patch that does not apply is an internal error");
    };
    assert_eq!(status.code, 500);
    let other = answer("[{}]", "MergePatch");
    let err = plugin
        .apply_patch(hook, &req, &other, Some(&mut object))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed calling webhook \"p.kas.test\": unsupported patch type \"MergePatch\""
    );
    let CallError::Status(status) = plugin.apply_patch(hook, &req, &add, None).unwrap_err() else {
        panic!("no object to patch");
    };
    assert_eq!(
        status.message.as_deref(),
        Some(
            "Internal error occurred: admission webhook \"p.kas.test\" attempted to modify the object, which is not supported for this operation"
        )
    );
}

#[tokio::test]
async fn failure_policy_fail_refuses_and_ignore_admits() {
    let alice = user();
    let req = request("CREATE", &alice, None);
    let object = json!({"metadata": {"name": "cm", "namespace": "team"}});
    let status = webhooks(unreachable("Fail"))
        .validate(&req, Some(&object))
        .await
        .unwrap_err();
    assert_eq!(status.code, 500);
    assert_eq!(
        status.message.as_deref(),
        Some(
            "Internal error occurred: failed calling webhook \"v.kas.test\": failed to call webhook: Post \"https://127.0.0.1:1/x?timeout=10s\": dial tcp 127.0.0.1:1: connect: connection refused"
        )
    );
    webhooks(unreachable("Ignore"))
        .validate(&req, Some(&object))
        .await
        .unwrap();
    // Another operation or resource calls nothing.
    let update = request("UPDATE", &alice, Some(&object));
    webhooks(unreachable("Fail"))
        .validate(&update, Some(&object))
        .await
        .unwrap();
}

#[tokio::test]
async fn dry_runs_need_side_effects_none() {
    let alice = user();
    let mut req = request("CREATE", &alice, None);
    req.dry_run = true;
    let object = json!({"metadata": {"name": "cm", "namespace": "team"}});
    let mut hooks = unreachable("Ignore");
    hooks[0]["sideEffects"] = json!("Unknown");
    let status = webhooks(hooks.clone())
        .validate(&req, Some(&object))
        .await
        .unwrap_err();
    assert_eq!(
        (status.code, status.message.as_deref()),
        (
            400,
            Some("admission webhook \"v.kas.test\" does not support dry run")
        )
    );
    // No sideEffects at all is a calling error, which Ignore ignores.
    hooks[0].as_object_mut().unwrap().remove("sideEffects");
    webhooks(hooks).validate(&req, Some(&object)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutating_webhooks_patch_in_order_and_reinvoke_if_needed() {
    let calls: Arc<std::sync::Mutex<Vec<(String, Value)>>> = Arc::default();
    let seen = calls.clone();
    let url = serve(move |path, review| {
        let object = review["request"]["object"].clone();
        seen.lock().unwrap().push((path.to_owned(), object.clone()));
        match path {
            // Sets `first` to the number of labels it sees.
            "/first" => {
                let count = object["metadata"]["labels"].as_object().map_or(0, |l| l.len());
                                let patch = match object["metadata"]["labels"].is_object() {
                    true => json!([{"op": "add", "path": "/metadata/labels/first", "value": count.to_string()}]),
                    false => json!([{"op": "add", "path": "/metadata/labels", "value": {"first": "0"}}]),
                };
                allowed(review, Some(patch), &[])
            }
            "/second" => allowed(
                review,
                Some(json!([{"op": "add", "path": "/metadata/labels/second", "value": "yes"}])),
                &["second says hi"],
            ),
            _ => {
                let mut denied = allowed(review, None, &[]);
                denied["response"]["allowed"] = json!(false);
                denied["response"]["status"] = json!({"message": "third says no", "code": 422});
                denied
            }
        }
    })
    .await;
    let source = Arc::new(Source::default());
    source.replace(&[
        config(
            "b",
            json!([mutating_hook(
                "second.kas.test",
                &format!("{url}/second"),
                "Never"
            )]),
        ),
        config(
            "a",
            json!([mutating_hook(
                "first.kas.test",
                &format!("{url}/first"),
                "IfNeeded"
            )]),
        ),
    ]);
    let plugin = Webhooks::with_source(source.clone(), &[]);
    let alice = user();
    let warnings = kas_registry::rest::options::Warnings::default();
    let mut req = request("CREATE", &alice, None);
    req.warnings = Some(&warnings);
    let mut object = json!({"metadata": {"name": "cm", "namespace": "team"}});
    plugin.admit(&req, Some(&mut object)).await.unwrap();
    // first (configuration "a") ran, then second changed the object, so first ran again
    // and saw both labels.
    let paths: Vec<String> = calls
        .lock()
        .unwrap()
        .iter()
        .map(|(p, _)| p.clone())
        .collect();
    assert_eq!(paths, ["/first", "/second", "/first"]);
    assert_eq!(
        object["metadata"]["labels"],
        json!({"first": "2", "second": "yes"})
    );
    assert_eq!(warnings.take(), ["second says hi"]);
    // Without IfNeeded, no second round.
    calls.lock().unwrap().clear();
    source.replace(&[
        config(
            "b",
            json!([mutating_hook(
                "second.kas.test",
                &format!("{url}/second"),
                "Never"
            )]),
        ),
        config(
            "a",
            json!([mutating_hook(
                "first.kas.test",
                &format!("{url}/first"),
                "Never"
            )]),
        ),
    ]);
    let mut object = json!({"metadata": {"name": "cm", "namespace": "team"}});
    plugin.admit(&req, Some(&mut object)).await.unwrap();
    assert_eq!(calls.lock().unwrap().len(), 2);
    // A refusal stops the chain with the webhook's code.
    source.replace(&[config(
        "c",
        json!([mutating_hook(
            "third.kas.test",
            &format!("{url}/third"),
            "Never"
        )]),
    )]);
    let status = plugin.admit(&req, Some(&mut object)).await.unwrap_err();
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message.as_deref(),
        Some("admission webhook \"third.kas.test\" denied the request: third says no")
    );
}
