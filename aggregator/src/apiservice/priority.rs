//! Where built-in group versions sort in discovery: kube-apiserver 1.33's
//! `apiVersionPriorities` (`cmd/kube-apiserver/app/aggregator.go`, merged over
//! `DefaultGenericAPIServicePriorities` of `pkg/controlplane/apiserver/aggregator.go`), a Go
//! map literal that no dependency carries, so kept here as data. Autoregistration gives
//! each built-in APIService these values, and aggregated discovery orders the built-in
//! groups by them whether or not their APIServices exist yet, as upstream imbues them into
//! its discovery manager.

/// Upstream's `APIServicePriority`: `groupPriorityMinimum` and `versionPriority`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priority {
    pub group: i64,
    pub version: i64,
}

/// (group, version, groupPriorityMinimum, versionPriority).
const BUILT_IN: &[(&str, &str, i64, i64)] = &[
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

/// The priority upstream gives a built-in group version; `None` for any other (upstream
/// then registers no APIService for it).
pub fn built_in(group: &str, version: &str) -> Option<Priority> {
    BUILT_IN
        .iter()
        .find(|(g, v, _, _)| *g == group && *v == version)
        .map(|&(_, _, group, version)| Priority { group, version })
}

/// What upstream's CRD registration controller gives a custom resource's group version,
/// which its CRD discovery controller also sets in aggregated discovery.
pub const CUSTOM_RESOURCE: Priority = Priority {
    group: 1000,
    version: 100,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        assert_eq!(
            built_in("autoscaling", "v2"),
            Some(Priority {
                group: 17500,
                version: 30
            })
        );
        assert_eq!(built_in("", "v1").map(|p| p.group), Some(18000));
        assert_eq!(built_in("example.com", "v1"), None);
        // One entry per group version.
        for (i, (g, v, _, _)) in BUILT_IN.iter().enumerate() {
            assert!(
                !BUILT_IN[i + 1..]
                    .iter()
                    .any(|(g2, v2, _, _)| g == g2 && v == v2),
                "{g}/{v} twice"
            );
        }
    }
}
