//! The audit flags of kube-apiserver (`k8s.io/apiserver/pkg/server/options/audit.go`):
//! `--audit-policy-file`, the log backend's `--audit-log-*` and the webhook backend's
//! `--audit-webhook-*`, with upstream's defaults, validation messages and composition of
//! the backends (each mode's wrapping, then truncation). Every role takes them: the role
//! that answers a request writes its events (see `kas_audit::handoff`), so a deployment
//! gives the same audit flags to all three.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use kas_audit::backend::buffered::BatchConfig;
use kas_audit::backend::log::{Format, LogBackend};
use kas_audit::backend::rotate::RotateConfig;
use kas_audit::backend::truncate::{Truncate, TruncateConfig};
use kas_audit::backend::{Backend, Mode, Union};

use super::GoDuration;

const AUDIT_V1: &str = kas_webhook::audit::DEFAULT_GROUP_VERSION;

#[derive(Args, Clone, Debug)]
pub struct AuditOptions {
    /// Path to the file that defines the audit policy configuration.
    #[arg(id = "audit-policy-file", long = "audit-policy-file")]
    pub policy_file: Option<PathBuf>,

    /// If set, all requests coming to the apiserver will be logged to this file.  '-'
    /// means standard out.
    #[arg(id = "audit-log-path", long = "audit-log-path")]
    pub log_path: Option<String>,
    /// The maximum number of days to retain old audit log files based on the timestamp
    /// encoded in their filename.
    #[arg(
        id = "audit-log-maxage",
        long = "audit-log-maxage",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub log_max_age: i64,
    /// The maximum number of old audit log files to retain. Setting a value of 0 will mean
    /// there's no restriction on the number of files.
    #[arg(
        id = "audit-log-maxbackup",
        long = "audit-log-maxbackup",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub log_max_backups: i64,
    /// The maximum size in megabytes of the audit log file before it gets rotated.
    #[arg(
        id = "audit-log-maxsize",
        long = "audit-log-maxsize",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub log_max_size: i64,
    /// Format of saved audits. "legacy" indicates 1-line text format for each event.
    /// "json" indicates structured json format. Known formats are legacy,json.
    #[arg(
        id = "audit-log-format",
        long = "audit-log-format",
        default_value = "json"
    )]
    pub log_format: String,
    /// API group and version used for serializing audit events written to log.
    #[arg(id = "audit-log-version", long = "audit-log-version", default_value = AUDIT_V1)]
    pub log_version: String,
    /// If set, the rotated log files will be compressed using gzip.
    #[arg(id = "audit-log-compress", long = "audit-log-compress", num_args = 0..=1, default_missing_value = "true", default_value_t = false, action = clap::ArgAction::Set)]
    pub log_compress: bool,
    #[command(flatten)]
    pub log_batch: LogBatchOptions,
    #[command(flatten)]
    pub log_truncate: LogTruncateOptions,

    /// Path to a kubeconfig formatted file that defines the audit webhook configuration.
    #[arg(id = "audit-webhook-config-file", long = "audit-webhook-config-file")]
    pub webhook_config_file: Option<PathBuf>,
    /// The amount of time to wait before retrying the first failed request.
    #[arg(
        id = "audit-webhook-initial-backoff",
        long = "audit-webhook-initial-backoff",
        default_value = "10s"
    )]
    pub webhook_initial_backoff: GoDuration,
    /// The amount of time to wait before retrying the first failed request. (Deprecated,
    /// use --audit-webhook-initial-backoff instead.)
    #[arg(
        id = "audit-webhook-batch-initial-backoff",
        long = "audit-webhook-batch-initial-backoff",
        hide = true
    )]
    pub webhook_batch_initial_backoff: Option<GoDuration>,
    /// API group and version used for serializing audit events written to webhook.
    #[arg(id = "audit-webhook-version", long = "audit-webhook-version", default_value = AUDIT_V1)]
    pub webhook_version: String,
    #[command(flatten)]
    pub webhook_batch: WebhookBatchOptions,
    #[command(flatten)]
    pub webhook_truncate: WebhookTruncateOptions,
}

