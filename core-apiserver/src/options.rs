//! The flags only core-apiserver takes, beside `CommonOptions` and `DelegationOptions`:
//! upstream's kube-apiserver flags for the resources it serves.

use std::sync::Arc;

use clap::Args;
use kas_registry::features::FeatureGates;
use kas_server::options::{GoDuration, ServiceAccountOptions};

use crate::resources::ResourceOptions;
use crate::resources::serviceaccounts::token::TokenConfig;

#[derive(Args, Clone, Debug)]
pub struct CoreOptions {
    /// Amount of time to retain events.
    #[arg(long, default_value = "1h0m0s")]
    pub event_ttl: GoDuration,
    /// A set of key=value pairs that describe feature gates (upstream's; known here:
    /// PortForwardWebsockets=true|false (BETA - default=true),
    /// TranslateStreamCloseWebsocketRequests=true|false (BETA - default=true),
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
    /// List of the preferred NodeAddressTypes to use for kubelet connections.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "Hostname,InternalDNS,InternalIP,ExternalDNS,ExternalIP"
    )]
    pub kubelet_preferred_address_types: Vec<String>,
    /// Timeout for kubelet operations.
    #[arg(long, default_value = "5s")]
    pub kubelet_timeout: GoDuration,
    #[command(flatten)]
    pub service_account: ServiceAccountOptions,
    /// Not upstream's: `false` offers every pod event to every watcher and scans every pod
    /// for a `spec.nodeName=` list, as before the watch cache's index (kas-bench measures
    /// the difference).
    #[arg(long, hide = true, default_value_t = true, action = clap::ArgAction::Set)]
    pub watch_cache_index: bool,
    /// Not upstream's flag: how often the identity Lease is renewed (upstream's
    /// `IdentityLeaseRenewIntervalPeriod`, which its integration tests tune); for tests.
    #[arg(long, hide = true, default_value = "10s")]
    pub identity_lease_renew_interval: GoDuration,
    /// Not upstream's flag: how often expired identity Leases are collected (upstream's
    /// `IdentityLeaseGCPeriod`); for tests.
    #[arg(long, hide = true, default_value = "1h0m0s")]
    pub identity_lease_gc_period: GoDuration,
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
                preferred_address_types: self.kubelet_preferred_address_types.clone(),
                timeout: self.kubelet_timeout.0,
            },
            watch_cache_index: self.watch_cache_index,
            identity_lease: crate::identity::Periods {
                renew: self.identity_lease_renew_interval.0,
                collect: self.identity_lease_gc_period.0,
            },
            // Set from the etcd options where the store is built.
            delete_collection_workers: 1,
            count_metric_poll_period: std::time::Duration::ZERO,
            reviewers: Default::default(),
            service_account_token: token_config(&self.service_account),
            openid_metadata: self.service_account.openid_metadata(),
            service_accounts: self.service_account.clone(),
            // Set from the common authentication flags by main.
        }
    }
}

/// What the token subresource runs with; `None` without a signing key (upstream then
/// installs no `serviceaccounts/token`). Errors were reported by `validate`.
pub fn token_config(options: &ServiceAccountOptions) -> Option<Arc<TokenConfig>> {
    let generator = options.generator().ok()??;
    Some(Arc::new(TokenConfig {
        generator,
        api_audiences: options.api_audiences(),
        max_expiration_seconds: options.max_token_expiration.0.as_secs() as i64,
        extend_expiration: options.extend_token_expiration,
    }))
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
    fn the_watch_cache_index_is_on_unless_turned_off() {
        let flags = Flags::try_parse_from(["core-apiserver"]).unwrap();
        assert!(flags.core.resources().watch_cache_index);
        let flags = Flags::try_parse_from(["core-apiserver", "--watch-cache-index=false"]).unwrap();
        assert!(!flags.core.resources().watch_cache_index);
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
        let tuned = Flags::try_parse_from([
            "core-apiserver",
            "--kubelet-preferred-address-types=ExternalIP,InternalIP",
            "--kubelet-timeout=1m30s",
        ])
        .unwrap()
        .core
        .resources()
        .kubelet;
        assert_eq!(tuned.preferred_address_types, ["ExternalIP", "InternalIP"]);
        assert_eq!(tuned.timeout, std::time::Duration::from_secs(90));
        let kubelet = flags.core.resources().kubelet;
        assert_eq!(
            kubelet.preferred_address_types,
            [
                "Hostname",
                "InternalDNS",
                "InternalIP",
                "ExternalDNS",
                "ExternalIP"
            ]
        );
        assert_eq!(kubelet.timeout, std::time::Duration::from_secs(5));
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
        assert!(token_config(&none).is_none());
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
        let config = token_config(&sa).unwrap();
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
