//! The IP family fields of a Service around an allocation, after upstream's
//! `pkg/registry/core/service/storage`: `normalizeClusterIPs` (storage.go),
//! `initIPFamilyFields`, `isMatchingPreferDualStackClusterIPFields` and the upgrade /
//! downgrade cases of `updateClusterIPs` (alloc.go).

use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::parse_ip_sloppy;
use serde_json::{Value, json};

use super::super::validation::ips::validate_cluster_ips_related_fields;
use super::ipallocator::Parent;
use super::{ServiceAllocator, Txn, invalid, s, strings};

const SINGLE: &str = "SingleStack";
const PREFER: &str = "PreferDualStack";
const REQUIRE: &str = "RequireDualStack";

/// `spec.ipFamilyPolicy`, `None` when unset (Go's nil pointer).
fn policy(svc: &Value) -> Option<&str> {
    svc.pointer("/spec/ipFamilyPolicy").and_then(Value::as_str)
}

fn set(svc: &mut Value, key: &str, value: Value) {
    if let Some(spec) = svc.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert(key.to_owned(), value);
    }
}

fn selectorless(svc: &Value) -> bool {
    svc.pointer("/spec/selector")
        .and_then(Value::as_object)
        .is_none_or(|m| m.is_empty())
}

/// Upstream `familyOf`.
fn family_of(ip: &str) -> &'static str {
    match parse_ip_sloppy(ip).map(crate::helper::unmapped) {
        Some(ip) if ip.is_ipv4() => "IPv4",
        Some(_) => "IPv6",
        None => "unknown",
    }
}

fn other_family(family: &str) -> &'static str {
    if family == "IPv4" { "IPv6" } else { "IPv4" }
}

/// Upstream `normalizeClusterIPs`: keeps `clusterIPs` in step with `clusterIP` for
/// clients that only know the singular field.
pub(super) fn normalize_cluster_ips(new: &mut Value, old: Option<&Value>) {
    let new_ip = s(new, "/spec/clusterIP").to_owned();
    let new_ips = strings(new, "/spec/clusterIPs");
    let Some(old) = old else {
        if !new_ip.is_empty() && new_ips.is_empty() {
            set(new, "clusterIPs", json!([new_ip]));
        }
        return;
    };
    let old_ip = s(old, "/spec/clusterIP");
    let old_ips = strings(old, "/spec/clusterIPs");
    if !old_ips.is_empty() && new_ips.is_empty() && old_ip == new_ip {
        set(new, "clusterIPs", json!(old_ips));
    }
    if old_ip != new_ip {
        let same = strings(new, "/spec/clusterIPs") == old_ips;
        if !old_ip.is_empty() && new_ip.is_empty() {
            if same {
                set(new, "clusterIPs", Value::Null);
            }
        } else if same {
            set(new, "clusterIPs", json!([new_ip]));
        }
    }
}

/// Upstream `isMatchingPreferDualStackClusterIPFields`: a PreferDualStack Service whose
/// cluster IPs and families are unchanged is neither upgraded nor downgraded.
pub(super) fn is_matching_prefer_dual_stack(new: &Value, old: Option<&Value>) -> bool {
    let Some(old) = old else {
        return false;
    };
    let Some(p) = policy(new) else {
        return false;
    };
    let ty = s(new, "/spec/type");
    ty == s(old, "/spec/type")
        && matches!(ty, "ClusterIP" | "NodePort" | "LoadBalancer")
        && p == PREFER
        && policy(old).is_none_or(|p| p == PREFER)
        && strings(new, "/spec/clusterIPs") == strings(old, "/spec/clusterIPs")
        && strings(new, "/spec/ipFamilies") == strings(old, "/spec/ipFamilies")
}

