//! Kubernetes API operations under load (GET, LIST, CREATE, UPDATE, WATCH) against any
//! endpoint, with the same closed-loop model and per-worker latencies as `load`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http::{HeaderMap, Method, Request};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};

use crate::client::{Sender, Tls, connect_h2};
use crate::load::LoadResult;

/// Where and as whom.
#[derive(Clone)]
pub struct Target {
    pub base: http::Uri,
    pub tls: Tls,
    pub headers: HeaderMap,
    pub namespace: String,
    pub resource: Resource,
}

/// What the load reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Resource {
    /// ConfigMaps of `--object-size` bytes of data.
    Configmaps,
    /// Opaque Secrets of `--object-size` bytes of data (what encryption at rest encrypts).
    Secrets,
    /// Realistic pods of about 3 KiB (two containers with ports, env, resources, probes
    /// and mounts; volumes, tolerations, affinity); `--object-size` bytes more of annotation.
    Pods,
    /// Deployments whose template is the realistic pod of `pods`.
    Deployments,
    /// Custom resources (`widgets.bench.kas.dev`, created first when missing) with
    /// `--object-size` bytes of `spec.payload`, the configmaps' shape as a custom resource.
    Widgets,
}

impl Resource {
    fn plural(self) -> &'static str {
        match self {
            Resource::Configmaps => "configmaps",
            Resource::Secrets => "secrets",
            Resource::Pods => "pods",
            Resource::Deployments => "deployments",
            Resource::Widgets => "widgets",
        }
    }

    /// The collection's group version path (`/api/v1`, `/apis/<group>/<version>`).
    fn group_version(self) -> &'static str {
        match self {
            Resource::Widgets => "/apis/bench.kas.dev/v1",
            Resource::Deployments => "/apis/apps/v1",
            _ => "/api/v1",
        }
    }

    /// An object to write; `seq` marks an update.
    pub fn object(self, name: Option<&str>, size: usize, labels: Value) -> Value {
        match self {
            Resource::Configmaps => config_map(name, size, labels),
            Resource::Secrets => secret(name, size, labels),
            Resource::Pods => pod(name, size, labels),
            Resource::Deployments => deployment(name, size, labels),
            Resource::Widgets => widget(name, size, labels),
        }
    }

    fn mark(self, body: &mut Value, seq: u64) {
        match self {
            Resource::Configmaps => body["data"]["seq"] = json!(seq.to_string()),
            // `MTIz` and so on: any base64 of the sequence number's digits.
            Resource::Secrets => {
                body["data"]["seq"] = json!(base64::Engine::encode(
                    &base64::engine::general_purpose::STANDARD,
                    seq.to_string()
                ))
            }
            Resource::Pods | Resource::Deployments => {
                body["metadata"]["labels"]["seq"] = json!(seq.to_string())
            }
            Resource::Widgets => body["spec"]["seq"] = json!(seq.to_string()),
        }
    }
}

impl Target {
    pub(crate) fn url(&self, path: &str) -> String {
        format!(
            "https://{}{path}",
            self.base.authority().map(|a| a.as_str()).unwrap_or("")
        )
    }

    fn collection(&self) -> String {
        format!(
            "{}/namespaces/{}/{}",
            self.resource.group_version(),
            self.namespace,
            self.resource.plural()
        )
    }

    pub(crate) async fn send(
        &self,
        sender: &mut Sender,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Bytes)> {
        let mut req = Request::new(Full::new(
            body.map(|b| Bytes::from(b.to_string())).unwrap_or_default(),
        ));
        // The only PATCH sent is a server-side apply.
        let content_type = if method == Method::PATCH {
            "application/apply-patch+yaml"
        } else {
            "application/json"
        };
        *req.method_mut() = method;
        *req.uri_mut() = self.url(path).parse()?;
        *req.headers_mut() = self.headers.clone();
        req.headers_mut()
            .insert(http::header::CONTENT_TYPE, content_type.parse()?);
        let resp = sender.send_request(req).await?;
        let code = resp.status().as_u16();
        Ok((code, resp.into_body().collect().await?.to_bytes()))
    }
}

/// What client-go's typed clients send for built-in types: protobuf, else JSON.
pub const PROTOBUF_ACCEPT: &str = "application/vnd.kubernetes.protobuf, application/json";

/// A ConfigMap with `size` bytes of data.
pub fn config_map(name: Option<&str>, size: usize, labels: Value) -> Value {
    let mut meta = json!({"labels": labels});
    match name {
        Some(n) => meta["name"] = json!(n),
        None => meta["generateName"] = json!("bench-"),
    }
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"payload": "x".repeat(size)}})
}

