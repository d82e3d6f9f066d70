//! A rule's providers applied to values: the first writes, each reads what carries its
//! prefix (upstream's `prefixTransformers`), and every transformation of a resource is
//! counted in `apiserver_storage_transformation_*`.

use std::borrow::Cow;
use std::time::Instant;

use super::{ENCRYPTED_PREFIX, Provider, Transformer, metrics};

impl Transformer {
    /// `data` as the first provider writes it; `authenticated` is the etcd key.
    pub fn transform_to_storage(
        &self,
        data: Vec<u8>,
        authenticated: &[u8],
    ) -> Result<Vec<u8>, String> {
        self.write(data, authenticated, None)
    }

    /// [`Transformer::transform_to_storage`], counted for `resource` (when given) in
    /// `apiserver_storage_transformation_*`.
    pub(crate) fn write(
        &self,
        data: Vec<u8>,
        authenticated: &[u8],
        resource: Option<&str>,
    ) -> Result<Vec<u8>, String> {
        let start = Instant::now();
        let label = match self.providers.first() {
            None => return Ok(data),
            // Upstream counts identity's writes under its empty prefix.
            Some(Provider::Identity) => Cow::Borrowed(""),
            Some(Provider::Keys { prefix, keys, .. }) => match keys.first() {
                Some((name, _)) => Cow::Owned(format!("{prefix}{name}:")),
                None => return Ok(data),
            },
            Some(Provider::Kms(kms)) => Cow::Borrowed(kms.prefix.as_str()),
        };
        let result = self.seal(data, authenticated);
        if let Some(resource) = resource {
            metrics::record(resource, "to_storage", &label, start, result.as_ref().err());
        }
        result
    }

    fn seal(&self, data: Vec<u8>, authenticated: &[u8]) -> Result<Vec<u8>, String> {
        let (prefix, sealed) = match self.providers.first() {
            None | Some(Provider::Identity) => return Ok(data),
            Some(Provider::Keys { prefix, keys, .. }) => {
                let Some((name, cipher)) = keys.first() else {
                    return Ok(data);
                };
                let sealed = cipher.seal(&data, authenticated)?;
                ([prefix.as_bytes(), name.as_bytes(), b":"].concat(), sealed)
            }
            Some(Provider::Kms(kms)) => (
                kms.prefix.as_bytes().to_vec(),
                kms.seal(&data, authenticated)?,
            ),
        };
        let mut out = prefix;
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// Whether `data` was not written by the first provider with its first key (or, for
    /// KMS, under the plugin's current key ID): a rewrite would change it.
    pub fn is_stale(&self, data: &[u8]) -> bool {
        match self.providers.first() {
            None => false,
            Some(Provider::Identity) => data.starts_with(ENCRYPTED_PREFIX),
            Some(Provider::Keys { prefix, keys, .. }) => {
                let current = keys.first().and_then(|(name, _)| {
                    data.strip_prefix(prefix.as_bytes())?
                        .strip_prefix(name.as_bytes())?
                        .strip_prefix(b":")
                });
                current.is_none()
            }
            Some(Provider::Kms(kms)) => match data.strip_prefix(kms.prefix.as_bytes()) {
                Some(rest) => kms.is_stale(rest),
                None => true,
            },
        }
    }

    /// `data` as stored, through the first provider whose prefix and key it carries
    /// (upstream's `prefixTransformers`: a provider that fails lets the next one try).
    pub fn transform_from_storage<'a>(
        &self,
        data: &'a [u8],
        authenticated: &[u8],
    ) -> Result<Cow<'a, [u8]>, String> {
        self.read(data, authenticated, None)
    }

    /// [`Transformer::transform_from_storage`], each provider tried counted for `resource`
    /// (when given) in `apiserver_storage_transformation_*`.
    pub(crate) fn read<'a>(
        &self,
        data: &'a [u8],
        authenticated: &[u8],
        resource: Option<&str>,
    ) -> Result<Cow<'a, [u8]>, String> {
        let start = Instant::now();
        let record = |prefix: &str, error: Option<&String>| {
            if let Some(resource) = resource {
                metrics::record(resource, "from_storage", prefix, start, error);
            }
        };
        let mut errors = Vec::new();
        for provider in &self.providers {
            match provider {
                // identity: a value another provider encrypted is not its to read.
                Provider::Identity if !data.starts_with(ENCRYPTED_PREFIX) => {
                    record("identity", None);
                    return Ok(Cow::Borrowed(data));
                }
                Provider::Identity => {}
                Provider::Keys {
                    prefix,
                    keys,
                    no_key,
                } => {
                    let Some(rest) = data.strip_prefix(prefix.as_bytes()) else {
                        continue;
                    };
                    let named = keys.iter().find_map(|(name, cipher)| {
                        let sealed = rest.strip_prefix(name.as_bytes())?.strip_prefix(b":")?;
                        Some((name, cipher, sealed))
                    });
                    let label = |name: &str| format!("{prefix}{name}:");
                    match named {
                        Some((name, cipher, sealed)) => match cipher.open(sealed, authenticated) {
                            Ok(plain) => {
                                record(&label(name), None);
                                return Ok(Cow::Owned(plain));
                            }
                            Err(e) => {
                                record(&label(name), Some(&e));
                                errors.push(e);
                            }
                        },
                        None => errors.push((*no_key).to_owned()),
                    }
                }
                Provider::Kms(kms) => {
                    let Some(rest) = data.strip_prefix(kms.prefix.as_bytes()) else {
                        continue;
                    };
                    match kms.open(rest, authenticated) {
                        Ok(plain) => {
                            record(&kms.prefix, None);
                            return Ok(Cow::Owned(plain));
                        }
                        Err(e) => {
                            record(&kms.prefix, Some(&e));
                            errors.push(e);
                        }
                    }
                }
            }
        }
        Err(
            kas_apimachinery::validation::field::aggregate_strings(errors).unwrap_or_else(|| {
                let e = "no matching prefix found".to_owned();
                record("unknown", Some(&e));
                e
            }),
        )
    }
}
