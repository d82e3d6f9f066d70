//! The value transformers of upstream's `storage/value/encrypt`: each provider's wire form
//! after its `k8s:enc:<provider>:v1:<key name>:` prefix.
//!
//! - aescbc: a random 16-byte IV, then AES-CBC of the data with PKCS#7 padding.
//! - aesgcm: a random 12-byte nonce, then AES-GCM of the data with its 16-byte tag,
//!   authenticated with the etcd key.
//! - secretbox: a random 24-byte nonce, then NaCl's secretbox (the Poly1305 tag, then
//!   XSalsa20 of the data).

use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use aws_lc_rs::cipher::{
    self, DecryptingKey, DecryptionContext, EncryptingKey, EncryptionContext, UnboundCipherKey,
};
use crypto_secretbox::XSalsa20Poly1305;
use crypto_secretbox::aead::{AeadInPlace, KeyInit};

/// What one key of a provider does.
pub(super) enum Cipher {
    Cbc(Vec<u8>),
    Gcm(LessSafeKey),
    Secretbox(Box<XSalsa20Poly1305>),
}

const BLOCK: usize = 16;
const GCM_NONCE: usize = 12;
const BOX_NONCE: usize = 24;
const BOX_TAG: usize = 16;

/// Upstream's texts.
const SHORT: &str = "the stored data was shorter than the required size";

impl Cipher {
    /// aescbc's key: 16, 24 or 32 bytes, as Go's `aes.NewCipher` takes them.
    pub(super) fn cbc(key: Vec<u8>) -> Result<Cipher, String> {
        aes_algorithm(&key)?;
        Ok(Cipher::Cbc(key))
    }

    pub(super) fn gcm(key: &[u8]) -> Result<Cipher, String> {
        let algorithm = match key.len() {
            16 => &aead::AES_128_GCM,
            24 => &aead::AES_192_GCM,
            32 => &aead::AES_256_GCM,
            n => return Err(format!("crypto/aes: invalid key size {n}")),
        };
        let key = UnboundKey::new(algorithm, key).map_err(|_| "crypto/aes: invalid key")?;
        Ok(Cipher::Gcm(LessSafeKey::new(key)))
    }

    pub(super) fn secretbox(key: &[u8]) -> Result<Cipher, String> {
        if key.len() != 32 {
            return Err(format!(
                "expected key size 32 for secretbox provider, got {}",
                key.len()
            ));
        }
        let cipher = XSalsa20Poly1305::new_from_slice(key).map_err(|e| e.to_string())?;
        Ok(Cipher::Secretbox(Box::new(cipher)))
    }

    /// `data` encrypted; `authenticated` is the etcd key (aesgcm only).
    pub(super) fn seal(&self, data: &[u8], authenticated: &[u8]) -> Result<Vec<u8>, String> {
        match self {
            Cipher::Cbc(key) => {
                let padding = BLOCK - data.len() % BLOCK;
                let mut out = vec![0u8; BLOCK + data.len() + padding];
                random(&mut out[..BLOCK])?;
                out[BLOCK..BLOCK + data.len()].copy_from_slice(data);
                out[BLOCK + data.len()..].fill(padding as u8);
                let iv: [u8; BLOCK] = out[..BLOCK].try_into().map_err(|_| "iv")?;
                let key = EncryptingKey::cbc(unbound(key)?).map_err(|_| "crypto/aes: cbc")?;
                key.less_safe_encrypt(&mut out[BLOCK..], EncryptionContext::Iv128(iv.into()))
                    .map_err(|_| "crypto/aes: cbc encryption failed")?;
                Ok(out)
            }
            Cipher::Gcm(key) => {
                let mut nonce = [0u8; GCM_NONCE];
                random(&mut nonce)?;
                let mut out = Vec::with_capacity(GCM_NONCE + data.len() + BLOCK);
                out.extend_from_slice(&nonce);
                out.extend_from_slice(data);
                let mut sealed = out.split_off(GCM_NONCE);
                key.seal_in_place_append_tag(
                    Nonce::assume_unique_for_key(nonce),
                    Aad::from(authenticated),
                    &mut sealed,
                )
                .map_err(|_| "crypto/aes: gcm encryption failed")?;
                out.extend_from_slice(&sealed);
                Ok(out)
            }
            Cipher::Secretbox(cipher) => {
                let mut nonce = [0u8; BOX_NONCE];
                random(&mut nonce)?;
                let mut sealed = data.to_vec();
                let tag = cipher
                    .encrypt_in_place_detached(&nonce.into(), b"", &mut sealed)
                    .map_err(|e| e.to_string())?;
                let mut out = Vec::with_capacity(BOX_NONCE + BOX_TAG + data.len());
                out.extend_from_slice(&nonce);
                out.extend_from_slice(&tag);
                out.extend_from_slice(&sealed);
                Ok(out)
            }
        }
    }

