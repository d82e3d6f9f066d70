//! Upstream's storage codec: the bytes an object is kept as in etcd, so that kube-apiserver
//! and this server read each other's data.
//!
//! Upstream writes each built-in resource of kube-apiserver in its storage version, in
//! `--storage-media-type` (protobuf by default: the `k8s\0` envelope with `apiVersion` and
//! `kind`; or JSON or YAML, with `kind` and `apiVersion` in the object). Its aggregator and
//! apiextensions servers write APIServices and CustomResourceDefinitions as JSON whatever
//! the flag (their `LegacyCodec`), CRDs in `apiextensions.k8s.io/v1beta1`; custom resources
//! are JSON with their own `apiVersion` and `kind`. `metadata.resourceVersion` is never
//! written.
//!
//! A write needs to know which kind a key holds: each role registers its resources' key
//! prefixes with the [`StoredKind`] upstream writes there ([`Codec::register`]). A read
//! needs nothing: the bytes say what they are. Reads take every form upstream writes
//! (protobuf, JSON, YAML) in any version this server knows, and the typeless JSON older
//! releases of this server wrote, so existing clusters keep their data and are rewritten in
//! upstream's form object by object as they change. Keys no role registered (a custom
//! resource's) are written as the caller's JSON.
//!
//! What callers hold is always the served form without `apiVersion` and `kind` (custom
//! resources keep theirs); the codec converts to and from the stored version where the two
//! differ (CRDs, [`crd`]).

mod crd;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use kas_apimachinery::protobuf;
use kas_apimachinery::runtime::serializer::{encode_yaml, yaml_to_json};
use kas_apimachinery::schema::Message;
use kas_storage::{Error, Result};

use crate::encryption::{ENCRYPTED_PREFIX, Encryption, Transformer};
use serde_json::Value;

/// `--storage-media-type`: how kube-apiserver's own resources are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum MediaType {
    #[default]
    #[value(name = "application/vnd.kubernetes.protobuf")]
    Protobuf,
    #[value(name = "application/json")]
    Json,
    #[value(name = "application/yaml")]
    Yaml,
}

/// What upstream writes under one key prefix: the storage version's group, version and
/// kind, in which media type; `resource` is the name encryption rules know it by (with
/// `group`: `secrets`, `deployments.apps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredKind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub resource: &'static str,
    pub media_type: MediaType,
}

impl StoredKind {
    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// A kind's defaulting (upstream's defaulting codec defaults every object it decodes, so
/// that what an older release wrote reads with today's defaults, and defaults set only on
/// read, such as a Job's labels from its template, show).
pub type Defaulter = Arc<dyn Fn(&mut Value) + Send + Sync>;

/// What a role writes under one storage resource: the kind, and its defaulting on read.
#[derive(Clone)]
pub struct Registration {
    pub storage_resource: &'static str,
    pub kind: StoredKind,
    pub defaults: Option<Defaulter>,
}

/// The kinds registered per key prefix, and how to write them.
#[derive(Default)]
pub struct Codec {
    /// `/<storage resource>` (e.g. `/services/specs`) → what is written under it.
    kinds: RwLock<HashMap<String, Arc<Written>>>,
    /// `--etcd-prefix` without its trailing `/`: what makes a key the etcd key that
    /// aesgcm authenticates.
    etcd_prefix: String,
    /// `--encryption-provider-config` as last loaded (replaced by automatic reload).
    encryption: RwLock<Option<Arc<Encryption>>>,
}

impl std::fmt::Debug for Codec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Codec")
            .field("etcd_prefix", &self.etcd_prefix)
            .finish_non_exhaustive()
    }
}

/// A registered kind, ready to write.
#[derive(Clone)]
struct Written {
    kind: StoredKind,
    api_version: String,
    /// Its protobuf message, when it is written as protobuf.
    message: Option<&'static Message>,
    defaults: Option<Defaulter>,
    /// Its encryption rule's providers.
    transformer: Option<Arc<Transformer>>,
    /// `resource.group`, the label its transformations are counted under.
    resource_label: String,
}

impl std::fmt::Debug for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Written")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// The largest number of `/`-separated segments a storage resource has
/// (`apiextensions.k8s.io/customresourcedefinitions`, `services/specs`).
const MAX_PREFIX_SEGMENTS: usize = 2;

impl Codec {
    /// The codec of a store under `etcd_prefix` (`/registry`).
    pub fn new(etcd_prefix: &str) -> Codec {
        Codec {
            etcd_prefix: etcd_prefix.trim_end_matches('/').to_owned(),
            ..Codec::default()
        }
    }

