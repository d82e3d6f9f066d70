//! The checks of upstream's `LimitRanger` over one LimitRange: the min / max /
//! limit-to-request-ratio bounds of pods (`PodValidateLimitFunc`) and the storage
//! bounds of claims (`PersistentVolumeClaimValidateLimitFunc`), with upstream's messages.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use kas_apimachinery::resource::Quantity;
use serde_json::Value;

/// A resource list (`requests`, `limits`, a LimitRange item's `min`...), parsed.
pub type ResourceList = BTreeMap<String, Quantity>;

/// `resource.MaxMilliValue`: the largest value whose milli-units fit an int64.
const MAX_MILLI_VALUE: i128 = (i64::MAX / 1000) as i128;

/// The list at `value[key]` (an absent or malformed entry is left out).
pub fn list(value: Option<&Value>, key: &str) -> ResourceList {
    value
        .and_then(|v| v.get(key))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), Quantity::parse(v.as_str()?).ok()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// The items of a LimitRange's `spec.limits`.
pub(super) fn items(limit_range: &Value) -> &[Value] {
    limit_range
        .pointer("/spec/limits")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

pub(super) fn item_type(item: &Value) -> &str {
    item.get("type").and_then(Value::as_str).unwrap_or("")
}

fn containers<'a>(pod: &'a Value, key: &str) -> &'a [Value] {
    pod.pointer(&format!("/spec/{key}"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Go's `int64` view of a quantity (`Value`, `MilliValue`), saturating.
fn int64(v: i128) -> i128 {
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX))
}

/// Upstream `requestLimitEnforcedValues`: the three at milli precision when none would
/// overflow it, else at unit precision (a missing quantity counts as zero).
fn enforced_values(
    req: Option<&Quantity>,
    lim: Option<&Quantity>,
    enforced: &Quantity,
) -> (i128, i128, i128) {
    let unit = |q: Option<&Quantity>| q.map_or(0, |q| int64(q.value()));
    let milli = |q: Option<&Quantity>| q.map_or(0, |q| int64(q.milli_value()));
    let (r, l, e) = (unit(req), unit(lim), unit(Some(enforced)));
    if r <= MAX_MILLI_VALUE && l <= MAX_MILLI_VALUE && e <= MAX_MILLI_VALUE {
        (milli(req), milli(lim), milli(Some(enforced)))
    } else {
        (r, l, e)
    }
}

/// Upstream `minConstraint`.
fn min_constraint(
    kind: &str,
    name: &str,
    enforced: &Quantity,
    request: &ResourceList,
    limit: &ResourceList,
) -> Option<String> {
    let (req, lim) = (request.get(name), limit.get(name));
    let (r, l, e) = enforced_values(req, lim, enforced);
    let bound = enforced.canonical();
    let Some(req) = req else {
        return Some(format!(
            "minimum {name} usage per {kind} is {bound}.  No request is specified"
        ));
    };
    if r < e {
        return Some(format!(
            "minimum {name} usage per {kind} is {bound}, but request is {}",
            req.canonical()
        ));
    }
    match lim {
        Some(lim) if l < e => Some(format!(
            "minimum {name} usage per {kind} is {bound}, but limit is {}",
            lim.canonical()
        )),
        _ => None,
    }
}

/// Upstream `maxRequestConstraint` (claims, whose limits are not user input).
fn max_request_constraint(
    kind: &str,
    name: &str,
    enforced: &Quantity,
    request: &ResourceList,
) -> Option<String> {
    let req = request.get(name);
    let (r, _, e) = enforced_values(req, None, enforced);
    let bound = enforced.canonical();
    let Some(req) = req else {
        return Some(format!(
            "maximum {name} usage per {kind} is {bound}.  No request is specified"
        ));
    };
    (r > e).then(|| {
        format!(
            "maximum {name} usage per {kind} is {bound}, but request is {}",
            req.canonical()
        )
    })
}

/// Upstream `maxConstraint`.
fn max_constraint(
    kind: &str,
    name: &str,
    enforced: &Quantity,
    request: &ResourceList,
    limit: &ResourceList,
) -> Option<String> {
    let (req, lim) = (request.get(name), limit.get(name));
    let (r, l, e) = enforced_values(req, lim, enforced);
    let bound = enforced.canonical();
    let Some(lim) = lim else {
        return Some(format!(
            "maximum {name} usage per {kind} is {bound}.  No limit is specified"
        ));
    };
    if l > e {
        return Some(format!(
            "maximum {name} usage per {kind} is {bound}, but limit is {}",
            lim.canonical()
        ));
    }
    match req {
        Some(req) if r > e => Some(format!(
            "maximum {name} usage per {kind} is {bound}, but request is {}",
            req.canonical()
        )),
        _ => None,
    }
}

