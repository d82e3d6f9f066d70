//! The default ClusterRoles and ClusterRoleBindings of upstream's
//! `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go` (1.33, default feature
//! gates: `KubeletFineGrainedAuthz` and `MultiCIDRServiceAllocator` on;
//! `DynamicResourceAllocation`, `ClusterTrustBundle`, `ComponentFlagz`,
//! `ComponentStatusz` and `KubeletServiceAccountTokenForCredentialProviders` off, so what
//! they add is left out).

use serde_json::Value;

use super::aggregated;
use super::builder::groups::*;

use super::builder::{
    READ, READ_UPDATE, READ_WRITE, aggregated_cluster_role, cluster_binding, cluster_role,
    events_rule, labeled_cluster_role, rule, subjects,
};

/// Upstream's aggregation labels.
pub const AGGREGATE_TO_ADMIN: &str = "rbac.authorization.k8s.io/aggregate-to-admin";
pub const AGGREGATE_TO_EDIT: &str = "rbac.authorization.k8s.io/aggregate-to-edit";
pub const AGGREGATE_TO_VIEW: &str = "rbac.authorization.k8s.io/aggregate-to-view";

/// Upstream's well-known signer names (`k8s.io/api/certificates/v1beta1`).
pub const LEGACY_UNKNOWN_SIGNER: &str = "kubernetes.io/legacy-unknown";
pub const KUBE_APISERVER_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";
pub const KUBE_APISERVER_CLIENT_KUBELET_SIGNER: &str =
    "kubernetes.io/kube-apiserver-client-kubelet";
pub const KUBELET_SERVING_SIGNER: &str = "kubernetes.io/kubelet-serving";

pub use kas_rbac::bootstrap::node_rules;

fn signer_approver(name: &str, signer: &'static str) -> Value {
    cluster_role(
        name,
        vec![
            rule(&["approve"])
                .groups(&[CERTIFICATES])
                .resources(&["signers"])
                .names(&[signer])
                .build(),
        ],
    )
}

/// The roles every user, node and component is given by default.
fn base_roles() -> Vec<Value> {
    vec![
        cluster_role(
            "cluster-admin",
            vec![
                rule(&["*"]).groups(&["*"]).resources(&["*"]).build(),
                rule(&["*"]).urls(&["*"]).build(),
            ],
        ),
        cluster_role(
            "system:discovery",
            vec![
                rule(&["get"])
                    .urls(&[
                        "/livez",
                        "/readyz",
                        "/healthz",
                        "/version",
                        "/version/",
                        "/openapi",
                        "/openapi/*",
                        "/api",
                        "/api/*",
                        "/apis",
                        "/apis/*",
                    ])
                    .build(),
            ],
        ),
        cluster_role(
            "system:monitoring",
            vec![
                rule(&["get"])
                    .urls(&[
                        "/metrics",
                        "/metrics/slis",
                        "/livez",
                        "/readyz",
                        "/healthz",
                        "/livez/*",
                        "/readyz/*",
                        "/healthz/*",
                    ])
                    .build(),
            ],
        ),
        cluster_role(
            "system:basic-user",
            vec![
                rule(&["create"])
                    .groups(&[AUTHORIZATION])
                    .resources(&["selfsubjectaccessreviews", "selfsubjectrulesreviews"])
                    .build(),
                rule(&["create"])
                    .groups(&[AUTHENTICATION])
                    .resources(&["selfsubjectreviews"])
                    .build(),
            ],
        ),
        cluster_role(
            "system:public-info-viewer",
            vec![
                rule(&["get"])
                    .urls(&["/livez", "/readyz", "/healthz", "/version", "/version/"])
                    .build(),
            ],
        ),
        aggregated_cluster_role("admin", &[], AGGREGATE_TO_ADMIN),
        aggregated_cluster_role("edit", &[(AGGREGATE_TO_ADMIN, "true")], AGGREGATE_TO_EDIT),
        aggregated_cluster_role("view", &[(AGGREGATE_TO_EDIT, "true")], AGGREGATE_TO_VIEW),
        labeled_cluster_role(
            "system:aggregate-to-admin",
            &[(AGGREGATE_TO_ADMIN, "true")],
            vec![
                rule(&["create"])
                    .groups(&[AUTHORIZATION])
                    .resources(&["localsubjectaccessreviews"])
                    .build(),
                rule(READ_WRITE)
                    .groups(&[RBAC])
                    .resources(&["roles", "rolebindings"])
                    .build(),
            ],
        ),
        labeled_cluster_role(
            "system:aggregate-to-edit",
            &[(AGGREGATE_TO_EDIT, "true")],
            aggregated::edit_rules(),
        ),
        labeled_cluster_role(
            "system:aggregate-to-view",
            &[(AGGREGATE_TO_VIEW, "true")],
            aggregated::view_rules(),
        ),
    ]
}

