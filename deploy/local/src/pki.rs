//! A development PKI, written as PEM files under `<state>/pki/`.
//!
//! Two roots, as upstream uses them: the cluster CA signs serving certificates and client
//! certificates of users; the front-proxy CA signs only the certificate with which the
//! aggregator and core sign the requests they forward (`X-Remote-User` and friends), so a
//! user certificate can never pass for a front proxy. Files already present are reused; a
//! leaf is re-issued when it is missing or when its CA had to be re-created.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SerialNumber,
};

use crate::error::{Error, Result};
use crate::role::Role;

pub const CA_COMMON_NAME: &str = "kas-local-ca";
pub const FRONT_PROXY_CA_COMMON_NAME: &str = "kas-local-front-proxy-ca";
pub const FRONT_PROXY_CLIENT_COMMON_NAME: &str = "front-proxy-client";
pub const ADMIN_COMMON_NAME: &str = "kas-admin";
pub const ETCD_CA_COMMON_NAME: &str = "kas-local-etcd-ca";
/// kubeadm's name for the API server's etcd client certificate.
pub const ETCD_CLIENT_COMMON_NAME: &str = "kube-apiserver-etcd-client";
pub const ADMIN_GROUP: &str = "system:masters";
/// The user name and uid the admin token authenticates as (see `tokens.csv`).
pub const ADMIN_TOKEN_USER: &str = "admin";
pub const ADMIN_TOKEN_UID: &str = "admin-uid";

/// Subject alternative names of every serving certificate: replicas listen on loopback.
const SERVING_SANS: [&str; 3] = ["127.0.0.1", "::1", "localhost"];

/// A certificate and its private key, both PEM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertPaths {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl CertPaths {
    fn new(dir: &Path, stem: &str) -> Self {
        CertPaths {
            cert: dir.join(format!("{stem}.crt")),
            key: dir.join(format!("{stem}.key")),
        }
    }

    fn exists(&self) -> bool {
        self.cert.is_file() && self.key.is_file()
    }

    pub fn read_cert(&self) -> Result<Vec<u8>> {
        fs::read(&self.cert).map_err(Error::io("reading", &self.cert))
    }

    pub fn read_key(&self) -> Result<Vec<u8>> {
        fs::read(&self.key).map_err(Error::io("reading", &self.key))
    }
}

/// Paths of every file of the PKI, plus the admin bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pki {
    pub dir: PathBuf,
    /// The cluster CA ("kas-local-ca"): serving certificates and user client certificates.
    pub ca: CertPaths,
    /// The front-proxy CA: only `front_proxy_client`.
    pub front_proxy_ca: CertPaths,
    /// CN "front-proxy-client", clientAuth: aggregator and core sign what they forward with it.
    pub front_proxy_client: CertPaths,
    /// CN "kas-admin", O "system:masters", clientAuth, signed by the cluster CA.
    pub admin: CertPaths,
    /// The service-account token key pair: core signs TokenRequests with `key` (PKCS#8,
    /// ECDSA P-256), and core and the aggregator verify tokens with `cert` (the public key,
    /// PEM `PUBLIC KEY`).
    pub service_account: CertPaths,
    /// etcd's own CA ("kas-local-etcd-ca"), as production etcd clusters have one.
    pub etcd_ca: CertPaths,
    /// etcd's serving certificate (loopback), when it runs with TLS.
    pub etcd_server: CertPaths,
    /// CN "kube-apiserver-etcd-client", clientAuth: the roles' `--etcd-certfile`.
    pub etcd_client: CertPaths,
    /// Upstream's static token file: `token,user,uid,"group"`.
    pub tokens_csv: PathBuf,
    /// The token of user "admin" (group system:masters) in `tokens_csv`.
    pub admin_token: String,
    serving: BTreeMap<Role, CertPaths>,
}

impl Pki {
    /// Loads the PKI under `dir`, creating whatever is missing; serving certificates name
    /// loopback only.
    pub fn ensure(dir: &Path) -> Result<Pki> {
        let sans: Vec<String> = SERVING_SANS.iter().map(|s| s.to_string()).collect();
        let sans = Role::ALL.iter().map(|&r| (r, sans.clone())).collect();
        Pki::ensure_with_sans(dir, &sans)
    }