/// Upstream `limitRequestRatioConstraint`; the ratio is shown as Go's `%f` does.
fn ratio_constraint(
    kind: &str,
    name: &str,
    enforced: &Quantity,
    request: &ResourceList,
    limit: &ResourceList,
) -> Option<String> {
    let (req, lim) = (request.get(name), limit.get(name));
    let (r, l, _) = enforced_values(req, lim, enforced);
    let bound = enforced.canonical();
    if req.is_none() || r == 0 {
        return Some(format!(
            "{name} max limit to request ratio per {kind} is {bound}, but no request is specified or request is 0"
        ));
    }
    if lim.is_none() || l == 0 {
        return Some(format!(
            "{name} max limit to request ratio per {kind} is {bound}, but no limit is specified or limit is 0"
        ));
    }
    let shown = l as f64 / r as f64;
    let value = int64(enforced.value());
    let (observed, max) = if value <= MAX_MILLI_VALUE {
        (shown * 1000.0, int64(enforced.milli_value()) as f64)
    } else {
        (shown, value as f64)
    };
    (observed > max).then(|| {
        format!(
            "{name} max limit to request ratio per {kind} is {bound}, but provided ratio is {shown:.6}"
        )
    })
}

/// The min, max and ratio checks of one item against a request and limit list.
fn check_item(item: &Value, request: &ResourceList, limit: &ResourceList, errs: &mut Vec<String>) {
    let kind = item_type(item);
    let some = Some(item);
    for (name, v) in &list(some, "min") {
        errs.extend(min_constraint(kind, name, v, request, limit));
    }
    for (name, v) in &list(some, "max") {
        errs.extend(max_constraint(kind, name, v, request, limit));
    }
    for (name, v) in &list(some, "maxLimitRequestRatio") {
        errs.extend(ratio_constraint(kind, name, v, request, limit));
    }
}

fn add_list(sum: &mut ResourceList, more: &ResourceList) {
    for (name, q) in more {
        match sum.get_mut(name) {
            Some(total) => total.add(q),
            None => {
                sum.insert(name.clone(), q.clone());
            }
        }
    }
}

fn max_list(into: &mut ResourceList, other: &ResourceList) {
    for (name, q) in other {
        if into
            .get(name)
            .is_none_or(|have| q.cmp_value(have) == Ordering::Greater)
        {
            into.insert(name.clone(), q.clone());
        }
    }
}

/// Upstream `podRequests` / `podLimits` (spec only; pod-level resources are an alpha
/// feature, off by default): the containers' sum, at least the largest init container,
/// with restartable (sidecar) init containers counted alongside.
fn pod_total(pod: &Value, key: &str) -> ResourceList {
    let resources = |c: &Value| list(c.get("resources"), key);
    let mut total = ResourceList::new();
    for c in containers(pod, "containers") {
        add_list(&mut total, &resources(c));
    }
    let mut sidecars = ResourceList::new();
    let mut init = ResourceList::new();
    for c in containers(pod, "initContainers") {
        let own = resources(c);
        let counted = if c.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            add_list(&mut total, &own);
            add_list(&mut sidecars, &own);
            sidecars.clone()
        } else {
            let mut tmp = own;
            add_list(&mut tmp, &sidecars);
            tmp
        };
        max_list(&mut init, &counted);
    }
    max_list(&mut total, &init);
    total
}

/// Upstream `PodValidateLimitFunc`: every violation, in order.
pub fn validate_pod(limit_range: &Value, pod: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    for item in items(limit_range) {
        match item_type(item) {
            "Container" => {
                for key in ["containers", "initContainers"] {
                    for c in containers(pod, key) {
                        let res = c.get("resources");
                        check_item(
                            item,
                            &list(res, "requests"),
                            &list(res, "limits"),
                            &mut errs,
                        );
                    }
                }
            }
            "Pod" => {
                let (requests, limits) = (pod_total(pod, "requests"), pod_total(pod, "limits"));
                check_item(item, &requests, &limits, &mut errs);
            }
            _ => {}
        }
    }
    errs
}

/// Upstream `PersistentVolumeClaimValidateLimitFunc`: storage bounds on the requests.
pub fn validate_claim(limit_range: &Value, claim: &Value) -> Vec<String> {
    let requests = list(claim.pointer("/spec/resources"), "requests");
    let mut errs = Vec::new();
    for item in items(limit_range) {
        if item_type(item) != "PersistentVolumeClaim" {
            continue;
        }
        for (name, v) in &list(Some(item), "min") {
            errs.extend(min_constraint(
                "PersistentVolumeClaim",
                name,
                v,
                &requests,
                &ResourceList::new(),
            ));
        }
        for (name, v) in &list(Some(item), "max") {
            errs.extend(max_request_constraint(
                "PersistentVolumeClaim",
                name,
                v,
                &requests,
            ));
        }
    }
    errs
}

/// Upstream `utilerrors.NewAggregate(errs).Error()`: one message as is, several
/// (duplicates dropped) in brackets; `None` when there is none.
pub fn aggregate(errs: &[String]) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    for e in errs {
        if !seen.contains(&e.as_str()) {
            seen.push(e);
        }
    }
    match seen.len() {
        0 => None,
        1 => Some(seen[0].to_owned()),
        _ => Some(format!("[{}]", seen.join(", "))),
    }
}
