//! What upstream's `plugin/pkg/auth/authorizer/rbac/bootstrappolicy` shares between its
//! default policy (core-apiserver's `resources/rbac/bootstrap`) and the Node authorizer:
//! the rule builder (`NewRule(...).Groups(...).Resources(...)`), the verb sets and API
//! group names it uses, and `NodeRules` (what `system:node` grants, and what the Node
//! authorizer falls back to).

use serde_json::{Map, Value, json};

/// The API groups the policy names (upstream's `legacyGroup`, `appsGroup`...).
pub mod groups {
    pub const LEGACY: &str = "";
    pub const ADMISSION_REGISTRATION: &str = "admissionregistration.k8s.io";
    pub const APPS: &str = "apps";
    pub const AUTHENTICATION: &str = "authentication.k8s.io";
    pub const AUTHORIZATION: &str = "authorization.k8s.io";
    pub const AUTOSCALING: &str = "autoscaling";
    pub const BATCH: &str = "batch";
    pub const CERTIFICATES: &str = "certificates.k8s.io";
    pub const COORDINATION: &str = "coordination.k8s.io";
    pub const DISCOVERY: &str = "discovery.k8s.io";
    pub const EVENTS: &str = "events.k8s.io";
    pub const EXTENSIONS: &str = "extensions";
    pub const NETWORKING: &str = "networking.k8s.io";
    pub const POLICY: &str = "policy";
    pub const RBAC: &str = "rbac.authorization.k8s.io";
    pub const STORAGE: &str = "storage.k8s.io";
}

/// The verb sets of upstream's `bootstrappolicy` (`Read`, `Write`, `ReadWrite`,
/// `ReadUpdate`).
pub const READ: &[&str] = &["get", "list", "watch"];
pub const WRITE: &[&str] = &["create", "update", "patch", "delete", "deletecollection"];
pub const READ_WRITE: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];
pub const READ_UPDATE: &[&str] = &["get", "list", "watch", "update", "patch"];

/// A PolicyRule under construction, after upstream's `PolicyRuleBuilder`; [`Rule::build`]
/// sorts every list as its `Rule()` does.
#[derive(Clone, Debug, Default)]
pub struct Rule {
    verbs: Vec<&'static str>,
    groups: Vec<&'static str>,
    resources: Vec<&'static str>,
    names: Vec<&'static str>,
    urls: Vec<&'static str>,
}

/// Upstream `NewRule(verbs...)`.
pub fn rule(verbs: &[&'static str]) -> Rule {
    Rule {
        verbs: verbs.to_vec(),
        ..Rule::default()
    }
}

impl Rule {
    pub fn groups(mut self, groups: &[&'static str]) -> Self {
        self.groups.extend_from_slice(groups);
        self
    }

    pub fn resources(mut self, resources: &[&'static str]) -> Self {
        self.resources.extend_from_slice(resources);
        self
    }

    pub fn names(mut self, names: &[&'static str]) -> Self {
        self.names.extend_from_slice(names);
        self
    }

    pub fn urls(mut self, urls: &[&'static str]) -> Self {
        self.urls.extend_from_slice(urls);
        self
    }

    /// The rule as the API writes it: each list sorted, empty lists omitted.
    pub fn build(self) -> Value {
        let mut out = Map::new();
        let fields = [
            ("apiGroups", self.groups),
            ("nonResourceURLs", self.urls),
            ("resourceNames", self.names),
            ("resources", self.resources),
            ("verbs", self.verbs),
        ];
        for (key, mut items) in fields {
            if items.is_empty() {
                continue;
            }
            items.sort_unstable();
            out.insert(key.to_owned(), json!(items));
        }
        Value::Object(out)
    }
}

/// Upstream's `NodeRules`: what `system:node` grants.
pub fn node_rules() -> Vec<Value> {
    use groups::*;
    vec![
        rule(&["create"])
            .groups(&[AUTHENTICATION])
            .resources(&["tokenreviews"])
            .build(),
        rule(&["create"])
            .groups(&[AUTHORIZATION])
            .resources(&["subjectaccessreviews", "localsubjectaccessreviews"])
            .build(),
        rule(READ)
            .groups(&[LEGACY])
            .resources(&["services"])
            .build(),
        rule(&["create", "get", "list", "watch"])
            .groups(&[LEGACY])
            .resources(&["nodes"])
            .build(),
        rule(&["update", "patch"])
            .groups(&[LEGACY])
            .resources(&["nodes/status"])
            .build(),
        rule(&["update", "patch"])
            .groups(&[LEGACY])
            .resources(&["nodes"])
            .build(),
        rule(&["create", "update", "patch"])
            .groups(&[LEGACY])
            .resources(&["events"])
            .build(),
        rule(READ).groups(&[LEGACY]).resources(&["pods"]).build(),
        rule(&["create", "delete"])
            .groups(&[LEGACY])
            .resources(&["pods"])
            .build(),
        rule(&["update", "patch"])
            .groups(&[LEGACY])
            .resources(&["pods/status"])
            .build(),
        rule(&["create"])
            .groups(&[LEGACY])
            .resources(&["pods/eviction"])
            .build(),
        rule(READ)
            .groups(&[LEGACY])
            .resources(&["secrets", "configmaps"])
            .build(),
        rule(&["get"])
            .groups(&[LEGACY])
            .resources(&["persistentvolumeclaims", "persistentvolumes"])
            .build(),
        rule(&["get"])
            .groups(&[LEGACY])
            .resources(&["endpoints"])
            .build(),
        rule(&["create", "get", "list", "watch"])
            .groups(&[CERTIFICATES])
            .resources(&["certificatesigningrequests"])
            .build(),
        rule(&["get", "create", "update", "patch", "delete"])
            .groups(&[COORDINATION])
            .resources(&["leases"])
            .build(),
        rule(&["get"])
            .groups(&[STORAGE])
            .resources(&["volumeattachments"])
            .build(),
        rule(&["create"])
            .groups(&[LEGACY])
            .resources(&["serviceaccounts/token"])
            .build(),
        rule(&["get", "update", "patch"])
            .groups(&[LEGACY])
            .resources(&["persistentvolumeclaims/status"])
            .build(),
        rule(&["get", "watch", "list"])
            .groups(&[STORAGE])
            .resources(&["csidrivers"])
            .build(),
        rule(&["get", "create", "update", "patch", "delete"])
            .groups(&[STORAGE])
            .resources(&["csinodes"])
            .build(),
        rule(READ)
            .groups(&["node.k8s.io"])
            .resources(&["runtimeclasses"])
            .build(),
    ]
}
