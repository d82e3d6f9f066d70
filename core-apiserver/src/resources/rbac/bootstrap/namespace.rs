//! The Roles and RoleBindings upstream bootstraps in kube-system and kube-public
//! (`bootstrappolicy/namespace_policy.go`, 1.33).

use serde_json::Value;

use super::builder::groups::*;

use super::builder::{events_rule, role, role_binding, rule, subjects};
use super::controller::SA_ROLE_PREFIX;

const SYSTEM: &str = "kube-system";
const PUBLIC: &str = "kube-public";
const READ: &[&str] = super::builder::READ;

fn leader_locking(component: &'static str) -> Vec<Value> {
    let lease_verbs: &[&str] = &["get", "watch", "list", "create", "update"];
    vec![
        rule(&["watch"])
            .groups(&[LEGACY])
            .resources(&["configmaps"])
            .build(),
        rule(&["get", "update"])
            .groups(&[LEGACY])
            .resources(&["configmaps"])
            .names(&[component])
            .build(),
        rule(lease_verbs)
            .groups(&[COORDINATION])
            .resources(&["leases"])
            .build(),
        rule(lease_verbs)
            .groups(&[COORDINATION])
            .resources(&["leasecandidates"])
            .build(),
    ]
}

/// Upstream `NamespaceRoles()`, in upstream's order.
pub fn namespace_roles() -> Vec<Value> {
    let sa = |name: &str| format!("{SA_ROLE_PREFIX}{name}");
    vec![
        role(
            SYSTEM,
            "extension-apiserver-authentication-reader",
            vec![
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["configmaps"])
                    .names(&["extension-apiserver-authentication"])
                    .build(),
            ],
        ),
        role(
            SYSTEM,
            &sa("bootstrap-signer"),
            vec![rule(READ).groups(&[LEGACY]).resources(&["secrets"]).build()],
        ),
        role(
            SYSTEM,
            &sa("cloud-provider"),
            vec![
                rule(&["create", "get", "list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["configmaps"])
                    .build(),
            ],
        ),
        role(
            SYSTEM,
            &sa("token-cleaner"),
            vec![
                rule(&["get", "list", "watch", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["secrets"])
                    .build(),
                events_rule(),
            ],
        ),
        role(
            SYSTEM,
            "system::leader-locking-kube-controller-manager",
            leader_locking("kube-controller-manager"),
        ),
        role(
            SYSTEM,
            "system::leader-locking-kube-scheduler",
            leader_locking("kube-scheduler"),
        ),
        role(
            PUBLIC,
            &sa("bootstrap-signer"),
            vec![
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["configmaps"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["configmaps"])
                    .names(&["cluster-info"])
                    .build(),
                events_rule(),
            ],
        ),
    ]
}

/// Upstream `NamespaceRoleBindings()`, in upstream's order.
pub fn namespace_role_bindings() -> Vec<Value> {
    let sa = |name: &str| format!("{SA_ROLE_PREFIX}{name}");
    let kcm = "system:kube-controller-manager";
    let scheduler = "system:kube-scheduler";
    // Upstream names this binding apart from the role it binds.
    let mut delegated_auth = role_binding(
        SYSTEM,
        "extension-apiserver-authentication-reader",
        subjects().users(&[kcm, scheduler]),
    );
    delegated_auth["metadata"]["name"] = "system::extension-apiserver-authentication-reader".into();
    vec![
        delegated_auth,
        role_binding(
            SYSTEM,
            "system::leader-locking-kube-controller-manager",
            subjects().users(&[kcm]).service_accounts(
                SYSTEM,
                &["kube-controller-manager", "leader-election-controller"],
            ),
        ),
        role_binding(
            SYSTEM,
            "system::leader-locking-kube-scheduler",
            subjects()
                .users(&[scheduler])
                .service_accounts(SYSTEM, &["kube-scheduler"]),
        ),
        role_binding(
            SYSTEM,
            &sa("bootstrap-signer"),
            subjects().service_accounts(SYSTEM, &["bootstrap-signer"]),
        ),
        role_binding(
            SYSTEM,
            &sa("cloud-provider"),
            subjects().service_accounts(SYSTEM, &["cloud-provider"]),
        ),
        role_binding(
            SYSTEM,
            &sa("token-cleaner"),
            subjects().service_accounts(SYSTEM, &["token-cleaner"]),
        ),
        role_binding(
            PUBLIC,
            &sa("bootstrap-signer"),
            subjects().service_accounts(SYSTEM, &["bootstrap-signer"]),
        ),
    ]
}
