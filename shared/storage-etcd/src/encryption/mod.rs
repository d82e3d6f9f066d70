//! Encryption at rest: upstream's `--encryption-provider-config`, an
//! `apiserver.config.k8s.io/v1` `EncryptionConfiguration` that names, per group and
//! resource (`secrets`, `deployments.apps`, `*.apps`, `*.` for the core group, `*.*`), the
//! providers a value goes through (`server/options/encryptionconfig/config.go`).
//!
//! The first provider of a rule writes; every provider reads what carries its prefix
//! (`k8s:enc:aescbc:v1:<key name>:`, ...), so a key can be rotated in by listing it first
//! and out once every value was rewritten. `identity` writes plain values and reads
//! anything without an encryption prefix. The wire forms are upstream's
//! ([`providers`]), so values either server encrypted decrypt in the other.
//!
//! KMS v2 providers ([`kms`]) ask a plugin over gRPC to encrypt a seed the values' keys are
//! derived from; KMS v1, deprecated and off by default in 1.33, is refused as upstream
//! refuses it without its feature gate.

mod kms;
pub(crate) mod metrics;
mod providers;
pub(crate) mod reload;
mod transformer;

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use serde_json::Value;

use providers::Cipher;

/// The prefix every encrypted value starts with.
pub const ENCRYPTED_PREFIX: &[u8] = b"k8s:enc:";

/// What a configuration file says, resolved: each group and resource's transformer.
#[derive(Default)]
pub struct Encryption {
    /// (group, resource), either of them `*`.
    rules: HashMap<(String, String), Arc<Transformer>>,
    /// Every rule's providers in one transformer (see [`Encryption::any`]), built once.
    any: Arc<Transformer>,
    /// The KMS providers, in the configuration's order (names are unique).
    kms: Vec<Arc<kms::Kms>>,
}

/// One rule's providers, in order.
#[derive(Default)]
pub struct Transformer {
    providers: Vec<Provider>,
}

/// One entry of a rule's `providers`.
#[derive(Clone)]
enum Provider {
    /// Writes plain values, reads any value without an encryption prefix.
    Identity,
    /// aescbc, aesgcm or secretbox: a prefix and named keys.
    Keys {
        prefix: &'static str,
        keys: Vec<(String, Arc<Cipher>)>,
        /// The error when no key's name matches.
        no_key: &'static str,
    },
    Kms(Arc<kms::Kms>),
}

impl Encryption {
    /// Reads and checks `--encryption-provider-config`.
    pub fn from_file(path: &std::path::Path) -> Result<Encryption, String> {
        reload::load(path).map(|(encryption, _)| encryption)
    }

    /// An `EncryptionConfiguration` in YAML or JSON.
    pub fn parse(data: &[u8]) -> Result<Encryption, String> {
        let config =
            kas_apimachinery::runtime::serializer::yaml_to_json(data).map_err(|e| e.to_string())?;
        let (api_version, kind) = (config["apiVersion"].as_str(), config["kind"].as_str());
        if (api_version, kind)
            != (
                Some("apiserver.config.k8s.io/v1"),
                Some("EncryptionConfiguration"),
            )
        {
            return Err(format!(
                "no kind {:?} is registered for version {:?}",
                kind.unwrap_or_default(),
                api_version.unwrap_or_default()
            ));
        }
        let mut encryption = Encryption::default();
        let rules = config["resources"].as_array().cloned().unwrap_or_default();
        if rules.is_empty() {
            return Err("resources: Required value: resources is a required field".into());
        }
        for (i, rule) in rules.iter().enumerate() {
            let providers = rule["providers"].as_array().cloned().unwrap_or_default();
            if providers.is_empty() {
                return Err(format!(
                    "resources[{i}].providers: Required value: at least one provider must be specified"
                ));
            }
            let mut parsed = Vec::with_capacity(providers.len());
            for (j, config) in providers.iter().enumerate() {
                let p = provider(config, &format!("resources[{i}].providers[{j}]"))?;
                if let Provider::Kms(kms) = &p {
                    if encryption.kms.iter().any(|k| k.name == kms.name) {
                        return Err(format!(
                            "resources[{i}].providers[{j}].kms.name: Invalid value: {:?}: duplicate KMS provider name {}, names must be unique",
                            kms.name, kms.name
                        ));
                    }
                    encryption.kms.push(kms.clone());
                }
                parsed.push(p);
            }
            let transformer = Arc::new(Transformer { providers: parsed });
            let resources = rule["resources"].as_array().cloned().unwrap_or_default();
            if resources.is_empty() {
                return Err(format!(
                    "resources[{i}].resources: Required value: at least one resource must be specified"
                ));
            }
            for resource in resources {
                let resource = resource.as_str().unwrap_or_default();
                let (group, name) = parse_group_resource(resource);
                for mask in [
                    (group.clone(), "*".to_owned()),
                    ("*".to_owned(), "*".to_owned()),
                ] {
                    if encryption.rules.contains_key(&mask) {
                        return Err(format!(
                            "resource {:?} is masked by earlier rule {:?}",
                            yaml_name(&group, &name),
                            yaml_name(&mask.0, &mask.1)
                        ));
                    }
                }
                encryption
                    .rules
                    .entry((group, name))
                    .or_insert_with(|| transformer.clone());
            }
        }
        encryption.any = Arc::new(Transformer {
            providers: rules_providers(&encryption.rules),
        });
        Ok(encryption)
    }

