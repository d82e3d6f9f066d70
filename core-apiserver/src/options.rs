//! The flags only core-apiserver takes, beside `CommonOptions` and `DelegationOptions`:
//! upstream's kube-apiserver flags for the resources it serves.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use kas_auth::authentication::serviceaccount::{OpenIdMetadata, TokenGenerator};
use kas_registry::features::FeatureGates;
use kas_server::options::GoDuration;

use crate::resources::ResourceOptions;
use crate::resources::serviceaccounts::token::TokenConfig;

#[derive(Args, Clone, Debug)]
pub struct CoreOptions {
    /// Amount of time to retain events.
    #[arg(long, default_value = "1h0m0s")]
    pub event_ttl: GoDuration,
    /// A set of key=value pairs that describe feature gates (upstream's; known here:
    /// WatchList=true|false (BETA - default=false)).
    #[arg(long, default_value = "", value_parser = FeatureGates::parse)]
    pub feature_gates: FeatureGates,
    /// The CIDR Services' cluster IPs come from; two CIDRs of different families,
    /// comma-separated, make the cluster dual-stack (the first is the primary family).
    #[arg(long, default_value = crate::resources::DEFAULT_SERVICE_IP_CIDR)]
    pub service_cluster_ip_range: String,
    /// The node ports NodePort and LoadBalancer Services get, `first-last` inclusive.
    #[arg(long, default_value = crate::resources::DEFAULT_SERVICE_NODE_PORT_RANGE)]
    pub service_node_port_range: String,
    #[command(flatten)]
    pub admission: crate::admission::AdmissionOptions,
    /// Path to a cert file for the certificate authority (kubelets' serving certificates
    /// are not verified without it).
    #[arg(long)]
    pub kubelet_certificate_authority: Option<std::path::PathBuf>,
    /// Path to a client cert file for TLS to kubelets.
    #[arg(long)]
    pub kubelet_client_certificate: Option<std::path::PathBuf>,
    /// Path to a client key file for TLS to kubelets.
    #[arg(long)]
    pub kubelet_client_key: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub service_account: ServiceAccountOptions,
}

/// Upstream's service-account flags (`ServiceAccountAuthenticationOptions`, the signing key
/// of kube-apiserver's options, `--api-audiences`): what the `serviceaccounts/token`
/// subresource signs with and the OIDC discovery documents publish.
#[derive(Args, Clone, Debug, Default)]
pub struct ServiceAccountOptions {
    /// Identifier of the service account token issuer, asserted in the "iss" claim of issued
    /// tokens. When this flag is specified multiple times, the first is used to generate
    /// tokens and all are used to determine which issuers are accepted.
    #[arg(long = "service-account-issuer")]
    pub issuers: Vec<String>,
    /// Path to the file that contains the current private key of the service account token
    /// issuer. The issuer will sign issued ID tokens with this private key.
    #[arg(long = "service-account-signing-key-file")]
    pub signing_key_file: Option<PathBuf>,
    /// File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify
    /// ServiceAccount tokens. The specified file can contain multiple keys, and the flag can
    /// be specified multiple times with different files.
    #[arg(long = "service-account-key-file")]
    pub key_files: Vec<PathBuf>,
    /// Overrides the URI for the JSON Web Key Set in the discovery doc served at
    /// /.well-known/openid-configuration.
    #[arg(long = "service-account-jwks-uri", default_value = "")]
    pub jwks_uri: String,
    /// The maximum validity duration of a token created by the service account token issuer.
    /// If an otherwise valid TokenRequest with a validity duration larger than this value is
    /// requested, a token will be issued with a validity duration of this value.
    #[arg(long = "service-account-max-token-expiration", default_value = "0s")]
    pub max_token_expiration: GoDurationFlag,
    /// Turns on projected service account expiration extension during token generation.
    #[arg(
        long = "service-account-extend-token-expiration",
        num_args = 0..=1,
        default_value = "true",
        default_missing_value = "true",
        value_parser = kas_apimachinery::golang::strconv::parse_bool
    )]
    pub extend_token_expiration: bool,
    /// Identifiers of the API. Defaults to the issuers when unset.
    #[arg(long = "api-audiences", value_delimiter = ',')]
    pub api_audiences: Vec<String>,
}

/// A `GoDuration` that is also `Default` (zero), for the options' `Default`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GoDurationFlag(pub std::time::Duration);

