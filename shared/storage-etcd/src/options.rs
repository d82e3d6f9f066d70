//! Upstream's etcd flags (`k8s.io/apiserver/pkg/server/options/etcd.go`), flattened into
//! each role's command line: the storage's own settings, validated here, and what connects
//! the store's client and the `etcd` readiness check.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use kas_storage::{Error, Result};

use crate::codec::{Codec, MediaType, Registration};
use crate::health::EtcdHealthCheck;

/// `--etcd-servers`, `--etcd-prefix`, `--etcd-compaction-interval` and etcd's TLS flags.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
pub struct EtcdOptions {
    /// List of etcd servers to connect with (scheme://ip:port), comma separated.
    #[arg(long, value_delimiter = ',')]
    pub etcd_servers: Vec<String>,
    /// Per-resource etcd servers overrides, comma separated. The individual override
    /// format: group/resource#servers, where servers are URLs, semicolon separated.
    /// (Checked, then refused: every resource is stored on `--etcd-servers` here.)
    #[arg(long, value_delimiter = ',')]
    pub etcd_servers_overrides: Vec<String>,
    /// The prefix to prepend to all resource paths in etcd.
    #[arg(long, default_value = "/registry")]
    pub etcd_prefix: String,
    /// The interval of compaction requests. If 0, the compaction request from apiserver is
    /// disabled.
    #[arg(long, default_value = "5m0s", value_parser = parse_interval)]
    pub etcd_compaction_interval: Duration,
    /// SSL Certificate Authority file used to secure etcd communication.
    #[arg(long)]
    pub etcd_cafile: Option<PathBuf>,
    /// SSL certification file used to secure etcd communication.
    #[arg(long)]
    pub etcd_certfile: Option<PathBuf>,
    /// SSL key file used to secure etcd communication.
    #[arg(long)]
    pub etcd_keyfile: Option<PathBuf>,
    /// The media type to use to store objects in storage. Some resources or storage
    /// backends may only support a specific media type and will ignore this setting.
    /// Supported media types: [application/json, application/yaml,
    /// application/vnd.kubernetes.protobuf]
    #[arg(
        long,
        value_enum,
        default_value = "application/vnd.kubernetes.protobuf"
    )]
    pub storage_media_type: MediaType,
    /// The file containing configuration for encryption providers to be used for storing
    /// secrets in etcd
    #[arg(long)]
    pub encryption_provider_config: Option<PathBuf>,
    /// Determines if the file set by --encryption-provider-config should be automatically
    /// reloaded if the disk contents change. Setting this to true disables the ability to
    /// uniquely identify distinct KMS plugins via the API server healthz endpoints.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub encryption_provider_config_automatic_reload: Option<bool>,
    /// Enable watch caching in the apiserver
    #[arg(
        long,
        default_value_t = true,
        num_args = 0..=1,
        default_missing_value = "true",
        action = clap::ArgAction::Set
    )]
    pub watch_cache: bool,
    /// Default watch cache size. If zero, watch cache will be disabled for resources that
    /// do not have a default watch size set. (Deprecated upstream and without effect: watch
    /// caches are sized automatically.)
    #[arg(long)]
    pub default_watch_cache_size: Option<i64>,
    /// Watch cache size settings for some resources (pods, nodes, etc.), comma separated.
    /// The individual setting format: resource[.group]#size. The only meaningful size is
    /// zero, which disables watch caching for the resource; all non-zero values are
    /// equivalent and mean to not disable it (events are not cached unless named here).
    #[arg(long, value_delimiter = ',')]
    pub watch_cache_sizes: Vec<String>,
    /// Number of workers spawned for DeleteCollection call. These are used to speed up
    /// namespace cleanup.
    #[arg(long, default_value_t = 1)]
    pub delete_collection_workers: i64,
    /// The interval of requests to poll etcd and update metric. 0 disables the metric
    /// collection
    #[arg(long, default_value = "1m0s", value_parser = parse_interval)]
    pub etcd_count_metric_poll_period: Duration,
    /// The interval of requests to poll etcd and update metric. 0 disables the metric
    /// collection
    #[arg(long, default_value = "30s", value_parser = parse_interval)]
    pub etcd_db_metric_poll_interval: Duration,
    /// The timeout to use when checking etcd health.
    #[arg(long, default_value = "2s", value_parser = parse_interval)]
    pub etcd_healthcheck_timeout: Duration,
    /// The timeout to use when checking etcd readiness
    #[arg(long, default_value = "2s", value_parser = parse_interval)]
    pub etcd_readycheck_timeout: Duration,
    /// The configuration once the store loaded it, for the `kms-providers` check.
    #[arg(skip)]
    pub loaded_encryption: LoadedEncryption,
}