    /// [`Pki::ensure`] with the subject alternative names (DNS names or IP addresses) of
    /// each role's serving certificate; a role missing from `sans` gets none.
    pub fn ensure_with_sans(dir: &Path, sans: &BTreeMap<Role, Vec<String>>) -> Result<Pki> {
        fs::create_dir_all(dir).map_err(Error::io("creating", dir))?;
        let pki = Pki {
            dir: dir.to_path_buf(),
            ca: CertPaths::new(dir, "ca"),
            front_proxy_ca: CertPaths::new(dir, "front-proxy-ca"),
            front_proxy_client: CertPaths::new(dir, "front-proxy-client"),
            service_account: CertPaths {
                cert: dir.join("service-account.pub"),
                key: dir.join("service-account.key"),
            },
            admin: CertPaths::new(dir, "admin"),
            etcd_ca: CertPaths::new(dir, "etcd-ca"),
            etcd_server: CertPaths::new(dir, "etcd-server"),
            etcd_client: CertPaths::new(dir, "etcd-client"),
            tokens_csv: dir.join("tokens.csv"),
            admin_token: String::new(),
            serving: Role::ALL
                .iter()
                .map(|&role| (role, CertPaths::new(dir, role.binary_name())))
                .collect(),
        };

        let (ca, ca_fresh) = ensure_ca(&pki.ca, CA_COMMON_NAME)?;
        for role in Role::ALL {
            let names: Vec<&str> = sans
                .get(&role)
                .into_iter()
                .flatten()
                .map(String::as_str)
                .collect();
            let params = leaf_params(
                role.binary_name(),
                None,
                &names,
                ExtendedKeyUsagePurpose::ServerAuth,
            )?;
            ensure_leaf(pki.serving(role), params, &ca, ca_fresh)?;
        }
        let admin = leaf_params(
            ADMIN_COMMON_NAME,
            Some(ADMIN_GROUP),
            &[],
            ExtendedKeyUsagePurpose::ClientAuth,
        )?;
        ensure_leaf(&pki.admin, admin, &ca, ca_fresh)?;

        let (fp_ca, fp_fresh) = ensure_ca(&pki.front_proxy_ca, FRONT_PROXY_CA_COMMON_NAME)?;
        let fp_client = leaf_params(
            FRONT_PROXY_CLIENT_COMMON_NAME,
            None,
            &[],
            ExtendedKeyUsagePurpose::ClientAuth,
        )?;
        ensure_leaf(&pki.front_proxy_client, fp_client, &fp_ca, fp_fresh)?;

        let (etcd_ca, etcd_fresh) = ensure_ca(&pki.etcd_ca, ETCD_CA_COMMON_NAME)?;
        let etcd_names: Vec<&str> = SERVING_SANS.to_vec();
        let server = leaf_params(
            "etcd",
            None,
            &etcd_names,
            ExtendedKeyUsagePurpose::ServerAuth,
        )?;
        ensure_leaf(&pki.etcd_server, server, &etcd_ca, etcd_fresh)?;
        let client = leaf_params(
            ETCD_CLIENT_COMMON_NAME,
            None,
            &[],
            ExtendedKeyUsagePurpose::ClientAuth,
        )?;
        ensure_leaf(&pki.etcd_client, client, &etcd_ca, etcd_fresh)?;

        ensure_key_pair(&pki.service_account)?;
        let admin_token = ensure_token_file(&pki.tokens_csv)?;
        Ok(Pki { admin_token, ..pki })
    }

    /// Issues a client certificate for `user`, in `group` if given (its common name and
    /// organization, as upstream's x509 authenticator reads them; one group, as rcgen
    /// writes one value per attribute), signed by the cluster CA, into
    /// `<dir>/users/<user>.{crt,key}`; issued anew on every call.
    pub fn issue_user(&self, user: &str, group: Option<&str>) -> Result<CertPaths> {
        if user.is_empty() || user.contains(['/', '\\', '\0']) || user.starts_with('.') {
            return Err(Error::InvalidUserName(user.to_owned()));
        }
        let users = self.dir.join("users");
        fs::create_dir_all(&users).map_err(Error::io("creating", &users))?;
        let (ca, _) = ensure_ca(&self.ca, CA_COMMON_NAME)?;
        let params = leaf_params(user, group, &[], ExtendedKeyUsagePurpose::ClientAuth)?;
        let paths = CertPaths::new(&users, user);
        ensure_leaf(&paths, params, &ca, true)?;
        Ok(paths)
    }

