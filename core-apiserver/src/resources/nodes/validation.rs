//! Upstream `ValidateNode` and `ValidateNodeUpdate` (without the object meta, which
//! `kas_registry::validation` checks): `ValidateNodeSpecificAnnotations`,
//! `validateNodeTaints`, `ValidateNodeResources`, the pod CIDRs, and the update rules.
//! Maps are walked in sorted key order (upstream walks Go maps in random order).

use std::collections::BTreeSet;
use std::net::Ipv6Addr;

use kas_apimachinery::golang::json::{describe, unmarshal};
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::resource::Quantity;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::is_valid_label_value;
use kas_apimachinery::validation::meta::{
    name_is_dns_subdomain, validate_label_name, validate_namespace_name,
};
use serde_json::Value;

use crate::podspec::validation::resources::validate_quantity_value;
use crate::resources::configmaps::is_config_map_key;

/// Upstream `core.TaintsAnnotationKey`.
pub const TAINTS_ANNOTATION_KEY: &str = "scheduler.alpha.kubernetes.io/taints";
/// Upstream `core.PreferAvoidPodsAnnotationKey`.
pub const PREFER_AVOID_PODS_ANNOTATION_KEY: &str = "scheduler.alpha.kubernetes.io/preferAvoidPods";

const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
const CIDR_MSG: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
const POD_CIDR_CHANGE: &str = "node updates may not change podCIDR except from \"\" to valid";

fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn list<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn present(v: &Value, pointer: &str) -> bool {
    v.pointer(pointer).is_some_and(|x| !x.is_null())
}

fn pod_cidrs(node: &Value) -> Vec<String> {
    list(node, "/spec/podCIDRs")
        .iter()
        .map(|c| c.as_str().unwrap_or("").to_owned())
        .collect()
}

/// Upstream `validateTaintEffect`.
fn validate_taint_effect(effect: &str, allow_empty: bool, path: &Path) -> Vec<field::Error> {
    if !allow_empty && effect.is_empty() {
        return vec![field::required(path, "")];
    }
    if TAINT_EFFECTS.contains(&effect) {
        return Vec::new();
    }
    vec![field::not_supported(path, effect, &TAINT_EFFECTS)]
}

/// A `core.Taint` as Go's `%#v` prints it. A set `TimeAdded` is a pointer, which Go
/// prints as an address; a fixed one stands in for it.
fn go_taint(t: &Value) -> BadValue {
    let time = if present(t, "/timeAdded") {
        "(*v1.Time)(0xc000000000)"
    } else {
        "(*v1.Time)(nil)"
    };
    BadValue::Raw(format!(
        "core.Taint{{Key:{}, Value:{}, Effect:{}, TimeAdded:{time}}}",
        quote(s(t, "/key")),
        quote(s(t, "/value")),
        quote(s(t, "/effect")),
    ))
}

/// Upstream `validateNodeTaints`.
pub fn validate_node_taints(taints: &[Value], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut unique: BTreeSet<(String, String)> = BTreeSet::new();
    for (i, taint) in taints.iter().enumerate() {
        let idx = path.index(i);
        let key = s(taint, "/key");
        let value = s(taint, "/value");
        let effect = s(taint, "/effect");
        errs.extend(validate_label_name(key, &idx.child("key")));
        let msgs = is_valid_label_value(value);
        if !msgs.is_empty() {
            errs.push(field::invalid(&idx.child("value"), value, &msgs.join(";")));
        }
        errs.extend(validate_taint_effect(effect, false, &idx.child("effect")));
        if !unique.insert((effect.to_owned(), key.to_owned())) {
            let mut dup = field::duplicate(&idx, go_taint(taint));
            dup.detail = "taints must be unique by key and effect pair".to_owned();
            errs.push(dup);
        }
    }
    errs
}

/// The JSON kind of a value Go refuses for a field of `go_type`, as `UnmarshalTypeError`
/// words it; `None` when the value fits (null always does).
fn type_error(v: &Value, fits: fn(&Value) -> bool, at: &str, go_type: &str) -> Option<String> {
    if v.is_null() || fits(v) {
        return None;
    }
    Some(format!(
        "json: cannot unmarshal {} into {at} of type {go_type}",
        describe(v)
    ))
}