/// One `--watch-cache-sizes` entry: (group, resource) and size.
type WatchCacheSize = ((String, String), i64);

/// Shared by an options' clones: set when the store is built.
#[derive(Clone, Default)]
pub struct LoadedEncryption(
    std::sync::Arc<std::sync::RwLock<Option<std::sync::Arc<crate::Encryption>>>>,
);

impl LoadedEncryption {
    fn get(&self) -> Option<std::sync::Arc<crate::Encryption>> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set(&self, encryption: std::sync::Arc<crate::Encryption>) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = Some(encryption);
    }
}

impl PartialEq for LoadedEncryption {
    /// Options compare by their flags.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for LoadedEncryption {}

impl std::fmt::Debug for LoadedEncryption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.get().is_some() {
            "LoadedEncryption(loaded)"
        } else {
            "LoadedEncryption(not loaded)"
        })
    }
}

/// Upstream's `kms-providers` check on /healthz and /readyz, given when the encryption
/// configuration names a KMS provider.
#[derive(Clone, Debug)]
struct KmsHealthCheck(LoadedEncryption);

impl KmsHealthCheck {
    pub fn name(&self) -> &'static str {
        "kms-providers"
    }

    /// `Err` says which plugin is not healthy, and why.
    pub fn check(&self) -> futures_util::future::BoxFuture<'static, Result<(), String>> {
        let loaded = self.0.get();
        Box::pin(async move {
            match loaded {
                Some(encryption) => encryption.check_kms().await,
                None => Err("the encryption configuration is not loaded yet".to_owned()),
            }
        })
    }
}

/// How often the etcd TLS files are checked for a change.
const TLS_RELOAD_POLL: Duration = Duration::from_secs(10);

/// How long the start waits for etcd to answer (upstream's etcd3 `dialTimeout`).
const DIAL_TIMEOUT: Duration = Duration::from_secs(20);

/// A Go `time.Duration` flag value ("5m0s", "30s"), with Go's error text.
fn parse_interval(s: &str) -> Result<Duration, String> {
    match kas_apimachinery::golang::time::parse_duration(s) {
        Ok(d) => d.to_std().ok_or_else(|| format!("negative duration {s:?}")),
        Err(e) => Err(e.to_string()),
    }
}

impl EtcdOptions {
    /// Every problem at once, as upstream's `EtcdOptions.Validate`. `servers_required`: the
    /// role stores objects in etcd (core-apiserver); the others only watch its health.
    pub fn validate(&self, servers_required: bool) -> Vec<String> {
        let mut errs = Vec::new();
        if servers_required && self.etcd_servers.is_empty() {
            errs.push("--etcd-servers must be specified".to_owned());
        }
        if let Err(e) = self.parse_watch_cache_sizes() {
            errs.push(e);
        }
        for o in &self.etcd_servers_overrides {
            let well_formed = o.split_once('#').is_some_and(|(gr, _)| {
                gr.split('/').count() == 2 && !o[gr.len() + 1..].contains('#')
            });
            errs.push(if well_formed {
                format!("--etcd-servers-overrides {o:?} is not offered yet: every resource is stored on --etcd-servers")
            } else {
                "--etcd-servers-overrides invalid, must be of format: group/resource#servers, where servers are URLs, semicolon separated".to_owned()
            });
        }
        if self.etcd_certfile.is_some() != self.etcd_keyfile.is_some() {
            errs.push("--etcd-certfile and --etcd-keyfile must be given together".to_owned());
        }
        if self.encryption_provider_config_automatic_reload == Some(true)
            && self.encryption_provider_config.is_none()
        {
            errs.push("--encryption-provider-config-automatic-reload must be set with --encryption-provider-config".to_owned());
        }
        errs
    }

