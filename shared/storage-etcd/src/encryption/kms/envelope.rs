//! The stored envelope: upstream's checks of an `EncryptedObject`, its cache key, and the
//! two kinds of DEK source it names.

use aws_lc_rs::hkdf;
use kas_proto::kms::v2::{EncryptedDekSourceType, EncryptedObject};

use super::SEED_SIZE;
use crate::encryption::providers::Cipher;

const KEY_ID_MAX: usize = 1024;
const DEK_SOURCE_MAX: usize = 1024;
const ANNOTATIONS_MAX: usize = 32 * 1024;
/// The random bytes each value's key is derived with, stored before its nonce.
const INFO_SIZE: usize = 32;

/// What decrypts the values of one `encryptedDEKSource`.
pub(super) enum DekSource {
    /// A seed: each value's key is HKDF-SHA256-Expand(seed, info).
    Seed(Vec<u8>),
    /// A DEK used as is (`AES_GCM_KEY`, written before 1.29; read only).
    Key(Cipher),
}

impl DekSource {
    /// What the plugin's `Decrypt` gave for an envelope of type `kind`.
    pub(super) fn new(kind: EncryptedDekSourceType, plain: Vec<u8>) -> Result<DekSource, String> {
        match kind {
            EncryptedDekSourceType::HkdfSha256XnonceAesGcmSeed => {
                if plain.len() < SEED_SIZE {
                    return Err(format!(
                        "invalid seed length {} used for key generation",
                        plain.len()
                    ));
                }
                Ok(DekSource::Seed(plain))
            }
            EncryptedDekSourceType::AesGcmKey => Cipher::gcm(&plain).map(DekSource::Key),
        }
    }

    /// `data` encrypted: the info, then AES-GCM's nonce and sealed data.
    pub(super) fn seal(&self, data: &[u8], authenticated: &[u8]) -> Result<Vec<u8>, String> {
        let DekSource::Seed(seed) = self else {
            return Err("a DEK read from storage never encrypts".into());
        };
        let mut info = [0u8; INFO_SIZE];
        aws_lc_rs::rand::fill(&mut info).map_err(|_| "failed to generate info for KDF")?;
        let sealed = derived(seed, &info)
            .map_err(|e| format!("failed to derive write key from KDF: {e}"))?
            .seal(data, authenticated)?;
        let mut out = Vec::with_capacity(INFO_SIZE + sealed.len());
        out.extend_from_slice(&info);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    pub(super) fn open(&self, data: &[u8], authenticated: &[u8]) -> Result<Vec<u8>, String> {
        match self {
            DekSource::Key(cipher) => cipher.open(data, authenticated),
            DekSource::Seed(seed) => {
                if data.len() < INFO_SIZE {
                    return Err("the stored data was shorter than the required size".into());
                }
                let (info, sealed) = data.split_at(INFO_SIZE);
                derived(seed, info)
                    .map_err(|e| format!("failed to derive read key from KDF: {e}"))?
                    .open(sealed, authenticated)
            }
        }
    }
}

/// AES-256-GCM under HKDF-SHA256-Expand(seed, info), the seed taken as the PRK as Go's
/// `hkdf.Expand` takes it.
fn derived(seed: &[u8], info: &[u8]) -> Result<Cipher, String> {
    let prk = hkdf::Prk::new_less_safe(hkdf::HKDF_SHA256, seed);
    let mut key = [0u8; 32];
    prk.expand(&[info], hkdf::HKDF_SHA256)
        .and_then(|okm| okm.fill(&mut key))
        .map_err(|_| "failed to KDF expand seed with info".to_owned())?;
    Cipher::gcm(&key)
}

/// Upstream's `ValidateEncryptedObject`.
pub(super) fn validate(o: &EncryptedObject) -> Result<(), String> {
    if EncryptedDekSourceType::try_from(o.encrypted_dek_source_type).is_err() {
        return Err(format!(
            "unknown encryptedDEKSourceType: {}",
            o.encrypted_dek_source_type
        ));
    }
    if o.encrypted_data.is_empty() {
        return Err("encrypted data is empty".into());
    }
    let source = o.encrypted_dek_source.len();
    if source == 0 {
        return Err(
            "failed to validate encrypted DEK source: encrypted DEK source is empty".into(),
        );
    }
    if source > DEK_SOURCE_MAX {
        return Err(format!(
            "failed to validate encrypted DEK source: encrypted DEK source is {source} bytes, which exceeds the max size of {DEK_SOURCE_MAX}"
        ));
    }
    validate_key_id(&o.key_id).map_err(|e| format!("failed to validate key id: {e}"))?;
    let mut errs = Vec::new();
    let mut total = 0;
    for (k, v) in &o.annotations {
        if let Some(e) = not_fully_qualified(k) {
            errs.push(format!("annotations: Invalid value: {k:?}: {e}"));
        }
        total += k.len() + v.len();
    }
    if total > ANNOTATIONS_MAX {
        errs.push(format!(
            "total size of annotations is {total}, which exceeds the max size of {ANNOTATIONS_MAX}"
        ));
    }
    match kas_apimachinery::validation::field::aggregate_strings(errs) {
        None => Ok(()),
        Some(e) => Err(format!("failed to validate annotations: {e}")),
    }
}

/// Upstream's `ValidateKeyID`.
pub(super) fn validate_key_id(key_id: &str) -> Result<(), String> {
    if key_id.is_empty() {
        return Err("keyID is empty".into());
    }
    if key_id.len() > KEY_ID_MAX {
        return Err(format!(
            "keyID is {} bytes, which exceeds the max size of {KEY_ID_MAX}",
            key_id.len()
        ));
    }
    Ok(())
}

/// Upstream's `IsFullyQualifiedDomainName` for an annotation key.
fn not_fully_qualified(name: &str) -> Option<String> {
    let name = name.strip_suffix('.').unwrap_or(name);
    if let Some(e) = kas_apimachinery::validation::is_dns1123_subdomain(name).first() {
        return Some(e.clone());
    }
    (name.split('.').count() < 2)
        .then(|| "should be a domain with at least two segments separated by dots".to_owned())
}

/// Upstream's `generateCacheKey`: the source type, the encrypted source and key ID each
/// with a 16-bit length, then the annotations sorted by key.
pub(super) fn cache_key(o: &EncryptedObject) -> Vec<u8> {
    let mut b = Vec::with_capacity(8 + o.encrypted_dek_source.len() + o.key_id.len());
    b.extend_from_slice(&(o.encrypted_dek_source_type as u32).to_be_bytes());
    prefixed(&mut b, &o.encrypted_dek_source);
    prefixed(&mut b, o.key_id.as_bytes());
    if !o.annotations.is_empty() {
        b.extend_from_slice(&(o.annotations.len() as u32).to_be_bytes());
        let mut keys: Vec<&String> = o.annotations.keys().collect();
        keys.sort();
        for k in keys {
            prefixed(&mut b, k.as_bytes());
            prefixed(&mut b, &o.annotations[k]);
        }
    }
    b
}

fn prefixed(b: &mut Vec<u8>, bytes: &[u8]) {
    b.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
    b.extend_from_slice(bytes);
}
