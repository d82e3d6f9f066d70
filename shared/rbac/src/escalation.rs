//! Upstream's escalation checks: `ConfirmNoEscalation` and `CompactRules`
//! (`pkg/registry/rbac/validation`), `Covers` and `BreakdownRule`
//! (`k8s.io/component-helpers/auth/rbac/validation`), and `EscalationAllowed`,
//! `RoleEscalationAuthorized` and `BindingAuthorized` (`pkg/registry/rbac/escalation_check.go`).
//!
//! Failures are upstream's messages. The role and binding stores turn them into
//! `Status::forbidden(group, resource, name, message)` (upstream's
//! `errors.NewForbidden(groupResource, name, err)`), e.g. `clusterroles.rbac.authorization.k8s.io
//! "x" is forbidden: user "u" (groups=["g"]) is attempting to grant RBAC permissions not
//! currently held: ...`.

use std::collections::{BTreeSet, HashMap};

use kas_apimachinery::golang::strconv::quote;
use kas_auth::UserInfo;
use kas_auth::authorization::{Attributes, Authorizer, Decision};
use kas_auth::user::SYSTEM_PRIVILEGED_GROUP;
use serde_json::Value;

use crate::index::RoleRef;
use crate::resolver::DefaultRuleResolver;
use crate::rules::{ALL, PolicyRule, quote_list};

/// `rbac.authorization.k8s.io`.
pub const GROUP_NAME: &str = "rbac.authorization.k8s.io";

/// Upstream's `BreakdownRule`: the rule as rules of one group, resource, verb and resource
/// name each (or one non-resource URL and verb each).
pub fn breakdown_rule(rule: &PolicyRule) -> Vec<PolicyRule> {
    let none: [&str; 0] = [];
    let mut out = Vec::new();
    for group in rule.api_groups() {
        for resource in rule.resources() {
            for verb in rule.verbs() {
                if rule.resource_names().len() > 0 {
                    for name in rule.resource_names() {
                        out.push(PolicyRule::new(
                            &[verb],
                            &[group],
                            &[resource],
                            &[name],
                            &none,
                        ));
                    }
                } else {
                    out.push(PolicyRule::new(
                        &[verb],
                        &[group],
                        &[resource],
                        &none,
                        &none,
                    ));
                }
            }
        }
    }
    for url in rule.non_resource_urls() {
        for verb in rule.verbs() {
            out.push(PolicyRule::new(&[verb], &none, &none, &none, &[url]));
        }
    }
    out
}

fn has<'a>(mut set: impl Iterator<Item = &'a str>, s: &str) -> bool {
    set.any(|x| x == s)
}

/// Upstream's `hasAll`: every string of `contains` is in `set`.
fn has_all<'a>(
    set: impl Iterator<Item = &'a str> + Clone,
    mut contains: impl Iterator<Item = &'a str>,
) -> bool {
    contains.all(|c| set.clone().any(|s| s == c))
}

/// Upstream's `resourceCoversAll`.
fn resource_covers_all(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    if has(owner.resources(), ALL) || has_all(owner.resources(), sub.resources()) {
        return true;
    }
    sub.resources().all(|path| {
        if has(owner.resources(), path) {
            return true;
        }
        match path.split_once('/') {
            Some((_, subresource)) => has(owner.resources(), &format!("*/{subresource}")),
            None => false,
        }
    })
}

/// Upstream's `nonResourceURLCovers`.
fn non_resource_url_covers(owner: &str, sub: &str) -> bool {
    owner == sub || (owner.ends_with('*') && sub.starts_with(owner.trim_end_matches('*')))
}

/// Upstream's `ruleCovers`: whether `owner` covers `sub`, a rule of [`breakdown_rule`].
fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(owner.verbs(), ALL) || has_all(owner.verbs(), sub.verbs());
    let groups = has(owner.api_groups(), ALL) || has_all(owner.api_groups(), sub.api_groups());
    let resources = resource_covers_all(owner, sub);
    let urls = sub.non_resource_urls().all(|path| {
        owner
            .non_resource_urls()
            .any(|o| non_resource_url_covers(o, path))
    });
    let owner_names = owner.resource_names().len();
    let names = if sub.resource_names().len() == 0 {
        owner_names == 0
    } else {
        owner_names == 0 || has_all(owner.resource_names(), sub.resource_names())
    };
    verbs && groups && resources && names && urls
}

/// Upstream's `Covers`: whether `owner` covers `servant`, and the broken-down servant
/// rules it does not cover.
pub fn covers(owner: &[PolicyRule], servant: &[PolicyRule]) -> (bool, Vec<PolicyRule>) {
    let uncovered: Vec<PolicyRule> = servant
        .iter()
        .flat_map(breakdown_rule)
        .filter(|sub| !owner.iter().any(|o| rule_covers(o, sub)))
        .collect();
    (uncovered.is_empty(), uncovered)
}

/// Upstream's `CompactRules`: rules of one group, one resource, at most one resource name
/// and nothing else are merged into one rule per (group, resource, name) with their verbs
/// appended; other rules are kept as they are, first.
pub fn compact_rules(rules: &[PolicyRule]) -> Vec<PolicyRule> {
    let mut compacted = Vec::new();
    let mut simple: Vec<(Vec<&str>, &PolicyRule)> = Vec::new();
    let mut by_key: HashMap<(&str, &str, Option<&str>), usize> = HashMap::new();
    for rule in rules {
        let Some(key) = simple_resource(rule) else {
            compacted.push(rule.clone());
            continue;
        };
        match by_key.get(&key) {
            Some(&i) => simple[i].0.extend(rule.verbs()),
            None => {
                by_key.insert(key, simple.len());
                simple.push((rule.verbs().collect(), rule));
            }
        }
    }
    for (verbs, rule) in simple {
        let groups: Vec<&str> = rule.api_groups().collect();
        let resources: Vec<&str> = rule.resources().collect();
        let names: Vec<&str> = rule.resource_names().collect();
        compacted.push(PolicyRule::new(&verbs, &groups, &resources, &names, &[]));
    }
    compacted
}

