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
//! KMS providers are not offered yet: a configuration naming one is refused at start.

mod providers;

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
}

/// One rule's providers, in order.
#[derive(Default)]
pub struct Transformer {
    providers: Vec<Provider>,
}

/// A provider: its prefix (empty for identity) and its keys, each with its name.
struct Provider {
    prefix: &'static str,
    keys: Vec<(String, Arc<Cipher>)>,
    /// The error when no key's name matches.
    no_key: &'static str,
}

impl Encryption {
    /// Reads and checks `--encryption-provider-config`.
    pub fn from_file(path: &std::path::Path) -> Result<Encryption, String> {
        let data = std::fs::read(path).map_err(|e| {
            format!("error reading encryption provider configuration file {path:?}: {e}")
        })?;
        Encryption::parse(&data).map_err(|e| {
            format!("error while parsing encryption provider configuration file {path:?}: {e}")
        })
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
            let transformer = Arc::new(Transformer {
                providers: providers.iter().map(provider).collect::<Result<_, _>>()?,
            });
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

/// Copies of every rule's providers (their ciphers shared).
fn rules_providers(rules: &HashMap<(String, String), Arc<Transformer>>) -> Vec<Provider> {
    rules
        .values()
        .flat_map(|t| &t.providers)
        .map(|p| Provider {
            prefix: p.prefix,
            keys: p.keys.clone(),
            no_key: p.no_key,
        })
        .collect()
}

impl Transformer {
    /// `data` as the first provider writes it; `authenticated` is the etcd key.
    pub fn transform_to_storage(
        &self,
        data: Vec<u8>,
        authenticated: &[u8],
    ) -> Result<Vec<u8>, String> {
        let Some(first) = self.providers.first() else {
            return Ok(data);
        };
        let Some((name, cipher)) = first.keys.first() else {
            return Ok(data);
        };
        let sealed = cipher.seal(&data, authenticated)?;
        let mut out = Vec::with_capacity(first.prefix.len() + name.len() + 1 + sealed.len());
        out.extend_from_slice(first.prefix.as_bytes());
        out.extend_from_slice(name.as_bytes());
        out.push(b':');
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// `data` as stored, through the first provider whose prefix and key it carries
    /// (upstream's `prefixTransformers`: a provider that fails lets the next one try).
    pub fn transform_from_storage<'a>(
        &self,
        data: &'a [u8],
        authenticated: &[u8],
    ) -> Result<std::borrow::Cow<'a, [u8]>, String> {
        let mut errors = Vec::new();
        for provider in &self.providers {
            let Some(rest) = data.strip_prefix(provider.prefix.as_bytes()) else {
                continue;
            };
            if provider.keys.is_empty() {
                // identity: a value another provider encrypted is not its to read.
                if data.starts_with(ENCRYPTED_PREFIX) {
                    continue;
                }
                return Ok(std::borrow::Cow::Borrowed(data));
            }
            let mut matched = false;
            for (name, cipher) in &provider.keys {
                let Some(sealed) = rest
                    .strip_prefix(name.as_bytes())
                    .and_then(|r| r.strip_prefix(b":"))
                else {
                    continue;
                };
                matched = true;
                match cipher.open(sealed, authenticated) {
                    Ok(plain) => return Ok(std::borrow::Cow::Owned(plain)),
                    Err(e) => errors.push(e),
                }
                break;
            }
            if !matched {
                errors.push(provider.no_key.to_owned());
            }
        }
        match errors.len() {
            0 => Err("no matching prefix found".into()),
            1 => Err(errors.remove(0)),
            _ => Err(format!("[{}]", errors.join(", "))),
        }
    }
}

/// One entry of a rule's `providers`.
fn provider(config: &Value) -> Result<Provider, String> {
    if config.get("identity").is_some() {
        return Ok(Provider {
            prefix: "",
            keys: Vec::new(),
            no_key: "",
        });
    }
    if config.get("kms").is_some() {
        return Err("kms providers are not offered by this server yet".into());
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
    Ok(Provider {
        prefix,
        keys: out,
        no_key,
    })
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
