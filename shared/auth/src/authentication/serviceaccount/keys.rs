//! Service-account keys from PEM files, after client-go's `keyutil` (`PrivateKeyFromFile`,
//! `PublicKeysFromFile`) and the key ID of upstream's `keyIDFromPublicKey`.

use std::path::Path;

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::signature::{self, EcdsaKeyPair, EcdsaSigningAlgorithm, KeyPair, RsaKeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use x509_parser::oid_registry::{
    OID_EC_P256, OID_KEY_TYPE_EC_PUBLIC_KEY, OID_NIST_EC_P384, OID_NIST_EC_P521,
    OID_PKCS1_RSAENCRYPTION,
};
use x509_parser::prelude::FromDer;
use x509_parser::x509::SubjectPublicKeyInfo;

use crate::{Error, Result};

/// keyutil's error when a file holds no usable private key.
pub const NO_PRIVATE_KEY: &str = "data does not contain a valid RSA or ECDSA private key";
/// keyutil's error when a file holds no usable public key.
pub const NO_PUBLIC_KEYS: &str = "data does not contain any valid RSA or ECDSA public keys";

/// The NIST curves upstream signs and verifies with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Curve {
    P256,
    P384,
    P521,
}

impl Curve {
    /// The JWS algorithm upstream pairs with the curve.
    pub fn algorithm(self) -> &'static str {
        match self {
            Curve::P256 => "ES256",
            Curve::P384 => "ES384",
            Curve::P521 => "ES512",
        }
    }

    /// The JWK `crv` name.
    pub fn jwk_name(self) -> &'static str {
        match self {
            Curve::P256 => "P-256",
            Curve::P384 => "P-384",
            Curve::P521 => "P-521",
        }
    }

    /// Bytes of one coordinate (and of `r` and `s` in a signature).
    pub fn coordinate_len(self) -> usize {
        match self {
            Curve::P256 => 32,
            Curve::P384 => 48,
            Curve::P521 => 66,
        }
    }

    fn signing(self) -> &'static EcdsaSigningAlgorithm {
        match self {
            Curve::P256 => &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            Curve::P384 => &signature::ECDSA_P384_SHA384_FIXED_SIGNING,
            Curve::P521 => &signature::ECDSA_P521_SHA512_FIXED_SIGNING,
        }
    }

    const ALL: [Curve; 3] = [Curve::P256, Curve::P384, Curve::P521];
}

/// The key material of a public key, as a JWK shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyMaterial {
    /// Big-endian modulus and exponent, without leading zeros.
    Rsa { n: Vec<u8>, e: Vec<u8> },
    /// Fixed-size big-endian coordinates.
    Ec {
        curve: Curve,
        x: Vec<u8>,
        y: Vec<u8>,
    },
}

/// A verification key: its PKIX (SubjectPublicKeyInfo) DER, what it holds, and its key ID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKey {
    pub spki: Vec<u8>,
    pub material: KeyMaterial,
    pub key_id: String,
}

impl PublicKey {
    /// Parses a PKIX SubjectPublicKeyInfo holding an RSA or NIST-curve ECDSA key.
    pub fn from_spki(der: &[u8]) -> Option<PublicKey> {
        let (_, spki) = SubjectPublicKeyInfo::from_der(der).ok()?;
        let material = if spki.algorithm.algorithm == OID_PKCS1_RSAENCRYPTION {
            let x509_parser::public_key::PublicKey::RSA(rsa) = spki.parsed().ok()? else {
                return None;
            };
            // aws-lc checks the key the way Go's parser does (positive modulus, sane exponent).
            signature::UnparsedPublicKey::new(
                &signature::RSA_PKCS1_1024_8192_SHA256_FOR_LEGACY_USE_ONLY,
                spki.raw,
            )
            .parse()
            .ok()?;
            KeyMaterial::Rsa {
                n: trim_zeros(rsa.modulus),
                e: trim_zeros(rsa.exponent),
            }
        } else if spki.algorithm.algorithm == OID_KEY_TYPE_EC_PUBLIC_KEY {
            let oid = spki.algorithm.parameters.as_ref()?.as_oid().ok()?;
            let curve = if oid == OID_EC_P256 {
                Curve::P256
            } else if oid == OID_NIST_EC_P384 {
                Curve::P384
            } else if oid == OID_NIST_EC_P521 {
                Curve::P521
            } else {
                return None;
            };
            let point = &spki.subject_public_key.data;
            let n = curve.coordinate_len();
            // Go accepts only uncompressed points for PKIX ECDSA keys.
            if point.len() != 1 + 2 * n || point[0] != 4 {
                return None;
            }
            signature::UnparsedPublicKey::new(verification_ec(curve), spki.raw)
                .parse()
                .ok()?;
            KeyMaterial::Ec {
                curve,
                x: point[1..=n].to_vec(),
                y: point[1 + n..].to_vec(),
            }
        } else {
            return None;
        };
        Some(PublicKey {
            spki: spki.raw.to_vec(),
            material,
            key_id: key_id(spki.raw),
        })
    }

