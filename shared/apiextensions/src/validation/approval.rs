//! The API-approval policy for protected groups, after upstream's `pkg/apihelpers`
//! (`IsProtectedCommunityGroup`, `GetAPIApprovalState`) and `validateAPIApproval`.

use std::collections::BTreeMap;

use kas_apimachinery::validation::field::{self, Error, Path};
use serde_json::Value;

use super::util::{map_of, obj};

/// Upstream `KubeAPIApprovedAnnotation`.
pub const KUBE_API_APPROVED_ANNOTATION: &str = "api-approved.kubernetes.io";

/// Upstream `APIApprovalState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiApprovalState {
    /// The annotation has an unexpected value.
    Invalid,
    /// The annotation is a URL.
    Approved,
    /// The annotation starts with `unapproved`.
    Bypassed,
    /// The annotation is empty or absent.
    Missing,
}

/// Upstream `IsProtectedCommunityGroup`: `k8s.io`, `kubernetes.io` and their subdomains.
pub fn is_protected_community_group(group: &str) -> bool {
    group == "k8s.io"
        || group.ends_with(".k8s.io")
        || group == "kubernetes.io"
        || group.ends_with(".kubernetes.io")
}

/// Go's `url.ParseRequestURI(s)` succeeding with a scheme and a host.
fn is_request_uri_with_host(s: &str) -> bool {
    if s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    let Some(after) = rest.strip_prefix("//") else {
        return false;
    };
    let authority = after.split(['/', '?']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    scheme_ok && !host.is_empty() && !host.contains(' ')
}

/// Upstream `GetAPIApprovalState`: the state and its reason.
pub fn api_approval_state(annotations: &BTreeMap<String, String>) -> (ApiApprovalState, String) {
    let a = annotations
        .get(KUBE_API_APPROVED_ANNOTATION)
        .map_or("", String::as_str);
    let quoted = kas_apimachinery::golang::strconv::quote(KUBE_API_APPROVED_ANNOTATION);
    if a.is_empty() {
        let reason = format!(
            "protected groups must have approval annotation {quoted}, see https://github.com/kubernetes/enhancements/pull/1111"
        );
        return (ApiApprovalState::Missing, reason);
    }
    if a.starts_with("unapproved") {
        let reason = format!(
            "not approved: {}",
            kas_apimachinery::golang::strconv::quote(a)
        );
        return (ApiApprovalState::Bypassed, reason);
    }
    if is_request_uri_with_host(a) {
        return (ApiApprovalState::Approved, format!("approved in {a}"));
    }
    let reason = format!(
        "protected groups must have approval annotation {quoted} with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"
    );
    (ApiApprovalState::Invalid, reason)
}

fn annotations(crd: &Value) -> BTreeMap<String, String> {
    obj(crd, "metadata")
        .and_then(|m| map_of(m, "annotations"))
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// Upstream `validateAPIApproval`.
pub fn validate_api_approval(crd: &Value, old: Option<&Value>, group: &str) -> Vec<Error> {
    if !is_protected_community_group(group) {
        return Vec::new();
    }
    let new_annotations = annotations(crd);
    let (state, reason) = api_approval_state(&new_annotations);
    if old.is_some_and(|o| api_approval_state(&annotations(o)).0 == state) {
        return Vec::new();
    }
    let path = Path::new("metadata")
        .child("annotations")
        .key(KUBE_API_APPROVED_ANNOTATION);
    let value = new_annotations
        .get(KUBE_API_APPROVED_ANNOTATION)
        .cloned()
        .unwrap_or_default();
    match state {
        ApiApprovalState::Approved | ApiApprovalState::Bypassed => Vec::new(),
        ApiApprovalState::Missing => vec![field::required(&path, &reason)],
        ApiApprovalState::Invalid => vec![field::invalid(&path, value, &reason)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state(a: &str) -> ApiApprovalState {
        let m = BTreeMap::from([(KUBE_API_APPROVED_ANNOTATION.to_owned(), a.to_owned())]);
        api_approval_state(&m).0
    }

    #[test]
    fn states() {
        assert!(is_protected_community_group("apps.k8s.io"));
        assert!(is_protected_community_group("kubernetes.io"));
        assert!(!is_protected_community_group("k8s.io.example.com"));
        assert_eq!(state(""), ApiApprovalState::Missing);
        assert_eq!(state("unapproved, testing"), ApiApprovalState::Bypassed);
        assert_eq!(
            state("https://github.com/kubernetes/kubernetes/pull/78458"),
            ApiApprovalState::Approved
        );
        assert_eq!(state("yes"), ApiApprovalState::Invalid);
        assert_eq!(state("https:///nohost"), ApiApprovalState::Invalid);
    }

    #[test]
    fn validation_messages() {
        let crd = json!({"metadata": {"annotations": {}}});
        let errs: Vec<String> = validate_api_approval(&crd, None, "sigs.k8s.io")
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            vec![
                r#"metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111"#
            ]
        );
        // An unchanged state is never rejected on update.
        assert!(validate_api_approval(&crd, Some(&crd), "sigs.k8s.io").is_empty());
        let bad = json!({"metadata": {"annotations": {"api-approved.kubernetes.io": "no"}}});
        let errs = validate_api_approval(&bad, None, "k8s.io");
        assert_eq!(
            errs[0].to_string(),
            r#"metadata.annotations[api-approved.kubernetes.io]: Invalid value: "no": protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111"#
        );
        assert!(validate_api_approval(&bad, None, "example.com").is_empty());
    }
}