    /// Values of the resources `encryption` names are encrypted as it says from now on:
    /// the kinds registered so far take their rules' providers from it (a reloaded
    /// configuration replaces the previous one).
    pub fn set_encryption(&self, encryption: Arc<Encryption>) -> Result<()> {
        // The kinds' lock first, as registrations take it, so none is registered with
        // the configuration being replaced.
        let mut kinds = self.kinds.write().unwrap_or_else(|e| e.into_inner());
        for written in kinds.values_mut() {
            let mut rebuilt = (**written).clone();
            rebuilt.transformer =
                encryption.for_resource(rebuilt.kind.group, rebuilt.kind.resource);
            *written = Arc::new(rebuilt);
        }
        *self.encryption.write().unwrap_or_else(|e| e.into_inner()) = Some(encryption);
        Ok(())
    }

    /// The encryption configuration in effect.
    fn encryption(&self) -> Option<Arc<Encryption>> {
        self.encryption
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The etcd key of `key`, which aesgcm authenticates.
    fn authenticated(&self, key: &str) -> Vec<u8> {
        [self.etcd_prefix.as_bytes(), key.as_bytes()].concat()
    }

    /// Writes under `/<storage_resource>/...` go out as `kind` says. A prefix registered
    /// twice (resources served in several versions from one storage) keeps the first.
    pub fn register(&self, storage_resource: &str, kind: StoredKind) -> Result<()> {
        self.register_with_defaults(storage_resource, kind, None)
    }

    /// [`Codec::register`], and what is read under the prefix is defaulted by `defaults`
    /// (after its conversion from the stored version).
    pub fn register_with_defaults(
        &self,
        storage_resource: &str,
        kind: StoredKind,
        defaults: Option<Defaulter>,
    ) -> Result<()> {
        let mut kinds = self.kinds.write().unwrap_or_else(|e| e.into_inner());
        let written = Arc::new(self.written_as(kind, defaults)?);
        kinds
            .entry(format!("/{storage_resource}"))
            .or_insert(written);
        Ok(())
    }

    /// Writes under `/<storage_resource>/...` go out as `kind` says from now on, whatever
    /// was registered there before (a CRD's custom resources, in its storage version).
    pub fn replace(&self, storage_resource: &str, kind: StoredKind) -> Result<()> {
        let mut kinds = self.kinds.write().unwrap_or_else(|e| e.into_inner());
        let written = Arc::new(self.written_as(kind, None)?);
        kinds.insert(format!("/{storage_resource}"), written);
        Ok(())
    }

    /// `kind` ready to write: its message, and its encryption rule's providers.
    fn written_as(&self, kind: StoredKind, defaults: Option<Defaulter>) -> Result<Written> {
        let message = match kind.media_type {
            MediaType::Protobuf => Some(
                message_of(kind.group, kind.version, kind.kind).ok_or_else(|| {
                    Error::BadRequest(format!(
                        "no protobuf message for {}, {}",
                        kind.api_version(),
                        kind.kind
                    ))
                })?,
            ),
            MediaType::Json | MediaType::Yaml => None,
        };
        let transformer = self
            .encryption()
            .and_then(|e| e.for_resource(kind.group, kind.resource));
        Ok(Written {
            api_version: kind.api_version(),
            resource_label: crate::labels::qualified_resource(kind.group, kind.resource),
            kind,
            message,
            defaults,
            transformer,
        })
    }

    /// The kind registered for `key`'s storage resource.
    fn written(&self, key: &str) -> Option<Arc<Written>> {
        let kinds = self.kinds.read().unwrap_or_else(|e| e.into_inner());
        if kinds.is_empty() {
            return None;
        }
        // `/a/b/c`: `/a`, then `/a/b`; a key may be a storage resource itself
        // (`/ranges/servicenodeports`).
        let mut end = 0;
        for _ in 0..MAX_PREFIX_SEGMENTS {
            let rest = key.get(end + 1..)?;
            end = rest.find('/').map_or(key.len(), |i| end + 1 + i);
            if let Some(w) = kinds.get(&key[..end]) {
                return Some(w.clone());
            }
            if end == key.len() {
                break;
            }
        }
        None
    }

    /// The bytes to write for `value` at `key`: `value` without `metadata.resourceVersion`
    /// (upstream's `PrepareObjectForStorage`), in the registered kind's version and media
    /// type. The caller's value is left as it was.
    pub fn encode(&self, key: &str, value: &Value) -> Result<Vec<u8>> {
        let written = self.written(key);
        let data = self.serialize(key, value, written.as_deref())?;
        match written.as_deref() {
            Some(Written {
                transformer: Some(transformer),
                resource_label,
                ..
            }) => transformer
                .write(data, &self.authenticated(key), Some(resource_label))
                .map_err(|e| invalid(key, e)),
            _ => Ok(data),
        }
    }

    /// `value` in its registered kind's version and media type.
    fn serialize(&self, key: &str, value: &Value, written: Option<&Written>) -> Result<Vec<u8>> {
        let Value::Object(map) = value else {
            return Err(invalid(key, "object is not a JSON object".into()));
        };
        let Some(written) = written else {
            return kas_storage::encode_for_storage(key, value);
        };
        let has_rv = map
            .get("metadata")
            .and_then(Value::as_object)
            .is_some_and(|m| m.contains_key("resourceVersion"));
        let converts = crd::converts(&written.kind);
        let mut owned;
        let value = if has_rv || converts {
            owned = value.clone();
            if let Some(Value::Object(meta)) = owned.get_mut("metadata") {
                meta.remove("resourceVersion");
            }
            if converts {
                crd::to_v1beta1(&mut owned);
            }
            &owned
        } else {
            value
        };
        let (api_version, kind) = (&written.api_version, written.kind.kind);
        match (written.kind.media_type, written.message) {
            (MediaType::Protobuf, Some(message)) => {
                protobuf::encode_object(value, message, api_version, kind)
                    .map_err(|e| invalid(key, format!("encoding {kind}: {e}")))
            }
            (MediaType::Yaml, _) => {
                let mut typed = value.clone();
                if let Value::Object(map) = &mut typed {
                    map.insert("apiVersion".into(), api_version.as_str().into());
                    map.insert("kind".into(), kind.into());
                }
                encode_yaml(&typed)
                    .map(Vec::from)
                    .map_err(|e| invalid(key, e.to_string()))
            }
            _ => json_with_type(key, value, api_version, kind),
        }
    }

    /// Whether `data` at `key` is stored otherwise than the current encryption would write
    /// it (another provider or key read it; upstream's `stale`).
    pub fn is_stale(&self, key: &str, data: &[u8]) -> bool {
        if self
            .encryption
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
        {
            return false;
        }
        match self.written(key).and_then(|w| w.transformer.clone()) {
            Some(transformer) => transformer.is_stale(data),
            None => false,
        }
    }

    /// The document stored as `data` at `key`, in the form callers hold: without
    /// `apiVersion` and `kind` for the kinds this server knows, in their served version.
    ///
    /// A custom resource (a kind registered under its key, in JSON) loses its type when it
    /// is in the registered version; in another version it keeps it, for the conversion
    /// above the storage to see what it is.
    pub fn decode(&self, key: &str, data: &[u8]) -> Result<Value> {
        let written = self.written(key);
        let registered = written
            .as_ref()
            .map(|w| (w.api_version.as_str(), w.kind.kind));
        let (transformer, resource) = match written.as_deref() {
            Some(Written {
                transformer: Some(t),
                resource_label,
                ..
            }) => (Some(t.clone()), Some(resource_label.as_str())),
            // A key this role does not write (another role's resource): any rule may read it.
            _ if data.starts_with(ENCRYPTED_PREFIX) => (self.encryption().map(|e| e.any()), None),
            _ => (None, None),
        };
        let plain = match &transformer {
            Some(t) => t
                .read(data, &self.authenticated(key), resource)
                .map_err(|e| invalid(key, e))?,
            None => std::borrow::Cow::Borrowed(data),
        };
        let mut value = decode(key, &plain, registered)?;
        if let Some(defaults) = written.and_then(|w| w.defaults.clone()) {
            defaults(&mut value);
        }
        Ok(value)
    }
}

/// The document stored as `data`, in the form callers hold (see [`Codec::decode`]),
/// before defaulting; `registered` is the type written under `key`.
fn decode(key: &str, data: &[u8], registered: Option<(&str, &str)>) -> Result<Value> {
    if data.starts_with(&protobuf::MAGIC) {
        return decode_protobuf(key, data);
    }
    if data.starts_with(ENCRYPTED_PREFIX) {
        // Upstream's identity transformer, the reader of unencrypted data.
        return Err(invalid(
            key,
            "identity transformer tried to read encrypted data".into(),
        ));
    }
    let first = data.iter().find(|b| !b.is_ascii_whitespace());
    let value: Value = if first == Some(&b'{') {
        serde_json::from_slice(data)
            .map_err(|e| invalid(key, format!("decoding stored object: {e}")))?
    } else {
        yaml_to_json(data).map_err(|e| invalid(key, format!("decoding stored object: {e}")))?
    };
    let Value::Object(mut map) = value else {
        return Err(invalid(key, "stored object is not a JSON object".into()));
    };
    let typed = match (map.get("apiVersion"), map.get("kind")) {
        (Some(Value::String(api_version)), Some(Value::String(kind))) => {
            let mine = registered == Some((api_version.as_str(), kind.as_str()));
            (mine || known(api_version, kind)).then(|| (api_version.clone(), kind.clone()))
        }
        _ => None,
    };
    let mut value = match typed {
        Some((api_version, kind)) => {
            map.remove("apiVersion");
            map.remove("kind");
            let mut value = Value::Object(map);
            if crd::is_v1beta1(&api_version, &kind) {
                crd::from_v1beta1(&mut value);
            }
            value
        }
        None => Value::Object(map),
    };
    if let Some(Value::Object(meta)) = value.get_mut("metadata") {
        meta.remove("resourceVersion");
    }
    Ok(value)
}

/// `value` as JSON with `kind` and `apiVersion` first, as upstream's JSON serializer writes a
/// typed object.
fn json_with_type(key: &str, value: &Value, api_version: &str, kind: &str) -> Result<Vec<u8>> {
    let typed = value
        .as_object()
        .is_some_and(|m| m.contains_key("apiVersion") || m.contains_key("kind"));
    let body = if typed {
        let mut untyped = value.clone();
        if let Value::Object(m) = &mut untyped {
            m.remove("apiVersion");
            m.remove("kind");
        }
        serde_json::to_vec(&untyped)
    } else {
        serde_json::to_vec(value)
    }
    .map_err(|e| invalid(key, e.to_string()))?;
    let mut out = Vec::with_capacity(body.len() + api_version.len() + kind.len() + 30);
    out.extend_from_slice(b"{\"kind\":");
    serde_json::to_writer(&mut out, kind).map_err(|e| invalid(key, e.to_string()))?;
    out.extend_from_slice(b",\"apiVersion\":");
    serde_json::to_writer(&mut out, api_version).map_err(|e| invalid(key, e.to_string()))?;
    match body.get(1..) {
        Some(b"}") | None => out.push(b'}'),
        Some(rest) => {
            out.push(b',');
            out.extend_from_slice(rest);
        }
    }
    Ok(out)
}

/// A protobuf envelope's object, decoded with its kind's message.
fn decode_protobuf(key: &str, data: &[u8]) -> Result<Value> {
    let unknown =
        protobuf::decode_envelope(data).map_err(|e| invalid(key, format!("decoding: {e}")))?;
    let (group, version) = split_api_version(&unknown.api_version);
    let message = message_of(group, version, &unknown.kind).ok_or_else(|| {
        invalid(
            key,
            format!(
                "no kind {:?} is registered for version {:?}",
                unknown.kind, unknown.api_version
            ),
        )
    })?;
    let mut value = protobuf::decode(&unknown.raw, message)
        .map_err(|e| invalid(key, format!("decoding {}: {e}", unknown.kind)))?;
    if let Some(Value::Object(meta)) = value.get_mut("metadata") {
        meta.remove("resourceVersion");
    }
    Ok(value)
}

/// A kind's message, for the versions upstream stores that this server does not serve:
/// networking's v1beta1 IPAddress and ServiceCIDR are v1's (the same fields and numbers).
fn message_of(group: &str, version: &str, kind: &str) -> Option<&'static Message> {
    kas_api::kind(group, version, kind).or_else(|| match (group, version, kind) {
        ("networking.k8s.io", "v1beta1", "IPAddress" | "ServiceCIDR") => {
            kas_api::kind(group, "v1", kind)
        }
        _ => None,
    })
}

/// Whether a stored JSON object of this type is one of the kinds this server holds without
/// its type (every built-in kind); a custom resource keeps its `apiVersion` and `kind`.
fn known(api_version: &str, kind: &str) -> bool {
    let (group, version) = split_api_version(api_version);
    crd::is_v1beta1(api_version, kind) || message_of(group, version, kind).is_some()
}

fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

fn invalid(key: &str, message: String) -> Error {
    Error::InvalidObj {
        key: key.to_owned(),
        message,
    }
}

#[cfg(test)]
mod tests;
