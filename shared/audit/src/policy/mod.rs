//! The audit policy (`k8s.io/apiserver/pkg/audit/policy` and `pkg/apis/audit`): the
//! `audit.k8s.io/v1` `Policy` of `--audit-policy-file` ([`Policy`]), loaded as upstream's
//! `reader.go` loads it ([`load_policy_from_file`]), checked by `ValidatePolicy`
//! ([`validate_policy`]), and the evaluator that gives each request its audit level
//! ([`PolicyRuleEvaluator`]).

mod checker;
mod decode;
mod load;
mod types;
mod validation;

pub use checker::{DEFAULT_AUDIT_LEVEL, PolicyRuleEvaluator};
pub use load::{load_policy_from_bytes, load_policy_from_file};
pub use types::{GroupResources, Policy, PolicyRule};
pub use validation::validate_policy;

#[cfg(test)]
#[path = "load_tests.rs"]
mod load_tests;
