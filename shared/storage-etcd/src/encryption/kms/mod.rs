//! KMS v2 envelope encryption, as upstream 1.33's `kmsv2` envelope transformer and its
//! plugin probe (`encryptionconfig.kmsv2PluginProbe`):
//! - at start, then every minute (every 10 s after a failure), the probe asks the plugin's
//!   `Status`. A healthy answer with a key ID other than the current one makes a new 32-byte
//!   seed, which the plugin encrypts (`Encrypt`). Writes may use the seed until 3 minutes
//!   after the last healthy answer, so a plugin that stays down stops writes, not reads;
//! - each write derives a key from the seed and 32 random bytes (HKDF-SHA256, expand only),
//!   encrypts the value with AES-256-GCM authenticated by its etcd key, and stores an
//!   `EncryptedObject` (the random bytes, nonce and sealed value; the key ID; the encrypted
//!   seed; the plugin's annotations) after `k8s:enc:kms:v2:<name>:`;
//! - a read finds the seed (or, for values written before 1.29, the DEK itself) in a cache
//!   keyed by its encrypted form, key ID and annotations, else asks the plugin to `Decrypt`
//!   it. Every API server instance makes its own seed, so a cluster reads a few of them.

mod client;
mod envelope;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant, SystemTime};

use kas_proto::kms::v2::{DecryptRequest, EncryptedDekSourceType, EncryptedObject};
use prost::Message;

use super::metrics;
use client::Client;
use envelope::{DekSource, cache_key, validate};

/// Upstream's intervals and lifetimes.
const HEALTHY_POLL: Duration = Duration::from_secs(60);
const UNHEALTHY_POLL: Duration = Duration::from_secs(10);
const WRITE_TTL: Duration = Duration::from_secs(3 * 60);
const CHECK_TTL_HEALTHY: Duration = Duration::from_secs(20);
const CHECK_TTL_UNHEALTHY: Duration = Duration::from_secs(3);
/// How long a decrypted seed stays cached after its last use.
const CACHE_TTL: Duration = Duration::from_secs(24 * 60 * 60);
const SEED_SIZE: usize = 32;

/// A `kms` provider of the configuration (`apiVersion: v2`).
pub(super) struct Kms {
    pub(super) name: String,
    /// `k8s:enc:kms:v2:<name>:`.
    pub(super) prefix: String,
    client: Client,
    /// What writes use: the seed and its envelope; none before the first healthy probe.
    state: RwLock<Option<Arc<State>>>,
    cache: Mutex<HashMap<Vec<u8>, Cached>>,
    probe: tokio::sync::Mutex<Probe>,
}

/// A decrypted DEK source and when it was last used, by its cache key.
type Cached = (Arc<DekSource>, Instant);

struct State {
    source: Arc<DekSource>,
    /// The key ID's hash, as the metrics name it.
    key_id_hash: String,
    /// The stored envelope without its data.
    object: EncryptedObject,
    cache_key: Vec<u8>,
    /// Writes fail after this (no healthy probe for [`WRITE_TTL`]).
    expires: SystemTime,
}

#[derive(Default)]
struct Probe {
    last: Option<(Instant, Result<(), String>)>,
    ttl: Duration,
    /// The API version the plugin first answered with; it may not change.
    version: Option<String>,
}

impl Kms {
    pub(super) fn new(name: &str, socket: PathBuf, timeout: Duration) -> Result<Arc<Kms>, String> {
        Ok(Arc::new(Kms {
            name: name.to_owned(),
            prefix: format!("k8s:enc:kms:v2:{name}:"),
            client: Client::new(name, socket, timeout)?,
            state: RwLock::new(None),
            cache: Mutex::new(HashMap::new()),
            probe: tokio::sync::Mutex::new(Probe::default()),
        }))
    }

    /// Probes once (upstream primes the seed before serving), then keeps probing in the
    /// background for as long as the provider is in use.
    pub(super) async fn start(self: &Arc<Self>) {
        let primed = self.logged_check().await;
        let this = Arc::downgrade(self);
        self.client.spawn(async move {
            let mut healthy = primed;
            loop {
                tokio::time::sleep(if healthy {
                    HEALTHY_POLL
                } else {
                    UNHEALTHY_POLL
                })
                .await;
                let Some(kms) = Weak::upgrade(&this) else {
                    return;
                };
                healthy = kms.logged_check().await;
            }
        });
    }

    async fn logged_check(&self) -> bool {
        match self.check().await {
            Ok(()) => true,
            Err(e) => {
                tracing::error!(name = %self.name, error = %e, "kms plugin failed health check probe");
                false
            }
        }
    }

