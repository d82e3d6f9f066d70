//! The authorizer chain of a structured configuration (kube-apiserver's
//! `reloadableAuthorizerResolver.newForConfig`), and its reload when the file changes
//! (`runReload`/`checkFile`, `pkg/kubeapiserver/authorizer/reload.go`): a changed file is
//! loaded and validated; while it is invalid, or its chain cannot be built, the chain in
//! place stays and the error is logged. Node and RBAC keep the state the role built at
//! start, so a new file must keep every non-webhook type the first one had.
//!
//! Upstream watches the file with inotify and polls it each minute; here it is polled
//! ([`RELOAD_INTERVAL`]): a read of a small file, compared with the last bytes read.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures_util::future::BoxFuture;

use super::{AuthorizationConfiguration, AuthorizerConfiguration, TYPE_WEBHOOK};
use crate::authorization::{
    AlwaysAllow, AlwaysDeny, Attributes, Authorizer, Decision, DynAuthorizer, DynRuleResolver,
    MODE_ALWAYS_ALLOW, MODE_ALWAYS_DENY, MODE_NODE, MODE_RBAC, ModeAuthorizers, PrivilegedGroups,
    RuleResolver, RulesInfo, Union, union::UnionRuleResolver,
};
use crate::user::SYSTEM_PRIVILEGED_GROUP;
use crate::{Result, UserInfo};

/// How often the file is read for changes.
pub const RELOAD_INTERVAL: Duration = Duration::from_secs(1);

/// Builds a webhook entry's authorizer and rule resolver (kas-webhook's, handed in by the
/// server, which knows the retry backoff).
pub type WebhookFactory = Arc<
    dyn Fn(&AuthorizerConfiguration) -> Result<(DynAuthorizer, DynRuleResolver), String>
        + Send
        + Sync,
>;

/// Upstream's `newForConfig`: `system:masters` first, then each configured authorizer in
/// order, in a union; their rule resolvers in the same order.
pub fn new_for_config(
    config: &AuthorizationConfiguration,
    provided: &ModeAuthorizers,
    webhooks: &WebhookFactory,
) -> Result<(DynAuthorizer, DynRuleResolver), String> {
    if config.authorizers.is_empty() {
        return Err("at least one authorization mode must be passed".to_owned());
    }
    let mut authorizers: Vec<DynAuthorizer> = vec![Arc::new(PrivilegedGroups::new(vec![
        SYSTEM_PRIVILEGED_GROUP.to_owned(),
    ]))];
    let mut resolvers: Vec<DynRuleResolver> = Vec::new();
    let not_enabled = |t: &str| {
        format!(
            "authorizer type {t} is not allowed if it was not enabled at initial server startup"
        )
    };
    for a in &config.authorizers {
        let t = a.authorizer_type.as_str();
        let (authorizer, resolver): (DynAuthorizer, Option<DynRuleResolver>) = match t {
            MODE_NODE => match &provided.node {
                Some(node) => (node.clone(), provided.node_rules.clone()),
                None => return Err(not_enabled(t)),
            },
            MODE_RBAC => match &provided.rbac {
                Some(rbac) => (rbac.clone(), provided.rbac_rules.clone()),
                None => return Err(not_enabled(t)),
            },
            MODE_ALWAYS_ALLOW => (Arc::new(AlwaysAllow), Some(Arc::new(AlwaysAllow))),
            MODE_ALWAYS_DENY => (Arc::new(AlwaysDeny), Some(Arc::new(AlwaysDeny))),
            TYPE_WEBHOOK => {
                let (authorizer, rules) = webhooks(a)?;
                (authorizer, Some(rules))
            }
            "ABAC" => return Err(not_enabled(t)),
            _ => return Err(format!("unknown authorization mode {t} specified")),
        };
        authorizers.push(authorizer);
        resolvers.extend(resolver);
    }
    Ok((
        Arc::new(Union::new(authorizers)),
        Arc::new(UnionRuleResolver(resolvers)),
    ))
}

