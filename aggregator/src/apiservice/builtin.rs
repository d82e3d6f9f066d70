//! The priorities of the built-in group versions, upstream's `apiVersionPriorities` of
//! Kubernetes 1.33: `DefaultGenericAPIServicePriorities` (pkg/controlplane/apiserver/
//! aggregator.go) merged with kube-apiserver's own map (cmd/kube-apiserver/app/
//! aggregator.go), whose entries win (`resource.k8s.io/v1alpha3` is 16200/1, not the
//! generic 15900/9). Upstream keeps them as a Go map literal that no crate carries, so they
//! are one table here. A group version missing from it gets no APIService, as upstream's
//! `makeAPIService` skips it ("it could result in a CRD group version being permanently
//! stuck in the APIServices list").

/// `(group, version, groupPriorityMinimum, versionPriority)`.
pub const PRIORITIES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("events.k8s.io", "v1beta1", 17750, 5),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authentication.k8s.io", "v1beta1", 17700, 9),
    ("authentication.k8s.io", "v1alpha1", 17700, 1),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v1", 17500, 15),
    ("autoscaling", "v2", 17500, 30),
    ("autoscaling", "v2beta1", 17500, 9),
    ("autoscaling", "v2beta2", 17500, 1),
    ("batch", "v1", 17400, 15),
    ("batch", "v1beta1", 17400, 9),
    ("batch", "v2alpha1", 17400, 9),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("certificates.k8s.io", "v1beta1", 17300, 9),
    ("certificates.k8s.io", "v1alpha1", 17300, 1),
    ("networking.k8s.io", "v1", 17200, 15),
    ("networking.k8s.io", "v1beta1", 17200, 9),
    ("networking.k8s.io", "v1alpha1", 17200, 1),
    ("policy", "v1", 17100, 15),
    ("policy", "v1beta1", 17100, 9),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("storage.k8s.io", "v1beta1", 16800, 9),
    ("storage.k8s.io", "v1alpha1", 16800, 1),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1beta1", 16700, 12),
    ("admissionregistration.k8s.io", "v1alpha1", 16700, 9),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("coordination.k8s.io", "v1beta1", 16500, 13),
    ("coordination.k8s.io", "v1alpha2", 16500, 12),
    ("node.k8s.io", "v1", 16300, 15),
    ("node.k8s.io", "v1alpha1", 16300, 1),
    ("node.k8s.io", "v1beta1", 16300, 9),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("discovery.k8s.io", "v1beta1", 16200, 12),
    ("resource.k8s.io", "v1beta2", 16200, 15),
    ("resource.k8s.io", "v1beta1", 16200, 9),
    ("resource.k8s.io", "v1alpha3", 16200, 1),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
    ("flowcontrol.apiserver.k8s.io", "v1beta3", 16100, 18),
    ("flowcontrol.apiserver.k8s.io", "v1beta2", 16100, 15),
    ("flowcontrol.apiserver.k8s.io", "v1beta1", 16100, 12),
    ("flowcontrol.apiserver.k8s.io", "v1alpha1", 16100, 9),
    ("internal.apiserver.k8s.io", "v1alpha1", 16000, 9),
    ("storagemigration.k8s.io", "v1alpha1", 15800, 9),
];

/// Upstream's priorities of a built-in group version: `(groupPriorityMinimum,
/// versionPriority)`.
pub fn priority(group: &str, version: &str) -> Option<(i64, i64)> {
    PRIORITIES
        .iter()
        .find(|(g, v, _, _)| *g == group && *v == version)
        .map(|&(_, _, g, v)| (g, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_apiservers_entries_win_and_each_group_version_appears_once() {
        assert_eq!(priority("resource.k8s.io", "v1alpha3"), Some((16200, 1)));
        assert_eq!(priority("", "v1"), Some((18000, 1)));
        assert_eq!(priority("apiregistration.k8s.io", "v1"), None);
        let mut seen = std::collections::BTreeSet::new();
        for (g, v, _, _) in PRIORITIES {
            assert!(seen.insert((g, v)), "{g}/{v} twice");
        }
    }
}