/// An Opaque Secret with `size` bytes of data.
pub fn secret(name: Option<&str>, size: usize, labels: Value) -> Value {
    let mut meta = json!({"labels": labels});
    match name {
        Some(n) => meta["name"] = json!(n),
        None => meta["generateName"] = json!("bench-"),
    }
    let data = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, "x".repeat(size));
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque", "data": {"payload": data}})
}

/// A Widget with `size` bytes of `spec.payload`.
pub fn widget(name: Option<&str>, size: usize, labels: Value) -> Value {
    let mut meta = json!({"labels": labels});
    match name {
        Some(n) => meta["name"] = json!(n),
        None => meta["generateName"] = json!("bench-"),
    }
    json!({"apiVersion": "bench.kas.dev/v1", "kind": "Widget", "metadata": meta,
        "spec": {"payload": "x".repeat(size)}})
}

/// The CRD of [`widget`]s: a structural schema of strings, as small CRDs have.
pub fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.bench.kas.dev"},
        "spec": {"group": "bench.kas.dev", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "payload": {"type": "string"}, "seq": {"type": "string"}}}}}}}]}
    })
}

/// Creates the Widget CRD unless it exists, and waits until widgets can be listed.
async fn ensure_widgets(t: &Target, sender: &mut Sender) -> Result<()> {
    let (code, body) = t
        .send(
            sender,
            Method::POST,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            Some(widget_crd()),
        )
        .await?;
    if code != 201 && code != 409 {
        bail!(
            "creating the Widget CRD: {code} {}",
            String::from_utf8_lossy(&body)
        );
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (code, _) = t.send(sender, Method::GET, &t.collection(), None).await?;
        if code == 200 {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            bail!("widgets are not served: {code}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A pod as a Deployment's template makes them: about 3 KiB of JSON, and `size` bytes of
/// annotation more.
pub fn pod(name: Option<&str>, size: usize, labels: Value) -> Value {
    let mut meta = json!({"labels": labels, "annotations": {
        "kubectl.kubernetes.io/restartedAt": "2024-05-06T07:08:09Z",
        "prometheus.io/scrape": "true", "prometheus.io/port": "9090",
        "bench/payload": "x".repeat(size),
    }});
    meta["labels"]["app.kubernetes.io/name"] = json!("web");
    meta["labels"]["pod-template-hash"] = json!("7d9c8b6f5");
    match name {
        Some(n) => meta["name"] = json!(n),
        None => meta["generateName"] = json!("bench-"),
    }
    let container = |name: &str, image: &str, port: u16| {
        json!({
            "name": name, "image": image,
            "ports": [{"name": "http", "containerPort": port}, {"name": "metrics", "containerPort": 9090}],
            "env": [
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                {"name": "LOG_LEVEL", "value": "info"},
                {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
            ],
            "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "initialDelaySeconds": 10},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}, "periodSeconds": 5},
            "volumeMounts": [
                {"name": "config", "mountPath": "/etc/app"},
                {"name": "cache", "mountPath": "/var/cache/app"},
            ],
            "securityContext": {"runAsNonRoot": true, "allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"]}},
        })
    };
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {
        "containers": [container("web", "registry.example.com/web:1.27.3", 8080),
                       container("sidecar", "registry.example.com/proxy:2.4.1", 15001)],
        "volumes": [
            {"name": "config", "configMap": {"name": "web-config"}},
            {"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}},
        ],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
            "effect": "NoExecute", "tolerationSeconds": 300}],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "web"}}}}]}},
        "terminationGracePeriodSeconds": 30,
    }})
}

/// A Deployment of 3 replicas whose template is [`pod`]'s.
pub fn deployment(name: Option<&str>, size: usize, labels: Value) -> Value {
    let pod = pod(None, size, json!({}));
    let mut meta = json!({"labels": labels});
    match name {
        Some(n) => meta["name"] = json!(n),
        None => meta["generateName"] = json!("bench-"),
    }
    let mut template_meta = pod["metadata"].clone();
    if let Some(m) = template_meta.as_object_mut() {
        m.remove("generateName");
    }
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app.kubernetes.io/name": "web"}},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
        "template": {"metadata": template_meta, "spec": pod["spec"]},
    }})
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Op {
    Get,
    List,
    Create,
    Update,
    /// Server-side apply (PATCH, `application/apply-patch+yaml`, forced), each worker
    /// changing its own object.
    Apply,
    Watch,
}

pub struct Spec {
    pub target: Target,
    pub op: Op,
    pub concurrency: usize,
    pub duration: Duration,
    /// Objects to list (LIST) and their size in bytes.
    pub objects: usize,
    pub object_size: usize,
    /// WATCH: watchers, and writes per second.
    pub watchers: usize,
    pub writes_per_second: u64,
    /// LIST: extra query, e.g. `resourceVersion=0` (from the watch cache) or
    /// `resourceVersionMatch=Exact&resourceVersion={rv}` (from etcd; `{rv}` is replaced by
    /// the revision of a first list).
    pub list_query: String,
}

