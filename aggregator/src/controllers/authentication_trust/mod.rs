//! Upstream's cluster-authentication-trust controller
//! (`pkg/controlplane/controller/clusterauthenticationtrust`): keeps
//! `kube-system/extension-apiserver-authentication` holding the CA that signs clients'
//! certificates (`--client-ca-file`) and the front-proxy settings (`--requestheader-*`)
//! this role was given, merged with what the ConfigMap already holds, so aggregated API
//! servers trust the clients and this role's proxied requests. Every replica runs it; the
//! union converges whatever their order.
//!
//! The ConfigMap is followed from etcd (read only) and written through this role's
//! delegate to core as `system:apiserver`, as upstream's loopback client writes. It is
//! synced when it is added or deleted, every minute (re-reading the CA files), and after a
//! failure with upstream's backoff.

mod info;

use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use http::{Method, StatusCode};
use kas_auth::authentication::RequestHeaderConfig;
use kas_delegate::Delegate;
use kas_storage::reflector::Reflect;
use kas_storage::{ObjectRef, Storage, WatchEvent};
use serde_json::{Value, json};
use tokio::sync::mpsc;

pub use info::AuthenticationInfo;

use crate::controllers::queue::{Queue, sleep_until};
use crate::loopback;

pub const NAMESPACE: &str = "kube-system";
pub const NAME: &str = "extension-apiserver-authentication";
/// Upstream's "checks are cheap. run once a minute just to be sure we stay in sync".
const RESYNC: Duration = Duration::from_secs(60);

/// What this role requires the ConfigMap to hold: its `--client-ca-file` and
/// `--requestheader-*` flags (upstream's `ClusterAuthenticationInfo`).
#[derive(Clone, Debug, Default)]
pub struct Required {
    pub client_ca_file: Option<PathBuf>,
    pub request_header: Option<RequestHeaderConfig>,
}

impl Required {
    pub fn from_options(options: &kas_server::options::AuthenticationOptions) -> Self {
        let request_header =
            options
                .requestheader_client_ca_file
                .as_ref()
                .map(|ca| RequestHeaderConfig {
                    client_ca_file: ca.clone(),
                    allowed_names: options.requestheader_allowed_names.clone(),
                    username_headers: options.requestheader_username_headers.clone(),
                    uid_headers: options.requestheader_uid_headers.clone(),
                    group_headers: options.requestheader_group_headers.clone(),
                    extra_header_prefixes: options.requestheader_extra_headers_prefix.clone(),
                });
        Required {
            client_ca_file: options.client_ca_file.clone(),
            request_header,
        }
    }

    /// The files' current content with the flags.
    fn info(&self) -> Result<AuthenticationInfo, String> {
        let bundle = |path: &PathBuf| -> Result<Vec<Vec<u8>>, String> {
            let pem = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            info::parse_bundle(&pem).map_err(|e| format!("{}: {e}", path.display()))
        };
        let mut info = AuthenticationInfo::default();
        if let Some(path) = &self.client_ca_file {
            info.client_ca = bundle(path)?;
        }
        if let Some(rh) = &self.request_header {
            info.request_header_ca = bundle(&rh.client_ca_file)?;
            info.username_headers = rh.username_headers.clone();
            info.uid_headers = rh.uid_headers.clone();
            info.group_headers = rh.group_headers.clone();
            info.extra_header_prefixes = rh.extra_header_prefixes.clone();
            info.allowed_names = rh.allowed_names.clone();
        }
        Ok(info)
    }
}

/// The ConfigMap as etcd last showed it; `None` until listed.
struct Followed {
    current: RwLock<Option<Option<Value>>>,
    trigger: mpsc::UnboundedSender<()>,
}

impl Followed {
    fn set(&self, value: Option<Value>) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Some(value);
    }

    fn replace(&self, items: &[ObjectRef]) {
        let ours = items
            .iter()
            .filter_map(|o| o.value().ok())
            .find(|cm| kas_registry::meta::name(cm) == NAME);
        self.set(ours);
        let _ = self.trigger.send(());
    }

    /// Upstream's handler queues on add and delete; an update is caught by the resync.
    fn apply(&self, event: &WatchEvent) -> Result<(), String> {
        let (object, deleted) = match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => (o, false),
            WatchEvent::Deleted(o) => (o, true),
            _ => return Ok(()),
        };
        let cm = object.value().map_err(|e| e.to_string())?;
        if kas_registry::meta::name(&cm) != NAME {
            return Ok(());
        }
        let added = matches!(event, WatchEvent::Added(_));
        self.set((!deleted).then_some(cm));
        if added || deleted {
            let _ = self.trigger.send(());
        }
        Ok(())
    }
}

