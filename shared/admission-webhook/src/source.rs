//! The webhooks of the MutatingWebhookConfigurations or ValidatingWebhookConfigurations,
//! kept from a watch of their store's cache (upstream's `configuration.mutatingWebhook
//! ConfigurationManager` over an informer): configurations in name order, each one's
//! webhooks in its order, parsed once per change, so a request reads one shared snapshot
//! and a role with no configuration answers "no webhook" at the cost of one lock.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures_util::StreamExt;
use kas_apimachinery::labels::{self, Selector};
use kas_registry::store::Store;
use kas_storage::WatchEvent;
use serde_json::Value;

/// How long a client waits at most: upstream's largest `timeoutSeconds` (30); each call
/// keeps its webhook's own timeout.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);

/// One rule of a webhook (upstream `RuleWithOperations`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rule {
    pub operations: Vec<String>,
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    /// `Cluster`, `Namespaced` or `*`; `None` is `*`.
    pub scope: Option<String>,
}

/// One webhook, parsed (upstream's `WebhookAccessor`).
pub struct Hook {
    /// The configuration's name.
    pub configuration: String,
    pub name: String,
    pub rules: Vec<Rule>,
    /// `matchPolicy: Equivalent` (the default).
    pub equivalent: bool,
    /// The parsed `namespaceSelector`, or the error parsing it.
    pub namespace_selector: Result<Selector, String>,
    pub object_selector: Result<Selector, String>,
    pub side_effects: Option<String>,
    pub timeout: Duration,
    /// `failurePolicy: Ignore`.
    pub ignore_failures: bool,
    pub admission_review_versions: Vec<String>,
    /// `reinvocationPolicy: IfNeeded` (mutating webhooks).
    pub reinvoke_if_needed: bool,
    /// Its `matchConditions`, compiled.
    pub match_conditions: Vec<super::matchconditions::Condition>,
    pub url: String,
    /// The client of its `clientConfig`, or why it could not be built.
    pub client: Result<kas_webhook::Client, String>,
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn selector(v: Option<&Value>) -> Result<Selector, String> {
    match v {
        // Defaulted to `{}`; an absent one selects everything as upstream's nil pointer.
        None | Some(Value::Null) => Ok(Selector::everything()),
        Some(v) => labels::from_label_selector(v).map_err(|e| e.to_string()),
    }
}

/// The URL and client of a `clientConfig` (kas-webhook's `client_config::endpoint`).
fn client(config: &Value) -> (String, Result<kas_webhook::Client, String>) {
    let (url, tls) = kas_webhook::client_config::endpoint(config);
    let client = tls
        .and_then(|tls| kas_webhook::Client::new(&tls, CLIENT_TIMEOUT).map_err(|e| e.to_string()));
    (url, client)
}

/// The webhooks of one configuration object, in its order.
pub fn hooks_of(configuration: &Value) -> Vec<Arc<Hook>> {
    let name = kas_registry::meta::name(configuration);
    let webhooks = configuration.get("webhooks").and_then(Value::as_array);
    let text = |h: &Value, k: &str| h.get(k).and_then(Value::as_str).map(str::to_owned);
    webhooks
        .into_iter()
        .flatten()
        .map(|h| {
            let rules = h.get("rules").and_then(Value::as_array);
            let rules = rules
                .into_iter()
                .flatten()
                .map(|r| Rule {
                    operations: strings(r.get("operations")),
                    api_groups: strings(r.get("apiGroups")),
                    api_versions: strings(r.get("apiVersions")),
                    resources: strings(r.get("resources")),
                    scope: text(r, "scope"),
                })
                .collect();
            let timeout = h
                .get("timeoutSeconds")
                .and_then(Value::as_u64)
                .unwrap_or(10);
            let (url, client) = client(h.get("clientConfig").unwrap_or(&Value::Null));
            Arc::new(Hook {
                configuration: name.to_owned(),
                name: text(h, "name").unwrap_or_default(),
                rules,
                equivalent: text(h, "matchPolicy").as_deref() != Some("Exact"),
                namespace_selector: selector(h.get("namespaceSelector")),
                object_selector: selector(h.get("objectSelector")),
                side_effects: text(h, "sideEffects"),
                timeout: Duration::from_secs(timeout),
                ignore_failures: text(h, "failurePolicy").as_deref() == Some("Ignore"),
                admission_review_versions: strings(h.get("admissionReviewVersions")),
                reinvoke_if_needed: text(h, "reinvocationPolicy").as_deref() == Some("IfNeeded"),
                match_conditions: super::matchconditions::conditions_of(h),
                url,
                client,
            })
        })
        .collect()
}

/// The configurations of one kind and the snapshot of their webhooks.
#[derive(Default)]
pub struct Source {
    configurations: RwLock<BTreeMap<String, Vec<Arc<Hook>>>>,
    hooks: RwLock<Arc<Vec<Arc<Hook>>>>,
    synced: AtomicBool,
}

impl Source {
    /// The webhooks, configurations in name order (upstream sorts them so).
    pub fn hooks(&self) -> Arc<Vec<Arc<Hook>>> {
        self.hooks
            .read()
            .map(|h| h.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    /// Whether the first list has been applied.
    pub fn has_synced(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }

    /// Waits up to `limit` for the first list (upstream's `WaitForReady`, 10 s).
    pub async fn wait_synced(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        while !self.has_synced() {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        true
    }

    fn publish(&self, configurations: &BTreeMap<String, Vec<Arc<Hook>>>) {
        let all: Vec<Arc<Hook>> = configurations.values().flatten().cloned().collect();
        if let Ok(mut hooks) = self.hooks.write() {
            *hooks = Arc::new(all);
        }
    }

    /// Replaces every configuration with `objects`.
    pub fn replace(&self, objects: &[Value]) {
        let configurations: BTreeMap<String, Vec<Arc<Hook>>> = objects
            .iter()
            .map(|o| (kas_registry::meta::name(o).to_owned(), hooks_of(o)))
            .collect();
        self.publish(&configurations);
        if let Ok(mut current) = self.configurations.write() {
            *current = configurations;
        }
    }

    /// Sets (`present`) or removes one configuration.
    pub fn set(&self, object: &Value, present: bool) {
        let Ok(mut current) = self.configurations.write() else {
            return;
        };
        let name = kas_registry::meta::name(object).to_owned();
        if present {
            current.insert(name, hooks_of(object));
        } else {
            current.remove(&name);
        }
        self.publish(&current);
    }

    /// Follows `configurations` for as long as the process runs: a list, then a watch
    /// from its revision, again after any end or error.
    pub fn follow(self: &Arc<Self>, configurations: Store) {
        let this = self.clone();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("webhook configurations are not followed outside a runtime");
            return;
        };
        runtime.spawn(async move {
            loop {
                if let Err(e) = this.sync(&configurations).await {
                    let message = e.to_status().message.unwrap_or_default();
                    tracing::debug!(error = %message, "following webhook configurations");
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }

    async fn sync(&self, configurations: &Store) -> kas_registry::Result<()> {
        let (objects, mut events) = configurations.list_then_watch().await?;
        self.replace(&objects);
        self.synced.store(true, Ordering::Release);
        while let Some(event) = events.next().await {
            match event {
                WatchEvent::Added(o) | WatchEvent::Modified(o) => self.set(&o.value()?, true),
                WatchEvent::Deleted(o) => self.set(&o.value()?, false),
                WatchEvent::Error(_) => return Ok(()),
                _ => {}
            }
        }
        Ok(())
    }
}
