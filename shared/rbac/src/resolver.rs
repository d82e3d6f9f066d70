//! Upstream's `DefaultRuleResolver` (`pkg/registry/rbac/validation/rule.go`): the rules a
//! user holds in a namespace, from the bindings that name them.
//!
//! Upstream visits the bindings in its lister's order, which is Go map order; here the
//! bindings of each kind come in name order, so the binding named in an "allowed by"
//! reason is deterministic.

use std::fmt;
use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::validation::field::aggregate_strings;
use kas_auth::UserInfo;
use kas_auth::authorization::{RuleResolver, RulesInfo};

use crate::index::objects::{Binding, RoleKind, Subject, SubjectKind};
use crate::index::{Index, RoleRef, SERVICE_ACCOUNT_USERNAME_PREFIX, View};
use crate::rules::PolicyRule;

/// Where a rule came from, rendered as upstream's `clusterRoleBindingDescriber` and
/// `roleBindingDescriber` (`ClusterRoleBinding "x" of ClusterRole "y" to User "z"`).
pub struct RuleSource<'a> {
    binding: &'a Binding,
    subject: &'a Subject,
}

impl fmt::Display for RuleSource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.binding;
        if b.namespace.is_empty() {
            write!(f, "ClusterRoleBinding {}", quote(&b.name))?;
        } else {
            write!(
                f,
                "RoleBinding {}",
                quote(&format!("{}/{}", b.name, b.namespace))
            )?;
        }
        write!(
            f,
            " of {} {} to {}",
            b.role_kind.as_str(),
            quote(&b.role_name),
            describe_subject(self.subject, &b.namespace)
        )
    }
}

/// Upstream's `describeSubject`.
fn describe_subject(s: &Subject, binding_namespace: &str) -> String {
    let kind = s.kind.as_str();
    match s.kind {
        SubjectKind::ServiceAccount => {
            let ns = if s.namespace.is_empty() {
                binding_namespace
            } else {
                &s.namespace
            };
            format!("{kind} {}", quote(&format!("{}/{ns}", s.name)))
        }
        _ => format!("{kind} {}", quote(&s.name)),
    }
}

/// What a visitor of [`DefaultRuleResolver::visit_rules_for`] is shown.
pub enum Visit<'a> {
    /// A rule the user holds, and where it came from.
    Rule(&'a RuleSource<'a>, &'a PolicyRule),
    /// A binding whose role could not be resolved, as upstream words it.
    Error(String),
}

/// Upstream's `DefaultRuleResolver` over the index.
#[derive(Clone)]
pub struct DefaultRuleResolver {
    index: Arc<Index>,
}

impl DefaultRuleResolver {
    pub fn new(index: Arc<Index>) -> Self {
        DefaultRuleResolver { index }
    }

    pub fn index(&self) -> &Arc<Index> {
        &self.index
    }

    /// Upstream's `VisitRulesFor`: the rules of the ClusterRoleBindings that apply to
    /// `user`, then (with a namespace) those of the namespace's RoleBindings, each error
    /// in its place; stops when `visitor` returns false.
    pub fn visit_rules_for(
        &self,
        user: &UserInfo,
        namespace: &str,
        visitor: &mut dyn FnMut(Visit<'_>) -> bool,
    ) {
        let view = self.index.view();
        if !visit_bindings(&view, &view.cluster_role_bindings, user, "", visitor) {
            return;
        }
        if !namespace.is_empty() {
            visit_bindings(&view, &view.role_bindings, user, namespace, visitor);
        }
    }

    /// Upstream's `RulesFor`: every rule `user` holds in `namespace`, and the aggregated
    /// resolution errors (`utilerrors.NewAggregate(...).Error()`), if any. The rules are
    /// still valid when there are errors: rules only ever allow.
    pub fn policy_rules_for(
        &self,
        user: &UserInfo,
        namespace: &str,
    ) -> (Vec<PolicyRule>, Option<String>) {
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        self.visit_rules_for(user, namespace, &mut |visit| {
            match visit {
                Visit::Rule(_, rule) => rules.push(rule.clone()),
                Visit::Error(e) => errors.push(e),
            }
            true
        });
        (rules, aggregate_strings(errors))
    }

    /// Upstream's `GetRoleReferenceRules`: the rules of the role a binding in
    /// `namespace` (empty for a ClusterRoleBinding) references.
    pub fn rules_for_role_ref(
        &self,
        namespace: &str,
        role_ref: &RoleRef,
    ) -> Result<Vec<PolicyRule>, String> {
        let view = self.index.view();
        role_ref_rules(
            &view,
            &RoleKind::new(&role_ref.kind),
            &role_ref.name,
            namespace,
        )
        .map(<[PolicyRule]>::to_vec)
    }

    /// The rules as upstream's `RBACAuthorizer.RulesFor` reports them to
    /// `SelfSubjectRulesReview`: never incomplete, with the resolution errors as the
    /// evaluation error.
    pub fn rules_info(&self, user: &UserInfo, namespace: &str) -> RulesInfo {
        let (rules, error) = self.policy_rules_for(user, namespace);
        RulesInfo {
            resource_rules: rules
                .iter()
                .filter_map(PolicyRule::resource_rule_info)
                .collect(),
            non_resource_rules: rules
                .iter()
                .filter_map(PolicyRule::non_resource_rule_info)
                .collect(),
            incomplete: false,
            evaluation_error: error.unwrap_or_default(),
        }
    }
}

impl RuleResolver for DefaultRuleResolver {
    fn rules_for<'a>(&'a self, user: &'a UserInfo, namespace: &'a str) -> BoxFuture<'a, RulesInfo> {
        futures_util::future::ready(self.rules_info(user, namespace)).boxed()
    }
}