/// Runs one operation and returns its latencies (for WATCH: write-to-delivery latencies).
pub async fn run(spec: &Spec) -> Result<LoadResult> {
    let t = &spec.target;
    let mut setup = connect_h2(&t.base, &t.tls).await?;
    if t.resource == Resource::Widgets {
        ensure_widgets(t, &mut setup).await?;
    }
    match spec.op {
        Op::Get => {
            ensure(t, &mut setup, "bench-get", spec.object_size).await?;
            let path = format!("{}/bench-get", t.collection());
            closed_loop(spec, move |_, _| (Method::GET, path.clone(), None)).await
        }
        Op::List => {
            for i in 0..spec.objects {
                ensure(t, &mut setup, &format!("bench-list-{i}"), spec.object_size).await?;
            }
            let mut path = format!("{}?labelSelector=bench%3Dlist", t.collection());
            if !spec.list_query.is_empty() {
                let mut query = spec.list_query.clone();
                if query.contains("{rv}") {
                    let (_, body) = t.send(&mut setup, Method::GET, &path, None).await?;
                    let list: Value = serde_json::from_slice(&body)?;
                    let rv = list["metadata"]["resourceVersion"].as_str().unwrap_or("");
                    query = query.replace("{rv}", rv);
                }
                path = format!("{path}&{query}");
            }
            closed_loop(spec, move |_, _| (Method::GET, path.clone(), None)).await
        }
        Op::Create => {
            let body = t
                .resource
                .object(None, spec.object_size, json!({"bench": "create"}));
            let collection = t.collection();
            closed_loop(spec, move |_, _| {
                (Method::POST, collection.clone(), Some(body.clone()))
            })
            .await
        }
        Op::Update => {
            for w in 0..spec.concurrency {
                ensure(
                    t,
                    &mut setup,
                    &format!("bench-update-{w}"),
                    spec.object_size,
                )
                .await?;
            }
            // Unconditional updates (no resourceVersion), each worker on its own object.
            let (collection, size, resource) = (t.collection(), spec.object_size, t.resource);
            closed_loop(spec, move |w, seq| {
                let mut body = resource.object(
                    Some(&format!("bench-update-{w}")),
                    size,
                    json!({"bench": "update"}),
                );
                resource.mark(&mut body, seq);
                (
                    Method::PUT,
                    format!("{collection}/bench-update-{w}"),
                    Some(body),
                )
            })
            .await
        }
        Op::Apply => {
            let (collection, size, resource) = (t.collection(), spec.object_size, t.resource);
            closed_loop(spec, move |w, seq| {
                let name = format!("bench-apply-{w}");
                let mut body = resource.object(Some(&name), size, json!({"bench": "apply"}));
                resource.mark(&mut body, seq);
                let path = format!("{collection}/{name}?fieldManager=kas-bench&force=true");
                (Method::PATCH, path, Some(body))
            })
            .await
        }
        Op::Watch => watch(spec).await,
    }
}

async fn ensure(t: &Target, sender: &mut Sender, name: &str, size: usize) -> Result<()> {
    let labels = if name.starts_with("bench-list") {
        json!({"bench": "list"})
    } else {
        json!({})
    };
    let (code, body) = t
        .send(
            sender,
            Method::POST,
            &t.collection(),
            Some(t.resource.object(Some(name), size, labels)),
        )
        .await?;
    if code != 201 && code != 409 {
        bail!("creating {name}: {code} {}", String::from_utf8_lossy(&body));
    }
    Ok(())
}

async fn closed_loop<F>(spec: &Spec, make: F) -> Result<LoadResult>
where
    F: Fn(usize, u64) -> (Method, String, Option<Value>) + Send + Sync + Clone + 'static,
{
    let t = spec.target.clone();
    let sender = connect_h2(&t.base, &t.tls).await?;
    let start = Instant::now();
    let deadline = start + spec.duration;
    let mut tasks = Vec::new();
    for w in 0..spec.concurrency.max(1) {
        let (t, make, mut sender) = (t.clone(), make.clone(), sender.clone());
        tasks.push(tokio::spawn(async move {
            let mut r = LoadResult::default();
            let mut seq = 0;
            while Instant::now() < deadline {
                let (method, path, body) = make(w, seq);
                seq += 1;
                let sent = Instant::now();
                match t.send(&mut sender, method, &path, body).await {
                    Ok((code, _)) => {
                        r.latencies.push(sent.elapsed());
                        *r.codes.entry(code).or_default() += 1;
                    }
                    Err(_) => r.errors += 1,
                }
            }
            r
        }));
    }
    merge(tasks, start).await
}