    /// The transformer of a group's resource: its own rule, else its group's `*`, else `*.*`.
    pub fn for_resource(&self, group: &str, resource: &str) -> Option<Arc<Transformer>> {
        let key = |g: &str, r: &str| (g.to_owned(), r.to_owned());
        self.rules
            .get(&key(group, resource))
            .or_else(|| self.rules.get(&key(group, "*")))
            .or_else(|| self.rules.get(&key("*", "*")))
            .cloned()
    }
}

impl Encryption {
    /// Every rule's providers in one transformer, for reading a value of a resource this
    /// role does not write (its key names no resource here).
    pub fn any(&self) -> Arc<Transformer> {
        self.any.clone()
    }
}

impl Encryption {
    /// Probes each KMS plugin once (priming the seed writes use), then keeps probing in the
    /// background. A plugin that is not up yet is not fatal: reads and writes of its
    /// resources fail until it is.
    pub async fn start(&self) {
        for kms in &self.kms {
            kms.start().await;
        }
    }

    /// Whether the configuration `data` names a KMS provider, without building anything.
    pub fn names_kms(data: &[u8]) -> bool {
        let Ok(config) = kas_apimachinery::runtime::serializer::yaml_to_json(data) else {
            return false;
        };
        let rules = config["resources"].as_array().into_iter().flatten();
        rules
            .flat_map(|r| r["providers"].as_array().into_iter().flatten())
            .any(|p| p.get("kms").is_some())
    }