/// Declares one backend's `--audit-<plugin>-mode` and batch flags with its defaults.
macro_rules! batch_options {
    ($name:ident, $plugin:literal, $mode:literal, $max:literal, $wait:literal, $throttle:literal) => {
        #[derive(Args, Clone, Debug)]
        pub struct $name {
            /// Strategy for sending audit events. Blocking indicates sending events should
            /// block server responses. Batch causes the backend to buffer and write events
            /// asynchronously. Known modes are batch,blocking,blocking-strict.
            #[arg(id = concat!("audit-", $plugin, "-mode"), long = concat!("audit-", $plugin, "-mode"), default_value = $mode)]
            pub mode: String,
            /// The size of the buffer to store events before batching and writing. Only
            /// used in batch mode.
            #[arg(id = concat!("audit-", $plugin, "-batch-buffer-size"), long = concat!("audit-", $plugin, "-batch-buffer-size"), default_value_t = 10000, allow_negative_numbers = true)]
            pub buffer_size: i64,
            /// The maximum size of a batch. Only used in batch mode.
            #[arg(id = concat!("audit-", $plugin, "-batch-max-size"), long = concat!("audit-", $plugin, "-batch-max-size"), default_value_t = $max, allow_negative_numbers = true)]
            pub max_batch_size: i64,
            /// The amount of time to wait before force writing the batch that hadn't
            /// reached the max size. Only used in batch mode.
            #[arg(id = concat!("audit-", $plugin, "-batch-max-wait"), long = concat!("audit-", $plugin, "-batch-max-wait"), default_value = $wait)]
            pub max_batch_wait: GoDuration,
            /// Whether batching throttling is enabled. Only used in batch mode.
            #[arg(id = concat!("audit-", $plugin, "-batch-throttle-enable"), long = concat!("audit-", $plugin, "-batch-throttle-enable"), num_args = 0..=1, default_missing_value = "true", default_value_t = $throttle, action = clap::ArgAction::Set)]
            pub throttle_enable: bool,
            /// Maximum average number of batches per second. Only used in batch mode.
            #[arg(id = concat!("audit-", $plugin, "-batch-throttle-qps"), long = concat!("audit-", $plugin, "-batch-throttle-qps"), default_value_t = 10.0, allow_negative_numbers = true)]
            pub throttle_qps: f32,
            /// Maximum number of requests sent at the same moment if ThrottleQPS was not
            /// utilized before. Only used in batch mode.
            #[arg(id = concat!("audit-", $plugin, "-batch-throttle-burst"), long = concat!("audit-", $plugin, "-batch-throttle-burst"), default_value_t = 15, allow_negative_numbers = true)]
            pub throttle_burst: i64,
        }

        impl $name {
            fn batch(&self) -> Batch<'_> {
                Batch {
                    plugin: $plugin,
                    mode: &self.mode,
                    buffer_size: self.buffer_size,
                    max_batch_size: self.max_batch_size,
                    max_batch_wait: self.max_batch_wait.0,
                    throttle_enable: self.throttle_enable,
                    throttle_qps: self.throttle_qps,
                    throttle_burst: self.throttle_burst,
                }
            }
        }
    };
}

batch_options!(LogBatchOptions, "log", "blocking", 1, "0s", false);
batch_options!(WebhookBatchOptions, "webhook", "batch", 400, "30s", true);

/// Declares one backend's `--audit-<plugin>-truncate-*` flags.
macro_rules! truncate_options {
    ($name:ident, $plugin:literal) => {
        #[derive(Args, Clone, Debug)]
        pub struct $name {
            /// Whether event and batch truncating is enabled.
            #[arg(id = concat!("audit-", $plugin, "-truncate-enabled"), long = concat!("audit-", $plugin, "-truncate-enabled"), num_args = 0..=1, default_missing_value = "true", default_value_t = false, action = clap::ArgAction::Set)]
            pub enabled: bool,
            /// Maximum size of the batch sent to the underlying backend. Actual serialized
            /// size can be several hundreds of bytes greater. If a batch exceeds this
            /// limit, it is split into several batches of smaller size.
            #[arg(id = concat!("audit-", $plugin, "-truncate-max-batch-size"), long = concat!("audit-", $plugin, "-truncate-max-batch-size"), default_value_t = 10 * 1024 * 1024, allow_negative_numbers = true)]
            pub max_batch_size: i64,
            /// Maximum size of the audit event sent to the underlying backend. If the size
            /// of an event is greater than this number, first request and response are
            /// removed, and if this doesn't reduce the size enough, event is discarded.
            #[arg(id = concat!("audit-", $plugin, "-truncate-max-event-size"), long = concat!("audit-", $plugin, "-truncate-max-event-size"), default_value_t = 100 * 1024, allow_negative_numbers = true)]
            pub max_event_size: i64,
        }

        impl $name {
            fn validate(&self) -> Option<String> {
                validate_truncate($plugin, self.max_batch_size, self.max_event_size)
            }

            fn wrap(&self, delegate: Box<dyn Backend>) -> Box<dyn Backend> {
                // Validated positive.
                let size = |v: i64| u64::try_from(v).unwrap_or(1);
                Truncate::wrap(
                    delegate,
                    self.enabled,
                    TruncateConfig {
                        max_batch_size: size(self.max_batch_size),
                        max_event_size: size(self.max_event_size),
                    },
                )
            }
        }
    };
}