    /// The serving certificate shared by every replica of `role`.
    pub fn serving(&self, role: Role) -> &CertPaths {
        // Filled for every role in `ensure`, the only constructor.
        &self.serving[&role]
    }
}

/// The service-account key pair: the private key kept when present, its public key
/// written beside it.
fn ensure_key_pair(paths: &CertPaths) -> Result<()> {
    let name = paths.key.display().to_string();
    let key = if paths.key.is_file() {
        let pem = fs::read_to_string(&paths.key).map_err(Error::io("reading", &paths.key))?;
        KeyPair::from_pem(&pem).map_err(cert_err(&name))?
    } else {
        let key = KeyPair::generate().map_err(cert_err(&name))?;
        write_pem(&paths.key, &key.serialize_pem(), true)?;
        key
    };
    write_pem(&paths.cert, &key.public_key_pem(), false)
}

/// Returns the CA as an issuer and whether it was created now.
fn ensure_ca(paths: &CertPaths, common_name: &str) -> Result<(Issuer<'static, KeyPair>, bool)> {
    let params = ca_params(common_name);
    if paths.exists() {
        // Rebuild the issuer from our own fixed parameters and the stored key: the subject
        // and key identifier are derived from those alone, so new leaves chain to the
        // stored certificate without parsing it.
        let pem = fs::read_to_string(&paths.key).map_err(Error::io("reading", &paths.key))?;
        let key = KeyPair::from_pem(&pem).map_err(cert_err(common_name))?;
        return Ok((Issuer::new(params, key), false));
    }
    let key = KeyPair::generate().map_err(cert_err(common_name))?;
    let cert = params.self_signed(&key).map_err(cert_err(common_name))?;
    write_pem(&paths.key, &key.serialize_pem(), true)?;
    write_pem(&paths.cert, &cert.pem(), false)?;
    Ok((Issuer::new(params, key), true))
}

fn ensure_leaf(
    paths: &CertPaths,
    params: CertificateParams,
    issuer: &Issuer<'_, KeyPair>,
    issuer_fresh: bool,
) -> Result<()> {
    if paths.exists() && !issuer_fresh {
        return Ok(());
    }
    let name = paths.cert.display().to_string();
    let key = KeyPair::generate().map_err(cert_err(&name))?;
    let cert = params.signed_by(&key, issuer).map_err(cert_err(&name))?;
    write_pem(&paths.key, &key.serialize_pem(), true)?;
    write_pem(&paths.cert, &cert.pem(), false)
}

fn ca_params(common_name: &str) -> CertificateParams {
    let mut params = CertificateParams::default();
    params.distinguished_name = distinguished_name(common_name, None);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    set_validity(&mut params);
    params
}

fn leaf_params(
    common_name: &str,
    organization: Option<&str>,
    sans: &[&str],
    usage: ExtendedKeyUsagePurpose,
) -> Result<CertificateParams> {
    let sans: Vec<String> = sans.iter().map(|s| s.to_string()).collect();
    let mut params = CertificateParams::new(sans).map_err(cert_err(common_name))?;
    params.distinguished_name = distinguished_name(common_name, organization);
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![usage];
    params.use_authority_key_identifier_extension = true;
    params.serial_number = Some(SerialNumber::from_slice(&random_serial()?));
    set_validity(&mut params);
    Ok(params)
}

fn distinguished_name(common_name: &str, organization: Option<&str>) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    if let Some(org) = organization {
        dn.push(DnType::OrganizationName, org);
    }
    dn.push(DnType::CommonName, common_name);
    dn
}

