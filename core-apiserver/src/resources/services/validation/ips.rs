//! The cluster IP and IP family rules: upstream `ValidateServiceClusterIPsRelatedFields`,
//! `validateUpgradeDowngradeClusterIPs`, `validateUpgradeDowngradeIPFamilies`, and
//! `ValidateNonSpecialIP` (for `externalIPs`).

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::{is_valid_ip_for_legacy_field, parse_ip_sloppy};
use serde_json::Value;

use crate::podspec::validation::json::{has, opt_str, str_of};

const IP_FAMILIES: [&str; 2] = ["IPv4", "IPv6"];
const IP_FAMILY_POLICIES: [&str; 3] = ["PreferDualStack", "RequireDualStack", "SingleStack"];

/// A `[]string` field: `None` when absent or null (Go's nil slice).
fn list<'a>(spec: &'a Value, key: &str) -> Option<Vec<&'a str>> {
    spec.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|x| x.as_str().unwrap_or("")).collect())
}

fn cluster_ips(spec: &Value) -> Vec<&str> {
    list(spec, "clusterIPs").unwrap_or_default()
}

fn ip_families(spec: &Value) -> Vec<&str> {
    list(spec, "ipFamilies").unwrap_or_default()
}

/// Go's `%#v` of `spec.clusterIPs` (`[]string{...}`).
fn cluster_ips_value(spec: &Value) -> BadValue {
    BadValue::Strings(list(spec, "clusterIPs").map(|v| v.into_iter().map(str::to_owned).collect()))
}

/// Go's `%#v` of `spec.ipFamilies` (`[]core.IPFamily{...}`).
fn ip_families_value(spec: &Value) -> BadValue {
    BadValue::Raw(match list(spec, "ipFamilies") {
        None => "[]core.IPFamily(nil)".to_owned(),
        Some(v) => {
            let items: Vec<String> = v.iter().map(|f| quote(f)).collect();
            format!("[]core.IPFamily{{{}}}", items.join(", "))
        }
    })
}

/// `spec.ipFamilyPolicy` as upstream shows the `*IPFamilyPolicy`.
fn policy_value(spec: &Value) -> BadValue {
    opt_str(spec, "ipFamilyPolicy").map_or(BadValue::Null, BadValue::from)
}

/// Upstream `isHeadlessService`: `clusterIPs` is exactly `["None"]`.
pub fn is_headless(spec: &Value) -> bool {
    cluster_ips(spec) == ["None"]
}

/// `netutils.IsIPv6String`.
fn is_ipv6_string(ip: &str) -> bool {
    parse_ip_sloppy(ip).is_some_and(|ip| crate::helper::unmapped(ip).is_ipv6())
}