truncate_options!(LogTruncateOptions, "log");
truncate_options!(WebhookTruncateOptions, "webhook");

/// One backend's batch flags, whatever its plugin.
struct Batch<'a> {
    plugin: &'static str,
    mode: &'a str,
    buffer_size: i64,
    max_batch_size: i64,
    max_batch_wait: Duration,
    throttle_enable: bool,
    throttle_qps: f32,
    throttle_burst: i64,
}

impl Batch<'_> {
    /// Upstream's `validateBackendBatchOptions`.
    fn validate(&self) -> Option<String> {
        let plugin = self.plugin;
        let Some(mode) = Mode::parse(self.mode) else {
            return Some(format!(
                "invalid audit {plugin} mode {}, allowed modes are \"{}\"",
                self.mode,
                Mode::ALLOWED.join(",")
            ));
        };
        if mode != Mode::Batch {
            return None;
        }
        if self.buffer_size <= 0 {
            return Some(format!(
                "invalid audit batch {plugin} buffer size {}, must be a positive number",
                self.buffer_size
            ));
        }
        if self.max_batch_size <= 0 {
            return Some(format!(
                "invalid audit batch {plugin} max batch size {}, must be a positive number",
                self.max_batch_size
            ));
        }
        if self.throttle_enable {
            if self.throttle_qps <= 0.0 {
                return Some(format!(
                    "invalid audit batch {plugin} throttle QPS {}, must be a positive number",
                    self.throttle_qps
                ));
            }
            if self.throttle_burst <= 0 {
                return Some(format!(
                    "invalid audit batch {plugin} throttle burst {}, must be a positive number",
                    self.throttle_burst
                ));
            }
        }
        None
    }

    /// Upstream's `wrapBackend`: blocking-strict passes failures on (a failed
    /// RequestReceived fails the request), blocking ignores them, batch buffers.
    fn wrap(&self, delegate: Box<dyn Backend>, async_delegate: bool) -> Box<dyn Backend> {
        // Validated: a known mode, positive sizes.
        let count = |v: i64| usize::try_from(v).unwrap_or(1);
        Mode::parse(self.mode).unwrap_or(Mode::Blocking).wrap(
            delegate,
            BatchConfig {
                buffer_size: count(self.buffer_size),
                max_batch_size: count(self.max_batch_size),
                max_batch_wait: self.max_batch_wait,
                throttle_enable: self.throttle_enable,
                throttle_qps: self.throttle_qps,
                throttle_burst: count(self.throttle_burst),
                async_delegate,
            },
        )
    }
}

/// Upstream's `AuditTruncateOptions.Validate`.
fn validate_truncate(plugin: &str, max_batch_size: i64, max_event_size: i64) -> Option<String> {
    if max_event_size <= 0 {
        return Some(format!(
            "invalid audit truncate {plugin} max event size {max_event_size}, must be a positive number"
        ));
    }
    if max_batch_size < max_event_size {
        return Some(format!(
            "invalid audit truncate {plugin} max batch size {max_batch_size}, must be greater than max event size ({max_event_size})"
        ));
    }
    None
}

/// What the flags built: the policy and the backend every role's filters use.
pub struct Audit {
    pub policy: Arc<dyn kas_audit::PolicyRuleEvaluator>,
    pub backend: Arc<dyn Backend>,
}

impl AuditOptions {
    fn log_enabled(&self) -> bool {
        self.log_path.as_deref().is_some_and(|p| !p.is_empty())
    }

