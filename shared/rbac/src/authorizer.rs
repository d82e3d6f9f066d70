//! Upstream's `RBACAuthorizer` (`plugin/pkg/auth/authorizer/rbac/rbac.go`).

use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::validation::field::aggregate_strings;
use kas_auth::UserInfo;
use kas_auth::authorization::{Attributes, Authorizer, Decision, RuleResolver, RulesInfo};

use crate::index::Index;
use crate::resolver::{DefaultRuleResolver, Visit};
use crate::rules::{quote_list, rule_allows};

/// Allows what a rule of the user's bindings allows; otherwise has no opinion.
#[derive(Clone)]
pub struct RbacAuthorizer {
    resolver: DefaultRuleResolver,
}

impl RbacAuthorizer {
    pub fn new(index: Arc<Index>) -> Self {
        RbacAuthorizer {
            resolver: DefaultRuleResolver::new(index),
        }
    }

    pub fn resolver(&self) -> &DefaultRuleResolver {
        &self.resolver
    }

    /// The decision and reason of upstream's `Authorize`: Allow with `RBAC: allowed by
    /// <source>` at the first rule that allows, else NoOpinion with `""`, or `RBAC: ` and
    /// the aggregated resolution errors when some binding's role could not be found.
    pub fn decide(&self, attrs: &Attributes) -> (Decision, String) {
        let mut allowed_by = None;
        let mut errors = Vec::new();
        self.resolver
            .visit_rules_for(&attrs.user, &attrs.namespace, &mut |visit| match visit {
                Visit::Rule(source, rule) if rule_allows(attrs, rule) => {
                    allowed_by = Some(source.to_string());
                    false
                }
                Visit::Rule(..) => true,
                Visit::Error(e) => {
                    errors.push(e);
                    true
                }
            });
        if let Some(source) = allowed_by {
            return (Decision::Allow, format!("RBAC: allowed by {source}"));
        }
        if tracing::enabled!(tracing::Level::DEBUG) {
            tracing::debug!("{}", denial(attrs));
        }
        let reason = aggregate_strings(errors).map_or_else(String::new, |e| format!("RBAC: {e}"));
        (Decision::NoOpinion, reason)
    }
}

/// Upstream's log line for a denial (its klog V(5)).
fn denial(attrs: &Attributes) -> String {
    let operation = if attrs.is_resource_request {
        let mut resource = attrs.resource.clone();
        if !attrs.api_group.is_empty() {
            resource = format!("{resource}.{}", attrs.api_group);
        }
        if !attrs.subresource.is_empty() {
            resource = format!("{resource}/{}", attrs.subresource);
        }
        let mut op = format!("\"{}\" resource \"{resource}\"", attrs.verb);
        if !attrs.name.is_empty() {
            op = format!("{op} named \"{}\"", attrs.name);
        }
        op
    } else {
        format!(
            "{} nonResourceURL {}",
            quote(&attrs.verb),
            quote(&attrs.path)
        )
    };
    let scope = if attrs.namespace.is_empty() {
        "cluster-wide".to_owned()
    } else {
        format!("in namespace {}", quote(&attrs.namespace))
    };
    format!(
        "RBAC: no rules authorize user {} with groups {} to {operation} {scope}",
        quote(&attrs.user.name),
        quote_list(attrs.user.groups.iter().map(String::as_str))
    )
}

impl Authorizer for RbacAuthorizer {
    fn authorize<'a>(
        &'a self,
        attrs: &'a Attributes,
    ) -> BoxFuture<'a, kas_auth::Result<(Decision, String)>> {
        futures_util::future::ready(Ok(self.decide(attrs))).boxed()
    }
}

impl RuleResolver for RbacAuthorizer {
    fn rules_for<'a>(&'a self, user: &'a UserInfo, namespace: &'a str) -> BoxFuture<'a, RulesInfo> {
        RuleResolver::rules_for(&self.resolver, user, namespace)
    }
}

#[cfg(test)]
#[path = "authorizer_tests.rs"]
mod tests;