    /// The JWS algorithm upstream advertises for the key (`algorithmFromPublicKey`).
    pub fn algorithm(&self) -> &'static str {
        match &self.material {
            KeyMaterial::Rsa { .. } => "RS256",
            KeyMaterial::Ec { curve, .. } => curve.algorithm(),
        }
    }
}

pub(super) fn verification_ec(curve: Curve) -> &'static signature::EcdsaVerificationAlgorithm {
    match curve {
        Curve::P256 => &signature::ECDSA_P256_SHA256_FIXED,
        Curve::P384 => &signature::ECDSA_P384_SHA384_FIXED,
        Curve::P521 => &signature::ECDSA_P521_SHA512_FIXED,
    }
}

fn trim_zeros(b: &[u8]) -> Vec<u8> {
    let start = b.iter().position(|&x| x != 0).unwrap_or(b.len());
    b[start..].to_vec()
}

/// Upstream's `keyIDFromPublicKey`: base64url (no padding) of the SHA-256 of the PKIX DER.
pub fn key_id(spki_der: &[u8]) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, spki_der);
    URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// A signing key: RSA (RS256) or ECDSA on P-256, P-384 or P-521 (ES256, ES384, ES512).
pub enum PrivateKey {
    Rsa(RsaKeyPair),
    Ec(EcdsaKeyPair, Curve),
}

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrivateKey::Rsa(_) => f.write_str("PrivateKey::Rsa"),
            PrivateKey::Ec(_, curve) => write!(f, "PrivateKey::Ec({curve:?})"),
        }
    }
}

impl PrivateKey {
    /// The public half, with its key ID.
    pub fn public_key(&self) -> Option<PublicKey> {
        let der = match self {
            PrivateKey::Rsa(kp) => kp.public_key().as_der().ok()?.as_ref().to_vec(),
            PrivateKey::Ec(kp, _) => kp.public_key().as_der().ok()?.as_ref().to_vec(),
        };
        PublicKey::from_spki(&der)
    }

    /// An RSA key in PKCS#1 (`RSA PRIVATE KEY`) or PKCS#8 DER.
    fn rsa(der: &[u8], pkcs8: bool) -> Option<PrivateKey> {
        let kp = if pkcs8 {
            RsaKeyPair::from_pkcs8(der)
        } else {
            RsaKeyPair::from_der(der)
        };
        kp.ok().map(PrivateKey::Rsa)
    }

    /// An ECDSA key in SEC 1 (`EC PRIVATE KEY`) or PKCS#8 DER, on any supported curve.
    /// As Go's `ParseECPrivateKey`, the SEC 1 parse takes no PKCS#8.
    fn ec(der: &[u8], pkcs8: bool) -> Option<PrivateKey> {
        if !pkcs8 && !is_sec1(der) {
            return None;
        }
        Curve::ALL.into_iter().find_map(|curve| {
            let kp = if pkcs8 {
                EcdsaKeyPair::from_pkcs8(curve.signing(), der)
            } else {
                EcdsaKeyPair::from_private_key_der(curve.signing(), der)
            };
            kp.ok().map(|kp| PrivateKey::Ec(kp, curve))
        })
    }
}