/// The bindings of one kind in `namespace` that apply to `user`; false if the visitor
/// stopped.
fn visit_bindings(
    view: &View<'_>,
    bindings: &crate::index::Bindings,
    user: &UserInfo,
    namespace: &str,
    visitor: &mut dyn FnMut(Visit<'_>) -> bool,
) -> bool {
    for binding in bindings.candidates(namespace, user) {
        let Some(subject) = applies_to(user, &binding.subjects, namespace) else {
            continue;
        };
        match role_ref_rules(view, &binding.role_kind, &binding.role_name, namespace) {
            Err(e) => {
                if !visitor(Visit::Error(e)) {
                    return false;
                }
            }
            Ok(rules) => {
                let source = RuleSource { binding, subject };
                for rule in rules {
                    if !visitor(Visit::Rule(&source, rule)) {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// Upstream's `GetRoleReferenceRules` with its listers' NotFound messages.
fn role_ref_rules<'v>(
    view: &'v View<'_>,
    kind: &RoleKind,
    name: &str,
    binding_namespace: &str,
) -> Result<&'v [PolicyRule], String> {
    let not_found = |resource: &str| {
        format!(
            "{resource}.rbac.authorization.k8s.io {} not found",
            quote(name)
        )
    };
    match kind {
        RoleKind::Role => view
            .role(binding_namespace, name)
            .ok_or_else(|| not_found("role")),
        RoleKind::ClusterRole => view
            .cluster_role(name)
            .ok_or_else(|| not_found("clusterrole")),
        RoleKind::Other(k) => Err(format!("unsupported role reference kind: {}", quote(k))),
    }
}

/// Upstream's `appliesTo`: the first subject that applies to `user`.
fn applies_to<'s>(
    user: &UserInfo,
    subjects: &'s [Subject],
    namespace: &str,
) -> Option<&'s Subject> {
    subjects
        .iter()
        .find(|s| applies_to_user(user, s, namespace))
}

/// Upstream's `appliesToUser`.
fn applies_to_user(user: &UserInfo, subject: &Subject, namespace: &str) -> bool {
    match subject.kind {
        SubjectKind::User => user.name == *subject.name,
        SubjectKind::Group => user.groups.iter().any(|g| *g == *subject.name),
        SubjectKind::ServiceAccount => {
            let ns = if subject.namespace.is_empty() {
                namespace
            } else {
                &subject.namespace
            };
            !ns.is_empty() && matches_username(ns, &subject.name, &user.name)
        }
        SubjectKind::Other => false,
    }
}

/// Upstream's `serviceaccount.MatchesUsername`.
fn matches_username(namespace: &str, name: &str, username: &str) -> bool {
    username
        .strip_prefix(SERVICE_ACCOUNT_USERNAME_PREFIX)
        .and_then(|rest| rest.strip_prefix(namespace))
        .and_then(|rest| rest.strip_prefix(':'))
        == Some(name)
}

#[cfg(test)]
#[path = "resolver_tests.rs"]
mod tests;