/// From the start of last year to ten years ahead: no clock-skew surprises, no expiry
/// during any plausible dev session.
fn set_validity(params: &mut CertificateParams) {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Average Gregorian year; off by at most a day, which the margins absorb.
    let year = 1970 + i32::try_from(secs / 31_556_952).unwrap_or(0);
    params.not_before = rcgen::date_time_ymd(year - 1, 1, 1);
    params.not_after = rcgen::date_time_ymd(year + 10, 1, 1);
}

fn random_serial() -> Result<[u8; 16]> {
    let mut serial = random_bytes::<16>()?;
    serial[0] &= 0x7f; // positive
    serial[0] |= 0x01; // and of full length
    Ok(serial)
}

pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N]> {
    let mut buf = [0u8; N];
    rustls::crypto::aws_lc_rs::default_provider()
        .secure_random
        .fill(&mut buf)
        .map_err(|_| Error::Io {
            action: "drawing random bytes for",
            path: PathBuf::from("the PKI"),
            source: std::io::Error::other("aws-lc random generator failed"),
        })?;
    Ok(buf)
}

fn ensure_token_file(path: &Path) -> Result<String> {
    if path.is_file() {
        return read_admin_token(path);
    }
    let token: String = random_bytes::<16>()?
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let line = format!("{token},{ADMIN_TOKEN_USER},{ADMIN_TOKEN_UID},\"{ADMIN_GROUP}\"\n");
    write_pem(path, &line, true)?;
    Ok(token)
}

/// The token of the first line of an upstream token file.
fn read_admin_token(path: &Path) -> Result<String> {
    let text = fs::read_to_string(path).map_err(Error::io("reading", path))?;
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .ok_or_else(|| Error::TokenFile {
            path: path.to_path_buf(),
            reason: "no token line",
        })?;
    match line.split(',').next() {
        Some(token) if !token.is_empty() && line.contains(',') => Ok(token.to_string()),
        _ => Err(Error::TokenFile {
            path: path.to_path_buf(),
            reason: "expected token,user,uid[,\"groups\"]",
        }),
    }
}

/// Writes a file; secrets are created 0600.
fn write_pem(path: &Path, contents: &str, secret: bool) -> Result<()> {
    let mode = if secret { 0o600 } else { 0o644 };
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)
        .map_err(Error::io("creating", path))?;
    file.write_all(contents.as_bytes())
        .map_err(Error::io("writing", path))
}

