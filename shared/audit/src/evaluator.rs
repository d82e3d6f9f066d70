//! Upstream's `PolicyRuleEvaluator` (`k8s.io/apiserver/pkg/audit/evaluator.go`): what the
//! audit filter asks for a request's level.

use kas_auth::authorization::Attributes;

use crate::context::RequestAuditConfig;

pub trait PolicyRuleEvaluator: Send + Sync {
    /// The audit configuration of the first rule that matches the request.
    fn evaluate_policy_rule(&self, attrs: &Attributes) -> RequestAuditConfig;
}

impl PolicyRuleEvaluator for crate::policy::PolicyRuleEvaluator {
    fn evaluate_policy_rule(&self, attrs: &Attributes) -> RequestAuditConfig {
        crate::policy::PolicyRuleEvaluator::evaluate_policy_rule(self, attrs)
    }
}
