//! What an update may change in a pod that exists (upstream `ValidatePodUpdate`'s
//! immutability rules) and what a status write is checked for (`ValidatePodStatusUpdate`).

use std::collections::BTreeMap;
use std::net::IpAddr;

use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::{inclusive_range_error, is_dns1123_subdomain};
use serde_json::{Map, Value};

/// Upstream's `updatablePodSpecFields`, as the refusal lists them.
const UPDATABLE_FIELDS: [&str; 5] = [
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
];

fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Upstream `ValidateContainerUpdates`: the same containers, each with an image. `true`
/// stops the update's checks.
fn validate_container_updates(
    new: &[Value],
    old: &[Value],
    path: &Path,
    errs: &mut Vec<field::Error>,
) -> bool {
    if new.len() != old.len() {
        errs.push(field::forbidden(
            path,
            "pod updates may not add or remove containers",
        ));
        return true;
    }
    for (i, c) in new.iter().enumerate() {
        let image = c.get("image").and_then(Value::as_str).unwrap_or("");
        let image_path = path.index(i).child("image");
        if image.is_empty() {
            errs.push(field::required(&image_path, ""));
        }
        if image.trim().len() != image.len() {
            errs.push(field::invalid(
                &image_path,
                image,
                "must not have leading or trailing whitespace",
            ));
        }
    }
    false
}

/// The spec rules of upstream `ValidatePodUpdate`: images, a shorter active deadline,
/// added tolerations and removed scheduling gates may change, nothing else.
pub fn validate_spec_update(new_pod: &Value, old_pod: &Value) -> Vec<field::Error> {
    let null = Value::Null;
    let new = new_pod.get("spec").unwrap_or(&null);
    let old = old_pod.get("spec").unwrap_or(&null);
    let path = Path::new("spec");
    let mut errs = Vec::new();
    for list in ["containers", "initContainers"] {
        let stop = validate_container_updates(
            array(new, list),
            array(old, list),
            &path.child(list),
            &mut errs,
        );
        if stop {
            return errs;
        }
    }
    let deadline_path = path.child("activeDeadlineSeconds");
    let old_deadline = old.get("activeDeadlineSeconds").and_then(Value::as_i64);
    match new.get("activeDeadlineSeconds").and_then(Value::as_i64) {
        Some(d) if !(0..=i64::from(i32::MAX)).contains(&d) => {
            errs.push(field::invalid(
                &deadline_path,
                d,
                &inclusive_range_error(0, i64::from(i32::MAX)),
            ));
            return errs;
        }
        Some(d) if old_deadline.is_some_and(|o| o < d) => {
            errs.push(field::invalid(
                &deadline_path,
                d,
                "must be less than or equal to previous value",
            ));
            return errs;
        }
        Some(_) => {}
        None if old_deadline.is_some() => errs.push(field::invalid(
            &deadline_path,
            BadValue::Raw("<nil>".into()),
            "must not update from a positive integer to nil value",
        )),
        None => {}
    }
    errs.extend(validate_only_added_tolerations(
        array(new, "tolerations"),
        array(old, "tolerations"),
        &path.child("tolerations"),
    ));
    errs.extend(validate_only_deleted_scheduling_gates(
        array(new, "schedulingGates"),
        array(old, "schedulingGates"),
        &path.child("schedulingGates"),
    ));
    // Compared as Go's semantic equality compares the structs: an absent struct is its
    // zero value (`resources: {}`).
    let go = |v: &Value| -> Value {
        let mut v = v.clone();
        kas_apimachinery::schema::go_encoded(
            &mut v,
            &kas_apimachinery::schema::Kind::Message(&kas_api::core::v1::POD_SPEC),
        );
        v
    };
    let (munged, old) = (go(&munged_spec(new, old)), go(old));
    if munged != old {
        errs.push(field::forbidden(
            &path,
            &format!(
                "pod updates may not change fields other than {}\n{}",
                UPDATABLE_FIELDS.join(","),
                spec_diff(&old, &munged)
            ),
        ));
    }
    errs
}

/// The new spec with what may change taken from the old one (upstream's
/// `mungedPodSpec`), for the comparison that finds any other change.
fn munged_spec(new: &Value, old: &Value) -> Value {
    let mut munged = new.clone();
    let Some(m) = munged.as_object_mut() else {
        return munged;
    };
    for list in ["containers", "initContainers"] {
        if let Some(containers) = m.get_mut(list).and_then(Value::as_array_mut) {
            for (i, c) in containers.iter_mut().enumerate() {
                let old_image = array(old, list).get(i).and_then(|o| o.get("image"));
                if let Some(c) = c.as_object_mut() {
                    set_or_remove(c, "image", old_image);
                }
            }
        }
    }
    for key in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        set_or_remove(m, key, old.get(key));
    }
    let old_grace = old
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64);
    let new_grace = m
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64);
    if old_grace.is_some_and(|g| g < 0) && new_grace == Some(1) {
        set_or_remove(
            m,
            "terminationGracePeriodSeconds",
            old.get("terminationGracePeriodSeconds"),
        );
    }
    munged
}

fn set_or_remove(m: &mut Map<String, Value>, key: &str, value: Option<&Value>) {
    match value {
        Some(v) => m.insert(key.to_owned(), v.clone()),
        None => m.remove(key),
    };
}

/// What upstream appends to the refusal to show the change: it prints `cmp.Diff` of the
/// Go structs, whose format its authors call unstable; this lists each changed field of
/// the spec in the same `-`/`+` shape, with JSON values.
fn spec_diff(old: &Value, new: &Value) -> String {
    struct_diff("core.PodSpec", old, new)
}