fn cert_err(name: &str) -> impl FnOnce(rcgen::Error) -> Error {
    let name = name.to_string();
    move |source| Error::Certificate { name, source }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::client::danger::ServerCertVerifier;
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
    use std::sync::Arc;

    fn der(paths: &CertPaths) -> CertificateDer<'static> {
        CertificateDer::from_pem_file(&paths.cert).unwrap()
    }

    fn roots(ca: &CertPaths) -> Arc<rustls::RootCertStore> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(der(ca)).unwrap();
        Arc::new(roots)
    }

    fn provider() -> Arc<rustls::crypto::CryptoProvider> {
        Arc::new(rustls::crypto::aws_lc_rs::default_provider())
    }

    fn verify_server(ca: &CertPaths, leaf: &CertPaths, name: &str) -> Result<(), rustls::Error> {
        let verifier =
            rustls::client::WebPkiServerVerifier::builder_with_provider(roots(ca), provider())
                .build()
                .unwrap();
        let name = ServerName::try_from(name.to_string()).unwrap();
        verifier
            .verify_server_cert(&der(leaf), &[], &name, &[], UnixTime::now())
            .map(|_| ())
    }

    fn verify_client(ca: &CertPaths, leaf: &CertPaths) -> Result<(), rustls::Error> {
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(roots(ca), provider())
                .build()
                .unwrap();
        verifier
            .verify_client_cert(&der(leaf), &[], UnixTime::now())
            .map(|_| ())
    }

    fn subject(paths: &CertPaths) -> (String, Vec<String>, bool, bool) {
        let der = der(paths);
        let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
        let subject = cert.subject();
        let cn = subject
            .iter_common_name()
            .next()
            .unwrap()
            .as_str()
            .unwrap()
            .to_string();
        let orgs = subject
            .iter_organization()
            .map(|o| o.as_str().unwrap().to_string())
            .collect();
        let eku = cert.extended_key_usage().unwrap().unwrap().value;
        (cn, orgs, eku.client_auth, eku.server_auth)
    }

    #[test]
    fn generates_a_pki_that_chains_and_names_its_subjects() {
        let dir = tempfile::tempdir().unwrap();
        let pki = Pki::ensure(dir.path()).unwrap();

        for role in Role::ALL {
            let serving = pki.serving(role);
            assert_eq!(
                serving.cert,
                dir.path().join(format!("{}.crt", role.binary_name()))
            );
            for name in ["127.0.0.1", "::1", "localhost"] {
                verify_server(&pki.ca, serving, name).unwrap();
            }
            assert!(verify_server(&pki.ca, serving, "example.com").is_err());
            // A serving certificate comes from the cluster CA, never the front-proxy CA.
            assert!(verify_server(&pki.front_proxy_ca, serving, "127.0.0.1").is_err());
        }

        verify_client(&pki.ca, &pki.admin).unwrap();
        assert_eq!(
            subject(&pki.admin),
            (
                "kas-admin".into(),
                vec!["system:masters".into()],
                true,
                false
            )
        );

        verify_client(&pki.front_proxy_ca, &pki.front_proxy_client).unwrap();
        // Only the front-proxy CA vouches for the front proxy, and not for users.
        assert!(verify_client(&pki.ca, &pki.front_proxy_client).is_err());
        assert!(verify_client(&pki.front_proxy_ca, &pki.admin).is_err());
        assert_eq!(
            subject(&pki.front_proxy_client),
            ("front-proxy-client".into(), vec![], true, false)
        );
        let (_, _, client_auth, server_auth) = subject(pki.serving(Role::Core));
        assert!(
            server_auth && !client_auth,
            "serving certificates are for serving"
        );

        let tokens = fs::read_to_string(&pki.tokens_csv).unwrap();
        assert_eq!(
            tokens,
            format!("{},admin,admin-uid,\"system:masters\"\n", pki.admin_token)
        );
        assert_eq!(pki.admin_token.len(), 32);
        assert!(pki.admin_token.bytes().all(|b| b.is_ascii_hexdigit()));

        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&pki.ca.key).unwrap().permissions().mode();
        assert_eq!(
            mode & 0o077,
            0,
            "private keys must not be group/world readable"
        );
    }

    #[test]
    fn reuses_what_exists_and_reissues_only_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let first = Pki::ensure(dir.path()).unwrap();
        let ca = fs::read(&first.ca.cert).unwrap();
        let core = fs::read(&first.serving(Role::Core).cert).unwrap();
        let admin = fs::read(&first.admin.cert).unwrap();

        let second = Pki::ensure(dir.path()).unwrap();
        assert_eq!(first, second);
        assert_eq!(fs::read(&second.ca.cert).unwrap(), ca);
        assert_eq!(fs::read(&second.admin.cert).unwrap(), admin);

        // A missing leaf is re-issued by the stored CA; the others are kept.
        fs::remove_file(&first.admin.cert).unwrap();
        let third = Pki::ensure(dir.path()).unwrap();
        assert_ne!(fs::read(&third.admin.cert).unwrap(), admin);
        assert_eq!(fs::read(&third.ca.cert).unwrap(), ca);
        assert_eq!(fs::read(&third.serving(Role::Core).cert).unwrap(), core);
        verify_client(&third.ca, &third.admin).unwrap();
        assert_eq!(third.admin_token, first.admin_token);

        // A new CA invalidates everything it signed.
        fs::remove_file(&first.ca.key).unwrap();
        let fourth = Pki::ensure(dir.path()).unwrap();
        assert_ne!(fs::read(&fourth.ca.cert).unwrap(), ca);
        assert_ne!(fs::read(&fourth.serving(Role::Core).cert).unwrap(), core);
        verify_server(&fourth.ca, fourth.serving(Role::Core), "localhost").unwrap();
        verify_client(&fourth.ca, &fourth.admin).unwrap();
    }

    #[test]
    fn rejects_a_malformed_token_file() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("tokens.csv"), "\n\n").unwrap();
        assert!(matches!(
            Pki::ensure(dir.path()),
            Err(Error::TokenFile { .. })
        ));
    }
}