impl std::str::FromStr for GoDurationFlag {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse::<GoDuration>().map(|d| GoDurationFlag(d.0))
    }
}

/// The errors of Go's `url.Parse` that an issuer can hit: control characters, a missing
/// scheme before the first colon, a port that is not a number.
fn url_parse_error(raw: &str) -> Option<String> {
    let failed = |why: String| {
        Some(format!(
            "parse {}: {why}",
            kas_apimachinery::golang::strconv::quote(raw)
        ))
    };
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return failed("net/url: invalid control character in URL".to_owned());
    }
    if raw.starts_with(':') {
        return failed("missing protocol scheme".to_owned());
    }
    let rest = raw.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let port = match host.rfind(']') {
        Some(end) => host[end + 1..].strip_prefix(':'),
        None => host.rsplit_once(':').map(|(_, p)| p),
    }?;
    if port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    failed(format!(
        "invalid port {} after host",
        kas_apimachinery::golang::strconv::quote(&format!(":{port}"))
    ))
}

/// Upstream's bounds of `--service-account-max-token-expiration`.
const MAX_EXPIRATION_LOW: std::time::Duration = std::time::Duration::from_secs(3600);
const MAX_EXPIRATION_HIGH: std::time::Duration = std::time::Duration::from_secs(1 << 32);

impl ServiceAccountOptions {
    /// Whether any service-account flag was given. Upstream requires the issuer and the keys
    /// always; here a core without them serves no tokens and no discovery, so that roles
    /// started without service accounts keep working.
    fn configured(&self) -> bool {
        !self.issuers.is_empty()
            || self.signing_key_file.is_some()
            || !self.key_files.is_empty()
            || !self.jwks_uri.is_empty()
    }

    /// Upstream's `ServiceAccountAuthenticationOptions` validation and the checks of
    /// kube-apiserver's completion (the signing key parses, the maximum expiration).
    pub fn validate(&self) -> Vec<String> {
        let mut errors = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for issuer in &self.issuers {
            if let Some(err) = issuer
                .contains(':')
                .then(|| url_parse_error(issuer))
                .flatten()
            {
                errors.push(format!(
                    "service-account-issuer {} contained a ':' but was not a valid URL: {err}",
                    kas_apimachinery::golang::strconv::quote(issuer)
                ));
                continue;
            }
            if issuer.is_empty() {
                errors.push("service-account-issuer should not be an empty string".to_owned());
            } else if !seen.insert(issuer) {
                errors.push(format!(
                    "service-account-issuer {} is already specified",
                    kas_apimachinery::golang::strconv::quote(issuer)
                ));
            }
        }
        if !self.configured() {
            return errors;
        }
        if self.issuers.is_empty() {
            errors.push("service-account-issuer is a required flag".to_owned());
        }
        if self.key_files.is_empty() {
            errors.push(
                "either `--service-account-key-file` or `--service-account-signing-endpoint` must be set"
                    .to_owned(),
            );
        }
        if let Some(err) = url_parse_error(&self.jwks_uri) {
            errors.push(format!(
                "service-account-jwks-uri must be a valid URL: {err}"
            ));
        } else if !self.jwks_uri.is_empty() && !self.jwks_uri.starts_with("https:") {
            errors.push(format!(
                "service-account-jwks-uri requires https scheme, parsed as: {}",
                self.jwks_uri
            ));
        }
        for file in &self.key_files {
            if let Err(e) = kas_auth::authentication::serviceaccount::public_keys_from_file(file) {
                errors.push(e.to_string());
            }
        }
        if let Some(err) = self.generator().err() {
            errors.push(err);
        }
        errors
    }

    /// The signer of TokenRequests: with a signing key and an issuer only, as upstream.
    fn generator(&self) -> Result<Option<TokenGenerator>, String> {
        let (Some(file), Some(issuer)) = (&self.signing_key_file, self.issuers.first()) else {
            return Ok(None);
        };
        if issuer.is_empty() {
            return Ok(None);
        }
        let generator = TokenGenerator::from_file(issuer, file).map_err(|e| e.to_string())?;
        let max = self.max_token_expiration.0;
        if !max.is_zero() && !(MAX_EXPIRATION_LOW..=MAX_EXPIRATION_HIGH).contains(&max) {
            return Err(
                "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"
                    .to_owned(),
            );
        }
        Ok(Some(generator))
    }

