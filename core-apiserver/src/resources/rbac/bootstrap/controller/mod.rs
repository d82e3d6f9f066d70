//! The `system:controller:*` ClusterRoles of kube-controller-manager's controllers and
//! their bindings to the controllers' kube-system service accounts, after upstream's
//! `bootstrappolicy/controller_policy.go` (1.33, default feature gates:
//! `MultiCIDRServiceAllocator`, `StatefulSetAutoDeletePVC` and `SELinuxChangePolicy` on;
//! `DynamicResourceAllocation`, `DRADeviceTaints`, `VolumeAttributesClass`,
//! `ClusterTrustBundle`, `StorageVersionAPI` and `StorageVersionMigrator` off).

use serde_json::Value;

use super::builder::groups::*;

mod nodes;
mod workloads;

use super::builder::{cluster_binding, cluster_role, events_rule, rule, subjects};
use super::policy::{
    KUBE_APISERVER_CLIENT_KUBELET_SIGNER, KUBE_APISERVER_CLIENT_SIGNER, KUBELET_SERVING_SIGNER,
    LEGACY_UNKNOWN_SIGNER,
};

/// Upstream `saRolePrefix`.
pub const SA_ROLE_PREFIX: &str = "system:controller:";

/// Upstream `legacytokentracking.ConfigMapName`.
const LEGACY_TOKEN_TRACKING_CONFIGMAP: &str =
    "kube-apiserver-legacy-service-account-token-tracking";

const READ: &[&str] = super::builder::READ;

/// Each controller's name (without the prefix) and rules, in upstream's order.
fn controllers() -> Vec<(&'static str, Vec<Value>)> {
    let mut out = workloads::workload_controllers();
    out.extend(nodes::node_and_volume_controllers());
    out.extend(other_controllers());
    out
}

fn other_controllers() -> Vec<(&'static str, Vec<Value>)> {
    vec![
        (
            "certificate-controller",
            vec![
                rule(&["get", "list", "watch", "delete"])
                    .groups(&[CERTIFICATES])
                    .resources(&["certificatesigningrequests"])
                    .build(),
                rule(&["update"])
                    .groups(&[CERTIFICATES])
                    .resources(&[
                        "certificatesigningrequests/status",
                        "certificatesigningrequests/approval",
                    ])
                    .build(),
                rule(&["approve"])
                    .groups(&[CERTIFICATES])
                    .resources(&["signers"])
                    .names(&[KUBE_APISERVER_CLIENT_KUBELET_SIGNER])
                    .build(),
                rule(&["sign"])
                    .groups(&[CERTIFICATES])
                    .resources(&["signers"])
                    .names(&[
                        LEGACY_UNKNOWN_SIGNER,
                        KUBE_APISERVER_CLIENT_SIGNER,
                        KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
                        KUBELET_SERVING_SIGNER,
                    ])
                    .build(),
                rule(&["create"])
                    .groups(&[AUTHORIZATION])
                    .resources(&["subjectaccessreviews"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "pvc-protection-controller",
            vec![
                rule(&["get", "list", "watch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
                rule(&["list", "watch", "get"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "pv-protection-controller",
            vec![
                rule(&["get", "list", "watch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumes"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "ttl-after-finished-controller",
            vec![
                rule(&["get", "list", "watch", "delete"])
                    .groups(&[BATCH])
                    .resources(&["jobs"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "root-ca-cert-publisher",
            vec![
                rule(&["create", "update"])
                    .groups(&[LEGACY])
                    .resources(&["configmaps"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "validatingadmissionpolicy-status-controller",
            vec![
                rule(READ)
                    .groups(&[ADMISSION_REGISTRATION])
                    .resources(&["validatingadmissionpolicies"])
                    .build(),
                rule(&["get", "patch", "update"])
                    .groups(&[ADMISSION_REGISTRATION])
                    .resources(&["validatingadmissionpolicies/status"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "legacy-service-account-token-cleaner",
            vec![
                rule(&["get"])
                    .groups(&[LEGACY])
                    .resources(&["configmaps"])
                    .names(&[LEGACY_TOKEN_TRACKING_CONFIGMAP])
                    .build(),
                rule(&["patch", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["secrets"])
                    .build(),
            ],
        ),
        // SELinuxChangePolicy (beta, on).
        (
            "selinux-warning-controller",
            vec![
                events_rule(),
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumes"])
                    .build(),
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
                rule(READ).groups(&[LEGACY]).resources(&["pods"]).build(),
                rule(READ)
                    .groups(&[STORAGE])
                    .resources(&["csidrivers"])
                    .build(),
            ],
        ),
    ]
}

/// Upstream `ControllerRoles()`.
pub fn controller_roles() -> Vec<Value> {
    controllers()
        .into_iter()
        .map(|(name, rules)| cluster_role(&format!("{SA_ROLE_PREFIX}{name}"), rules))
        .collect()
}

/// Upstream `ControllerRoleBindings()`: each role bound to the kube-system service account
/// of the same name.
pub fn controller_role_bindings() -> Vec<Value> {
    controllers()
        .into_iter()
        .map(|(name, _)| {
            let role = format!("{SA_ROLE_PREFIX}{name}");
            cluster_binding(&role, subjects().service_accounts("kube-system", &[name]))
        })
        .collect()
}
