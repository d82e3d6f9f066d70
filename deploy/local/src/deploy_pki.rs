//! The PKI of a deployment on Kubernetes (`deploy/manifests`): the same files as the local
//! PKI, with serving certificates that name each role's Service in the cluster, written
//! where the manifests' kustomize secretGenerator reads them.
//!
//! The CAs, the front-proxy client certificate, the admin certificate and the token file
//! are kept when they exist (re-running must not invalidate what a running deployment
//! trusts); the serving certificates are issued again on every run, so they always carry
//! the names asked for now.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::kubeconfig;
use crate::pki::Pki;
use crate::role::Role;

/// The namespace of `deploy/manifests`.
pub const DEFAULT_NAMESPACE: &str = "kas-system";
/// The cluster DNS domain of a default Kubernetes cluster.
pub const DEFAULT_CLUSTER_DOMAIN: &str = "cluster.local";
/// The port every role serves on in its container.
pub const CONTAINER_PORT: u16 = 6443;

/// Names of what the deployment's serving certificates must cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeployPkiSpec {
    pub namespace: String,
    pub cluster_domain: String,
    /// Further DNS names or IP addresses, put in every serving certificate (the name of a
    /// LoadBalancer or an ingress in front of the aggregator, say).
    pub extra_names: Vec<String>,
}

impl Default for DeployPkiSpec {
    fn default() -> Self {
        DeployPkiSpec {
            namespace: DEFAULT_NAMESPACE.to_owned(),
            cluster_domain: DEFAULT_CLUSTER_DOMAIN.to_owned(),
            extra_names: Vec::new(),
        }
    }
}

/// The Service of a role in `deploy/manifests`: the aggregator's is the clients' entry
/// point, core's and extensions' are headless (their name resolves to every ready pod).
pub fn service_name(role: Role) -> &'static str {
    match role {
        Role::Aggregator => "kas-aggregator",
        Role::Core => "kas-core",
        Role::Extensions => "kas-extensions",
    }
}

impl DeployPkiSpec {
    /// The subject alternative names of `role`'s serving certificate: its Service by every
    /// name a pod resolves it by, the extra names, and loopback (for `kubectl port-forward`
    /// and for running the binaries locally with the deployment's flags).
    pub fn serving_names(&self, role: Role) -> Vec<String> {
        let service = service_name(role);
        let ns = &self.namespace;
        let mut names = vec![
            service.to_owned(),
            format!("{service}.{ns}"),
            format!("{service}.{ns}.svc"),
            format!("{service}.{ns}.svc.{}", self.cluster_domain),
        ];
        names.extend(self.extra_names.iter().cloned());
        names.extend(["localhost", "127.0.0.1", "::1"].map(String::from));
        let mut seen = std::collections::BTreeSet::new();
        names.retain(|n| seen.insert(n.clone()));
        names
    }
}

/// Writes (or completes) the PKI under `out` and a kubeconfig `out/kubeconfig` for
/// `https://127.0.0.1:6443` (`kubectl port-forward` of the aggregator's Service).
pub fn write(out: &Path, spec: &DeployPkiSpec) -> Result<Pki> {
    fs::create_dir_all(out).map_err(Error::io("creating", out))?;
    for role in Role::ALL {
        for file in serving_files(out, role) {
            match fs::remove_file(&file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("removing", &file)(e)),
            }
        }
    }
    let sans: BTreeMap<Role, Vec<String>> = Role::ALL
        .iter()
        .map(|&role| (role, spec.serving_names(role)))
        .collect();
    let pki = Pki::ensure_with_sans(out, &sans)?;
    kubeconfig::write(
        &out.join("kubeconfig"),
        &format!("https://127.0.0.1:{CONTAINER_PORT}"),
        &pki.ca.cert,
        &pki.admin_token,
    )?;
    Ok(pki)
}

fn serving_files(dir: &Path, role: Role) -> [PathBuf; 2] {
    let stem = role.binary_name();
    [
        dir.join(format!("{stem}.crt")),
        dir.join(format!("{stem}.key")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serving_names_cover_the_service_by_every_name_and_loopback() {
        let spec = DeployPkiSpec {
            extra_names: vec!["api.example.com".into(), "localhost".into()],
            ..DeployPkiSpec::default()
        };
        assert_eq!(
            spec.serving_names(Role::Core),
            [
                "kas-core",
                "kas-core.kas-system",
                "kas-core.kas-system.svc",
                "kas-core.kas-system.svc.cluster.local",
                "api.example.com",
                "localhost",
                "127.0.0.1",
                "::1",
            ]
        );
    }

    #[test]
    fn rewrites_serving_certificates_and_keeps_the_cas() {
        let dir = tempfile::tempdir().unwrap();
        let first = write(dir.path(), &DeployPkiSpec::default()).unwrap();
        let ca = fs::read(&first.ca.cert).unwrap();
        let fp_client = fs::read(&first.front_proxy_client.cert).unwrap();
        let serving = fs::read(&first.serving(Role::Aggregator).cert).unwrap();

        let spec = DeployPkiSpec {
            extra_names: vec!["api.example.com".into()],
            ..DeployPkiSpec::default()
        };
        let second = write(dir.path(), &spec).unwrap();
        assert_eq!(fs::read(&second.ca.cert).unwrap(), ca);
        assert_eq!(
            fs::read(&second.front_proxy_client.cert).unwrap(),
            fp_client
        );
        assert_eq!(second.admin_token, first.admin_token);
        let reissued = fs::read(&second.serving(Role::Aggregator).cert).unwrap();
        assert_ne!(reissued, serving);
        use rustls_pki_types::pem::PemObject;
        let der = rustls_pki_types::CertificateDer::from_pem_slice(&reissued).unwrap();
        let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
        let names: Vec<String> = cert
            .subject_alternative_name()
            .unwrap()
            .unwrap()
            .value
            .general_names
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert!(
            names.contains(&"DNSName(api.example.com)".to_owned()),
            "{names:?}"
        );
        assert!(
            names.contains(&"DNSName(kas-aggregator.kas-system.svc)".to_owned()),
            "{names:?}"
        );
        assert!(dir.path().join("kubeconfig").is_file());
    }
}
