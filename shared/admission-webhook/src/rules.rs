//! Whether a webhook's rules match a request, after upstream's `predicates/rules`
//! (`Matcher.Matches`: scope, operation, group, version, resource with `*`, `*/*`,
//! `x/status`), with `matchPolicy: Equivalent` as this server can serve it: a rule naming
//! the request's group and resource in another version matches (the built-in resources
//! served here have one version each, and no resource lives in two groups).

use super::source::{Hook, Rule};

/// What the rules look at in a request.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// `CREATE`, `UPDATE`, `DELETE`.
    pub operation: &'a str,
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    /// Upstream's `GetNamespace()`: for a namespace's own update or delete, its name.
    pub namespace: &'a str,
}

fn exact_or_wildcard(items: &[String], requested: &str) -> bool {
    items.iter().any(|i| i == "*" || i == requested)
}

fn is_namespace(t: &Target<'_>) -> bool {
    t.group.is_empty() && t.version == "v1" && t.resource == "namespaces"
}

fn scope(rule: &Rule, t: &Target<'_>) -> bool {
    match rule.scope.as_deref() {
        None | Some("*") => true,
        Some("Namespaced") => !is_namespace(t) && !t.namespace.is_empty(),
        Some("Cluster") => is_namespace(t) || t.namespace.is_empty(),
        Some(_) => false,
    }
}

fn resource(rule: &Rule, t: &Target<'_>) -> bool {
    rule.resources.iter().any(|r| {
        let (res, sub) = r.split_once('/').unwrap_or((r.as_str(), ""));
        (res == "*" || res == t.resource) && (sub == "*" || sub == t.subresource)
    })
}

/// Upstream `rules.Matcher.Matches`.
pub fn rule_matches(rule: &Rule, t: &Target<'_>) -> bool {
    scope(rule, t)
        && exact_or_wildcard(&rule.operations, t.operation)
        && exact_or_wildcard(&rule.api_groups, t.group)
        && exact_or_wildcard(&rule.api_versions, t.version)
        && resource(rule, t)
}

/// Whether any rule of `hook` matches `t` (exactly, or for `Equivalent` in any version).
pub fn hook_matches(hook: &Hook, t: &Target<'_>) -> bool {
    if hook.rules.iter().any(|r| rule_matches(r, t)) {
        return true;
    }
    hook.equivalent
        && hook.rules.iter().any(|r| {
            r.api_versions
                .iter()
                .any(|v| rule_matches(r, &Target { version: v, ..*t }))
        })
}

/// Upstream `IsExemptAdmissionConfigurationResource`: writes of the admission
/// configuration kinds are never sent to webhooks.
pub fn is_exempt(group: &str, kind: &str) -> bool {
    group == "admissionregistration.k8s.io"
        && matches!(
            kind,
            "ValidatingWebhookConfiguration"
                | "MutatingWebhookConfiguration"
                | "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding"
        )
}
