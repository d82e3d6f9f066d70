use std::sync::Arc;

use serde_json::{Value, json};

use super::errors::{CallError, dry_run_unsupported, to_status_err};
use super::review::{self, body, verify};
use super::rules::{Target, hook_matches, is_exempt, rule_matches};
use super::source::{Rule, Source, hooks_of};
use super::{Request, Webhooks};
use kas_registry::{ResourceDescriptor, Scope, Verb};

/// The descriptors the tests admit writes of (as core-apiserver's).
const fn descriptor(
    kind: &'static str,
    plural: &'static str,
    scope: Scope,
    schema: &'static kas_apimachinery::schema::Message,
) -> ResourceDescriptor {
    ResourceDescriptor {
        group: "",
        version: "v1",
        kind,
        list_kind: "List",
        plural,
        singular: "",
        short_names: &[],
        categories: &[],
        scope,
        verbs: Verb::ALL,
        subresources: &[],
        table_columns: &[],
        table_name_and_age: true,
        storage_resource: plural,
        schema: Some(schema),
        list_schema: None,
    }
}

static CONFIGMAPS: ResourceDescriptor = descriptor(
    "ConfigMap",
    "configmaps",
    Scope::Namespaced,
    &kas_api::core::v1::CONFIG_MAP,
);
static PODS: ResourceDescriptor = ResourceDescriptor {
    subresources: &[
        kas_registry::Subresource {
            name: "eviction",
            verbs: &[Verb::Create],
            kind: Some(kas_registry::SubresourceKind {
                group: "policy",
                version: "v1",
                kind: "Eviction",
                schema: &kas_api::policy::v1::EVICTION,
            }),
            handler: kas_registry::SubresourceHandler::StrategyCreate,
        },
        kas_registry::Subresource::STATUS,
    ],
    ..descriptor("Pod", "pods", Scope::Namespaced, &kas_api::core::v1::POD)
};
static NAMESPACES: ResourceDescriptor = descriptor(
    "Namespace",
    "namespaces",
    Scope::Cluster,
    &kas_api::core::v1::NAMESPACE,
);

fn rule(ops: &[&str], groups: &[&str], versions: &[&str], resources: &[&str]) -> Rule {
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect();
    Rule {
        operations: v(ops),
        api_groups: v(groups),
        api_versions: v(versions),
        resources: v(resources),
        scope: None,
    }
}

fn target<'a>(op: &'a str, resource: &'a str, sub: &'a str, ns: &'a str) -> Target<'a> {
    Target {
        operation: op,
        group: "",
        version: "v1",
        resource,
        subresource: sub,
        namespace: ns,
    }
}

// Upstream's rules_test: operations, groups, versions, resources with subresources.
#[test]
fn rules_match_as_upstreams() {
    let all = rule(&["*"], &["*"], &["*"], &["*"]);
    assert!(rule_matches(&all, &target("CREATE", "pods", "", "ns")));
    assert!(
        !rule_matches(&all, &target("UPDATE", "pods", "status", "ns")),
        "* is no subresource"
    );
    let any_sub = rule(&["*"], &["*"], &["*"], &["*/*"]);
    assert!(rule_matches(
        &any_sub,
        &target("UPDATE", "pods", "status", "ns")
    ));
    // `*/*` is every resource and every subresource, the resource itself included.
    assert!(rule_matches(&any_sub, &target("UPDATE", "pods", "", "ns")));
    let status = rule(&["UPDATE"], &[""], &["v1"], &["pods/status"]);
    assert!(rule_matches(
        &status,
        &target("UPDATE", "pods", "status", "ns")
    ));
    assert!(!rule_matches(&status, &target("UPDATE", "pods", "", "ns")));
    assert!(!rule_matches(
        &status,
        &target("CREATE", "pods", "status", "ns")
    ));
    let all_status = rule(&["*"], &["*"], &["*"], &["*/status"]);
    assert!(rule_matches(
        &all_status,
        &target("UPDATE", "nodes", "status", "")
    ));
    let cms = rule(&["CREATE", "DELETE"], &[""], &["v1"], &["configmaps"]);
    assert!(rule_matches(
        &cms,
        &target("DELETE", "configmaps", "", "ns")
    ));
    assert!(!rule_matches(
        &cms,
        &target("UPDATE", "configmaps", "", "ns")
    ));
    let apps = rule(&["*"], &["apps"], &["v1"], &["*"]);
    assert!(!rule_matches(
        &apps,
        &target("CREATE", "configmaps", "", "ns")
    ));
}