/// Starts the controller: `etcd` to follow the ConfigMap, `delegate` to write it.
pub fn start(required: Required, etcd: Arc<dyn Storage>, delegate: Delegate) {
    let (trigger, triggers) = mpsc::unbounded_channel();
    let followed = Arc::new(Followed {
        current: RwLock::default(),
        trigger,
    });
    let weak = Arc::downgrade(&followed);
    tokio::spawn(async move {
        let replace = |f: &Followed, items: &[ObjectRef]| f.replace(items);
        let apply = |f: &Followed, event: &WatchEvent| f.apply(event);
        let reflect = Reflect {
            what: "ConfigMaps",
            replace: &replace,
            apply: &apply,
        };
        let key = format!("/configmaps/{NAMESPACE}");
        kas_storage::reflector::run(weak, &*etcd, &key, reflect).await;
    });
    tokio::spawn(run(required, followed, triggers, delegate));
}

async fn run(
    required: Required,
    followed: Arc<Followed>,
    mut triggers: mpsc::UnboundedReceiver<()>,
    delegate: Delegate,
) {
    let mut queue: Queue<()> = Queue::default();
    let mut resync = tokio::time::interval(RESYNC);
    loop {
        tokio::select! {
            t = triggers.recv() => match t {
                Some(()) => queue.add(()),
                None => return,
            },
            _ = resync.tick() => queue.add(()),
            () = sleep_until(queue.next_retry()) => {}
        }
        let current = followed
            .current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        // Not listed yet: the list's trigger comes.
        let Some(current) = current else { continue };
        if queue.take_ready().is_empty() {
            continue;
        }
        let result = sync(&required, current, &delegate).await;
        if let Err(e) = &result {
            tracing::warn!(configmap = %format!("{NAMESPACE}/{NAME}"), error = %e, "cluster authentication trust sync failed");
        }
        queue.done((), result.is_ok());
    }
}

/// Upstream's `syncConfigMap`.
async fn sync(
    required: &Required,
    current: Option<Value>,
    delegate: &Delegate,
) -> Result<(), String> {
    let data = current
        .as_ref()
        .and_then(|cm| cm.get("data"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let existing = AuthenticationInfo::from_data(&data)?;
    let combined = existing.combined(&required.info()?, SystemTime::now());
    let wanted = combined.to_data();
    let unchanged = data.len() == wanted.len()
        && wanted
            .iter()
            .all(|(k, v)| data.get(k).and_then(Value::as_str) == Some(v.as_str()));
    if unchanged {
        return Ok(());
    }
    tracing::info!("writing updated authentication info to {NAMESPACE} configmaps/{NAME}");
    let agent = loopback::user_agent();
    create_namespace_if_needed(delegate, &agent).await?;
    let mut cm = current.unwrap_or_else(|| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"namespace": NAMESPACE, "name": NAME}})
    });
    cm["data"] = json!(wanted);
    write(delegate, &agent, cm).await
}

async fn create_namespace_if_needed(delegate: &Delegate, agent: &str) -> Result<(), String> {
    let path = format!("/api/v1/namespaces/{NAMESPACE}");
    let (code, _) = loopback::send(delegate, agent, Method::GET, &path, None).await?;
    if code == StatusCode::OK {
        return Ok(());
    }
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}});
    let (code, answer) = loopback::send(
        delegate,
        agent,
        Method::POST,
        "/api/v1/namespaces",
        Some(ns),
    )
    .await?;
    match code {
        StatusCode::CREATED | StatusCode::CONFLICT => Ok(()),
        _ => Err(loopback::status_message(code, &answer)),
    }
}

/// Upstream's `writeConfigMap`: an update, a create when it is missing; one too big to
/// store is deleted for a controller to write again.
async fn write(delegate: &Delegate, agent: &str, cm: Value) -> Result<(), String> {
    let collection = format!("/api/v1/namespaces/{NAMESPACE}/configmaps");
    let path = format!("{collection}/{NAME}");
    let (mut code, mut answer) =
        loopback::send(delegate, agent, Method::PUT, &path, Some(cm.clone())).await?;
    if code == StatusCode::NOT_FOUND {
        let mut cm = cm;
        if let Some(meta) = cm.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("resourceVersion");
        }
        (code, answer) =
            loopback::send(delegate, agent, Method::POST, &collection, Some(cm)).await?;
    }
    if code.is_success() {
        return Ok(());
    }
    let message = loopback::status_message(code, &answer);
    let too_long = code == StatusCode::UNPROCESSABLE_ENTITY && message.contains("Too long");
    if code == StatusCode::PAYLOAD_TOO_LARGE || too_long {
        let (code, answer) = loopback::send(delegate, agent, Method::DELETE, &path, None).await?;
        if !code.is_success() {
            return Err(loopback::status_message(code, &answer));
        }
    }
    Err(message)
}
