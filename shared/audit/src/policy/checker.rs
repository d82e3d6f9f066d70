//! Upstream's `policyRuleEvaluator` (`audit/policy/checker.go`): the level, omitted stages
//! and managed-fields choice of a request, from the first rule it matches.
//!
//! Runs on every request, so the rules are settled once (levels and stages parsed, each
//! rule's stages joined with the policy's, its managed-fields choice resolved) and matching
//! borrows from the request without building strings.

use kas_auth::authorization::Attributes;

use super::types::{GroupResources, Policy, PolicyRule};
use crate::context::RequestAuditConfig;
use crate::event::{Level, Stage};

/// Upstream's `DefaultAuditLevel`: the level of a request no rule matches.
pub const DEFAULT_AUDIT_LEVEL: Level = Level::None;

/// Upstream's `NewPolicyRuleEvaluator`'s evaluator.
#[derive(Clone, Debug)]
pub struct PolicyRuleEvaluator {
    rules: Vec<Rule>,
    omit_stages: Vec<Stage>,
    omit_managed_fields: bool,
}

/// A rule as evaluation needs it.
#[derive(Clone, Debug)]
struct Rule {
    level: Level,
    users: Vec<String>,
    user_groups: Vec<String>,
    verbs: Vec<String>,
    resources: Vec<GroupResources>,
    namespaces: Vec<String>,
    non_resource_urls: Vec<String>,
    /// The rule's stages and the policy's (upstream's `unionStages`).
    omit_stages: Vec<Stage>,
    /// The rule's choice, else the policy's (upstream's `isOmitManagedFields`).
    omit_managed_fields: bool,
}

impl PolicyRuleEvaluator {
    /// Upstream's `NewPolicyRuleEvaluator`. The policy should have passed
    /// [`validate_policy`](super::validate_policy): a level this crate does not know is
    /// taken as None, a stage it does not know is dropped.
    pub fn new(policy: &Policy) -> PolicyRuleEvaluator {
        let policy_stages = parse_stages(&policy.omit_stages);
        let rules = policy
            .rules
            .iter()
            .map(|rule| Rule::new(rule, &policy_stages, policy.omit_managed_fields))
            .collect();
        PolicyRuleEvaluator {
            rules,
            omit_stages: union_stages(&policy_stages, &[]),
            omit_managed_fields: policy.omit_managed_fields,
        }
    }

    /// Upstream's `NewFakePolicyRuleEvaluator`: every request at `level`, omitting
    /// `omit_stages` (for tests).
    pub fn new_fake(level: Level, omit_stages: Vec<Stage>) -> PolicyRuleEvaluator {
        let rule = Rule {
            level,
            users: Vec::new(),
            user_groups: Vec::new(),
            verbs: Vec::new(),
            resources: Vec::new(),
            namespaces: Vec::new(),
            non_resource_urls: Vec::new(),
            omit_stages,
            omit_managed_fields: false,
        };
        PolicyRuleEvaluator {
            rules: vec![rule],
            omit_stages: Vec::new(),
            omit_managed_fields: false,
        }
    }

    /// Upstream's `EvaluatePolicyRule`: the first matching rule's level, stages and
    /// managed-fields choice; [`DEFAULT_AUDIT_LEVEL`] and the policy's when none matches.
    pub fn evaluate_policy_rule(&self, attrs: &Attributes) -> RequestAuditConfig {
        match self.rules.iter().find(|rule| rule.matches(attrs)) {
            Some(rule) => RequestAuditConfig {
                level: rule.level,
                omit_stages: rule.omit_stages.clone(),
                omit_managed_fields: rule.omit_managed_fields,
            },
            None => RequestAuditConfig {
                level: DEFAULT_AUDIT_LEVEL,
                omit_stages: self.omit_stages.clone(),
                omit_managed_fields: self.omit_managed_fields,
            },
        }
    }
}