#[test]
fn scopes_treat_namespaces_as_cluster_scoped() {
    let mut namespaced = rule(&["*"], &["*"], &["*"], &["*"]);
    namespaced.scope = Some("Namespaced".into());
    let mut cluster = namespaced.clone();
    cluster.scope = Some("Cluster".into());
    assert!(rule_matches(
        &namespaced,
        &target("CREATE", "pods", "", "ns")
    ));
    assert!(!rule_matches(
        &namespaced,
        &target("CREATE", "nodes", "", "")
    ));
    // A namespace's update has its own name as namespace, and is still cluster-scoped.
    assert!(!rule_matches(
        &namespaced,
        &target("UPDATE", "namespaces", "", "ns")
    ));
    assert!(rule_matches(
        &cluster,
        &target("UPDATE", "namespaces", "", "ns")
    ));
    assert!(rule_matches(&cluster, &target("CREATE", "nodes", "", "")));
    assert!(!rule_matches(&cluster, &target("CREATE", "pods", "", "ns")));
}

fn config(name: &str, hooks: Value) -> Value {
    json!({"metadata": {"name": name}, "webhooks": hooks})
}

#[test]
fn match_policy_equivalent_matches_other_versions_exact_does_not() {
    let hooks = hooks_of(&config(
        "c",
        json!([
            {"name": "eq.kas.test", "matchPolicy": "Equivalent", "clientConfig": {"url": "https://127.0.0.1:1/"},
             "rules": [{"operations": ["CREATE"], "apiGroups": ["autoscaling"], "apiVersions": ["v2"], "resources": ["horizontalpodautoscalers"]}]},
            {"name": "exact.kas.test", "matchPolicy": "Exact", "clientConfig": {"url": "https://127.0.0.1:1/"},
             "rules": [{"operations": ["CREATE"], "apiGroups": ["autoscaling"], "apiVersions": ["v2"], "resources": ["horizontalpodautoscalers"]}]}
        ]),
    ));
    let v1 = Target {
        operation: "CREATE",
        group: "autoscaling",
        version: "v1",
        resource: "horizontalpodautoscalers",
        subresource: "",
        namespace: "ns",
    };
    assert!(hook_matches(&hooks[0], &v1));
    assert!(!hook_matches(&hooks[1], &v1));
    assert!(hook_matches(
        &hooks[1],
        &Target {
            version: "v2",
            ..v1
        }
    ));
}

#[test]
fn configurations_parse_with_upstreams_defaults_and_sort_by_name() {
    let source = Source::default();
    source.replace(&[
        config("b", json!([{"name": "b1.kas.test", "clientConfig": {"service": {"name": "hook", "namespace": "system", "path": "/admit"}}}])),
        config("a", json!([
            {"name": "a1.kas.test", "failurePolicy": "Ignore", "timeoutSeconds": 3, "reinvocationPolicy": "IfNeeded",
             "clientConfig": {"url": "https://hook.example:8443/m"}, "admissionReviewVersions": ["v1beta1", "v1"]},
            {"name": "a2.kas.test", "clientConfig": {"url": "https://hook.example/v"}}
        ])),
    ]);
    let hooks = source.hooks();
    let names: Vec<&str> = hooks.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["a1.kas.test", "a2.kas.test", "b1.kas.test"]);
    assert!(hooks[0].ignore_failures && hooks[0].reinvoke_if_needed);
    assert_eq!(hooks[0].timeout.as_secs(), 3);
    assert!(!hooks[1].ignore_failures, "Fail is the default");
    assert!(hooks[1].equivalent, "Equivalent is the default");
    assert_eq!(hooks[1].timeout.as_secs(), 10);
    assert_eq!(hooks[2].url, "https://hook.system.svc:443/admit");
    source.set(&config("a", json!([])), false);
    assert_eq!(source.hooks().len(), 1);
}