    /// Upstream's `ParseWatchCacheSizes`: (group, resource) to size.
    fn parse_watch_cache_sizes(&self) -> Result<Vec<WatchCacheSize>, String> {
        let mut sizes = Vec::new();
        for c in &self.watch_cache_sizes {
            let Some((resource, size)) = c.split_once('#').filter(|(_, s)| !s.contains('#')) else {
                return Err(format!("invalid value of watch cache size: {c}"));
            };
            let size: i64 = size
                .parse()
                .map_err(|_| format!("invalid size of watch cache size: {c}"))?;
            if size < 0 {
                return Err(format!("watch cache size cannot be negative: {c}"));
            }
            let (resource, group) = resource.split_once('.').unwrap_or((resource, ""));
            sizes.push(((group.to_owned(), resource.to_owned()), size));
        }
        Ok(sizes)
    }

    /// Whether the resource `group`/`resource` is served from a watch cache: never with
    /// `--watch-cache=false`; per `--watch-cache-sizes` when it names the resource (zero:
    /// no cache); else `by_default` (upstream caches everything but events).
    pub fn watch_cached(&self, group: &str, resource: &str, by_default: bool) -> bool {
        if !self.watch_cache {
            return false;
        }
        let sizes = self.parse_watch_cache_sizes().unwrap_or_default();
        let named = sizes
            .iter()
            .rev()
            .find(|((g, r), _)| g == group && r == resource);
        match named {
            Some((_, 0)) => false,
            Some(_) => true,
            None => by_default,
        }
    }