/// Upstream `ValidateServiceClusterIPsRelatedFields`.
pub fn validate_cluster_ips_related_fields(spec: &Value) -> Vec<field::Error> {
    // ExternalName services were checked before (all of these must be unset).
    if str_of(spec, "type") == "ExternalName" {
        return Vec::new();
    }
    let sp = Path::new("spec");
    let ips_path = sp.child("clusterIPs");
    let families_path = sp.child("ipFamilies");
    let mut errs = Vec::new();
    let ips = cluster_ips(spec);
    let families = ip_families(spec);

    // clusterIP and clusterIPs must agree.
    let cluster_ip = str_of(spec, "clusterIP");
    if !cluster_ip.is_empty() {
        match ips.first() {
            None => errs.push(field::required(&ips_path, "")),
            Some(first) if *first != cluster_ip => errs.push(field::invalid(
                &ips_path,
                cluster_ips_value(spec),
                "first value must match `clusterIP`",
            )),
            Some(_) => {}
        }
    } else if !ips.is_empty() {
        errs.push(field::invalid(
            &ips_path,
            cluster_ips_value(spec),
            "must be empty when `clusterIP` is not specified",
        ));
    }

    let mut seen: Vec<&str> = Vec::new();
    for (i, family) in families.iter().copied().enumerate() {
        if !IP_FAMILIES.contains(&family) {
            errs.push(field::not_supported(
                &families_path.index(i),
                family,
                &IP_FAMILIES,
            ));
        }
        if seen.contains(&family) {
            errs.push(field::duplicate(&families_path.index(i), family));
        }
        seen.push(family);
    }

    if has(spec, "ipFamilyPolicy") {
        let policy = opt_str(spec, "ipFamilyPolicy").unwrap_or("");
        if !IP_FAMILY_POLICIES.contains(&policy) {
            errs.push(field::not_supported(
                &sp.child("ipFamilyPolicy"),
                policy,
                &IP_FAMILY_POLICIES,
            ));
        }
    }

    let mut has_invalid_ips = false;
    for (i, ip) in ips.iter().enumerate() {
        if i == 0 && *ip == "None" {
            if ips.len() > 1 {
                has_invalid_ips = true;
                errs.push(field::invalid(
                    &ips_path,
                    cluster_ips_value(spec),
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        let ip_errs = is_valid_ip_for_legacy_field(&ips_path.index(i), ip);
        has_invalid_ips |= !ip_errs.is_empty();
        errs.extend(ip_errs);
    }

    if ips.len() > 2 {
        errs.push(field::invalid(
            &ips_path,
            cluster_ips_value(spec),
            "may only hold up to 2 values",
        ));
    }

    // Invalid IPs would skew the checks below.
    if has_invalid_ips {
        return errs;
    }

    // `netutils.IsDualStackIPStrings`.
    if ips.len() > 1 {
        let v6 = ips.iter().filter(|ip| is_ipv6_string(ip)).count();
        if v6 == 0 || v6 == ips.len() {
            errs.push(field::invalid(
                &ips_path,
                cluster_ips_value(spec),
                "may specify no more than one IP for each IP family",
            ));
        }
    }

    if !is_headless(spec) {
        for (i, (ip, family)) in ips.iter().zip(families.iter()).enumerate() {
            if *family == "IPv4" && is_ipv6_string(ip) {
                let msg = format!("expected an IPv4 value as indicated by `ipFamilies[{i}]`");
                errs.push(field::invalid(&ips_path.index(i), *ip, &msg));
            }
            if *family == "IPv6" && !is_ipv6_string(ip) {
                let msg = format!("expected an IPv6 value as indicated by `ipFamilies[{i}]`");
                errs.push(field::invalid(&ips_path.index(i), *ip, &msg));
            }
        }
    }
    errs
}

/// Upstream `validateUpgradeDowngradeClusterIPs`: the primary cluster IP may not change,
/// and releasing the secondary one needs policy SingleStack.
pub fn validate_upgrade_downgrade_cluster_ips(old: &Value, new: &Value) -> Vec<field::Error> {
    if str_of(new, "type") == "ExternalName" || str_of(old, "type") == "ExternalName" {
        return Vec::new();
    }
    if is_headless(old) && is_headless(new) {
        return Vec::new();
    }
    let ips_path = Path::new("spec").child("clusterIPs");
    let (old_ips, new_ips) = (cluster_ips(old), cluster_ips(new));
    let changed = "may not change once set";
    let mut errs = Vec::new();
    if old_ips.len() == new_ips.len() {
        for (i, (o, n)) in old_ips.iter().zip(new_ips.iter()).enumerate() {
            if o != n {
                errs.push(field::invalid(
                    &ips_path.index(i),
                    cluster_ips_value(new),
                    changed,
                ));
            }
        }
    } else if old_ips.len() > new_ips.len() {
        if new_ips.is_empty() {
            errs.push(field::invalid(
                &ips_path.index(0),
                cluster_ips_value(new),
                "primary clusterIP can not be unset",
            ));
        }
        if !old_ips.is_empty() && !new_ips.is_empty() && new_ips[0] != old_ips[0] {
            errs.push(field::invalid(
                &ips_path.index(0),
                cluster_ips_value(new),
                changed,
            ));
        }
        if new_ips.len() == 1 && opt_str(new, "ipFamilyPolicy") != Some("SingleStack") {
            errs.push(field::invalid(
                &Path::new("spec").child("ipFamilyPolicy"),
                policy_value(new),
                "must be set to 'SingleStack' when releasing the secondary clusterIP",
            ));
        }
    } else if !old_ips.is_empty() && new_ips[0] != old_ips[0] {
        errs.push(field::invalid(
            &ips_path.index(0),
            cluster_ips_value(new),
            changed,
        ));
    }
    errs
}

/// Upstream `validateUpgradeDowngradeIPFamilies`: the primary family may not change, and
/// releasing the secondary one needs policy SingleStack.
pub fn validate_upgrade_downgrade_ip_families(old: &Value, new: &Value) -> Vec<field::Error> {
    if str_of(new, "type") == "ExternalName" || str_of(old, "type") == "ExternalName" {
        return Vec::new();
    }
    // Changes to or from headless, and headless services, may change families.
    if is_headless(old) || is_headless(new) {
        return Vec::new();
    }
    let first = Path::new("spec").child("ipFamilies").index(0);
    let (old_f, new_f) = (ip_families(old), ip_families(new));
    let changed = "may not change once set";
    let mut errs = Vec::new();
    if old_f.len() == new_f.len() {
        for (o, n) in old_f.iter().zip(new_f.iter()) {
            if o != n {
                // Upstream reports every change at index 0.
                errs.push(field::invalid(&first, ip_families_value(new), changed));
            }
        }
    } else if old_f.len() > new_f.len() {
        // Upstream tests the cluster IPs here, and shows them below.
        if cluster_ips(new).is_empty() {
            errs.push(field::invalid(
                &first,
                ip_families_value(new),
                "primary ipFamily can not be unset",
            ));
        }
        if !new_f.is_empty() && new_f[0] != old_f[0] {
            errs.push(field::invalid(&first, cluster_ips_value(new), changed));
        }
        if new_f.len() == 1 && opt_str(new, "ipFamilyPolicy") != Some("SingleStack") {
            errs.push(field::invalid(
                &Path::new("spec").child("ipFamilyPolicy"),
                policy_value(new),
                "must be set to 'SingleStack' when releasing the secondary ipFamily",
            ));
        }
    } else if !old_f.is_empty() && new_f[0] != old_f[0] {
        errs.push(field::invalid(&first, cluster_ips_value(new), changed));
    }
    errs
}