    /// The health check (`kms-provider-<i>` of `kms-providers`): the last answer while it
    /// is fresh, else a new `Status` call, which also rotates the seed when the key ID
    /// changed.
    pub(super) async fn check(&self) -> Result<(), String> {
        let mut probe = self.probe.lock().await;
        if let Some((at, result)) = &probe.last
            && at.elapsed() < probe.ttl
        {
            return result.clone();
        }
        let result = match self.client.status().await {
            Ok(status) => self.healthy_and_maybe_rotate(&mut probe, status).await,
            Err(e) => Err(format!(
                "failed to perform status section of the healthz check for KMS Provider {}, error: {e}",
                self.name
            )),
        };
        probe.ttl = match result {
            Ok(()) => CHECK_TTL_HEALTHY,
            Err(_) => CHECK_TTL_UNHEALTHY,
        };
        probe.last = Some((Instant::now(), result.clone()));
        result
    }

    async fn healthy_and_maybe_rotate(
        &self,
        probe: &mut Probe,
        status: kas_proto::kms::v2::StatusResponse,
    ) -> Result<(), String> {
        let mut errs = Vec::new();
        if status.healthz != "ok" {
            errs.push(format!("got unexpected healthz status: {}", status.healthz));
        }
        if status.version != "v2" && status.version != "v2beta1" {
            errs.push(format!(
                "expected KMSv2 API version v2, got {}",
                status.version
            ));
        } else {
            let first = probe.version.get_or_insert_with(|| status.version.clone());
            if *first != status.version {
                errs.push(format!(
                    "KMSv2 API version should not change after the initial status response version {first}, got {}",
                    status.version
                ));
            }
        }
        match envelope::validate_key_id(&status.key_id) {
            Err(e) => {
                let code = if status.key_id.is_empty() {
                    "empty"
                } else {
                    "too_long"
                };
                metrics::record_invalid_key_id(&self.name, code);
                errs.push(format!(
                    "got invalid KMSv2 KeyID hash {:?}: {e}",
                    key_id_hash(&status.key_id)
                ));
            }
            Ok(()) => {
                metrics::record_key_id_from_status(&self.name, &key_id_hash(&status.key_id));
                if let Err(e) = self.rotate_on_key_id_change(&status.key_id).await {
                    errs.push(e);
                }
            }
        }
        match kas_apimachinery::validation::field::aggregate_strings(errs) {
            None => Ok(()),
            Some(e) => Err(format!(
                "kmsv2 Provider {} is not healthy, error: {e}",
                self.name
            )),
        }
    }

    /// Upstream's `rotateDEKOnKeyIDChange`: the same key ID extends the current seed's
    /// lifetime; another one makes a new seed, kept only if the plugin encrypts it under
    /// that key ID. On failure the current seed serves on until it expires.
    async fn rotate_on_key_id_change(&self, key_id: &str) -> Result<(), String> {
        let expires = SystemTime::now() + WRITE_TTL;
        let current = self.current_state();
        if let Some(state) = &current
            && state.object.key_id == key_id
            && state.object.encrypted_dek_source_type()
                == EncryptedDekSourceType::HkdfSha256XnonceAesGcmSeed
        {
            self.set_state(Arc::new(State {
                source: state.source.clone(),
                key_id_hash: state.key_id_hash.clone(),
                object: state.object.clone(),
                cache_key: state.cache_key.clone(),
                expires,
            }));
            return Ok(());
        }
        let uid = uuid::Uuid::new_v4().to_string();
        let generated = self.generate(&uid).await;
        let stored_key = current.as_ref().map(|s| s.object.key_id.as_str());
        match generated {
            Ok((source, object)) if object.key_id == key_id => {
                let cache_key = cache_key(&object);
                self.set_state(Arc::new(State {
                    source,
                    key_id_hash: key_id_hash(&object.key_id),
                    object,
                    cache_key,
                    expires,
                }));
                Ok(())
            }
            generated => {
                let (err_gen, encrypt_key) = match &generated {
                    Ok((_, o)) => ("<nil>".to_owned(), o.key_id.as_str()),
                    Err(e) => (e.clone(), ""),
                };
                Err(format!(
                    "failed to rotate DEK uid={uid:?}, useSeed=true, errState={}, errGen={err_gen}, statusKeyIDHash={:?}, encryptKeyIDHash={:?}, stateKeyIDHash={:?}",
                    if current.is_some() {
                        "<nil>"
                    } else {
                        "got unexpected nil transformer"
                    },
                    key_id_hash(key_id),
                    key_id_hash(encrypt_key),
                    key_id_hash(stored_key.unwrap_or_default()),
                ))
            }
        }
    }

