//! Upstream's `KubernetesAPIApprovalConformantConditionController`: a CRD of a protected
//! group (`*.k8s.io`, `*.kubernetes.io`) says in `KubernetesAPIApprovalPolicyConformant`
//! whether its `api-approved.kubernetes.io` annotation approves it. The group is
//! immutable, so a CRD outside those groups never gets the condition.

use kas_apiextensions::validation::{
    ApiApprovalState, api_approval_state, is_protected_community_group,
};
use serde_json::Value;

use crate::crd::conditions::{self, Condition};

/// The CRD with its approval condition when it changes.
pub fn sync(crd: &Value) -> Option<Value> {
    let group = crd.pointer("/spec/group").and_then(Value::as_str)?;
    if !is_protected_community_group(group) {
        return None;
    }
    let (state, message) = api_approval_state(&kas_registry::meta::string_map(crd, "annotations"));
    let (status, reason) = match state {
        ApiApprovalState::Invalid => ("False", "InvalidAnnotation"),
        ApiApprovalState::Missing => ("False", "MissingAnnotation"),
        ApiApprovalState::Approved => ("True", "ApprovedAnnotation"),
        ApiApprovalState::Bypassed => ("False", "UnapprovedAnnotation"),
    };
    let old = conditions::find(crd, conditions::KUBERNETES_API_APPROVAL_POLICY_CONFORMANT);
    let same = old.is_some_and(|c| {
        c["status"] == status && c["reason"] == reason && c["message"] == message.as_str()
    });
    if same {
        return None;
    }
    let mut updated = crd.clone();
    conditions::set(
        &mut updated,
        Condition::new(
            conditions::KUBERNETES_API_APPROVAL_POLICY_CONFORMANT,
            status,
            reason,
            &message,
        ),
    );
    Some(updated)
}