    /// `--api-audiences`, defaulting to the issuers.
    pub fn api_audiences(&self) -> Vec<String> {
        if self.api_audiences.is_empty() {
            self.issuers.clone()
        } else {
            self.api_audiences.clone()
        }
    }

    /// What the token subresource runs with; `None` without a signing key (upstream then
    /// installs no `serviceaccounts/token`). Errors were reported by `validate`.
    pub fn token_config(&self) -> Option<Arc<TokenConfig>> {
        let generator = self.generator().ok()??;
        Some(Arc::new(TokenConfig {
            generator,
            api_audiences: self.api_audiences(),
            max_expiration_seconds: self.max_token_expiration.0.as_secs() as i64,
            extend_expiration: self.extend_token_expiration,
        }))
    }

    /// The OIDC discovery documents of the first issuer over the keys of
    /// `--service-account-key-file`. As upstream, a configuration they cannot be built from
    /// (an issuer that is not an https URL) is logged and serves none. Upstream's default
    /// JWKS URI is on the server's external address; here it is on the issuer's host.
    pub fn openid_metadata(&self) -> Option<Arc<OpenIdMetadata>> {
        let issuer = self.issuers.first()?;
        let mut keys = Vec::new();
        for file in &self.key_files {
            keys.extend(
                kas_auth::authentication::serviceaccount::public_keys_from_file(file).ok()?,
            );
        }
        let external = issuer
            .strip_prefix("https://")
            .map(|rest| rest.split(['/', '?', '#']).next().unwrap_or_default())
            .unwrap_or_default();
        match OpenIdMetadata::new(issuer, &self.jwks_uri, external, &keys) {
            Ok(md) => Some(Arc::new(md)),
            Err(e) => {
                tracing::warn!(error = %e, "not serving service account issuer discovery");
                None
            }
        }
    }
}