/// `json.Unmarshal` into `[]core.Taint` (upstream `GetTaintsFromNodeAnnotations`): the
/// taints, or Go's error text (syntax first, then the first type mismatch).
fn taints_from_annotation(text: &str) -> Result<Vec<Value>, String> {
    let doc = unmarshal(text.as_bytes())?;
    if let Some(e) = type_error(&doc, Value::is_array, "Go value", "[]core.Taint") {
        return Err(e);
    }
    let items = doc.as_array().cloned().unwrap_or_default();
    let mut first = None;
    for item in &items {
        let e = type_error(item, Value::is_object, "Go value", "core.Taint").or_else(|| {
            [
                ("key", "string"),
                ("value", "string"),
                ("effect", "core.TaintEffect"),
                ("timeAdded", "string"),
            ]
            .into_iter()
            .find_map(|(k, t)| {
                let at = format!("Go struct field Taint.{k}");
                item.get(k)
                    .and_then(|v| type_error(v, Value::is_string, &at, t))
            })
        });
        first = first.or(e);
    }
    match first {
        Some(e) => Err(e),
        None => Ok(items),
    }
}

/// Upstream `ValidateTaintsInNodeAnnotations`.
fn validate_taints_annotation(text: &str, path: &Path) -> Vec<field::Error> {
    match taints_from_annotation(text) {
        Err(e) => vec![field::invalid(path, TAINTS_ANNOTATION_KEY, &e)],
        Ok(taints) => validate_node_taints(&taints, &path.child(TAINTS_ANNOTATION_KEY)),
    }
}

/// Upstream `ValidateAvoidPodsInNodeAnnotations` with `validatePreferAvoidPodsEntry`.
fn validate_avoid_pods_annotation(text: &str, path: &Path) -> Vec<field::Error> {
    let parsed = unmarshal(text.as_bytes()).and_then(|doc| {
        if let Some(e) = type_error(&doc, Value::is_object, "Go value", "v1.AvoidPods") {
            return Err(e);
        }
        let entries = doc.get("preferAvoidPods").cloned().unwrap_or(Value::Null);
        let at = "Go struct field AvoidPods.preferAvoidPods";
        if let Some(e) = type_error(&entries, Value::is_array, at, "[]v1.PreferAvoidPodsEntry") {
            return Err(e);
        }
        let entries = entries.as_array().cloned().unwrap_or_default();
        match entries
            .iter()
            .find_map(|e| type_error(e, Value::is_object, at, "v1.PreferAvoidPodsEntry"))
        {
            Some(e) => Err(e),
            None => Ok(entries),
        }
    });
    let entries = match parsed {
        Err(e) => {
            return vec![field::invalid(
                &path.child("AvoidPods"),
                PREFER_AVOID_PODS_ANNOTATION_KEY,
                &e,
            )];
        }
        Ok(entries) => entries,
    };
    let mut errs = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let idx = path.child(PREFER_AVOID_PODS_ANNOTATION_KEY).index(i);
        let signature = idx.child("PodSignature");
        match entry.pointer("/podSignature/podController") {
            Some(controller) if controller.is_object() => {
                let is_controller = controller.get("controller").and_then(Value::as_bool);
                if is_controller != Some(true) {
                    errs.push(field::invalid(
                        &signature.child("PodController").child("Controller"),
                        false,
                        "must point to a controller",
                    ));
                }
            }
            _ => errs.push(field::required(&signature, "")),
        }
    }
    errs
}

/// Upstream `ValidateNodeSpecificAnnotations`.
pub fn validate_node_specific_annotations(node: &Value) -> Vec<field::Error> {
    let path = Path::new("metadata").child("annotations");
    let annotation = |key: &str| {
        node.pointer("/metadata/annotations")
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let mut errs = Vec::new();
    let taints = annotation(TAINTS_ANNOTATION_KEY);
    if !taints.is_empty() {
        errs.extend(validate_taints_annotation(taints, &path));
    }
    let avoid = annotation(PREFER_AVOID_PODS_ANNOTATION_KEY);
    if !avoid.is_empty() {
        errs.extend(validate_avoid_pods_annotation(avoid, &path));
    }
    errs
}

/// Upstream `ValidateNodeResources`: the quantities of `status.capacity` and
/// `status.allocatable`.
pub fn validate_node_resources(node: &Value) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for key in ["capacity", "allocatable"] {
        let entries = node
            .pointer(&format!("/status/{key}"))
            .and_then(Value::as_object);
        for (name, value) in entries.into_iter().flatten() {
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => continue,
            };
            let Ok(q) = Quantity::parse(text.trim()) else {
                continue;
            };
            let path = Path::new("status").child(key).child(name);
            errs.extend(validate_quantity_value(name, &q, &path));
        }
    }
    errs
}