/// What `checkFile` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reload {
    /// The same bytes, or the same configuration: nothing to do.
    Unchanged,
    /// A new chain is in place.
    Reloaded,
    /// The file could not be read, loaded, validated or built; the old chain stays.
    Failed(String),
}

/// Upstream's `reloadableAuthorizerResolver`: the current chain, swapped on reload.
pub struct ReloadableAuthorizer {
    current: RwLock<(DynAuthorizer, DynRuleResolver)>,
    last: Mutex<(Vec<u8>, AuthorizationConfiguration)>,
    file: PathBuf,
    provided: ModeAuthorizers,
    webhooks: WebhookFactory,
    require_non_webhook_types: Vec<String>,
}

impl ReloadableAuthorizer {
    /// The chain of `config`, read from `file` as `data`.
    pub fn new(
        file: PathBuf,
        data: Vec<u8>,
        config: AuthorizationConfiguration,
        provided: ModeAuthorizers,
        webhooks: WebhookFactory,
    ) -> Result<Arc<ReloadableAuthorizer>, String> {
        let current = new_for_config(&config, &provided, &webhooks)?;
        let mut require_non_webhook_types: Vec<String> = config
            .authorizers
            .iter()
            .map(|a| a.authorizer_type.clone())
            .filter(|t| t != TYPE_WEBHOOK)
            .collect();
        require_non_webhook_types.sort();
        require_non_webhook_types.dedup();
        Ok(Arc::new(ReloadableAuthorizer {
            current: RwLock::new(current),
            last: Mutex::new((data, config)),
            file,
            provided,
            webhooks,
            require_non_webhook_types,
        }))
    }

    fn current(&self) -> (DynAuthorizer, DynRuleResolver) {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Upstream's `checkFile`: reads the file and, when it changed, loads, validates and
    /// builds it, then swaps the chain in. Failures are logged and leave the chain.
    pub fn check_file(&self) -> Reload {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let failed = |err: String| {
            tracing::error!(error = %err, "reloading authorization config");
            Reload::Failed(err)
        };
        let data = match super::decode::read_file(&self.file) {
            Ok(data) => data,
            Err(e) => return failed(e),
        };
        if data == last.0 {
            return Reload::Unchanged;
        }
        tracing::info!("found new authorization config data");
        last.0 = data;
        let config = match super::load_and_validate_data(&last.0, &self.require_non_webhook_types) {
            Ok(c) => c,
            Err(e) => return failed(e),
        };
        if config == last.1 {
            return Reload::Unchanged;
        }
        tracing::info!("found new authorization config");
        last.1 = config;
        match new_for_config(&last.1, &self.provided, &self.webhooks) {
            Ok(chain) => {
                *self.current.write().unwrap_or_else(|e| e.into_inner()) = chain;
                tracing::info!("reloaded authz config");
                Reload::Reloaded
            }
            Err(e) => failed(e),
        }
    }

    /// Upstream's `runReload`: checks the file every `interval` until the task is dropped
    /// with the runtime (call within it).
    pub fn run_reload(self: &Arc<Self>, interval: Duration) -> tokio::task::JoinHandle<()> {
        let this = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(interval);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticker.tick().await;
                let Some(this) = this.upgrade() else { return };
                // Reading and building do blocking file I/O.
                let _ = tokio::task::spawn_blocking(move || this.check_file()).await;
            }
        })
    }
}

impl Authorizer for ReloadableAuthorizer {
    fn authorize<'a>(&'a self, attrs: &'a Attributes) -> BoxFuture<'a, Result<(Decision, String)>> {
        let (authorizer, _) = self.current();
        Box::pin(async move { authorizer.authorize(attrs).await })
    }
}

impl RuleResolver for ReloadableAuthorizer {
    fn rules_for<'a>(&'a self, user: &'a UserInfo, namespace: &'a str) -> BoxFuture<'a, RulesInfo> {
        let (_, resolver) = self.current();
        Box::pin(async move { resolver.rules_for(user, namespace).await })
    }
}

#[cfg(test)]
#[path = "reload_tests.rs"]
mod tests;
