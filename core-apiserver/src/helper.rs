//! Upstream's `pkg/apis/core/helper` and the resource-name checks of
//! `pkg/apis/core/validation`, shared by the kinds that name compute resources
//! (ResourceQuota, LimitRange, and the Pod's containers once they are served).

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::is_qualified_name;

/// Upstream `standardResources` (`IsStandardResourceName`), hugepages aside.
const STANDARD_RESOURCES: [&str; 20] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// Upstream `standardQuotaResources` (`IsStandardQuotaResourceName`), hugepages aside.
const STANDARD_QUOTA_RESOURCES: [&str; 19] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

/// Upstream `integerResources`.
const INTEGER_RESOURCES: [&str; 9] = [
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

/// Upstream `IsQuotaHugePageResourceName`.
pub fn is_quota_huge_page_resource_name(name: &str) -> bool {
    name.starts_with("hugepages-") || name.starts_with("requests.hugepages-")
}

/// Upstream `IsHugePageResourceName`.
pub fn is_huge_page_resource_name(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// Upstream `IsStandardResourceName`.
pub fn is_standard_resource_name(name: &str) -> bool {
    STANDARD_RESOURCES.contains(&name) || is_quota_huge_page_resource_name(name)
}

/// Upstream `IsStandardQuotaResourceName`.
pub fn is_standard_quota_resource_name(name: &str) -> bool {
    STANDARD_QUOTA_RESOURCES.contains(&name) || is_quota_huge_page_resource_name(name)
}

/// Upstream `IsNativeResource`: unprefixed, or under `kubernetes.io/`.
pub fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// Upstream `IsExtendedResourceName`: prefixed outside `kubernetes.io/`, not a
/// `requests.` name, and valid as one.
pub fn is_extended_resource_name(name: &str) -> bool {
    if is_native_resource(name) || name.starts_with("requests.") {
        return false;
    }
    is_qualified_name(&format!("requests.{name}")).is_empty()
}

/// Upstream `IsIntegerResourceName`.
pub fn is_integer_resource_name(name: &str) -> bool {
    INTEGER_RESOURCES.contains(&name) || is_extended_resource_name(name)
}

/// Upstream `validateResourceName`: a qualified name, and a standard one unless prefixed.
pub fn validate_resource_name(name: &str, path: &Path) -> Vec<field::Error> {
    let errs: Vec<field::Error> = is_qualified_name(name)
        .iter()
        .map(|msg| field::invalid(path, name, msg))
        .collect();
    if !errs.is_empty() {
        return errs;
    }
    if !name.contains('/') && !is_standard_resource_name(name) {
        return vec![field::invalid(
            path,
            name,
            "must be a standard resource type or fully qualified",
        )];
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extended_resources_count_in_integers() {
        assert!(is_integer_resource_name("count/deployments.apps"));
        assert!(is_integer_resource_name("example.com/gpu"));
        assert!(!is_integer_resource_name("kubernetes.io/foo"));
        assert!(!is_integer_resource_name("cpu"));
        assert!(is_standard_quota_resource_name("requests.hugepages-2Mi"));
        assert!(validate_resource_name("example.com/gpu", &Path::new("x")).is_empty());
        assert_eq!(validate_resource_name("foo", &Path::new("x")).len(), 1);
    }
}