    /// `data` (after the prefix) decrypted, with upstream's errors.
    pub(super) fn open(&self, data: &[u8], authenticated: &[u8]) -> Result<Vec<u8>, String> {
        match self {
            Cipher::Cbc(key) => {
                if data.len() < BLOCK {
                    return Err(SHORT.into());
                }
                let (iv, data) = data.split_at(BLOCK);
                if data.len() % BLOCK != 0 {
                    return Err("the stored data is not a multiple of the block size".into());
                }
                let iv: [u8; BLOCK] = iv.try_into().map_err(|_| SHORT)?;
                let mut out = data.to_vec();
                let key = DecryptingKey::cbc(unbound(key)?).map_err(|_| "crypto/aes: cbc")?;
                key.decrypt(&mut out, DecryptionContext::Iv128(iv.into()))
                    .map_err(|_| "crypto/aes: cbc decryption failed")?;
                let Some(&last) = out.last() else {
                    return Err("invalid PKCS7 data (empty or not padded)".into());
                };
                let padding = last as usize;
                if padding == 0 || padding > out.len() {
                    return Err("invalid PKCS7 data (empty or not padded)".into());
                }
                let size = out.len() - padding;
                if out[size..].iter().any(|&b| b != last) {
                    return Err("invalid padding on input".into());
                }
                out.truncate(size);
                Ok(out)
            }
            Cipher::Gcm(key) => {
                if data.len() < GCM_NONCE {
                    return Err(SHORT.into());
                }
                let (nonce, sealed) = data.split_at(GCM_NONCE);
                let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| SHORT)?;
                let mut out = sealed.to_vec();
                let plain = key
                    .open_in_place(nonce, Aad::from(authenticated), &mut out)
                    .map_err(|_| "cipher: message authentication failed")?;
                let len = plain.len();
                out.truncate(len);
                Ok(out)
            }
            Cipher::Secretbox(cipher) => {
                if data.len() < BOX_NONCE + BOX_TAG {
                    return Err(SHORT.into());
                }
                let (nonce, rest) = data.split_at(BOX_NONCE);
                let (tag, sealed) = rest.split_at(BOX_TAG);
                let nonce: [u8; BOX_NONCE] = nonce.try_into().map_err(|_| SHORT)?;
                let tag: [u8; BOX_TAG] = tag.try_into().map_err(|_| SHORT)?;
                let mut out = sealed.to_vec();
                cipher
                    .decrypt_in_place_detached(&nonce.into(), b"", &mut out, &tag.into())
                    .map_err(|_| "output array was not large enough for encryption")?;
                Ok(out)
            }
        }
    }
}

fn aes_algorithm(key: &[u8]) -> Result<&'static cipher::Algorithm, String> {
    match key.len() {
        16 => Ok(&cipher::AES_128),
        24 => Ok(&cipher::AES_192),
        32 => Ok(&cipher::AES_256),
        n => Err(format!("crypto/aes: invalid key size {n}")),
    }
}

fn unbound(key: &[u8]) -> Result<UnboundCipherKey, String> {
    UnboundCipherKey::new(aes_algorithm(key)?, key).map_err(|_| "crypto/aes: invalid key".into())
}

fn random(out: &mut [u8]) -> Result<(), String> {
    aws_lc_rs::rand::fill(out).map_err(|_| "unable to read sufficient random bytes".into())
}
