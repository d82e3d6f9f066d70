//! Upstream's `ClusterAuthenticationInfo` as the ConfigMap holds it
//! (`getClusterAuthenticationInfoFor`, `getConfigMapDataFor`) and the union of two
//! (`combinedClusterAuthenticationInfo`): string lists keep their first occurrence, the
//! existing values first; CA bundles are re-encoded as PEM, duplicates and certificates
//! expired more than five minutes ago dropped.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use base64::Engine;
use serde_json::Value;

/// Certificates of an expired CA stay for this long after `notAfter`.
const EXPIRY_SLACK: Duration = Duration::from_secs(5 * 60);

/// What the ConfigMap tells aggregated servers; certificates as DER.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuthenticationInfo {
    pub client_ca: Vec<Vec<u8>>,
    pub request_header_ca: Vec<Vec<u8>>,
    pub username_headers: Vec<String>,
    pub uid_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_header_prefixes: Vec<String>,
    pub allowed_names: Vec<String>,
}

pub const CLIENT_CA: &str = "client-ca-file";
pub const REQUEST_HEADER_CA: &str = "requestheader-client-ca-file";
const USERNAME_HEADERS: &str = "requestheader-username-headers";
const UID_HEADERS: &str = "requestheader-uid-headers";
const GROUP_HEADERS: &str = "requestheader-group-headers";
const EXTRA_HEADER_PREFIXES: &str = "requestheader-extra-headers-prefix";
const ALLOWED_NAMES: &str = "requestheader-allowed-names";

impl AuthenticationInfo {
    /// Upstream's `getClusterAuthenticationInfoFor`: a malformed list or bundle is an error
    /// (the ConfigMap is left as it is and the sync retried).
    pub fn from_data(data: &serde_json::Map<String, Value>) -> Result<Self, String> {
        let text = |k: &str| data.get(k).and_then(Value::as_str).unwrap_or("");
        let list = |k: &str| -> Result<Vec<String>, String> {
            match text(k) {
                "" => Ok(Vec::new()),
                json => serde_json::from_str(json).map_err(|e| format!("{k}: {e}")),
            }
        };
        let bundle = |k: &str| match text(k) {
            "" => Ok(Vec::new()),
            pem => parse_bundle(pem.as_bytes()).map_err(|e| format!("{k}: {e}")),
        };
        Ok(AuthenticationInfo {
            client_ca: bundle(CLIENT_CA)?,
            request_header_ca: bundle(REQUEST_HEADER_CA)?,
            username_headers: list(USERNAME_HEADERS)?,
            uid_headers: list(UID_HEADERS)?,
            group_headers: list(GROUP_HEADERS)?,
            extra_header_prefixes: list(EXTRA_HEADER_PREFIXES)?,
            allowed_names: list(ALLOWED_NAMES)?,
        })
    }

    /// Upstream's `combinedClusterAuthenticationInfo(self, required)` at `now`.
    pub fn combined(&self, required: &AuthenticationInfo, now: SystemTime) -> Self {
        let strings = |a: &[String], b: &[String]| -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            for s in a.iter().chain(b) {
                if !out.contains(s) {
                    out.push(s.clone());
                }
            }
            out
        };
        let certs = |a: &[Vec<u8>], b: &[Vec<u8>]| -> Vec<Vec<u8>> {
            let mut out: Vec<Vec<u8>> = Vec::new();
            for der in a.iter().chain(b) {
                if !out.contains(der) && !expired(der, now) {
                    out.push(der.clone());
                }
            }
            out
        };
        let r = required;
        AuthenticationInfo {
            client_ca: certs(&self.client_ca, &r.client_ca),
            request_header_ca: certs(&self.request_header_ca, &r.request_header_ca),
            username_headers: strings(&self.username_headers, &r.username_headers),
            uid_headers: strings(&self.uid_headers, &r.uid_headers),
            group_headers: strings(&self.group_headers, &r.group_headers),
            extra_header_prefixes: strings(&self.extra_header_prefixes, &r.extra_header_prefixes),
            allowed_names: strings(&self.allowed_names, &r.allowed_names),
        }
    }

    /// Upstream's `getConfigMapDataFor`: the request-header keys only with a request-header
    /// CA, `requestheader-uid-headers` only when it has values (1.33's
    /// `RemoteRequestHeaderUID`, on by default).
    pub fn to_data(&self) -> BTreeMap<String, String> {
        let mut data = BTreeMap::new();
        if !self.client_ca.is_empty() {
            data.insert(CLIENT_CA.to_owned(), pem(&self.client_ca));
        }
        if self.request_header_ca.is_empty() {
            return data;
        }
        let json = |l: &[String]| Value::from(l.to_vec()).to_string();
        data.insert(USERNAME_HEADERS.to_owned(), json(&self.username_headers));
        if !self.uid_headers.is_empty() {
            data.insert(UID_HEADERS.to_owned(), json(&self.uid_headers));
        }
        data.insert(GROUP_HEADERS.to_owned(), json(&self.group_headers));
        data.insert(
            EXTRA_HEADER_PREFIXES.to_owned(),
            json(&self.extra_header_prefixes),
        );
        data.insert(REQUEST_HEADER_CA.to_owned(), pem(&self.request_header_ca));
        data.insert(ALLOWED_NAMES.to_owned(), json(&self.allowed_names));
        data
    }
}

