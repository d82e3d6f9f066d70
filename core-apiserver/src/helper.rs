//! Upstream's `pkg/apis/core/helper` and the resource-name checks of
//! `pkg/apis/core/validation`, shared by the kinds that name compute resources
//! (ResourceQuota, LimitRange, and the Pod's containers once they are served).

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::{is_qualified_name, parse_ip_sloppy};
use std::net::IpAddr;

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

pub use kas_apimachinery::validation::unmapped;

/// Upstream `ValidateNonSpecialIP`: no unspecified, loopback, link-local or link-local
/// multicast address, as Go's `net.IP` methods classify them.
pub fn validate_non_special_ip(value: &str, path: &Path) -> Vec<field::Error> {
    let Some(ip) = parse_ip_sloppy(value) else {
        return vec![field::invalid(path, value, "must be a valid IP address")];
    };
    let (unspecified, loopback, link_local, link_local_multicast) = match unmapped(ip) {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            (
                v4.is_unspecified(),
                o[0] == 127,
                o[0] == 169 && o[1] == 254,
                o[0] == 224 && o[1] == 0 && o[2] == 0,
            )
        }
        IpAddr::V6(v6) => {
            let o = v6.octets();
            (
                v6.is_unspecified(),
                v6.is_loopback(),
                o[0] == 0xfe && o[1] & 0xc0 == 0x80,
                o[0] == 0xff && o[1] & 0x0f == 0x02,
            )
        }
    };
    let mut errs = Vec::new();
    if unspecified {
        let msg = format!("may not be unspecified ({value})");
        errs.push(field::invalid(path, value, &msg));
    }
    if loopback {
        errs.push(field::invalid(
            path,
            value,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    if link_local {
        errs.push(field::invalid(
            path,
            value,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    if link_local_multicast {
        errs.push(field::invalid(
            path,
            value,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
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
