//! Extra certificates for tests: client certificates signed by the launcher's CAs, and the
//! serving CA and certificates of test backends (aggregated API servers, [`ServingCa`]).

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

/// A fresh CA of a test backend (not one of the cluster's): it signs the backend's serving
/// certificate, and its PEM is what an APIService's `caBundle` names.
pub struct ServingCa {
    pem: String,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

impl ServingCa {
    /// A new self-signed CA named `common_name`.
    pub fn new(common_name: &str) -> Result<ServingCa> {
        let key = rcgen::KeyPair::generate()?;
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new())?;
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, common_name);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let pem = params.self_signed(&key)?.pem();
        Ok(ServingCa {
            pem,
            issuer: rcgen::Issuer::new(params, key),
        })
    }

    /// The CA certificate, PEM.
    pub fn ca_pem(&self) -> &str {
        &self.pem
    }

    /// The CA certificate as an APIService's `spec.caBundle` holds it in JSON and YAML:
    /// the PEM, base64.
    pub fn ca_bundle(&self) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(&self.pem)
    }

    /// Writes the CA certificate to `path`.
    pub fn write_ca(&self, path: &Path) -> Result<()> {
        std::fs::write(path, &self.pem)?;
        Ok(())
    }

    /// A serving certificate for `names` (DNS names or IP addresses; the first is also the
    /// common name), written to `<dir>/<stem>.crt` and `.key`.
    pub fn issue_serving(
        &self,
        dir: &Path,
        stem: &str,
        names: &[String],
    ) -> Result<kas_local::CertPaths> {
        let key = rcgen::KeyPair::generate()?;
        let mut params = rcgen::CertificateParams::new(names.to_vec())?;
        if let Some(first) = names.first() {
            params
                .distinguished_name
                .push(rcgen::DnType::CommonName, first.as_str());
        }
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let cert = params.signed_by(&key, &self.issuer)?;
        let paths = kas_local::CertPaths {
            cert: dir.join(format!("{stem}.crt")),
            key: dir.join(format!("{stem}.key")),
        };
        std::fs::write(&paths.cert, cert.pem())?;
        std::fs::write(&paths.key, key.serialize_pem())?;
        Ok(paths)
    }

    /// The serving certificate of a backend behind Service `service` in `namespace`: valid
    /// for [`service_dns_names`] (the name upstream's aggregator verifies is
    /// `<service>.<namespace>.svc`) and for `ips` (the endpoint and ClusterIP addresses
    /// tests dial directly).
    pub fn issue_for_service(
        &self,
        dir: &Path,
        service: &str,
        namespace: &str,
        ips: &[std::net::IpAddr],
    ) -> Result<kas_local::CertPaths> {
        let mut names = service_dns_names(service, namespace);
        names.extend(ips.iter().map(|ip| ip.to_string()));
        self.issue_serving(dir, &format!("{service}.{namespace}"), &names)
    }
}

/// The DNS names of Service `service` in `namespace`: `<service>.<namespace>.svc` first,
/// then `<service>.<namespace>.svc.cluster.local`.
pub fn service_dns_names(service: &str, namespace: &str) -> Vec<String> {
    vec![
        format!("{service}.{namespace}.svc"),
        format!("{service}.{namespace}.svc.cluster.local"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_certificate_verifies_for_its_dns_name_and_ips_against_the_ca() {
        use rustls::client::danger::ServerCertVerifier;
        use rustls_pki_types::{CertificateDer, ServerName, UnixTime, pem::PemObject};
        let dir = tempfile::tempdir().unwrap();
        let ca = ServingCa::new("test backend CA").unwrap();
        let ip: std::net::IpAddr = "198.18.0.2".parse().unwrap();
        let paths = ca
            .issue_for_service(dir.path(), "api", "wardle", &[ip])
            .unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(ca.ca_pem().as_bytes()).unwrap())
            .unwrap();
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            roots.into(),
            kas_tls::provider(),
        )
        .build()
        .unwrap();
        let leaf = CertificateDer::from_pem_file(&paths.cert).unwrap();
        for name in ["api.wardle.svc", "198.18.0.2"] {
            let name = ServerName::try_from(name).unwrap();
            verifier
                .verify_server_cert(&leaf, &[], &name, &[], UnixTime::now())
                .unwrap_or_else(|e| panic!("{name:?}: {e}"));
        }
        let other = ServerName::try_from("api.other.svc").unwrap();
        assert!(
            verifier
                .verify_server_cert(&leaf, &[], &other, &[], UnixTime::now())
                .is_err()
        );
        use base64::Engine;
        let bundle = base64::engine::general_purpose::STANDARD
            .decode(ca.ca_bundle())
            .unwrap();
        assert_eq!(bundle, ca.ca_pem().as_bytes());
    }
}