    fn webhook_enabled(&self) -> bool {
        self.webhook_config_file
            .as_deref()
            .is_some_and(|p| !p.as_os_str().is_empty())
    }

    /// Upstream's `AuditOptions.Validate`.
    pub fn validate(&self) -> Vec<String> {
        let mut errs = Vec::new();
        if self.log_enabled() {
            errs.extend(self.log_batch.batch().validate());
            errs.extend(self.log_truncate.validate());
            errs.extend(kas_webhook::audit::validate_group_version(&self.log_version).err());
            if Format::parse(&self.log_format).is_none() {
                errs.push(format!(
                    "invalid audit log format {}, allowed formats are \"legacy,json\"",
                    self.log_format
                ));
            }
            for (flag, v) in [
                ("maxage", self.log_max_age),
                ("maxbackup", self.log_max_backups),
                ("maxsize", self.log_max_size),
            ] {
                if v < 0 {
                    errs.push(format!("--audit-log-{flag} {v} can't be a negative number"));
                }
            }
        }
        if self.webhook_enabled() {
            errs.extend(self.webhook_batch.batch().validate());
            errs.extend(self.webhook_truncate.validate());
            errs.extend(kas_webhook::audit::validate_group_version(&self.webhook_version).err());
        }
        errs
    }

    /// What upstream's flag set warns about at start.
    pub fn warnings(&self) -> Vec<String> {
        self.webhook_batch_initial_backoff
            .iter()
            .map(|_| {
                "Flag --audit-webhook-batch-initial-backoff has been deprecated, Deprecated, use --audit-webhook-initial-backoff instead.".to_owned()
            })
            .collect()
    }

    /// Upstream's `ApplyTo`: no policy file, no auditing; else the log backend (batched as
    /// its mode says, then truncated) and the webhook backend (likewise), together.
    /// `runtime` runs the webhook's calls.
    pub fn build(&self, runtime: &tokio::runtime::Handle) -> Result<Option<Audit>, String> {
        let Some(policy_file) = &self.policy_file else {
            return Ok(None);
        };
        let policy = kas_audit::policy::load_policy_from_file(policy_file)
            .map_err(|e| format!("loading audit policy file: {e}"))?;
        let policy: Arc<dyn kas_audit::PolicyRuleEvaluator> =
            Arc::new(kas_audit::policy::PolicyRuleEvaluator::new(&policy));
        let mut backends: Vec<Box<dyn Backend>> = Vec::new();
        if let Some(path) = self.log_path.as_deref().filter(|p| !p.is_empty()) {
            backends.push(self.log_backend(path)?);
        }
        if let Some(file) = self
            .webhook_config_file
            .as_deref()
            .filter(|_| self.webhook_enabled())
        {
            backends.push(self.webhook_backend(file, runtime)?);
        }
        let backend: Arc<dyn Backend> = match backends.len() {
            0 => return Ok(None),
            1 => Arc::from(backends.remove(0)),
            _ => Arc::new(Union(backends)),
        };
        tracing::info!(backend = backend.name(), "Using audit backend");
        Ok(Some(Audit { policy, backend }))
    }

    fn log_backend(&self, path: &str) -> Result<Box<dyn Backend>, String> {
        // Validated non-negative.
        let writer = kas_audit::backend::log::open(
            path,
            RotateConfig {
                max_size_mb: u64::try_from(self.log_max_size).unwrap_or(0),
                max_age_days: u64::try_from(self.log_max_age).unwrap_or(0),
                max_backups: usize::try_from(self.log_max_backups).unwrap_or(0),
                compress: self.log_compress,
            },
        )
        .map_err(|e| e.to_string())?;
        let format = Format::parse(&self.log_format).unwrap_or(Format::Json);
        // Behind batch mode's buffer, a burst's lines reach the file in one write.
        let log: Box<dyn Backend> = match Mode::parse(&self.log_batch.mode) {
            Some(Mode::Batch) => Box::new(LogBackend::combining(writer, format)),
            _ => Box::new(LogBackend::new(writer, format)),
        };
        let log = self.log_batch.batch().wrap(log, false);
        Ok(self.log_truncate.wrap(log))
    }

