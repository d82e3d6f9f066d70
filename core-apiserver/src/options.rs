//! The flags only core-apiserver takes, beside `CommonOptions` and `DelegationOptions`:
//! upstream's kube-apiserver flags for the resources it serves.

use clap::Args;
use kas_registry::features::FeatureGates;
use kas_server::options::GoDuration;

use crate::resources::ResourceOptions;

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
}