/// An IPv4 address as `netutils.ParseIPSloppy` reads it (leading zeros allowed).
fn parse_ipv4_sloppy(text: &str) -> Option<[u8; 4]> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut out = [0u8; 4];
    for (slot, part) in out.iter_mut().zip(&parts) {
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *slot = part.parse::<u8>().ok()?;
    }
    Some(out)
}

/// `netutils.ParseCIDRSloppy`: whether the network is IPv6 (as `netutils.IsIPv6` sees
/// its masked address), or `None` when the text is no CIDR.
fn parse_cidr_sloppy(text: &str) -> Option<bool> {
    let (addr, mask) = text.split_once('/')?;
    let (bits, ip6) = match parse_ipv4_sloppy(addr) {
        Some(_) => (32, None),
        None => (128, Some(addr.parse::<Ipv6Addr>().ok()?)),
    };
    // Go's `dtoi`: at least one digit, all digits, leading zeros allowed.
    if mask.is_empty() || !mask.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let prefix = mask.parse::<u32>().ok().filter(|p| *p <= bits)?;
    Some(match ip6 {
        None => false,
        Some(ip) => {
            let masked = u128::from(ip) & u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
            // An IPv4-mapped network is IPv4 to `To4`.
            masked >> 32 != 0xffff
        }
    })
}

/// The `netutils.IsDualStackCIDRStrings` error (`ParseCIDRs`') for the first invalid CIDR.
fn dual_stack(cidrs: &[String]) -> Result<bool, String> {
    let mut families = Vec::new();
    for (i, cidr) in cidrs.iter().enumerate() {
        match parse_cidr_sloppy(cidr) {
            Some(v6) => families.push(v6),
            None => {
                return Err(format!(
                    "invalid CIDR[{i}]: <nil> (invalid CIDR address: {cidr})"
                ));
            }
        }
    }
    Ok(families.contains(&true) && families.contains(&false))
}

/// `ValidateNode`'s pod CIDR rules.
fn validate_pod_cidrs(node: &Value) -> Vec<field::Error> {
    let cidrs = pod_cidrs(node);
    let path = Path::new("spec").child("podCIDRs");
    let mut errs = Vec::new();
    for (i, cidr) in cidrs.iter().enumerate() {
        if parse_cidr_sloppy(cidr).is_none() {
            errs.push(field::invalid(&path.index(i), cidr.as_str(), CIDR_MSG));
        }
    }
    if cidrs.len() > 1 {
        let is_dual = match dual_stack(&cidrs) {
            Ok(d) => d,
            Err(e) => {
                let e = std::io::Error::other(format!(
                    "invalid PodCIDRs. failed to check with dual stack with error:{e}"
                ));
                errs.push(field::internal_error(&path, &e));
                false
            }
        };
        if !is_dual || cidrs.len() > 2 {
            errs.push(field::invalid(
                &path,
                BadValue::Strings(Some(cidrs.clone())),
                "may specify no more than one CIDR for each IP family",
            ));
        }
        let mut seen = BTreeSet::new();
        for (i, cidr) in cidrs.iter().enumerate() {
            if !seen.insert(cidr) {
                errs.push(field::duplicate(&path.index(i), cidr.as_str()));
            }
        }
    }
    errs
}

/// Upstream `ValidateNode`, after the object meta.
pub fn validate_node(node: &Value) -> Vec<field::Error> {
    let mut errs = validate_node_specific_annotations(node);
    let taints = list(node, "/spec/taints");
    if !taints.is_empty() {
        errs.extend(validate_node_taints(
            taints,
            &Path::new("metadata").child("taints"),
        ));
    }
    errs.extend(validate_node_resources(node));
    errs.extend(validate_pod_cidrs(node));
    errs
}

/// A `*core.NodeConfigSource` as Go's `%#v` prints what it points to, for the one case
/// it is printed: no reference set.
const EMPTY_CONFIG_SOURCE: &str =
    "core.NodeConfigSource{ConfigMap:(*core.ConfigMapNodeConfigSource)(nil)}";

/// A name rule: its messages for a value.
type NameCheck = fn(&str) -> Vec<String>;

/// Upstream `validateConfigMapNodeConfigSource`.
fn validate_config_map_source(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let checks: [(&str, &str, NameCheck); 3] = [
        ("namespace", "namespace must be set", |v| {
            validate_namespace_name(v, false)
        }),
        ("name", "name must be set", |v| {
            name_is_dns_subdomain(v, false)
        }),
        (
            "kubeletConfigKey",
            "kubeletConfigKey must be set",
            is_config_map_key,
        ),
    ];
    for (key, required, check) in checks {
        let value = s(source, &format!("/{key}"));
        if value.is_empty() {
            errs.push(field::required(&path.child(key), required));
        } else {
            for msg in check(value) {
                errs.push(field::invalid(&path.child(key), value, &msg));
            }
        }
    }
    errs
}

