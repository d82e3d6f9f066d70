//! Test fixtures: a throwaway CA and the client certificates it signs.

use http::HeaderMap;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use rustls_pki_types::CertificateDer;

use super::{AuthRequest, PeerCertificates};

pub(crate) struct Pki {
    pub(crate) ca_pem: String,
    issuer: Issuer<'static, KeyPair>,
    /// Certificates between this issuer and the root, sent along with every leaf.
    intermediates: Vec<CertificateDer<'static>>,
}

impl Pki {
    pub(crate) fn new() -> Self {
        let params = ca_params("test-ca");
        let key = KeyPair::generate().unwrap();
        let ca_pem = params.self_signed(&key).unwrap().pem();
        Pki {
            ca_pem,
            issuer: Issuer::new(params, key),
            intermediates: Vec::new(),
        }
    }

    /// An intermediate CA signed by this one; its leaves carry it in their chain, and
    /// `ca_pem` stays this root.
    pub(crate) fn intermediate(&self) -> Pki {
        let params = ca_params("test-intermediate");
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Pki {
            ca_pem: self.ca_pem.clone(),
            issuer: Issuer::new(params, key),
            intermediates: vec![cert.der().clone()],
        }
    }

    /// A client certificate with subject CN=`cn` (omitted when empty) and one O per entry.
    pub(crate) fn client(&self, cn: &str, orgs: &[&str]) -> PeerCertificates {
        self.sign(cn, orgs, ExtendedKeyUsagePurpose::ClientAuth)
    }

    /// A certificate usable only for serving, not for client authentication.
    pub(crate) fn server_only(&self, cn: &str) -> PeerCertificates {
        self.sign(cn, &[], ExtendedKeyUsagePurpose::ServerAuth)
    }

    fn sign(&self, cn: &str, orgs: &[&str], purpose: ExtendedKeyUsagePurpose) -> PeerCertificates {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = DistinguishedName::new();
        if !cn.is_empty() {
            params.distinguished_name.push(DnType::CommonName, cn);
        }
        // rcgen keeps one value per attribute type; spelling the O OID (2.5.4.10) as a
        // custom type lets a subject carry a second organization.
        assert!(orgs.len() <= 2, "at most two organizations");
        let types = [
            DnType::OrganizationName,
            DnType::CustomDnType(vec![2, 5, 4, 10]),
        ];
        for (ty, org) in types.into_iter().zip(orgs) {
            params.distinguished_name.push(ty, *org);
        }
        params.extended_key_usages = vec![purpose];
        params.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        let mut chain = vec![cert.der().clone()];
        chain.extend(self.intermediates.iter().cloned());
        PeerCertificates::new(chain)
    }
}

fn ca_params(cn: &str) -> CertificateParams {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name = DistinguishedName::new();
    params.distinguished_name.push(DnType::CommonName, cn);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params
}

pub(crate) fn request<'a>(
    path: &'a str,
    headers: &'a HeaderMap,
    peer_certificates: Option<&'a PeerCertificates>,
) -> AuthRequest<'a> {
    AuthRequest {
        path,
        headers,
        peer_certificates,
        audiences: None,
    }
}