/// The workers' results as one, over the time since `start`.
pub(crate) async fn merge(
    tasks: Vec<tokio::task::JoinHandle<LoadResult>>,
    start: Instant,
) -> Result<LoadResult> {
    let mut out = LoadResult::default();
    for task in tasks {
        let r = task.await?;
        for (code, n) in r.codes {
            *out.codes.entry(code).or_default() += n;
        }
        out.errors += r.errors;
        out.latencies.extend(r.latencies);
    }
    out.elapsed = start.elapsed();
    out.latencies.sort_unstable();
    Ok(out)
}

pub(crate) fn now_micros() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0)
}

/// `watchers` watches of one object; a writer stamps the write time in the object at a
/// fixed rate; each watcher records how long each event took to reach it.
async fn watch(spec: &Spec) -> Result<LoadResult> {
    let t = spec.target.clone();
    let mut writer = connect_h2(&t.base, &t.tls).await?;
    ensure(&t, &mut writer, "bench-watch", spec.object_size).await?;
    let connections = spec.watchers.div_ceil(100).max(1);
    let mut senders = Vec::new();
    for _ in 0..connections {
        senders.push(connect_h2(&t.base, &t.tls).await?);
    }
    let path = format!(
        "{}?watch=true&fieldSelector=metadata.name%3Dbench-watch&resourceVersion=0",
        t.collection()
    );
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for w in 0..spec.watchers {
        let mut sender = senders[w % senders.len()].clone();
        let (t, path, stop) = (t.clone(), path.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut r = LoadResult::default();
            let mut req = Request::new(Full::new(Bytes::new()));
            *req.uri_mut() = t.url(&path).parse().expect("url");
            *req.headers_mut() = t.headers.clone();
            let Ok(resp) = sender.send_request(req).await else {
                r.errors += 1;
                return r;
            };
            let protobuf = resp
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/vnd.kubernetes.protobuf"));
            let mut body = resp.into_body();
            let mut buf = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let frame =
                    match tokio::time::timeout(Duration::from_millis(200), body.frame()).await {
                        Ok(Some(Ok(f))) => f,
                        Ok(_) => break,
                        Err(_) => continue,
                    };
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                buf.extend_from_slice(&data);
                for event in next_events(&mut buf, protobuf) {
                    let stamp = event["object"]["metadata"]["annotations"]["bench/sent"]
                        .as_str()
                        .and_then(|s| s.parse::<u128>().ok());
                    if let (Some("MODIFIED"), Some(sent)) = (event["type"].as_str(), stamp) {
                        r.latencies.push(Duration::from_micros(
                            now_micros().saturating_sub(sent) as u64
                        ));
                        *r.codes.entry(200).or_default() += 1;
                    }
                }
            }
            r
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let start = Instant::now();
    let interval = Duration::from_micros(1_000_000 / spec.writes_per_second.max(1));
    let mut ticker = tokio::time::interval(interval);
    while start.elapsed() < spec.duration {
        ticker.tick().await;
        // An annotation: every resource has them, and no strategy refuses a change of one.
        let patch = json!({"metadata": {"annotations": {"bench/sent": now_micros().to_string()}}});
        let mut req = Request::new(Full::new(Bytes::from(patch.to_string())));
        *req.method_mut() = Method::PATCH;
        *req.uri_mut() = t.url(&format!("{}/bench-watch", t.collection())).parse()?;
        *req.headers_mut() = t.headers.clone();
        req.headers_mut().insert(
            http::header::CONTENT_TYPE,
            "application/merge-patch+json".parse()?,
        );
        let resp = writer.send_request(req).await.context("write")?;
        resp.into_body().collect().await?;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    merge(tasks, start).await
}

/// The complete watch events at the front of `buf`, removed from it, as
/// `{"type": ..., "object": ...}` (protobuf frames decoded with the ConfigMap schema).
pub(crate) fn next_events(buf: &mut Vec<u8>, protobuf: bool) -> Vec<Value> {
    use kas_apimachinery::protobuf;
    let mut events = Vec::new();
    if !protobuf {
        while let Some(nl) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=nl).collect();
            events.extend(serde_json::from_slice::<Value>(&line).ok());
        }
        return events;
    }
    let mut used = 0;
    while let Some((frame, rest)) = protobuf::next_frame(&buf[used..]) {
        let decoded = protobuf::decode_watch_event(frame).and_then(|e| {
            let unknown = protobuf::decode_envelope(&e.object)?;
            let object = protobuf::decode(&unknown.raw, &kas_api::core::v1::CONFIG_MAP)?;
            Ok(json!({"type": e.event_type, "object": object}))
        });
        events.extend(decoded.ok());
        used = buf.len() - rest.len();
    }
    buf.drain(..used);
    events
}