impl CoreOptions {
    /// What the resources' stores are built with.
    pub fn resources(&self) -> ResourceOptions {
        ResourceOptions {
            event_ttl: self.event_ttl.0,
            features: self.feature_gates,
            service_cluster_ip_range: self
                .service_cluster_ip_range
                .split(',')
                .map(|c| c.trim().to_owned())
                .filter(|c| !c.is_empty())
                .collect(),
            service_node_port_range: self.service_node_port_range.clone(),
            admission_plugins: self.admission.enabled(),
            kubelet: crate::connect::KubeletOptions {
                certificate_authority: self.kubelet_certificate_authority.clone(),
                client_certificate: self.kubelet_client_certificate.clone(),
                client_key: self.kubelet_client_key.clone(),
            },
            reviewers: Default::default(),
            service_account_token: self.service_account.token_config(),
            openid_metadata: self.service_account.openid_metadata(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        core: CoreOptions,
    }

    #[test]
    fn event_ttl_defaults_to_an_hour_and_takes_go_durations() {
        let flags = Flags::try_parse_from(["core-apiserver"]).unwrap();
        assert_eq!(flags.core.resources().event_ttl.as_secs(), 3600);
        let flags = Flags::try_parse_from(["core-apiserver", "--event-ttl=2s"]).unwrap();
        assert_eq!(flags.core.resources().event_ttl.as_secs(), 2);
        assert!(Flags::try_parse_from(["core-apiserver", "--event-ttl=soon"]).is_err());
    }

    #[test]
    fn feature_gates_default_to_1_33s() {
        let flags = Flags::try_parse_from(["core-apiserver"]).unwrap();
        assert!(!flags.core.feature_gates.watch_list);
        let flags =
            Flags::try_parse_from(["core-apiserver", "--feature-gates=WatchList=true"]).unwrap();
        assert!(flags.core.feature_gates.watch_list);
        assert!(Flags::try_parse_from(["core-apiserver", "--feature-gates=Bogus=true"]).is_err());
    }

    #[test]
    fn kubelet_client_flags_reach_the_connecters() {
        let flags = Flags::try_parse_from(["core-apiserver"]).unwrap();
        assert!(
            flags
                .core
                .resources()
                .kubelet
                .certificate_authority
                .is_none()
        );
        let flags = Flags::try_parse_from([
            "core-apiserver",
            "--kubelet-certificate-authority=/ca.crt",
            "--kubelet-client-certificate=/c.crt",
            "--kubelet-client-key=/c.key",
        ])
        .unwrap();
        let kubelet = flags.core.resources().kubelet;
        assert_eq!(kubelet.certificate_authority, Some("/ca.crt".into()));
        assert_eq!(kubelet.client_certificate, Some("/c.crt".into()));
        assert_eq!(kubelet.client_key, Some("/c.key".into()));
    }

    use crate::resources::serviceaccounts::token::tests::EC_KEY;

    /// A key file of its own for each test.
    fn key_file(tag: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("kas-sa-{}-{tag}.pem", std::process::id()));
        std::fs::write(&path, EC_KEY).unwrap();
        path
    }

    fn service_account(args: &[&str]) -> ServiceAccountOptions {
        let mut argv = vec!["core-apiserver"];
        argv.extend_from_slice(args);
        Flags::try_parse_from(argv).unwrap().core.service_account
    }

    #[test]
    fn service_account_flags_are_optional_together() {
        let none = service_account(&[]);
        assert!(none.validate().is_empty());
        assert!(none.token_config().is_none());
        assert!(none.extend_token_expiration);
        assert_eq!(
            service_account(&["--service-account-issuer=https://a"]).validate(),
            vec![
                "either `--service-account-key-file` or `--service-account-signing-endpoint` must be set"
            ]
        );
    }

    #[test]
    fn service_account_issuers_are_validated() {
        let key = key_file("issuers");
        let key = format!("--service-account-key-file={}", key.display());
        let errs = service_account(&[
            "--service-account-issuer=https://a",
            "--service-account-issuer=",
            "--service-account-issuer=https://a",
            &key,
            "--service-account-jwks-uri=http://j",
        ])
        .validate();
        assert_eq!(
            errs,
            vec![
                "service-account-issuer should not be an empty string",
                "service-account-issuer \"https://a\" is already specified",
                "service-account-jwks-uri requires https scheme, parsed as: http://j",
            ]
        );
        let errs = service_account(&[&key]).validate();
        assert_eq!(errs, vec!["service-account-issuer is a required flag"]);
        let errs = service_account(&[
            "--service-account-issuer=:x",
            "--service-account-issuer=https://a:b/c",
            "--service-account-issuer=https://a:6443/c",
            "--service-account-issuer=urn:x:y",
            &key,
        ])
        .validate();
        assert_eq!(
            errs,
            vec![
                "service-account-issuer \":x\" contained a ':' but was not a valid URL: parse \":x\": missing protocol scheme",
                "service-account-issuer \"https://a:b/c\" contained a ':' but was not a valid URL: parse \"https://a:b/c\": invalid port \":b\" after host",
            ]
        );
    }

    #[test]
    fn signing_key_makes_the_token_config() {
        let path = key_file("signing");
        let key = format!("--service-account-key-file={}", path.display());
        let signing = format!("--service-account-signing-key-file={}", path.display());
        let sa = service_account(&[
            "--service-account-issuer=https://a",
            "--service-account-issuer=https://b",
            &key,
            &signing,
            "--service-account-max-token-expiration=2h",
            "--service-account-extend-token-expiration=false",
        ]);
        assert!(sa.validate().is_empty());
        let config = sa.token_config().unwrap();
        assert_eq!(config.generator.issuer(), "https://a");
        assert_eq!(config.api_audiences, vec!["https://a", "https://b"]);
        assert_eq!(config.max_expiration_seconds, 7200);
        assert!(!config.extend_expiration);
        let md = sa.openid_metadata().unwrap();
        let doc = String::from_utf8(md.config_json.clone()).unwrap();
        assert!(
            doc.contains("\"jwks_uri\":\"https://a/openid/v1/jwks\""),
            "{doc}"
        );
        let sa = service_account(&[
            "--service-account-issuer=https://a",
            &key,
            &signing,
            "--api-audiences=x,y",
            "--service-account-max-token-expiration=59m",
        ]);
        assert_eq!(
            sa.validate(),
            vec![
                "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"
            ]
        );
        assert_eq!(sa.api_audiences(), vec!["x", "y"]);
        let bad = format!(
            "--service-account-signing-key-file={}",
            std::env::temp_dir().join("kas-sa-missing.pem").display()
        );
        let errs = service_account(&["--service-account-issuer=https://a", &key, &bad]).validate();
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].starts_with("failed to parse service-account-issuer-key-file: open "),
            "{errs:?}"
        );
    }
}