    /// A new seed, encrypted by the plugin (upstream's `GenerateTransformer`).
    async fn generate(&self, uid: &str) -> Result<(Arc<DekSource>, EncryptedObject), String> {
        let mut seed = vec![0u8; SEED_SIZE];
        aws_lc_rs::rand::fill(&mut seed).map_err(|_| "unable to read sufficient random bytes")?;
        let answer = self
            .client
            .encrypt(uid.to_owned(), seed.clone())
            .await
            .map_err(|e| format!("failed to encrypt DEK, error: {e}"))?;
        let mut object = EncryptedObject {
            encrypted_data: vec![0],
            key_id: answer.key_id,
            encrypted_dek_source: answer.ciphertext,
            annotations: answer.annotations,
            encrypted_dek_source_type: EncryptedDekSourceType::HkdfSha256XnonceAesGcmSeed as i32,
        };
        validate(&object)?;
        object.encrypted_data.clear();
        Ok((Arc::new(DekSource::Seed(seed)), object))
    }

    fn current_state(&self) -> Option<Arc<State>> {
        self.state.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set_state(&self, state: Arc<State>) {
        *self.state.write().unwrap_or_else(|e| e.into_inner()) = Some(state);
    }

    /// `data` as stored after the prefix; `authenticated` is the etcd key.
    pub(super) fn seal(&self, data: &[u8], authenticated: &[u8]) -> Result<Vec<u8>, String> {
        let Some(state) = self.current_state() else {
            return Err("got unexpected nil transformer".into());
        };
        let now = SystemTime::now();
        if now > state.expires {
            return Err(format!(
                "encryptedDEKSource with keyID hash {:?} expired at {} (current time is {})",
                key_id_hash(&state.object.key_id),
                rfc3339(state.expires),
                rfc3339(now)
            ));
        }
        let mut object = state.object.clone();
        object.encrypted_data = state.source.seal(data, authenticated)?;
        validate(&object)?;
        metrics::record_key_id("to_storage", &self.name, &state.key_id_hash);
        Ok(object.encode_to_vec())
    }

    /// `data` after the prefix, decrypted.
    pub(super) fn open(&self, data: &[u8], authenticated: &[u8]) -> Result<Vec<u8>, String> {
        let object = EncryptedObject::decode(data).map_err(|e| e.to_string())?;
        validate(&object)?;
        let key = cache_key(&object);
        let source = match self.cached(&key) {
            Some(source) => source,
            None => {
                metrics::record_cache_miss();
                let request = DecryptRequest {
                    ciphertext: object.encrypted_dek_source.clone(),
                    uid: uuid::Uuid::new_v4().to_string(),
                    key_id: object.key_id.clone(),
                    annotations: object.annotations.clone(),
                };
                let plain = self
                    .client
                    .decrypt_blocking(request)
                    .map_err(|e| format!("failed to decrypt DEK, error: {e}"))?;
                let source = Arc::new(DekSource::new(object.encrypted_dek_source_type(), plain)?);
                self.remember(key, source.clone());
                source
            }
        };
        metrics::record_key_id("from_storage", &self.name, &key_id_hash(&object.key_id));
        source.open(&object.encrypted_data, authenticated)
    }

    /// Whether a value (after the prefix) was written under another key ID or kind of DEK
    /// source than writes use now.
    pub(super) fn is_stale(&self, data: &[u8]) -> bool {
        let (Some(state), Ok(object)) = (self.current_state(), EncryptedObject::decode(data))
        else {
            return false;
        };
        object.key_id != state.object.key_id
            || object.encrypted_dek_source_type != state.object.encrypted_dek_source_type
    }

    fn cached(&self, key: &[u8]) -> Option<Arc<DekSource>> {
        if let Some(state) = self.current_state()
            && state.cache_key == key
        {
            return Some(state.source.clone());
        }
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let (source, used) = cache.get_mut(key)?;
        *used = Instant::now();
        Some(source.clone())
    }

    fn remember(&self, key: Vec<u8>, source: Arc<DekSource>) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.retain(|_, (_, used)| used.elapsed() < CACHE_TTL);
        cache.insert(key, (source, Instant::now()));
        metrics::record_dek_source_cache_size(&self.name, cache.len());
    }
}

/// How upstream logs a key ID: its SHA-256, never the ID itself.
fn key_id_hash(key_id: &str) -> String {
    if key_id.is_empty() {
        return String::new();
    }
    format!("sha256:{}", crate::labels::sha256_hex(key_id.as_bytes()))
}

fn rfc3339(t: SystemTime) -> String {
    use kas_apimachinery::golang::time::{Time, format_rfc3339};
    format_rfc3339(Time::from_system_time(t))
}