/// The roles of components and add-ons (heapster, node problem detector, volume
/// provisioners, certificate approvers...).
fn component_roles() -> Vec<Value> {
    vec![
        cluster_role(
            "system:heapster",
            vec![
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["events", "pods", "nodes", "namespaces"])
                    .build(),
                rule(READ)
                    .groups(&[EXTENSIONS])
                    .resources(&["deployments"])
                    .build(),
            ],
        ),
        cluster_role(SYSTEM_NODE, node_rules()),
        cluster_role(
            "system:node-problem-detector",
            vec![
                rule(&["get"])
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
        cluster_role(
            "system:node-bootstrapper",
            vec![
                rule(&["create", "get", "list", "watch"])
                    .groups(&[CERTIFICATES])
                    .resources(&["certificatesigningrequests"])
                    .build(),
            ],
        ),
        cluster_role(
            "system:auth-delegator",
            vec![
                rule(&["create"])
                    .groups(&[AUTHENTICATION])
                    .resources(&["tokenreviews"])
                    .build(),
                rule(&["create"])
                    .groups(&[AUTHORIZATION])
                    .resources(&["subjectaccessreviews"])
                    .build(),
            ],
        ),
        cluster_role(
            "system:kube-aggregator",
            vec![
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["services", "endpoints"])
                    .build(),
            ],
        ),
        cluster_role(
            "system:kube-controller-manager",
            vec![
                events_rule(),
                rule(&["create"])
                    .groups(&[COORDINATION])
                    .resources(&["leases"])
                    .build(),
                rule(&["get", "update"])
                    .groups(&[COORDINATION])
                    .resources(&["leases"])
                    .names(&["kube-controller-manager"])
                    .build(),
                rule(&["create"])
                    .groups(&[LEGACY])
                    .resources(&["secrets", "serviceaccounts"])
                    .build(),
                rule(&["delete"])
                    .groups(&[LEGACY])
                    .resources(&["secrets"])
                    .build(),
                rule(&["get"])
                    .groups(&[LEGACY])
                    .resources(&["namespaces", "secrets", "serviceaccounts", "configmaps"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["secrets", "serviceaccounts"])
                    .build(),
                rule(&["create"])
                    .groups(&[AUTHENTICATION])
                    .resources(&["tokenreviews"])
                    .build(),
                rule(&["create"])
                    .groups(&[AUTHORIZATION])
                    .resources(&["subjectaccessreviews"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&["*"])
                    .resources(&["*"])
                    .build(),
                rule(&["create"])
                    .groups(&[LEGACY])
                    .resources(&["serviceaccounts/token"])
                    .build(),
            ],
        ),
        cluster_role(
            "system:kube-dns",
            vec![
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["endpoints", "services"])
                    .build(),
            ],
        ),
        cluster_role(
            "system:persistent-volume-provisioner",
            vec![
                rule(&["get", "list", "watch", "create", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumes"])
                    .build(),
                rule(&["get", "list", "watch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
                rule(READ)
                    .groups(&[STORAGE])
                    .resources(&["storageclasses"])
                    .build(),
                rule(&["watch"])
                    .groups(&[LEGACY])
                    .resources(&["events"])
                    .build(),
                events_rule(),
            ],
        ),
        cluster_role(
            "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
            vec![
                rule(&["create"])
                    .groups(&[CERTIFICATES])
                    .resources(&["certificatesigningrequests/nodeclient"])
                    .build(),
            ],
        ),
        cluster_role(
            "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
            vec![
                rule(&["create"])
                    .groups(&[CERTIFICATES])
                    .resources(&["certificatesigningrequests/selfnodeclient"])
                    .build(),
            ],
        ),
        cluster_role(
            "system:volume-scheduler",
            vec![
                rule(READ_UPDATE)
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumes"])
                    .build(),
                rule(READ)
                    .groups(&[STORAGE])
                    .resources(&["storageclasses"])
                    .build(),
                rule(READ_UPDATE)
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
            ],
        ),
        signer_approver(
            "system:certificates.k8s.io:legacy-unknown-approver",
            LEGACY_UNKNOWN_SIGNER,
        ),
        signer_approver(
            "system:certificates.k8s.io:kubelet-serving-approver",
            KUBELET_SERVING_SIGNER,
        ),
        signer_approver(
            "system:certificates.k8s.io:kube-apiserver-client-approver",
            KUBE_APISERVER_CLIENT_SIGNER,
        ),
        signer_approver(
            "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
            KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
        ),
        cluster_role(
            "system:service-account-issuer-discovery",
            vec![
                rule(&["get"])
                    .urls(&[
                        "/.well-known/openid-configuration",
                        "/.well-known/openid-configuration/",
                        "/openid/v1/jwks",
                        "/openid/v1/jwks/",
                    ])
                    .build(),
            ],
        ),
    ]
}

/// The roles whose rules depend on feature gates on by default in 1.33.
fn gated_roles() -> Vec<Value> {
    vec![
        cluster_role(
            "system:kubelet-api-admin",
            vec![
                rule(READ).groups(&[LEGACY]).resources(&["nodes"]).build(),
                rule(&["proxy"])
                    .groups(&[LEGACY])
                    .resources(&["nodes"])
                    .build(),
                rule(&["*"])
                    .groups(&[LEGACY])
                    .resources(&["nodes/proxy", "nodes/metrics", "nodes/stats", "nodes/log"])
                    .build(),
                // KubeletFineGrainedAuthz (beta, on).
                rule(&["*"])
                    .groups(&[LEGACY])
                    .resources(&["nodes/pods", "nodes/healthz", "nodes/configz"])
                    .build(),
            ],
        ),
        cluster_role(
            "system:node-proxier",
            vec![
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["services", "endpoints"])
                    .build(),
                rule(READ).groups(&[LEGACY]).resources(&["nodes"]).build(),
                events_rule(),
                // MultiCIDRServiceAllocator (GA).
                rule(&["list", "watch"])
                    .groups(&[NETWORKING])
                    .resources(&["servicecidrs"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&[DISCOVERY])
                    .resources(&["endpointslices"])
                    .build(),
            ],
        ),
        cluster_role("system:kube-scheduler", kube_scheduler_rules()),
    ]
}

fn kube_scheduler_rules() -> Vec<Value> {
    vec![
        events_rule(),
        rule(&["create"])
            .groups(&[COORDINATION])
            .resources(&["leases"])
            .build(),
        rule(&["get", "update", "list", "watch"])
            .groups(&[COORDINATION])
            .resources(&["leases"])
            .names(&["kube-scheduler"])
            .build(),
        rule(READ_WRITE)
            .groups(&[COORDINATION])
            .resources(&["leasecandidates"])
            .build(),
        rule(READ).groups(&[LEGACY]).resources(&["nodes"]).build(),
        rule(&["get", "list", "watch", "delete"])
            .groups(&[LEGACY])
            .resources(&["pods"])
            .build(),
        rule(&["create"])
            .groups(&[LEGACY])
            .resources(&["pods/binding", "bindings"])
            .build(),
        rule(&["patch", "update"])
            .groups(&[LEGACY])
            .resources(&["pods/status"])
            .build(),
        rule(READ)
            .groups(&[LEGACY])
            .resources(&["services", "replicationcontrollers"])
            .build(),
        rule(READ)
            .groups(&[APPS, EXTENSIONS])
            .resources(&["replicasets"])
            .build(),
        rule(READ)
            .groups(&[APPS])
            .resources(&["statefulsets"])
            .build(),
        rule(READ)
            .groups(&[POLICY])
            .resources(&["poddisruptionbudgets"])
            .build(),
        rule(READ)
            .groups(&[LEGACY])
            .resources(&["persistentvolumeclaims", "persistentvolumes"])
            .build(),
        rule(&["create"])
            .groups(&[AUTHENTICATION])
            .resources(&["tokenreviews"])
            .build(),
        rule(&["create"])
            .groups(&[AUTHORIZATION])
            .resources(&["subjectaccessreviews"])
            .build(),
        rule(READ)
            .groups(&[STORAGE])
            .resources(&["csinodes"])
            .build(),
        rule(READ)
            .groups(&[STORAGE])
            .resources(&["volumeattachments"])
            .build(),
        rule(READ)
            .groups(&[LEGACY])
            .resources(&["namespaces"])
            .build(),
        rule(READ)
            .groups(&[STORAGE])
            .resources(&["csidrivers"])
            .build(),
        rule(READ)
            .groups(&[STORAGE])
            .resources(&["csistoragecapacities"])
            .build(),
    ]
}

/// Upstream `systemNodeRoleName`.
pub const SYSTEM_NODE: &str = "system:node";

/// Upstream `ClusterRoles()`.
pub fn cluster_roles() -> Vec<Value> {
    let mut roles = base_roles();
    roles.extend(component_roles());
    roles.extend(gated_roles());
    roles
}

/// Upstream `ClusterRoleBindings()`.
pub fn cluster_role_bindings() -> Vec<Value> {
    let authenticated = "system:authenticated";
    vec![
        cluster_binding("cluster-admin", subjects().groups(&["system:masters"])),
        cluster_binding(
            "system:monitoring",
            subjects().groups(&["system:monitoring"]),
        ),
        cluster_binding("system:discovery", subjects().groups(&[authenticated])),
        cluster_binding("system:basic-user", subjects().groups(&[authenticated])),
        cluster_binding(
            "system:public-info-viewer",
            subjects().groups(&[authenticated, "system:unauthenticated"]),
        ),
        cluster_binding(
            "system:node-proxier",
            subjects().users(&["system:kube-proxy"]),
        ),
        cluster_binding(
            "system:kube-controller-manager",
            subjects().users(&["system:kube-controller-manager"]),
        ),
        cluster_binding(
            "system:kube-dns",
            subjects().service_accounts("kube-system", &["kube-dns"]),
        ),
        cluster_binding(
            "system:kube-scheduler",
            subjects().users(&["system:kube-scheduler"]),
        ),
        cluster_binding(
            "system:volume-scheduler",
            subjects().users(&["system:kube-scheduler"]),
        ),
        // Bound to no one: the Node authorizer grants nodes what they need.
        cluster_binding(SYSTEM_NODE, subjects()),
        cluster_binding(
            "system:service-account-issuer-discovery",
            subjects().groups(&["system:serviceaccounts"]),
        ),
    ]
}

/// Upstream `ClusterRolesToAggregate`: the roles that became aggregated, and where their
/// pre-aggregation rules are kept.
pub const CLUSTER_ROLES_TO_AGGREGATE: &[(&str, &str)] = &[
    ("admin", "system:aggregate-to-admin"),
    ("edit", "system:aggregate-to-edit"),
    ("view", "system:aggregate-to-view"),
];

/// Upstream `ClusterRoleBindingsToSplit`: (the binding whose subjects are copied, the
/// default binding they are copied into).
pub fn cluster_role_bindings_to_split() -> Vec<(&'static str, Value)> {
    cluster_role_bindings()
        .into_iter()
        .filter(|b| kas_registry::meta::name(b) == "system:public-info-viewer")
        .map(|b| ("system:discovery", b))
        .collect()
}
