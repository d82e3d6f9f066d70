//! Extra certificates for tests, signed by the launcher's CAs.

use std::path::{Path, PathBuf};

use anyhow::Result;

/// A client certificate with common name `cn`, signed by `ca`; returns (cert, key) paths.
pub fn sign_client(ca: &kas_local::CertPaths, cn: &str, dir: &Path) -> Result<(PathBuf, PathBuf)> {
    let ca_key = rcgen::KeyPair::from_pem(&std::fs::read_to_string(&ca.key)?)?;
    let issuer = rcgen::Issuer::from_ca_cert_pem(&std::fs::read_to_string(&ca.cert)?, ca_key)?;
    let key = rcgen::KeyPair::generate()?;
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let cert = params.signed_by(&key, &issuer)?;
    let cert_path = dir.join(format!("{cn}.crt"));
    let key_path = dir.join(format!("{cn}.key"));
    std::fs::write(&cert_path, cert.pem())?;
    std::fs::write(&key_path, key.serialize_pem())?;
    Ok((cert_path, key_path))
}