/// Upstream's `isSimpleResourceRule`: the (group, resource, name) of a rule with one group,
/// one resource, at most one resource name and no non-resource URLs.
fn simple_resource(rule: &PolicyRule) -> Option<(&str, &str, Option<&str>)> {
    if rule.resource_names().len() > 1 || rule.non_resource_urls().len() > 0 {
        return None;
    }
    let (mut groups, mut resources) = (rule.api_groups(), rule.resources());
    if groups.len() != 1 || resources.len() != 1 {
        return None;
    }
    Some((
        groups.next()?,
        resources.next()?,
        rule.resource_names().next(),
    ))
}

/// Upstream's `ConfirmNoEscalation`: whether `user`'s rules in `namespace` (the request's;
/// empty for cluster-scoped objects) cover `rules`. The error lists the missing rules,
/// compacted, sorted and rendered as upstream's `CompactString`, then any errors met
/// resolving the user's own rules.
pub fn confirm_no_escalation(
    resolver: &DefaultRuleResolver,
    user: &UserInfo,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), String> {
    let (owner_rules, resolution_error) = resolver.policy_rules_for(user, namespace);
    let (covered, missing) = covers(&owner_rules, rules);
    if covered {
        return Ok(());
    }
    let missing: BTreeSet<String> = compact_rules(&missing)
        .iter()
        .map(PolicyRule::compact_string)
        .collect();
    let mut msg = format!(
        "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        quote(&user.name),
        quote_list(user.groups.iter().map(String::as_str)),
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
    if let Some(e) = resolution_error {
        // Upstream prints its `[]error` of one aggregate with `%v`.
        msg.push_str(&format!("; resolution errors: [{e}]"));
    }
    Err(msg)
}

/// The rules that upstream requires to set a ClusterRole's `aggregationRule`
/// (`fullAuthority`: everything on every resource and every non-resource URL).
pub fn full_authority() -> Vec<PolicyRule> {
    let all = [ALL];
    let none: [&str; 0] = [];
    vec![
        PolicyRule::new(&all, &all, &all, &none, &none),
        PolicyRule::new(&all, &none, &none, &none, &all),
    ]
}

/// What upstream's ClusterRole storage reports (in a Forbidden error) when a user without
/// [`full_authority`] sets or changes an `aggregationRule`.
pub const AGGREGATION_RULE_FORBIDDEN: &str =
    "must have cluster-admin privileges to use the aggregationRule";

/// Upstream's `hasAggregationRule`: an `aggregationRule` with at least one selector.
pub fn has_aggregation_rule(cluster_role: &Value) -> bool {
    cluster_role
        .pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
        .is_some_and(|s| !s.is_empty())
}

/// Upstream's `EscalationAllowed`: members of `system:masters` may escalate.
pub fn escalation_allowed(user: &UserInfo) -> bool {
    user.groups.iter().any(|g| g == SYSTEM_PRIVILEGED_GROUP)
}

async fn allowed(a: &dyn Authorizer, attrs: &Attributes, what: &str) -> bool {
    match a.authorize(attrs).await {
        Ok((decision, _)) => decision == Decision::Allow,
        Err(e) => {
            tracing::warn!(user = %attrs.user.name, error = %e, "error authorizing user to {what}");
            false
        }
    }
}

/// Upstream's `RoleEscalationAuthorized`: whether the user of `request` (the attributes
/// of the request that writes a Role or ClusterRole) may `escalate` that role.
pub async fn role_escalation_authorized(request: &Attributes, a: &dyn Authorizer) -> bool {
    if !request.is_resource_request
        || request.api_group != GROUP_NAME
        || !matches!(request.resource.as_str(), "roles" | "clusterroles")
    {
        return false;
    }
    let attrs = Attributes {
        user: request.user.clone(),
        verb: "escalate".to_owned(),
        is_resource_request: true,
        namespace: request.namespace.clone(),
        api_group: request.api_group.clone(),
        api_version: "*".to_owned(),
        resource: request.resource.clone(),
        name: request.name.clone(),
        ..Attributes::default()
    };
    allowed(a, &attrs, "escalate").await
}

/// Upstream's `BindingAuthorized`: whether `user` may `bind` the role `role_ref` names, in
/// `binding_namespace` (empty for a ClusterRoleBinding).
pub async fn binding_authorized(
    user: &UserInfo,
    role_ref: &RoleRef,
    binding_namespace: &str,
    a: &dyn Authorizer,
) -> bool {
    let resource = match role_ref.kind.as_str() {
        "ClusterRole" => "clusterroles",
        "Role" => "roles",
        _ => return false,
    };
    let attrs = Attributes {
        user: user.clone(),
        verb: "bind".to_owned(),
        is_resource_request: true,
        namespace: binding_namespace.to_owned(),
        api_group: role_ref.api_group.clone(),
        api_version: "*".to_owned(),
        resource: resource.to_owned(),
        name: role_ref.name.clone(),
        ..Attributes::default()
    };
    allowed(a, &attrs, "bind").await
}

#[cfg(test)]
#[path = "escalation_tests.rs"]
mod tests;