/// Upstream `validateNodeConfigSourceSpec` (`in_spec`) and `validateNodeConfigSourceStatus`.
fn validate_config_source(source: &Value, in_spec: bool, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    match source.get("configMap").filter(|c| !c.is_null()) {
        None => errs.push(field::invalid(
            path,
            BadValue::Raw(EMPTY_CONFIG_SOURCE.to_owned()),
            "exactly one reference subfield must be non-nil",
        )),
        Some(cm) => {
            let cm_path = path.child("configMap");
            for key in ["uid", "resourceVersion"] {
                let set = !s(cm, &format!("/{key}")).is_empty();
                if in_spec && set {
                    let msg = format!("{key} must not be set in spec");
                    errs.push(field::forbidden(&cm_path.child(key), &msg));
                } else if !in_spec && !set {
                    let msg = format!("{key} must be set in status");
                    errs.push(field::required(&cm_path.child(key), &msg));
                }
            }
            errs.extend(validate_config_map_source(cm, &cm_path));
        }
    }
    errs
}

/// A `core.NodeAddress` as Go's `%#v` prints it.
fn go_address(a: &Value) -> BadValue {
    BadValue::Raw(format!(
        "core.NodeAddress{{Type:{}, Address:{}}}",
        quote(s(a, "/type")),
        quote(s(a, "/address"))
    ))
}