impl Rule {
    fn new(rule: &PolicyRule, policy_stages: &[Stage], policy_omit_managed_fields: bool) -> Rule {
        Rule {
            level: Level::parse(&rule.level).unwrap_or(Level::None),
            users: rule.users.clone(),
            user_groups: rule.user_groups.clone(),
            verbs: rule.verbs.clone(),
            resources: rule.resources.clone(),
            namespaces: rule.namespaces.clone(),
            non_resource_urls: rule.non_resource_urls.clone(),
            omit_stages: union_stages(policy_stages, &parse_stages(&rule.omit_stages)),
            omit_managed_fields: rule
                .omit_managed_fields
                .unwrap_or(policy_omit_managed_fields),
        }
    }

    /// Upstream's `ruleMatches`.
    fn matches(&self, attrs: &Attributes) -> bool {
        if !self.users.is_empty() && !has_string(&self.users, &attrs.user.name) {
            return false;
        }
        if !self.user_groups.is_empty()
            && !attrs
                .user
                .groups
                .iter()
                .any(|g| has_string(&self.user_groups, g))
        {
            return false;
        }
        if !self.verbs.is_empty() && !has_string(&self.verbs, &attrs.verb) {
            return false;
        }
        if !self.namespaces.is_empty() || !self.resources.is_empty() {
            return self.matches_resource(attrs);
        }
        if !self.non_resource_urls.is_empty() {
            return self.matches_non_resource(attrs);
        }
        true
    }

    /// Upstream's `ruleMatchesNonResource`.
    fn matches_non_resource(&self, attrs: &Attributes) -> bool {
        !attrs.is_resource_request
            && self
                .non_resource_urls
                .iter()
                .any(|spec| path_matches(&attrs.path, spec))
    }

    /// Upstream's `ruleMatchesResource`.
    fn matches_resource(&self, attrs: &Attributes) -> bool {
        if !attrs.is_resource_request {
            return false;
        }
        // Non-namespaced resources have the empty namespace.
        if !self.namespaces.is_empty() && !has_string(&self.namespaces, &attrs.namespace) {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        self.resources
            .iter()
            .filter(|gr| gr.group == attrs.api_group)
            .any(|gr| {
                if gr.resources.is_empty() {
                    return true;
                }
                let named =
                    gr.resource_names.is_empty() || has_string(&gr.resource_names, &attrs.name);
                named
                    && gr
                        .resources
                        .iter()
                        .any(|spec| resource_matches(spec, &attrs.resource, &attrs.subresource))
            })
    }
}

/// Whether a rule's `resources` entry names the request's resource: `pods`, `pods/log`,
/// `*`, `*/log` (a subresource of any resource) or `pods/*` (pods and any subresource).
fn resource_matches(spec: &str, resource: &str, subresource: &str) -> bool {
    spec == "*"
        || is_combined_resource(spec, resource, subresource)
        || (!subresource.is_empty() && spec.strip_prefix("*/") == Some(subresource))
        || spec.strip_suffix("/*") == Some(resource)
}

/// `spec == resource + "/" + subresource` (or `resource` without a subresource), without
/// building the string.
fn is_combined_resource(spec: &str, resource: &str, subresource: &str) -> bool {
    if subresource.is_empty() {
        return spec == resource;
    }
    spec.strip_prefix(resource)
        .and_then(|rest| rest.strip_prefix('/'))
        == Some(subresource)
}

/// Upstream's `pathMatches`: `*`, the path itself, or a prefix ending in `*`.
fn path_matches(path: &str, spec: &str) -> bool {
    spec == "*"
        || spec == path
        || (spec.ends_with('*') && path.starts_with(spec.trim_end_matches('*')))
}

fn has_string(list: &[String], value: &str) -> bool {
    list.iter().any(|s| s == value)
}

fn parse_stages(stages: &[String]) -> Vec<Stage> {
    stages.iter().filter_map(|s| Stage::parse(s)).collect()
}

/// Upstream's `unionStages`, in the stages' order (upstream's order is a Go map's).
fn union_stages(a: &[Stage], b: &[Stage]) -> Vec<Stage> {
    Stage::ALL
        .into_iter()
        .filter(|s| a.contains(s) || b.contains(s))
        .collect()
}

#[cfg(test)]
#[path = "checker_tests.rs"]
mod tests;