    /// What the flags given deserve a start-up warning for, as upstream's flag set warns.
    fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.default_watch_cache_size.is_some() {
            out.push("Flag --default-watch-cache-size has been deprecated, watch caches are sized automatically and this flag will be removed in a future version".to_owned());
        }
        if let Ok(sizes) = self.parse_watch_cache_sizes() {
            for ((group, resource), size) in sizes {
                if size > 0 {
                    let name = if group.is_empty() {
                        resource
                    } else {
                        format!("{resource}.{group}")
                    };
                    out.push(format!(
                        "Dropping watch-cache-size for {name} - watchCache size is now dynamic"
                    ));
                }
            }
        }
        out
    }

    /// The client's TLS from `--etcd-cafile`, `--etcd-certfile` and `--etcd-keyfile` as
    /// they are now, or none without them. Read on every connection (the health check's
    /// reconnect picks up rotated files); the store's client keeps what it read at start.
    pub fn tls(&self) -> std::result::Result<Option<etcd_client::TlsOptions>, String> {
        if self.etcd_cafile.is_none() && self.etcd_certfile.is_none() {
            return Ok(None);
        }
        let read = |flag: &str, path: &PathBuf| {
            std::fs::read(path).map_err(|e| format!("reading {flag} {}: {e}", path.display()))
        };
        let mut tls = etcd_client::TlsOptions::new();
        if let Some(ca) = &self.etcd_cafile {
            let pem = read("--etcd-cafile", ca)?;
            tls = tls.ca_certificate(etcd_client::Certificate::from_pem(pem));
        }
        if let (Some(cert), Some(key)) = (&self.etcd_certfile, &self.etcd_keyfile) {
            let identity = etcd_client::Identity::from_pem(
                read("--etcd-certfile", cert)?,
                read("--etcd-keyfile", key)?,
            );
            tls = tls.identity(identity);
        }
        Ok(Some(tls))
    }

    /// The client's options: TLS as [`EtcdOptions::tls`] reads it.
    fn connect_options(&self) -> Result<etcd_client::ConnectOptions> {
        let mut options = etcd_client::ConnectOptions::new();
        if let Some(tls) = self.tls().map_err(Error::BadRequest)? {
            options = options.with_tls(tls);
        }
        Ok(options)
    }

    /// Connects the store's client to `--etcd-servers` and reads once through it, so that
    /// a server that refuses the client (a certificate it does not trust, or plain HTTP
    /// to a TLS port) fails the start with the reason.
    pub async fn connect(&self) -> Result<etcd_client::Client> {
        if self.etcd_servers.is_empty() {
            return Err(Error::BadRequest("--etcd-servers must be specified".into()));
        }
        let servers = self.etcd_servers.join(",");
        let unreachable =
            |e: etcd_client::Error| Error::BadRequest(format!("{servers}: {}", error_chain(&e)));
        let mut client =
            etcd_client::Client::connect(&self.etcd_servers, Some(self.connect_options()?))
                .await
                .map_err(unreachable)?;
        // Upstream's client dials for up to 20 s (`dialTimeout`) before it gives up; a TLS
        // refusal is final. Under TLS 1.3 the client hears of a refused certificate only
        // as the connection closing on some attempts, so the refusal is what is reported.
        let deadline = std::time::Instant::now() + DIAL_TIMEOUT;
        loop {
            match client.get("health", None).await {
                Ok(_) => return Ok(client),
                Err(e) if is_tls_refusal(&error_chain(&e)) => return Err(unreachable(e)),
                Err(e) if std::time::Instant::now() >= deadline => return Err(unreachable(e)),
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        }
    }

    /// Replaces the store's client when the TLS files change (checked every
    /// [`TLS_RELOAD_POLL`]) and the new files connect; files that do not connect leave the
    /// client as it was, and are tried again at the next poll.
    fn start_tls_reload(&self, shared: crate::client::SharedClient) {
        if self.etcd_cafile.is_none() && self.etcd_certfile.is_none() {
            return;
        }
        let options = self.clone();
        tokio::spawn(async move {
            let mut last = options.tls_files();
            loop {
                tokio::time::sleep(TLS_RELOAD_POLL).await;
                let now = options.tls_files();
                if now == last {
                    continue;
                }
                match options.connect().await {
                    Ok(client) => {
                        crate::metrics::set_size_client(client.clone());
                        shared.replace(client);
                        last = now;
                        tracing::info!(
                            "reloaded the etcd client certificate files: new requests use them"
                        );
                    }
                    Err(e) => tracing::error!(
                        error = %e,
                        "the changed etcd client certificate files do not connect; keeping the previous ones"
                    ),
                }
            }
        });
    }

    /// The contents of the TLS files (unreadable ones as empty), to notice a change.
    fn tls_files(&self) -> Vec<Vec<u8>> {
        [&self.etcd_cafile, &self.etcd_certfile, &self.etcd_keyfile]
            .into_iter()
            .map(|f| {
                f.as_ref()
                    .and_then(|p| std::fs::read(p).ok())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// `apiserver_storage_db_total_size_in_bytes` of each endpoint, each through a client
    /// of its own (connected in the background: a down endpoint is -1 until it answers).
    fn start_db_size_polls(&self) {
        let interval = self.etcd_db_metric_poll_interval;
        if interval.is_zero() {
            return;
        }
        for endpoint in self.etcd_servers.clone() {
            let options = self.connect_options();
            tokio::spawn(async move {
                let Ok(options) = options else { return };
                let client = loop {
                    match etcd_client::Client::connect([&endpoint], Some(options.clone())).await {
                        Ok(client) => break client,
                        Err(_) => tokio::time::sleep(interval).await,
                    }
                };
                crate::metrics::poll_db_size(endpoint, client.maintenance_client(), interval);
            });
        }
    }

    /// The role's storage on `--etcd-servers` under `--etcd-prefix`, writing and reading
    /// `kinds` (each under `/<storage resource>`) as upstream does, and the compactor of
    /// `--etcd-compaction-interval` (a zero interval never ticks, and the caches hear of
    /// no compaction), which must live as long as the storage.
    pub async fn storage(
        &self,
        kinds: &[Registration],
    ) -> std::result::Result<(std::sync::Arc<dyn kas_storage::Storage>, crate::Compactor), String>
    {
        self.storage_and_codec(kinds)
            .await
            .map(|(storage, compactor, _)| (storage, compactor))
    }

    /// [`EtcdOptions::storage`], and its codec, for a role that registers kinds as they
    /// come (extensions-apiserver, each CRD's custom resources).
    pub async fn storage_and_codec(
        &self,
        kinds: &[Registration],
    ) -> std::result::Result<
        (
            std::sync::Arc<dyn kas_storage::Storage>,
            crate::Compactor,
            std::sync::Arc<Codec>,
        ),
        String,
    > {
        for warning in self.warnings() {
            tracing::warn!("{warning}");
        }
        let client = self
            .connect()
            .await
            .map_err(|e| format!("connecting to etcd: {e}"))?;
        crate::metrics::set_size_client(client.clone());
        self.start_db_size_polls();
        let store = crate::EtcdStore::new(client, &self.etcd_prefix);
        let compactor = crate::Compactor::start_shared(
            store.shared_client().clone(),
            self.etcd_compaction_interval,
        );
        self.start_tls_reload(store.shared_client().clone());
        if let Some(path) = &self.encryption_provider_config {
            let (encryption, hash) = crate::encryption::reload::load(path)?;
            let encryption = std::sync::Arc::new(encryption);
            encryption.start().await;
            self.loaded_encryption.set(encryption.clone());
            store
                .codec()
                .set_encryption(encryption)
                .map_err(|e| e.to_string())?;
            if self.encryption_provider_config_automatic_reload == Some(true) {
                let loaded = self.loaded_encryption.clone();
                let codec = store.codec().clone();
                crate::encryption::reload::start(path.clone(), hash, move |e| {
                    codec.set_encryption(e.clone()).map_err(|e| e.to_string())?;
                    loaded.set(e);
                    Ok(())
                });
            }
        }
        for r in kinds {
            store
                .codec()
                .register_with_defaults(r.storage_resource, r.kind, r.defaults.clone())
                .map_err(|e| e.to_string())?;
        }
        let codec = store.codec().clone();
        Ok((std::sync::Arc::new(store), compactor, codec))
    }

    /// The storage's health checks, as upstream registers them: with `--etcd-servers`,
    /// `etcd` everywhere and `etcd-readiness` on /readyz, each with its own client
    /// (connected on first use); `kms-providers` when the encryption configuration names
    /// a KMS provider.
    pub fn health_checks(&self) -> Vec<kas_storage::health::HealthCheck> {
        use kas_storage::health::{HealthCheck, Scope};
        let mut checks = Vec::new();
        if !self.etcd_servers.is_empty() {
            for (name, scope, timeout) in [
                ("etcd", Scope::Everywhere, self.etcd_healthcheck_timeout),
                (
                    "etcd-readiness",
                    Scope::Readyz,
                    self.etcd_readycheck_timeout,
                ),
            ] {
                let etcd = EtcdHealthCheck::new(self.clone(), timeout);
                checks.push(HealthCheck::new(name, scope, move || etcd.check()));
            }
        }
        if let Some(kms) = self.kms_health_check() {
            checks.push(HealthCheck::new(
                kms.name(),
                Scope::WithoutLivez,
                move || kms.check(),
            ));
        }
        checks
    }

    /// The `kms-providers` check when `--encryption-provider-config` names a KMS provider,
    /// or always with automatic reload (a later file may name one), as upstream's (a file
    /// that cannot be read gets none here: the start refuses it).
    fn kms_health_check(&self) -> Option<KmsHealthCheck> {
        let data = std::fs::read(self.encryption_provider_config.as_ref()?).ok()?;
        let reloads = self.encryption_provider_config_automatic_reload == Some(true);
        (reloads || crate::Encryption::names_kms(&data))
            .then(|| KmsHealthCheck(self.loaded_encryption.clone()))
    }
}

/// Whether a connection error is the TLS handshake refusing one side's certificate.
fn is_tls_refusal(text: &str) -> bool {
    text.contains("received fatal alert") || text.contains("invalid peer certificate")
}

/// An error with its sources, as Go's wrapped errors print (`a: b: c`): a TLS refusal is
/// only named deep in tonic's chain.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text = format!("{text}: {next}");
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        etcd: EtcdOptions,
    }

    fn parse(args: &[&str]) -> Result<EtcdOptions, clap::Error> {
        Flags::try_parse_from(std::iter::once("role").chain(args.iter().copied())).map(|f| f.etcd)
    }

    #[test]
    fn upstream_names_and_defaults() {
        let o = parse(&[]).unwrap();
        assert!(o.etcd_servers.is_empty());
        assert_eq!(o.etcd_prefix, "/registry");
        assert_eq!(o.etcd_compaction_interval, Duration::from_secs(300));
        assert!(o.health_checks().is_empty());
        assert_eq!(o.etcd_healthcheck_timeout, Duration::from_secs(2));
        assert_eq!(o.etcd_readycheck_timeout, Duration::from_secs(2));

        let o = parse(&[
            "--etcd-servers=http://a:2379,http://b:2379",
            "--etcd-prefix",
            "/kas",
            "--etcd-compaction-interval=1m30s",
        ])
        .unwrap();
        assert_eq!(o.etcd_servers, ["http://a:2379", "http://b:2379"]);
        assert_eq!(o.etcd_prefix, "/kas");
        assert_eq!(o.etcd_compaction_interval, Duration::from_secs(90));
        let names: Vec<_> = o.health_checks().iter().map(|c| c.name).collect();
        assert_eq!(names, ["etcd", "etcd-readiness"]);
        assert_eq!(
            parse(&["--etcd-compaction-interval=0"])
                .unwrap()
                .etcd_compaction_interval,
            Duration::ZERO
        );
    }

    #[test]
    fn bad_intervals_fail_with_gos_text() {
        let err = parse(&["--etcd-compaction-interval=soon"]).unwrap_err();
        assert!(
            err.to_string().contains("time: invalid duration \"soon\""),
            "{err}"
        );
        assert!(parse(&["--etcd-compaction-interval=-1s"]).is_err());
    }

    #[test]
    fn validate_reports_every_problem() {
        let o = parse(&["--etcd-certfile=/c"]).unwrap();
        assert_eq!(
            o.validate(true),
            [
                "--etcd-servers must be specified",
                "--etcd-certfile and --etcd-keyfile must be given together",
            ]
        );
        assert_eq!(parse(&[]).unwrap().validate(false), Vec::<String>::new());
        let o = parse(&["--encryption-provider-config-automatic-reload"]).unwrap();
        assert_eq!(
            o.validate(false),
            [
                "--encryption-provider-config-automatic-reload must be set with --encryption-provider-config"
            ]
        );
        let o = parse(&["--storage-media-type=application/json"]).unwrap();
        assert_eq!(o.storage_media_type, MediaType::Json);
        assert!(parse(&["--storage-media-type=text/plain"]).is_err());
        let o = parse(&["--etcd-servers=http://a:2379"]).unwrap();
        assert!(o.validate(true).is_empty());
    }

    #[test]
    fn watch_cache_flags_decide_which_resources_are_cached_as_upstreams() {
        let o = parse(&[]).unwrap();
        assert!(o.watch_cache);
        assert!(o.watch_cached("", "pods", true));
        assert!(!o.watch_cached("", "events", false));
        assert_eq!(o.delete_collection_workers, 1);
        assert!(o.warnings().is_empty());

        let o = parse(&[
            "--watch-cache-sizes=pods#0,events#100,deployments.apps#0",
            "--default-watch-cache-size=0",
            "--delete-collection-workers=4",
        ])
        .unwrap();
        assert!(o.validate(false).is_empty());
        assert!(!o.watch_cached("", "pods", true));
        assert!(!o.watch_cached("apps", "deployments", true));
        assert!(o.watch_cached("", "events", false));
        assert!(o.watch_cached("", "nodes", true));
        assert_eq!(o.delete_collection_workers, 4);
        assert_eq!(
            o.warnings(),
            [
                "Flag --default-watch-cache-size has been deprecated, watch caches are sized automatically and this flag will be removed in a future version",
                "Dropping watch-cache-size for events - watchCache size is now dynamic",
            ]
        );

        let o = parse(&["--watch-cache=false", "--watch-cache-sizes=events#100"]).unwrap();
        assert!(!o.watch_cached("", "pods", true));
        assert!(!o.watch_cached("", "events", false));
        assert!(
            parse(&["--watch-cache", "--watch-cache-sizes=pods#0"])
                .unwrap()
                .watch_cache
        );

        let o =
            parse(&["--etcd-servers-overrides=/events#http://e:2379;http://f:2379,bad"]).unwrap();
        assert_eq!(
            o.validate(false),
            [
                "--etcd-servers-overrides \"/events#http://e:2379;http://f:2379\" is not offered yet: every resource is stored on --etcd-servers",
                "--etcd-servers-overrides invalid, must be of format: group/resource#servers, where servers are URLs, semicolon separated",
            ]
        );

        for (flag, err) in [
            ("pods", "invalid value of watch cache size: pods"),
            ("pods#a", "invalid size of watch cache size: pods#a"),
            ("pods#-1", "watch cache size cannot be negative: pods#-1"),
            ("pods#1#2", "invalid value of watch cache size: pods#1#2"),
        ] {
            let o = parse(&[&format!("--watch-cache-sizes={flag}")]).unwrap();
            assert_eq!(o.validate(false), [err]);
        }
    }
}
