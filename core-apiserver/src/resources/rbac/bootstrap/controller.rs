//! The `system:controller:*` ClusterRoles of kube-controller-manager's controllers and
//! their bindings to the controllers' kube-system service accounts, after upstream's
//! `bootstrappolicy/controller_policy.go` (1.33, default feature gates:
//! `MultiCIDRServiceAllocator`, `StatefulSetAutoDeletePVC` and `SELinuxChangePolicy` on;
//! `DynamicResourceAllocation`, `DRADeviceTaints`, `VolumeAttributesClass`,
//! `ClusterTrustBundle`, `StorageVersionAPI` and `StorageVersionMigrator` off).

use serde_json::Value;

use super::builder::{cluster_binding, cluster_role, events_rule, rule, subjects};
use super::policy::{
    KUBE_APISERVER_CLIENT_KUBELET_SIGNER, KUBE_APISERVER_CLIENT_SIGNER, KUBELET_SERVING_SIGNER,
    LEGACY_UNKNOWN_SIGNER,
};

/// Upstream `saRolePrefix`.
pub const SA_ROLE_PREFIX: &str = "system:controller:";

const LEGACY: &str = "";
const APPS: &str = "apps";
const AUTHORIZATION: &str = "authorization.k8s.io";
const AUTOSCALING: &str = "autoscaling";
const BATCH: &str = "batch";
const CERTIFICATES: &str = "certificates.k8s.io";
const DISCOVERY: &str = "discovery.k8s.io";
const EXTENSIONS: &str = "extensions";
const POLICY: &str = "policy";
const RBAC: &str = "rbac.authorization.k8s.io";
const STORAGE: &str = "storage.k8s.io";
const NETWORKING: &str = "networking.k8s.io";
const ADMISSION_REGISTRATION: &str = "admissionregistration.k8s.io";

/// Upstream `legacytokentracking.ConfigMapName`.
const LEGACY_TOKEN_TRACKING_CONFIGMAP: &str =
    "kube-apiserver-legacy-service-account-token-tracking";

const READ: &[&str] = super::builder::READ;

/// Each controller's name (without the prefix) and rules, in upstream's order.
fn controllers() -> Vec<(&'static str, Vec<Value>)> {
    let mut out = workload_controllers();
    out.extend(node_and_volume_controllers());
    out.extend(other_controllers());
    out
}