/// The `cmp.Diff` approximation of `spec_diff` for any struct, named `type_name`.
pub(crate) fn struct_diff(type_name: &str, old: &Value, new: &Value) -> String {
    let empty = Map::new();
    let (o, n) = (
        old.as_object().unwrap_or(&empty),
        new.as_object().unwrap_or(&empty),
    );
    let keys: std::collections::BTreeSet<&String> = o.keys().chain(n.keys()).collect();
    let mut out = format!("  {type_name}{{\n");
    for k in keys {
        let (a, b) = (o.get(k), n.get(k));
        if a == b {
            continue;
        }
        let mut name = k.clone();
        if let Some(first) = name.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        if let Some(a) = a {
            out.push_str(&format!("- \t{name}: {a},\n"));
        }
        if let Some(b) = b {
            out.push_str(&format!("+ \t{name}: {b},\n"));
        }
    }
    out.push_str("  }\n");
    out
}

/// Upstream `validateOnlyAddedTolerations`: every old toleration is still there (its
/// `tolerationSeconds` may change).
fn validate_only_added_tolerations(new: &[Value], old: &[Value], path: &Path) -> Vec<field::Error> {
    let without_seconds = |t: &Value| -> Value {
        let mut t = t.clone();
        if let Some(m) = t.as_object_mut() {
            m.remove("tolerationSeconds");
        }
        t
    };
    for o in old {
        let o = without_seconds(o);
        if !new.iter().any(|n| without_seconds(n) == o) {
            return vec![field::forbidden(
                path,
                "existing toleration can not be modified except its tolerationSeconds",
            )];
        }
    }
    Vec::new()
}

/// Upstream `validateOnlyDeletedSchedulingGates`.
fn validate_only_deleted_scheduling_gates(
    new: &[Value],
    old: &[Value],
    path: &Path,
) -> Vec<field::Error> {
    let name = |g: &Value| {
        g.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let mut added: BTreeMap<String, usize> =
        new.iter().enumerate().map(|(i, g)| (name(g), i)).collect();
    for g in old {
        added.remove(&name(g));
    }
    added
        .into_iter()
        .map(|(gate, i)| {
            field::forbidden(
                &path.index(i).child("name"),
                &format!("only deletion is allowed, but found new scheduling gate '{gate}'"),
            )
        })
        .collect()
}

/// The status rules of upstream `ValidatePodStatusUpdate` this server checks: the
/// nominated node's name and the pod's IPs.
pub fn validate_status_update(new: &Value, old: &Value) -> Vec<field::Error> {
    let path = Path::new("status");
    let mut errs = Vec::new();
    let nominated = new
        .pointer("/status/nominatedNodeName")
        .and_then(Value::as_str)
        .unwrap_or("");
    let old_nominated = old
        .pointer("/status/nominatedNodeName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if nominated != old_nominated && !nominated.is_empty() {
        for msg in is_dns1123_subdomain(nominated) {
            errs.push(field::invalid(
                &path.child("nominatedNodeName"),
                nominated,
                &msg,
            ));
        }
    }
    errs.extend(validate_pod_ips(new));
    errs
}

/// Upstream `validatePodIPs`: each a valid IP, and at most one per family.
fn validate_pod_ips(pod: &Value) -> Vec<field::Error> {
    let path = Path::new("status").child("podIPs");
    let ips: Vec<&str> = pod
        .pointer("/status/podIPs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|ip| ip.get("ip").and_then(Value::as_str).unwrap_or(""))
        .collect();
    let mut errs = Vec::new();
    let mut parsed = Vec::new();
    for (i, ip) in ips.iter().enumerate() {
        match ip.parse::<IpAddr>() {
            Ok(addr) => parsed.push(addr),
            Err(_) => errs.push(field::invalid(
                &path.index(i),
                *ip,
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            )),
        }
    }
    let dual_stack = parsed.len() == ips.len()
        && parsed.iter().any(IpAddr::is_ipv4)
        && parsed.iter().any(IpAddr::is_ipv6);
    if ips.len() > 1 && (!dual_stack || ips.len() > 2) {
        let items: Vec<String> = ips
            .iter()
            .map(|ip| {
                format!(
                    "core.PodIP{{IP:{}}}",
                    kas_apimachinery::golang::strconv::quote(ip)
                )
            })
            .collect();
        errs.push(field::invalid(
            &path,
            BadValue::Raw(format!("[]core.PodIP{{{}}}", items.join(", "))),
            "may specify no more than one IP for each IP family",
        ));
    }
    errs
}

/// The v1 conversion of `podIP`/`podIPs` and `hostIP`/`hostIPs`: the singular field is
/// authoritative and the first of the list, as upstream's conversions make them.
pub fn sync_status_ips(pod: &mut Value) {
    let Some(status) = pod.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    for (single, list) in [("podIP", "podIPs"), ("hostIP", "hostIPs")] {
        let ip = status
            .get(single)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let first = status
            .get(list)
            .and_then(|l| l.get(0))
            .and_then(|f| f.get("ip"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        match first {
            Some(first) if ip.is_empty() => {
                status.insert(single.into(), Value::String(first));
            }
            Some(first) if first != ip => {
                if let Some(l) = status.get_mut(list).and_then(Value::as_array_mut) {
                    l[0] = serde_json::json!({"ip": ip});
                }
            }
            Some(_) => {}
            None if !ip.is_empty() => {
                status.insert(list.into(), serde_json::json!([{"ip": ip}]));
            }
            None => {}
        }
    }
}