    /// Upstream's `kms-providers` check on /healthz and /readyz: every KMS v2 plugin
    /// answers `Status` healthy, or the errors named `kms-provider-<i>`.
    pub async fn check_kms(&self) -> Result<(), String> {
        let mut errs = Vec::new();
        for (i, kms) in self.kms.iter().enumerate() {
            if let Err(e) = kms.check().await {
                errs.push(format!("kms-provider-{i}: {e}"));
            }
        }
        match kas_apimachinery::validation::field::aggregate_strings(errs) {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }
}

/// Copies of every rule's providers (their ciphers shared).
fn rules_providers(rules: &HashMap<(String, String), Arc<Transformer>>) -> Vec<Provider> {
    rules
        .values()
        .flat_map(|t| t.providers.iter().cloned())
        .collect()
}

/// One entry of a rule's `providers`; `path` is its field path.
fn provider(config: &Value, path: &str) -> Result<Provider, String> {
    if config.get("identity").is_some() {
        return Ok(Provider::Identity);
    }
    if let Some(kms) = config.get("kms") {
        return kms_provider(kms, &format!("{path}.kms")).map(Provider::Kms);
    }
    let (name, prefix, no_key) = if config.get("aescbc").is_some() {
        ("aescbc", "k8s:enc:aescbc:v1:", AES_NO_KEY)
    } else if config.get("aesgcm").is_some() {
        ("aesgcm", "k8s:enc:aesgcm:v1:", AES_NO_KEY)
    } else if config.get("secretbox").is_some() {
        (
            "secretbox",
            "k8s:enc:secretbox:v1:",
            "no matching key was found for the provided Secretbox transformer",
        )
    } else {
        return Err("provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity".into());
    };
    let keys = config[name]["keys"].as_array().cloned().unwrap_or_default();
    if keys.is_empty() {
        let kind = if name == "secretbox" {
            "secretbox"
        } else {
            "aes"
        };
        return Err(format!("{kind} provider has no valid keys"));
    }
    let mut out = Vec::new();
    for key in &keys {
        let key_name = key["name"].as_str().unwrap_or_default();
        if key_name.is_empty() {
            return Err("key with invalid name provided".into());
        }
        let secret = key["secret"].as_str().unwrap_or_default();
        if secret.is_empty() {
            return Err(format!("key {key_name} has no provided secret"));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(secret)
            .map_err(|e| format!("could not obtain secret for named key {key_name}: {e}"))?;
        let cipher = match name {
            "aescbc" => Cipher::cbc(bytes),
            "aesgcm" => Cipher::gcm(&bytes),
            _ => Cipher::secretbox(&bytes),
        }
        .map_err(|e| match name {
            "secretbox" => e,
            _ => format!("error while creating cipher for named key {key_name}: {e}"),
        })?;
        out.push((key_name.to_owned(), Arc::new(cipher)));
    }
    Ok(Provider::Keys {
        prefix,
        keys: out,
        no_key,
    })
}

/// A `kms` provider, checked and defaulted as upstream's (`timeout` 3s, `apiVersion` v1,
/// which 1.33 refuses without the `KMSv1` gate).
fn kms_provider(config: &Value, path: &str) -> Result<Arc<kms::Kms>, String> {
    let name = config["name"].as_str().unwrap_or_default();
    let api_version = config["apiVersion"].as_str().unwrap_or("v1");
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push(format!(
            "{path}.name: Required value: name is a mandatory field for a provider"
        ));
    } else if api_version != "v1" && name.contains(':') {
        errs.push(format!(
            "{path}.name: Invalid value: {name:?}: invalid KMS provider name {name}, must not contain ':'"
        ));
    }
    let timeout = match &config["timeout"] {
        Value::Null => Ok(3_000_000_000),
        Value::String(s) => kas_apimachinery::golang::time::parse_duration(s)
            .map(|d| d.0)
            .map_err(|e| format!("{path}.timeout: {e}")),
        other => Err(format!(
            "{path}.timeout: Invalid value: {other}: not a duration"
        )),
    };
    match &timeout {
        Ok(t) if *t <= 0 => errs.push(format!(
            "{path}.timeout: Invalid value: {:?}: timeout should be a positive value",
            config["timeout"].as_str().unwrap_or_default()
        )),
        Ok(_) => {}
        Err(e) => errs.push(e.clone()),
    }
    let endpoint = config["endpoint"].as_str().unwrap_or_default();
    let socket = match endpoint.split_once("://") {
        _ if endpoint.is_empty() => {
            errs.push(format!(
                "{path}.endpoint: Invalid value: \"\": endpoint is a mandatory field for a kms"
            ));
            None
        }
        Some(("unix", socket)) if !socket.is_empty() => Some(socket),
        Some((scheme, _)) if scheme != "unix" => {
            errs.push(format!(
                "{path}.endpoint: Invalid value: {endpoint:?}: unsupported scheme {scheme:?} for KMS provider, only unix is supported"
            ));
            None
        }
        _ => {
            errs.push(format!(
                "{path}.endpoint: Invalid value: {endpoint:?}: invalid endpoint for kms provider, error: no socket path"
            ));
            None
        }
    };
    if api_version != "v1" && !config["cachesize"].is_null() {
        errs.push(format!(
            "{path}.cachesize: Invalid value: {}: cachesize is not supported in v2",
            config["cachesize"]
        ));
    }
    if api_version != "v1" && api_version != "v2" {
        errs.push(format!(
            "{path}.apiVersion: Invalid value: {api_version:?}: unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported"
        ));
    }
    if let Some(e) = kas_apimachinery::validation::field::aggregate_strings(errs) {
        return Err(e);
    }
    if api_version == "v1" {
        return Err("KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead.  Set --feature-gates=KMSv1=true to use the deprecated KMSv1 feature.".into());
    }
    let (Some(socket), Ok(timeout)) = (socket, timeout) else {
        return Err(format!("{path}: invalid KMS provider"));
    };
    // `unix:///path` names /path; `unix://@name` an abstract socket is not offered.
    let timeout = std::time::Duration::from_nanos(timeout.unsigned_abs());
    kms::Kms::new(name, std::path::PathBuf::from(socket), timeout)
        .map_err(|e| format!("could not configure KMSv2-Plugin's probe {name:?}, error: {e}"))
}

const AES_NO_KEY: &str = "no matching key was found for the provided AES transformer";

/// `schema.ParseGroupResource`: `secrets` → ("", secrets), `deployments.apps` → (apps,
/// deployments), `*.*` → (*, *).
fn parse_group_resource(s: &str) -> (String, String) {
    match s.split_once('.') {
        Some((resource, group)) => (group.to_owned(), resource.to_owned()),
        None => (String::new(), s.to_owned()),
    }
}

/// How upstream's errors print a group resource (`grYAMLString`).
fn yaml_name(group: &str, resource: &str) -> String {
    if group.is_empty() && resource == "*" {
        "*.".to_owned()
    } else if group.is_empty() {
        resource.to_owned()
    } else {
        format!("{resource}.{group}")
    }
}

#[cfg(test)]
mod tests;