fn workload_controllers() -> Vec<(&'static str, Vec<Value>)> {
    vec![
        (
            "attachdetach-controller",
            vec![
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumes", "persistentvolumeclaims"])
                    .build(),
                rule(READ).groups(&[LEGACY]).resources(&["nodes"]).build(),
                rule(&["patch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["nodes/status"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
                rule(&["get", "create", "delete", "list", "watch"])
                    .groups(&[STORAGE])
                    .resources(&["volumeattachments"])
                    .build(),
                rule(READ)
                    .groups(&[STORAGE])
                    .resources(&["csidrivers"])
                    .build(),
                rule(READ)
                    .groups(&[STORAGE])
                    .resources(&["csinodes"])
                    .build(),
            ],
        ),
        (
            "clusterrole-aggregation-controller",
            vec![
                rule(&["escalate", "get", "list", "watch", "update", "patch"])
                    .groups(&[RBAC])
                    .resources(&["clusterroles"])
                    .build(),
            ],
        ),
        (
            "cronjob-controller",
            vec![
                rule(&["get", "list", "watch", "update"])
                    .groups(&[BATCH])
                    .resources(&["cronjobs"])
                    .build(),
                rule(&[
                    "get", "list", "watch", "create", "update", "delete", "patch",
                ])
                .groups(&[BATCH])
                .resources(&["jobs"])
                .build(),
                rule(&["update"])
                    .groups(&[BATCH])
                    .resources(&["cronjobs/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[BATCH])
                    .resources(&["cronjobs/finalizers"])
                    .build(),
                rule(&["list", "watch", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "daemon-set-controller",
            vec![
                rule(READ)
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["daemonsets"])
                    .build(),
                rule(&["update"])
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["daemonsets/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["daemonsets/finalizers"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes"])
                    .build(),
                rule(&["list", "watch", "create", "delete", "patch"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                rule(&["create"])
                    .groups(&[LEGACY])
                    .resources(&["pods/binding"])
                    .build(),
                rule(&[
                    "get", "list", "watch", "create", "delete", "update", "patch",
                ])
                .groups(&[APPS])
                .resources(&["controllerrevisions"])
                .build(),
                events_rule(),
            ],
        ),
        (
            "deployment-controller",
            vec![
                rule(&["get", "list", "watch", "update"])
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["deployments"])
                    .build(),
                rule(&["update"])
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["deployments/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["deployments/finalizers"])
                    .build(),
                rule(&[
                    "get", "list", "watch", "create", "update", "patch", "delete",
                ])
                .groups(&[APPS, EXTENSIONS])
                .resources(&["replicasets"])
                .build(),
                rule(&["get", "list", "watch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "disruption-controller",
            vec![
                rule(READ)
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["deployments"])
                    .build(),
                rule(READ)
                    .groups(&[APPS, EXTENSIONS])
                    .resources(&["replicasets"])
                    .build(),
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["replicationcontrollers"])
                    .build(),
                rule(READ)
                    .groups(&[POLICY])
                    .resources(&["poddisruptionbudgets"])
                    .build(),
                rule(READ)
                    .groups(&[APPS])
                    .resources(&["statefulsets"])
                    .build(),
                rule(&["update"])
                    .groups(&[POLICY])
                    .resources(&["poddisruptionbudgets/status"])
                    .build(),
                rule(&["patch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["pods/status"])
                    .build(),
                rule(&["get"])
                    .groups(&["*"])
                    .resources(&["*/scale"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "endpoint-controller",
            vec![
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["services", "pods"])
                    .build(),
                rule(&["get", "list", "watch", "create", "update", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["endpoints"])
                    .build(),
                rule(&["create"])
                    .groups(&[LEGACY])
                    .resources(&["endpoints/restricted"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "endpointslice-controller",
            vec![
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["services", "pods", "nodes"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["services/finalizers"])
                    .build(),
                rule(&["get", "list", "watch", "create", "update", "delete"])
                    .groups(&[DISCOVERY])
                    .resources(&["endpointslices"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "endpointslicemirroring-controller",
            vec![
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["services", "endpoints"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["services/finalizers"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["endpoints/finalizers"])
                    .build(),
                rule(&["get", "list", "watch", "create", "update", "delete"])
                    .groups(&[DISCOVERY])
                    .resources(&["endpointslices"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "expand-controller",
            vec![
                rule(&["get", "list", "watch", "update", "patch"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumes"])
                    .build(),
                rule(&["update", "patch"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims/status"])
                    .build(),
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
                events_rule(),
                rule(&["get"])
                    .groups(&[LEGACY])
                    .resources(&["services"])
                    .build(),
            ],
        ),
        (
            "ephemeral-volume-controller",
            vec![
                rule(READ).groups(&[LEGACY]).resources(&["pods"]).build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["pods/finalizers"])
                    .build(),
                rule(&["get", "list", "watch", "create"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "generic-garbage-collector",
            vec![
                rule(&["get", "list", "watch", "patch", "update", "delete"])
                    .groups(&["*"])
                    .resources(&["*"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "horizontal-pod-autoscaler",
            vec![
                rule(READ)
                    .groups(&[AUTOSCALING])
                    .resources(&["horizontalpodautoscalers"])
                    .build(),
                rule(&["update"])
                    .groups(&[AUTOSCALING])
                    .resources(&["horizontalpodautoscalers/status"])
                    .build(),
                rule(&["get", "update"])
                    .groups(&["*"])
                    .resources(&["*/scale"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&["metrics.k8s.io"])
                    .resources(&["pods"])
                    .build(),
                rule(READ)
                    .groups(&["custom.metrics.k8s.io"])
                    .resources(&["*"])
                    .build(),
                rule(READ)
                    .groups(&["external.metrics.k8s.io"])
                    .resources(&["*"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "job-controller",
            vec![
                rule(&["get", "list", "watch", "update", "patch"])
                    .groups(&[BATCH])
                    .resources(&["jobs"])
                    .build(),
                rule(&["update"])
                    .groups(&[BATCH])
                    .resources(&["jobs/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[BATCH])
                    .resources(&["jobs/finalizers"])
                    .build(),
                rule(&["list", "watch", "create", "delete", "patch"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "namespace-controller",
            vec![
                rule(&["get", "list", "watch", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["namespaces"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["namespaces/finalize", "namespaces/status"])
                    .build(),
                rule(&["get", "list", "watch", "delete", "deletecollection"])
                    .groups(&["*"])
                    .resources(&["*"])
                    .build(),
            ],
        ),
    ]
}

fn node_and_volume_controllers() -> Vec<(&'static str, Vec<Value>)> {
    vec![
        (
            "node-controller",
            vec![
                rule(&["get", "list", "watch", "update", "delete", "patch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes"])
                    .build(),
                rule(&["patch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["nodes/status"])
                    .build(),
                rule(&["patch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["pods/status"])
                    .build(),
                rule(&["list", "watch", "get", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "persistent-volume-binder",
            vec![
                rule(&["get", "list", "watch", "update", "create", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumes"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumes/status"])
                    .build(),
                rule(&["get", "list", "watch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims/status"])
                    .build(),
                rule(&["list", "watch", "get", "create", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                rule(READ)
                    .groups(&[STORAGE])
                    .resources(&["storageclasses"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes"])
                    .build(),
                events_rule(),
                rule(&["watch"])
                    .groups(&[LEGACY])
                    .resources(&["events"])
                    .build(),
                rule(&["get"])
                    .groups(&[LEGACY])
                    .resources(&["services"])
                    .build(),
            ],
        ),
        (
            "pod-garbage-collector",
            vec![
                rule(&["list", "watch", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                rule(READ).groups(&[LEGACY]).resources(&["nodes"]).build(),
                rule(&["patch"])
                    .groups(&[LEGACY])
                    .resources(&["pods/status"])
                    .build(),
            ],
        ),
        (
            "replicaset-controller",
            vec![
                rule(&["get", "list", "watch", "update"])
                    .groups(&[APPS, EXTENSIONS])
                    .resources(&["replicasets"])
                    .build(),
                rule(&["update"])
                    .groups(&[APPS, EXTENSIONS])
                    .resources(&["replicasets/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[APPS, EXTENSIONS])
                    .resources(&["replicasets/finalizers"])
                    .build(),
                rule(&["list", "watch", "patch", "create", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "replication-controller",
            vec![
                rule(&["get", "list", "watch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["replicationcontrollers"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["replicationcontrollers/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["replicationcontrollers/finalizers"])
                    .build(),
                rule(&["list", "watch", "patch", "create", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "resourcequota-controller",
            vec![
                rule(&["list", "watch"])
                    .groups(&["*"])
                    .resources(&["*"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["resourcequotas/status"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "route-controller",
            vec![
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes"])
                    .build(),
                rule(&["patch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes/status"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "service-account-controller",
            vec![
                rule(&["create"])
                    .groups(&[LEGACY])
                    .resources(&["serviceaccounts"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "service-controller",
            vec![
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["services"])
                    .build(),
                rule(&["patch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["services/status"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes"])
                    .build(),
                events_rule(),
            ],
        ),
        // MultiCIDRServiceAllocator (GA).
        (
            "service-cidrs-controller",
            vec![
                rule(&["get", "list", "watch", "patch", "update"])
                    .groups(&[NETWORKING])
                    .resources(&["servicecidrs"])
                    .build(),
                rule(&["patch", "update"])
                    .groups(&[NETWORKING])
                    .resources(&["servicecidrs/finalizers"])
                    .build(),
                rule(&["patch", "update"])
                    .groups(&[NETWORKING])
                    .resources(&["servicecidrs/status"])
                    .build(),
                rule(READ)
                    .groups(&[NETWORKING])
                    .resources(&["ipaddresses"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "statefulset-controller",
            vec![
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                rule(READ)
                    .groups(&[APPS])
                    .resources(&["statefulsets"])
                    .build(),
                rule(&["update"])
                    .groups(&[APPS])
                    .resources(&["statefulsets/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[APPS])
                    .resources(&["statefulsets/finalizers"])
                    .build(),
                rule(&["get", "create", "delete", "update", "patch"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                rule(&[
                    "get", "create", "delete", "update", "patch", "list", "watch",
                ])
                .groups(&[APPS])
                .resources(&["controllerrevisions"])
                .build(),
                rule(&["get", "create", "list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
                events_rule(),
                // StatefulSetAutoDeletePVC (GA).
                rule(&["update", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["pods/finalizers"])
                    .build(),
            ],
        ),
        (
            "ttl-controller",
            vec![
                rule(&["update", "patch", "list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes"])
                    .build(),
                events_rule(),
            ],
        ),
    ]
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