/// Every certificate of a PEM bundle, as DER (client-go's `ParseCertsPEM`).
pub fn parse_bundle(pem: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let certs = kas_tls::certs_from_pem(pem, "CA bundle").map_err(|e| e.to_string())?;
    for der in &certs {
        x509_parser::parse_x509_certificate(der).map_err(|e| e.to_string())?;
    }
    Ok(certs.into_iter().map(|c| c.to_vec()).collect())
}

/// Whether the certificate's `notAfter` is more than five minutes before `now`.
fn expired(der: &[u8], now: SystemTime) -> bool {
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(der) else {
        return true;
    };
    let not_after = cert.validity().not_after.timestamp();
    let cutoff = now
        .checked_sub(EXPIRY_SLACK)
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    not_after <= cutoff
}

/// Go's `pem.Encode` of each certificate: 64-column base64 between the markers.
pub fn pem(certs: &[Vec<u8>]) -> String {
    let mut out = String::new();
    for der in certs {
        out.push_str("-----BEGIN CERTIFICATE-----\n");
        let b64 = base64::engine::general_purpose::STANDARD.encode(der);
        for line in b64.as_bytes().chunks(64) {
            out.push_str(&String::from_utf8_lossy(line));
            out.push('\n');
        }
        out.push_str("-----END CERTIFICATE-----\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ca(name: &str, not_after: (i32, u8, u8)) -> Vec<u8> {
        let mut params = rcgen::CertificateParams::new(Vec::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        params.not_after = rcgen::date_time_ymd(not_after.0, not_after.1, not_after.2);
        let key = rcgen::KeyPair::generate().unwrap();
        params.self_signed(&key).unwrap().der().to_vec()
    }

    #[test]
    fn the_union_keeps_the_existing_values_first_and_drops_expired_cas() {
        let (old, new, gone) = (
            ca("old", (2099, 1, 1)),
            ca("new", (2099, 1, 1)),
            ca("gone", (2001, 1, 1)),
        );
        let existing = AuthenticationInfo {
            client_ca: vec![old.clone(), gone],
            username_headers: vec!["X-Remote-User".into()],
            ..AuthenticationInfo::default()
        };
        let required = AuthenticationInfo {
            client_ca: vec![new.clone(), old.clone()],
            request_header_ca: vec![new.clone()],
            username_headers: vec!["X-User".into(), "X-Remote-User".into()],
            group_headers: vec!["X-Remote-Group".into()],
            extra_header_prefixes: vec!["X-Remote-Extra-".into()],
            allowed_names: vec!["front-proxy-client".into()],
            ..AuthenticationInfo::default()
        };
        let combined = existing.combined(&required, SystemTime::now());
        assert_eq!(combined.client_ca, [old.clone(), new.clone()]);
        assert_eq!(combined.username_headers, ["X-Remote-User", "X-User"]);

        let data = combined.to_data();
        let keys: Vec<&str> = data.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "client-ca-file",
                "requestheader-allowed-names",
                "requestheader-client-ca-file",
                "requestheader-extra-headers-prefix",
                "requestheader-group-headers",
                "requestheader-username-headers",
            ]
        );
        assert_eq!(
            data["requestheader-allowed-names"],
            r#"["front-proxy-client"]"#
        );
        assert!(data["client-ca-file"].starts_with("-----BEGIN CERTIFICATE-----\n"));
        assert!(
            data["client-ca-file"]
                .lines()
                .all(|l| l.len() <= 64 || l.starts_with("-----"))
        );

        // What was written reads back the same.
        let map: serde_json::Map<String, Value> =
            data.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        assert_eq!(AuthenticationInfo::from_data(&map).unwrap(), combined);
    }

    #[test]
    fn without_a_request_header_ca_only_the_client_ca_is_written_and_garbage_is_an_error() {
        let info = AuthenticationInfo {
            client_ca: vec![ca("c", (2099, 1, 1))],
            username_headers: vec!["X-Remote-User".into()],
            ..AuthenticationInfo::default()
        };
        assert_eq!(info.to_data().len(), 1);
        let bad = json!({"requestheader-group-headers": "not json"});
        assert!(AuthenticationInfo::from_data(bad.as_object().unwrap()).is_err());
        let bad = json!({"client-ca-file": "no pem here"});
        assert!(AuthenticationInfo::from_data(bad.as_object().unwrap()).is_err());
    }
}