#[test]
fn admission_configuration_kinds_are_exempt() {
    assert!(is_exempt(
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration"
    ));
    assert!(is_exempt(
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding"
    ));
    assert!(!is_exempt("", "ConfigMap"));
}

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

fn user() -> kas_auth::UserInfo {
    kas_auth::UserInfo {
        name: "alice".into(),
        uid: "7".into(),
        groups: vec!["devs".into()],
        extra: [("scopes".to_owned(), vec!["read".to_owned()])].into(),
    }
}

fn request<'a>(
    operation: &'static str,
    user: &'a kas_auth::UserInfo,
    old: Option<&'a Value>,
) -> Request<'a> {
    Request {
        operation,
        descriptor: &CONFIGMAPS,
        kind: ("", "v1", "ConfigMap"),
        namespace: "team",
        name: "cm",
        subresource: "",
        old_object: old,
        dry_run: false,
        user: Some(user),
        warnings: None,
    }
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

fn webhooks(hooks: Value) -> Webhooks {
    let source = Arc::new(Source::default());
    source.replace(&[config("c", hooks)]);
    Webhooks::with_source(source, &[])
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

fn unreachable(policy: &str) -> Value {
    json!([{"name": "v.kas.test", "failurePolicy": policy, "sideEffects": "None",
            "admissionReviewVersions": ["v1"], "clientConfig": {"url": "https://127.0.0.1:1/x"},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]}])
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

#[tokio::test]
async fn object_selectors_look_at_the_object_or_the_old_one() {
    let alice = user();
    let mut hooks = unreachable("Fail");
    hooks[0]["objectSelector"] = json!({"matchLabels": {"hooked": "yes"}});
    hooks[0]["rules"][0]["operations"] = json!(["*"]);
    let plugin = webhooks(hooks);
    let plain = json!({"metadata": {"name": "cm", "labels": {"hooked": "no"}}});
    let labeled = json!({"metadata": {"name": "cm", "labels": {"hooked": "yes"}}});
    plugin
        .validate(&request("CREATE", &alice, None), Some(&plain))
        .await
        .unwrap();
    assert!(
        plugin
            .validate(&request("CREATE", &alice, None), Some(&labeled))
            .await
            .is_err()
    );
    assert!(
        plugin
            .validate(&request("UPDATE", &alice, Some(&labeled)), Some(&plain))
            .await
            .is_err()
    );
    assert!(
        plugin
            .validate(&request("DELETE", &alice, Some(&labeled)), None)
            .await
            .is_err()
    );
}

#[test]
fn match_conditions_evaluate_in_order_false_before_errors() {
    use super::matchconditions::{Condition, Outcome, evaluate};
    let alice = user();
    let req = request("CREATE", &alice, None);
    let variables = review::condition_request(&req);
    assert_eq!(variables["name"], "cm");
    assert_eq!(variables["subResource"], "");
    assert_eq!(variables.get("object"), None);
    let object = json!({"metadata": {"name": "cm", "labels": {}}});
    let run = |exprs: &[&str]| {
        let conditions: Vec<Condition> = exprs
            .iter()
            .enumerate()
            .map(|(i, e)| Condition::new(&format!("c{i}"), e))
            .collect();
        evaluate(&conditions, Some(&object), None, &variables)
    };
    assert_eq!(
        run(&[
            "object.metadata.name == 'cm'",
            "request.operation == 'CREATE' && request.userInfo.username == 'alice'",
            "oldObject == null",
        ]),
        Outcome::Match
    );
    assert_eq!(
        run(&["true", "request.namespace == 'other'"]),
        Outcome::NoMatch("c1".into())
    );
    let missing = "object.metadata.labels.missing == 'x'";
    assert_eq!(
        run(&[missing]),
        Outcome::Error(format!(
            "expression '{missing}' resulted in error: no such key: missing"
        ))
    );
    assert_eq!(run(&[missing, "false"]), Outcome::NoMatch("c1".into()));
    let Outcome::Error(both) = run(&[missing, missing]) else {
        panic!("two errors");
    };
    assert!(
        both.starts_with("[expression '") && both.contains("missing, expression"),
        "{both}"
    );
}

#[tokio::test]
async fn match_conditions_skip_a_webhook_or_fail_closed() {
    let alice = user();
    let req = request("CREATE", &alice, None);
    let object = json!({"metadata": {"name": "cm", "namespace": "team", "labels": {}}});
    let with = |policy: &str, expression: &str| {
        let mut hooks = unreachable(policy);
        hooks[0]["matchConditions"] = json!([{"name": "only", "expression": expression}]);
        webhooks(hooks)
    };
    // A false condition: the unreachable webhook is not called.
    with("Fail", "object.metadata.name != 'cm'")
        .validate(&req, Some(&object))
        .await
        .unwrap();
    let status = with("Fail", "object.metadata.labels.nope")
        .validate(&req, Some(&object))
        .await
        .unwrap_err();
    assert_eq!(status.code, 403);
    assert_eq!(
        status.message.as_deref(),
        Some(
            "configmaps \"cm\" is forbidden: expression 'object.metadata.labels.nope' resulted in error: no such key: nope"
        )
    );
    with("Ignore", "object.metadata.labels.nope")
        .validate(&req, Some(&object))
        .await
        .unwrap();
    // A true condition calls it.
    let status = with("Fail", "object.metadata.name == 'cm'")
        .validate(&req, Some(&object))
        .await
        .unwrap_err();
    assert_eq!(status.code, 500);
}

#[test]
fn a_namespaces_own_writes_name_it_and_subresources_their_kind() {
    use kas_registry::admission::{Attributes, Operation};
    let namespaces = &NAMESPACES;
    let update = Attributes::new(Operation::Update, namespaces, "", "team", None);
    assert_eq!(Request::new(&update).namespace, "team");
    let create = Attributes::new(Operation::Create, namespaces, "", "team", None);
    assert_eq!(Request::new(&create).namespace, "");
    let eviction = Attributes {
        subresource: "eviction",
        ..Attributes::new(Operation::Create, &PODS, "team", "p", None)
    };
    assert_eq!(Request::new(&eviction).kind, ("policy", "v1", "Eviction"));
    let status = Attributes {
        subresource: "status",
        ..Attributes::new(Operation::Update, &PODS, "team", "p", None)
    };
    assert_eq!(Request::new(&status).kind, ("", "v1", "Pod"));
}

/// A plain-HTTP webhook on a free port answering each review with `handler(path, review)`
/// (the client speaks HTTP as well as HTTPS); its base URL.
async fn serve(handler: impl Fn(&str, &Value) -> Value + Send + Sync + 'static) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handler = Arc::new(handler);
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let handler = handler.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let (head_end, length) = loop {
                    let n = tcp.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
                        let length = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        break (end + 4, length);
                    }
                };
                while buf.len() < head_end + length {
                    let n = tcp.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                let path = path.split('?').next().unwrap_or("/").to_owned();
                let review: Value = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
                let body = handler(&path, &review).to_string();
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = tcp.write_all(answer.as_bytes()).await;
            });
        }
    });
    url
}

fn allowed(review: &Value, patch: Option<Value>, warnings: &[&str]) -> Value {
    use base64::Engine;
    let mut response =
        json!({"uid": review["request"]["uid"], "allowed": true, "warnings": warnings});
    if let Some(patch) = patch {
        response["patch"] =
            json!(base64::engine::general_purpose::STANDARD.encode(patch.to_string()));
        response["patchType"] = json!("JSONPatch");
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

fn mutating_hook(name: &str, url: &str, reinvoke: &str) -> Value {
    json!({"name": name, "reinvocationPolicy": reinvoke, "sideEffects": "None",
           "admissionReviewVersions": ["v1"], "clientConfig": {"url": url},
           "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]})
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