/// Upstream `initIPFamilyFields`: infers the policy and the families from what the client
/// gave, the old object and the cluster's `families` (primary first), or says why the
/// Service cannot have them.
pub(super) fn init_ip_family_fields(
    svc: &mut Value,
    old: Option<&Value>,
    families: &[&str],
) -> Result<(), Vec<field::Error>> {
    if s(svc, "/spec/type") == "ExternalName" || is_matching_prefer_dual_stack(svc, old) {
        return Ok(());
    }
    let headless_selectorless = s(svc, "/spec/clusterIP") == "None" && selectorless(svc);
    if policy(svc).is_none() {
        let inferred = match old.and_then(policy) {
            Some(p) => p.to_owned(),
            None if headless_selectorless => REQUIRE.to_owned(),
            None => SINGLE.to_owned(),
        };
        set(svc, "ipFamilyPolicy", json!(inferred));
    }
    let errs = validate_cluster_ips_related_fields(&svc["spec"]);
    if !errs.is_empty() {
        return Err(errs);
    }
    let pol = policy(svc).unwrap_or("").to_owned();
    let policy_path = Path::new("spec").child("ipFamilyPolicy");
    let bad_policy = || BadValue::from(pol.as_str());
    let mut errs = Vec::new();

    if let Some(old) = old {
        let (ips, fams) = (
            strings(svc, "/spec/clusterIPs"),
            strings(svc, "/spec/ipFamilies"),
        );
        let (old_ips, old_fams) = (
            strings(old, "/spec/clusterIPs"),
            strings(old, "/spec/ipFamilies"),
        );
        if pol == SINGLE {
            // Unchanged fields with a SingleStack policy: the secondary goes.
            if ips == old_ips && ips.len() > 1 {
                set(svc, "clusterIPs", json!([ips[0]]));
            }
            if fams == old_fams && fams.len() > 1 {
                set(svc, "ipFamilies", json!([fams[0]]));
            }
        } else {
            if !ips.is_empty() && ips.len() < old_ips.len() {
                let msg = "must be 'SingleStack' to release the secondary cluster IP";
                errs.push(field::invalid(&policy_path, bad_policy(), msg));
            }
            if !fams.is_empty() && fams.len() < old_fams.len() {
                let msg = "must be 'SingleStack' to release the secondary IP family";
                errs.push(field::invalid(&policy_path, bad_policy(), msg));
            }
        }
    }

    let ips = strings(svc, "/spec/clusterIPs");
    let mut fams = strings(svc, "/spec/ipFamilies");
    if pol == SINGLE {
        if ips.len() == 2 {
            let msg = "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified";
            errs.push(field::invalid(&policy_path, bad_policy(), msg));
        }
        if fams.len() == 2 {
            let msg = "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified";
            errs.push(field::invalid(&policy_path, bad_policy(), msg));
        }
    }

    // Families follow the cluster IPs the client gave.
    let inferred_from = fams.len();
    for (i, ip) in ips.iter().enumerate() {
        if ip == "None" {
            break;
        }
        if i < inferred_from {
            continue;
        }
        let family = family_of(ip);
        if families.contains(&family) {
            fams.push(family.to_owned());
        } else {
            errs.push(field::invalid(
                &Path::new("spec").child("clusterIPs").index(i),
                BadValue::Strings(Some(ips.clone())),
                &format!("{family} is not configured on this cluster"),
            ));
        }
    }
    if fams.len() != inferred_from {
        set(svc, "ipFamilies", json!(fams));
    }
    if !errs.is_empty() {
        return Err(errs);
    }

    let default = families.first().copied().unwrap_or("IPv4");
    // Headless and selectorless: any families, even those the cluster lacks.
    if headless_selectorless {
        if fams.is_empty() {
            fams.push(default.to_owned());
        }
        if fams.len() < 2 && pol != SINGLE {
            fams.push(other_family(&fams[0]).to_owned());
        }
        set(svc, "ipFamilies", json!(fams));
        return Ok(());
    }

    if pol == REQUIRE && families.len() < 2 {
        let msg = "this cluster is not configured for dual-stack services";
        errs.push(field::invalid(&policy_path, bad_policy(), msg));
    }
    for (i, family) in fams.iter().enumerate() {
        if !families.contains(&family.as_str()) {
            errs.push(field::invalid(
                &Path::new("spec").child("ipFamilies").index(i),
                family.as_str(),
                "not configured on this cluster",
            ));
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    if fams.is_empty() {
        fams.push(default.to_owned());
    }
    if pol != SINGLE
        && fams.len() == 1
        && families.len() == 2
        && matches!(fams[0].as_str(), "IPv4" | "IPv6")
    {
        fams.push(other_family(&fams[0]).to_owned());
    }
    set(svc, "ipFamilies", json!(fams));
    Ok(())
}

/// What an update does to the cluster IPs (upstream `updateClusterIPs`).
#[derive(Debug, PartialEq)]
pub(super) enum IpUpdate {
    /// Nothing to allocate or release.
    Keep,
    /// From ExternalName: allocate them all.
    AllocateAll,
    /// To ExternalName: release the old ones.
    ReleaseAll,
    /// To dual-stack: allocate the secondary.
    Upgrade,
    /// To single-stack: release the old secondary.
    Downgrade,
}

/// Upstream `updateClusterIPs`' cases, on the Service after `init_ip_family_fields`.
pub(super) fn ip_update(new: &Value, old: &Value) -> IpUpdate {
    if is_matching_prefer_dual_stack(new, Some(old)) {
        return IpUpdate::Keep;
    }
    let (old_ext, new_ext) = (
        s(old, "/spec/type") == "ExternalName",
        s(new, "/spec/type") == "ExternalName",
    );
    if old_ext && !new_ext {
        return IpUpdate::AllocateAll;
    }
    if strings(old, "/spec/clusterIPs").first().map(String::as_str) == Some("None") {
        return IpUpdate::Keep;
    }
    if !old_ext && new_ext {
        return IpUpdate::ReleaseAll;
    }
    let (old_n, new_n) = (
        strings(old, "/spec/ipFamilies").len(),
        strings(new, "/spec/ipFamilies").len(),
    );
    match (old_n, new_n) {
        (1, 2) => IpUpdate::Upgrade,
        (2, 1) => IpUpdate::Downgrade,
        _ => IpUpdate::Keep,
    }
}

impl ServiceAllocator {
    /// The cluster's families, primary first.
    pub(super) fn families(&self) -> Vec<&'static str> {
        self.ips.iter().map(|a| a.cidr.family()).collect()
    }

    /// Upstream `initIPFamilyFields`, refusing the Service as 422 Invalid.
    pub(super) fn init_ip_families(
        &self,
        svc: &mut Value,
        old: Option<&Value>,
    ) -> kas_registry::Result<()> {
        init_ip_family_fields(svc, old, &self.families()).map_err(|errs| invalid(svc, errs))
    }

    /// Upstream `updateClusterIPs` case C: the secondary cluster IP of a Service upgraded
    /// to dual-stack, the one the client named or a free one.
    pub(super) async fn allocate_secondary_ip(
        &self,
        svc: &mut Value,
        txn: &mut Txn,
    ) -> kas_registry::Result<()> {
        let mut ips = strings(svc, "/spec/clusterIPs");
        if ips.len() < 2 {
            ips.push(String::new());
            svc["spec"]["clusterIPs"] = json!(ips);
        }
        let family = strings(svc, "/spec/ipFamilies")
            .get(1)
            .cloned()
            .unwrap_or_default();
        let parent_ns = kas_registry::meta::namespace(svc).to_owned();
        let parent_name = kas_registry::meta::name(svc).to_owned();
        let parent = Parent {
            namespace: &parent_ns,
            name: &parent_name,
        };
        if let Some(ip) = self
            .allocate_ip(svc, &parent, &family, &ips[1], txn)
            .await?
        {
            ips[1] = ip.to_string();
            svc["spec"]["clusterIPs"] = json!(ips);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
