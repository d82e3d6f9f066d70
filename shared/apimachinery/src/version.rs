//! Upstream's `k8s.io/apimachinery/pkg/version` helpers: the priority of Kubernetes-style
//! API version names (`v2` > `v1` > `v1beta2` > `v1beta1` > `v1alpha1` > anything else, the
//! rest alphabetically), which orders a CRD's versions in discovery.

use std::cmp::Ordering;

/// GA above beta above alpha.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum VersionType {
    Alpha,
    Beta,
    Ga,
}

/// `v<major>[(alpha|beta)<minor>]`, as upstream's `parseKubeVersion`.
fn parse(v: &str) -> Option<(i64, VersionType, i64)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let major: i64 = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    if tail.is_empty() {
        return Some((major, VersionType::Ga, 0));
    }
    let (kind, minor) = if let Some(m) = tail.strip_prefix("alpha") {
        (VersionType::Alpha, m)
    } else {
        (VersionType::Beta, tail.strip_prefix("beta")?)
    };
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((major, kind, minor.parse().ok()?))
}

/// Upstream `CompareKubeAwareVersionStrings`: `Greater` when `a` has the higher priority.
pub fn compare_kube_aware(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    match (parse(a), parse(b)) {
        (None, None) => b.cmp(a),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some((a_major, a_type, a_minor)), Some((b_major, b_type, b_minor))) => a_type
            .cmp(&b_type)
            .then(a_major.cmp(&b_major))
            .then(a_minor.cmp(&b_minor)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_order() {
        // upstream's TestKubeAwareVersionStrings ordering.
        let mut versions = vec![
            "v1alpha1",
            "foo1",
            "v1",
            "v10beta2",
            "v2",
            "v1beta1",
            "v11alpha2",
            "foo10",
            "v12alpha1",
            "v3beta1",
            "v1beta2",
            "v10",
            "v11beta2",
        ];
        versions.sort_by(|a, b| compare_kube_aware(b, a));
        assert_eq!(
            versions,
            [
                "v10",
                "v2",
                "v1",
                "v11beta2",
                "v10beta2",
                "v3beta1",
                "v1beta2",
                "v1beta1",
                "v12alpha1",
                "v11alpha2",
                "v1alpha1",
                "foo1",
                "foo10"
            ]
        );
        assert_eq!(compare_kube_aware("v1", "v1"), Ordering::Equal);
    }
}
