//! Tests of the plugins, by concept: what a write is matched against (`matching`), and
//! what a call sends, gets back and does with it (`calls`). The helpers here serve both.

mod calls;
mod matching;

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

fn config(name: &str, hooks: Value) -> Value {
    json!({"metadata": {"name": name}, "webhooks": hooks})
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
        audit: None,
    }
}

fn webhooks(hooks: Value) -> Webhooks {
    let source = Arc::new(Source::default());
    source.replace(&[config("c", hooks)]);
    Webhooks::with_source(source, &[])
}

fn unreachable(policy: &str) -> Value {
    json!([{"name": "v.kas.test", "failurePolicy": policy, "sideEffects": "None",
            "admissionReviewVersions": ["v1"], "clientConfig": {"url": "https://127.0.0.1:1/x"},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]}])
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
