//! Upstream's audit webhook backend (`k8s.io/apiserver/plugin/pkg/audit/webhook`): each
//! batch of events is one `audit.k8s.io/v1` `EventList` posted through a
//! [`GenericWebhook`] loaded from `--audit-webhook-config-file`, retried on every error
//! (upstream's `retryOnError`) with `DefaultRetryBackoffWithInitialDelay` of
//! `--audit-webhook-initial-backoff`.
//!
//! [`Sink::process_events`] is synchronous (the buffered backend's worker is a plain
//! thread), and the client is async: the post runs on the runtime whose [`Handle`] the
//! backend was given, and the caller's thread waits for it.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::runtime::serializer::parse_group_version;
use kas_audit::event::{API_VERSION, Event, EventList};
use kas_audit::{Backend, Sink};
use tokio::runtime::{Handle, RuntimeFlavor};
use tracing::Instrument as _;

use crate::generic::{Backoff, GenericWebhook};
use crate::{Error, Result};

/// Upstream's `PluginName`: the backend's name and its errors' `plugin` label.
pub const PLUGIN_NAME: &str = "webhook";

/// Upstream's `DefaultInitialBackoffDelay`, `--audit-webhook-initial-backoff`'s default.
pub const DEFAULT_INITIAL_BACKOFF_DELAY: Duration = Duration::from_secs(10);

/// `--audit-webhook-version`'s default and, in 1.33, its one accepted value.
pub const DEFAULT_GROUP_VERSION: &str = API_VERSION;

/// Upstream's `knownGroupVersions`.
const KNOWN_GROUP_VERSIONS: [&str; 1] = [API_VERSION];

/// The options' `validateGroupVersionString` for `--audit-webhook-version`, with its error
/// texts.
pub fn validate_group_version(group_version: &str) -> Result<(), String> {
    parse_group_version(group_version).map_err(|e| e.to_string())?;
    if !is_known(group_version) {
        let known: Vec<String> = KNOWN_GROUP_VERSIONS.iter().map(|gv| quote(gv)).collect();
        return Err(format!(
            "invalid group version, allowed versions are [{}]",
            known.join(" ")
        ));
    }
    Ok(())
}

fn is_known(group_version: &str) -> bool {
    let Ok(gv) = parse_group_version(group_version) else {
        return false;
    };
    KNOWN_GROUP_VERSIONS
        .iter()
        .any(|known| parse_group_version(known).is_ok_and(|k| k == gv))
}

/// Upstream's `retryOnError`: an audit event dropped costs more than a retry, so every
/// error is retried.
fn retry_on_error(_: &Error) -> bool {
    true
}

/// Why a batch was not delivered.
#[derive(Debug, thiserror::Error)]
enum SendError {
    #[error(transparent)]
    Webhook(#[from] Error),
    #[error("encoding the audit events: {0}")]
    Encode(#[source] serde_json::Error),
    /// Waiting on a current-thread runtime's thread could block the runtime the post
    /// needs.
    #[error(
        "the audit webhook was called on a current-thread runtime's thread, where it cannot wait"
    )]
    CurrentThreadRuntime,
    #[error("the audit webhook's runtime stopped before the post finished")]
    RuntimeStopped,
}

/// Upstream's webhook `backend`.
pub struct AuditWebhookBackend {
    webhook: Arc<GenericWebhook>,
    runtime: Handle,
}

impl AuditWebhookBackend {
    /// Upstream's `NewBackend(configFile, groupVersion,
    /// DefaultRetryBackoffWithInitialDelay(initialBackoff), nil)`: the kubeconfig at
    /// `config_file` loaded as client-go loads it, `group_version` one of the known ones
    /// (NewGenericWebhook's check; the options check it first with
    /// [`validate_group_version`]). Upstream's options prefix an error with `initializing
    /// audit webhook: `.
    ///
    /// Posts run on `runtime`: a multi-threaded runtime, or a current-thread one that
    /// another thread drives.
    pub fn new(
        config_file: &Path,
        group_version: &str,
        initial_backoff: Duration,
        runtime: Handle,
    ) -> Result<AuditWebhookBackend> {
        let config = crate::kubeconfig::load(config_file)?;
        if !is_known(group_version) {
            let (group, version) = parse_group_version(group_version).unwrap_or_default();
            let gv = match group.is_empty() {
                true => version,
                false => format!("{group}/{version}"),
            };
            return Err(Error::Config(format!(
                "webhook plugin requires enabling extension resource: {gv}"
            )));
        }
        let backoff = Backoff::with_initial_delay(initial_backoff);
        let webhook = GenericWebhook::new(config, backoff)?.with_should_retry(retry_on_error);
        Ok(AuditWebhookBackend {
            webhook: Arc::new(webhook),
            runtime,
        })
    }

    /// Upstream's `processEvents`: the events as one `EventList`, posted until it is
    /// accepted or the backoff runs out.
    fn send(&self, events: &[Event]) -> Result<(), SendError> {
        // Go's JSON encoder ends the document with a newline.
        let mut body = serde_json::to_vec(&EventList::new(events)).map_err(SendError::Encode)?;
        body.push(b'\n');
        let webhook = self.webhook.clone();
        let span = tracing::info_span!(
            "Call Audit Events webhook",
            name = PLUGIN_NAME,
            event_count = events.len()
        );
        let post = async move { webhook.post_ignoring_body(&body).await }.instrument(span);
        self.wait(post)?.map_err(SendError::from)
    }

    /// Runs `fut` on the backend's runtime and waits for it on this thread: a plain
    /// thread blocks; a worker of a multi-threaded runtime hands its other tasks on
    /// meanwhile (`block_in_place`); a current-thread runtime's thread is refused rather
    /// than risk blocking the runtime the post needs.
    fn wait<T: Send + 'static>(
        &self,
        fut: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, SendError> {
        let on_worker = match Handle::try_current().map(|h| h.runtime_flavor()) {
            Err(_) => false,
            Ok(RuntimeFlavor::MultiThread) => true,
            Ok(_) => return Err(SendError::CurrentThreadRuntime),
        };
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        // A runtime shut down drops the task, and with it the sender: the wait ends.
        self.runtime.spawn(async move {
            let _ = tx.send(fut.await);
        });
        let answer = match on_worker {
            true => tokio::task::block_in_place(|| rx.recv()),
            false => rx.recv(),
        };
        answer.map_err(|_| SendError::RuntimeStopped)
    }
}

impl Sink for AuditWebhookBackend {
    fn process_events(&self, events: &[Event]) -> bool {
        match self.send(events) {
            Ok(()) => true,
            Err(err) => {
                let impacted: Vec<&Event> = events.iter().collect();
                kas_audit::metrics::handle_plugin_error(PLUGIN_NAME, &err, &impacted);
                false
            }
        }
    }
}

impl Backend for AuditWebhookBackend {
    /// Nothing is buffered here (upstream's `Shutdown` does nothing either).
    fn shutdown(&self) {}

    fn name(&self) -> String {
        PLUGIN_NAME.to_owned()
    }
}

#[cfg(test)]
mod tests;