/// Upstream `ValidateNodeUpdate`, after the object meta.
pub fn validate_node_update(node: &Value, old: &Value) -> Vec<field::Error> {
    let mut errs = validate_node_specific_annotations(node);
    errs.extend(validate_node_resources(node));
    let mut addresses = BTreeSet::new();
    for (i, address) in list(node, "/status/addresses").iter().enumerate() {
        if !addresses.insert((s(address, "/type"), s(address, "/address"))) {
            errs.push(field::duplicate(
                &Path::new("status").child("addresses").index(i),
                go_address(address),
            ));
        }
    }
    let old_cidrs = pod_cidrs(old);
    if !old_cidrs.is_empty() {
        let new_cidrs = pod_cidrs(node);
        let path = Path::new("spec").child("podCIDRs");
        if old_cidrs.len() != new_cidrs.len() {
            errs.push(field::forbidden(&path, POD_CIDR_CHANGE));
        } else {
            for (o, n) in old_cidrs.iter().zip(&new_cidrs) {
                if o != n {
                    errs.push(field::forbidden(&path, POD_CIDR_CHANGE));
                }
            }
        }
    }
    let old_provider = s(old, "/spec/providerID");
    if !old_provider.is_empty() && old_provider != s(node, "/spec/providerID") {
        errs.push(field::forbidden(
            &Path::new("spec").child("providerID"),
            "node updates may not change providerID except from \"\" to valid",
        ));
    }
    if let Some(source) = node.pointer("/spec/configSource").filter(|v| !v.is_null()) {
        let path = Path::new("spec").child("configSource");
        errs.extend(validate_config_source(source, true, &path));
    }
    if let Some(config) = node.pointer("/status/config").filter(|v| !v.is_null()) {
        let path = Path::new("status").child("config");
        for key in ["assigned", "active", "lastKnownGood"] {
            if let Some(source) = config.get(key).filter(|v| !v.is_null()) {
                errs.extend(validate_config_source(source, false, &path.child(key)));
            }
        }
    }
    let taints = list(node, "/spec/taints");
    if !taints.is_empty() {
        errs.extend(validate_node_taints(
            taints,
            &Path::new("metadata").child("taints"),
        ));
    }
    if s(node, "/spec/externalID") != s(old, "/spec/externalID") {
        errs.push(field::forbidden(
            &Path::new("spec").child("externalID"),
            "may not be updated",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bodies(errs: &[field::Error]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn cidrs_parse_as_netutils_does() {
        assert_eq!(parse_cidr_sloppy("10.0.0.0/24"), Some(false));
        assert_eq!(parse_cidr_sloppy("010.0.0.0/024"), Some(false));
        assert_eq!(parse_cidr_sloppy("fd00::/64"), Some(true));
        assert_eq!(parse_cidr_sloppy("::ffff:10.0.0.0/104"), Some(false));
        for bad in [
            "10.0.0.0",
            "10.0.0.0/33",
            "10.0.0/8",
            "fd00::/129",
            "x/1",
            "1.2.3.4/",
        ] {
            assert_eq!(parse_cidr_sloppy(bad), None, "{bad}");
        }
    }

    #[test]
    fn pod_cidrs_are_one_per_family() {
        let node = json!({"spec": {"podCIDRs": ["10.0.0.0/24", "10.1.0.0/24", "10.0.0.0/24"]}});
        assert_eq!(
            bodies(&validate_pod_cidrs(&node)),
            [
                "spec.podCIDRs: Invalid value: []string{\"10.0.0.0/24\", \"10.1.0.0/24\", \"10.0.0.0/24\"}: may specify no more than one CIDR for each IP family",
                "spec.podCIDRs[2]: Duplicate value: \"10.0.0.0/24\"",
            ]
        );
        let node = json!({"spec": {"podCIDRs": ["10.0.0.0/24", "bad"]}});
        assert_eq!(
            bodies(&validate_pod_cidrs(&node)),
            [
                "spec.podCIDRs[1]: Invalid value: \"bad\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                "spec.podCIDRs: Internal error: invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR[1]: <nil> (invalid CIDR address: bad)",
                "spec.podCIDRs: Invalid value: []string{\"10.0.0.0/24\", \"bad\"}: may specify no more than one CIDR for each IP family",
            ]
        );
        let node = json!({"spec": {"podCIDRs": ["10.0.0.0/24", "fd00::/64"]}});
        assert!(validate_pod_cidrs(&node).is_empty());
    }

    #[test]
    fn taint_annotations_are_decoded_as_go_does() {
        let node = |v: &str| json!({"metadata": {"annotations": {TAINTS_ANNOTATION_KEY: v}}});
        assert_eq!(
            bodies(&validate_node_specific_annotations(&node("x"))),
            [
                "metadata.annotations: Invalid value: \"scheduler.alpha.kubernetes.io/taints\": invalid character 'x' looking for beginning of value"
            ]
        );
        assert_eq!(
            bodies(&validate_node_specific_annotations(&node("{}"))),
            [
                "metadata.annotations: Invalid value: \"scheduler.alpha.kubernetes.io/taints\": json: cannot unmarshal object into Go value of type []core.Taint"
            ]
        );
        assert_eq!(
            bodies(&validate_node_specific_annotations(&node(r#"[{"key":1}]"#))),
            [
                "metadata.annotations: Invalid value: \"scheduler.alpha.kubernetes.io/taints\": json: cannot unmarshal number into Go struct field Taint.key of type string"
            ]
        );
        assert_eq!(
            bodies(&validate_node_specific_annotations(&node(
                r#"[{"key":"a","effect":"Bad"}]"#
            ))),
            [
                "metadata.annotations.scheduler.alpha.kubernetes.io/taints[0].effect: Unsupported value: \"Bad\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""
            ]
        );
    }

    #[test]
    fn avoid_pods_entries_must_name_a_controller() {
        let node = json!({"metadata": {"annotations": {PREFER_AVOID_PODS_ANNOTATION_KEY:
            r#"{"preferAvoidPods":[{"podSignature":{}},{"podSignature":{"podController":{"controller":false}}}]}"#}}});
        assert_eq!(
            bodies(&validate_node_specific_annotations(&node)),
            [
                "metadata.annotations.scheduler.alpha.kubernetes.io/preferAvoidPods[0].PodSignature: Required value",
                "metadata.annotations.scheduler.alpha.kubernetes.io/preferAvoidPods[1].PodSignature.PodController.Controller: Invalid value: false: must point to a controller",
            ]
        );
    }

    #[test]
    fn config_sources_are_checked_on_update() {
        let old = json!({});
        let node = json!({"spec": {"configSource": {"configMap": {"uid": "u", "namespace": "kube-system", "name": "c"}}},
            "status": {"config": {"active": {}}}});
        assert_eq!(
            bodies(&validate_node_update(&node, &old)),
            [
                "spec.configSource.configMap.uid: Forbidden: uid must not be set in spec",
                "spec.configSource.configMap.kubeletConfigKey: Required value: kubeletConfigKey must be set",
                "status.config.active: Invalid value: core.NodeConfigSource{ConfigMap:(*core.ConfigMapNodeConfigSource)(nil)}: exactly one reference subfield must be non-nil",
            ]
        );
    }
}