/// Whether `der` is shaped as SEC 1's `ECPrivateKey` (a version, then the key as an OCTET
/// STRING) rather than PKCS#8's `PrivateKeyInfo` (a version, then an algorithm SEQUENCE).
fn is_sec1(der: &[u8]) -> bool {
    // Skips a tag and its (short or long form) length; returns the content's start and end.
    fn tlv(b: &[u8], at: usize) -> Option<(u8, usize, usize)> {
        let tag = *b.get(at)?;
        let first = *b.get(at + 1)? as usize;
        let (len, start) = if first < 0x80 {
            (first, at + 2)
        } else {
            let n = first & 0x7f;
            let bytes = b.get(at + 2..at + 2 + n)?;
            (
                bytes.iter().fold(0usize, |acc, &x| (acc << 8) | x as usize),
                at + 2 + n,
            )
        };
        Some((tag, start, start.checked_add(len)?))
    }
    let Some((0x30, body, _)) = tlv(der, 0) else {
        return false;
    };
    let Some((0x02, _, version_end)) = tlv(der, body) else {
        return false;
    };
    matches!(tlv(der, version_end), Some((0x04, _, _)))
}

/// The PEM blocks of `data`, as (type, DER); what is not PEM ends the list, as Go's
/// `pem.Decode` loop ends.
fn pem_blocks(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    x509_parser::pem::Pem::iter_from_buffer(data)
        .map_while(|b| b.ok())
        .map(|b| (b.label, b.contents))
        .collect()
}

/// keyutil's `ParsePrivateKeyPEM`: the first `EC PRIVATE KEY`, `RSA PRIVATE KEY` or
/// (PKCS#8) `PRIVATE KEY` block that parses.
pub fn parse_private_key_pem(data: &[u8]) -> Result<PrivateKey, &'static str> {
    pem_blocks(data)
        .into_iter()
        .find_map(|(label, der)| match label.as_str() {
            "EC PRIVATE KEY" => PrivateKey::ec(&der, false),
            "RSA PRIVATE KEY" => PrivateKey::rsa(&der, false),
            "PRIVATE KEY" => PrivateKey::rsa(&der, true).or_else(|| PrivateKey::ec(&der, true)),
            _ => None,
        })
        .ok_or(NO_PRIVATE_KEY)
}

/// keyutil's `ParsePublicKeysPEM`: every block, whatever its type, tried as an RSA private
/// key (PKCS#1, then PKCS#8), a PKIX or certificate RSA key, a SEC 1 ECDSA private key, then
/// a PKIX or certificate ECDSA key; other blocks (`EC PARAMETERS`) are skipped. As upstream,
/// an ECDSA private key in PKCS#8 is not taken.
pub fn parse_public_keys_pem(data: &[u8]) -> Result<Vec<PublicKey>, &'static str> {
    let keys: Vec<PublicKey> = pem_blocks(data)
        .into_iter()
        .filter_map(|(_, der)| public_key_of_block(&der))
        .collect();
    if keys.is_empty() {
        return Err(NO_PUBLIC_KEYS);
    }
    Ok(keys)
}

fn public_key_of_block(der: &[u8]) -> Option<PublicKey> {
    let rsa_private = || {
        PrivateKey::rsa(der, false)
            .or_else(|| PrivateKey::rsa(der, true))
            .and_then(|k| k.public_key())
    };
    let pkix = |rsa: bool| {
        let key = PublicKey::from_spki(der).or_else(|| {
            let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
            PublicKey::from_spki(cert.public_key().raw)
        })?;
        (matches!(key.material, KeyMaterial::Rsa { .. }) == rsa).then_some(key)
    };
    rsa_private()
        .or_else(|| pkix(true))
        .or_else(|| PrivateKey::ec(der, false).and_then(|k| k.public_key()))
        .or_else(|| pkix(false))
}

/// Go's `os.ReadFile` error text.
fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::Config {
        what: "open",
        path: path.display().to_string(),
        message: match e.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_owned(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
            std::io::ErrorKind::IsADirectory => "is a directory".to_owned(),
            _ => e.to_string(),
        },
    })
}

/// keyutil's `PrivateKeyFromFile`.
pub fn private_key_from_file(path: impl AsRef<Path>) -> Result<PrivateKey> {
    let path = path.as_ref();
    parse_private_key_pem(&read(path)?).map_err(|message| Error::Config {
        what: "error reading private key file",
        path: path.display().to_string(),
        message: message.to_owned(),
    })
}

/// keyutil's `PublicKeysFromFile`.
pub fn public_keys_from_file(path: impl AsRef<Path>) -> Result<Vec<PublicKey>> {
    let path = path.as_ref();
    parse_public_keys_pem(&read(path)?).map_err(|message| Error::Config {
        what: "error reading public key file",
        path: path.display().to_string(),
        message: message.to_owned(),
    })
}