    fn webhook_backend(
        &self,
        file: &Path,
        runtime: &tokio::runtime::Handle,
    ) -> Result<Box<dyn Backend>, String> {
        let backoff = self
            .webhook_batch_initial_backoff
            .as_ref()
            .unwrap_or(&self.webhook_initial_backoff)
            .0;
        let webhook = kas_webhook::audit::AuditWebhookBackend::new(
            file,
            &self.webhook_version,
            backoff,
            runtime.clone(),
        )
        .map_err(|e| format!("initializing audit webhook: {e}"))?;
        let webhook = self.webhook_batch.batch().wrap(Box::new(webhook), true);
        Ok(self.webhook_truncate.wrap(webhook))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        audit: AuditOptions,
    }

    fn validate(args: &[&str]) -> Vec<String> {
        let mut all = vec!["x"];
        all.extend_from_slice(args);
        Flags::try_parse_from(all).unwrap().audit.validate()
    }

    #[test]
    fn defaults_are_upstreams() {
        let f = Flags::try_parse_from(["x"]).unwrap().audit;
        assert_eq!(f.log_format, "json");
        assert_eq!(f.log_batch.mode, "blocking");
        assert_eq!(f.log_batch.max_batch_size, 1);
        assert_eq!(f.webhook_batch.mode, "batch");
        assert_eq!(f.webhook_batch.max_batch_size, 400);
        assert_eq!(f.webhook_batch.max_batch_wait.0, Duration::from_secs(30));
        assert!(f.webhook_batch.throttle_enable);
        assert_eq!(f.webhook_batch.throttle_burst, 15);
        assert_eq!(f.webhook_initial_backoff.0, Duration::from_secs(10));
        assert_eq!(f.log_truncate.max_event_size, 100 * 1024);
        assert!(f.validate().is_empty());
        // No policy file: nothing is audited, whatever the backends.
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let f = Flags::try_parse_from(["x", "--audit-log-path=-"])
            .unwrap()
            .audit;
        assert!(f.build(rt.handle()).unwrap().is_none());
    }

    #[test]
    fn invalid_flags_get_upstreams_messages() {
        assert_eq!(
            validate(&[
                "--audit-log-path=/tmp/a.log",
                "--audit-log-mode=sometimes",
                "--audit-log-format=xml",
                "--audit-log-maxage=-1",
                "--audit-log-truncate-max-event-size=0",
                "--audit-log-version=audit.k8s.io/v1beta1",
            ]),
            [
                "invalid audit log mode sometimes, allowed modes are \"batch,blocking,blocking-strict\"",
                "invalid audit truncate log max event size 0, must be a positive number",
                "invalid group version, allowed versions are [\"audit.k8s.io/v1\"]",
                "invalid audit log format xml, allowed formats are \"legacy,json\"",
                "--audit-log-maxage -1 can't be a negative number",
            ]
        );
        assert_eq!(
            validate(&[
                "--audit-webhook-config-file=/k",
                "--audit-webhook-batch-throttle-qps=0",
                "--audit-webhook-truncate-max-batch-size=10",
            ]),
            [
                "invalid audit batch webhook throttle QPS 0, must be a positive number",
                "invalid audit truncate webhook max batch size 10, must be greater than max event size (102400)",
            ]
        );
        // Flags of a backend that is not on are not checked, as upstream.
        assert!(validate(&["--audit-log-mode=sometimes"]).is_empty());
    }

    #[test]
    fn a_policy_and_a_log_build_a_backend() {
        let dir = tempfile::tempdir().unwrap();
        let policy = dir.path().join("policy.yaml");
        std::fs::write(
            &policy,
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
        )
        .unwrap();
        let log = dir.path().join("sub/audit.log");
        let f = Flags::try_parse_from([
            "x".to_owned(),
            format!("--audit-policy-file={}", policy.display()),
            format!("--audit-log-path={}", log.display()),
        ])
        .unwrap()
        .audit;
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let audit = f.build(rt.handle()).unwrap().expect("auditing");
        assert_eq!(audit.backend.name(), "ignoreErrors<log>");
        assert!(
            log.exists(),
            "the log is created at start, as ensureLogFile does"
        );
        std::fs::write(
            &policy,
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n",
        )
        .unwrap();
        let err = f.build(rt.handle()).err().expect("no rules");
        assert!(err.starts_with("loading audit policy file: "), "{err}");
    }
}
