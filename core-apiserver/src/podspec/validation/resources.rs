//! Upstream `ValidateContainerResourceRequirements` (`validateResourceRequirements` with
//! `validateContainerResourceName`). Resource maps are walked in sorted key order (upstream
//! walks Go maps in random order).

use std::cmp::Ordering;

use kas_apimachinery::resource::Quantity;
use kas_apimachinery::validation::field::{self, Path};
use serde_json::{Map, Value};

use super::json::raw;
use crate::helper::{
    is_extended_resource_name, is_huge_page_resource_name, is_integer_resource_name,
    is_native_resource, validate_resource_name,
};

/// True when `q` is below zero.
pub fn is_negative(q: &Quantity) -> bool {
    Quantity::parse("0").is_ok_and(|zero| q.cmp_value(&zero) == Ordering::Less)
}

/// Upstream `IsOvercommitAllowed`.
fn is_overcommit_allowed(name: &str) -> bool {
    is_native_resource(name) && !is_huge_page_resource_name(name)
}

/// Upstream `validateContainerResourceName`.
fn validate_container_resource_name(name: &str, path: &Path) -> Vec<field::Error> {
    let mut errs = validate_resource_name(name, path);
    if !name.contains('/') {
        let standard = ["cpu", "memory", "ephemeral-storage"].contains(&name)
            || is_huge_page_resource_name(name);
        if !standard {
            errs.push(field::invalid(
                path,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native_resource(name) && !is_extended_resource_name(name) {
        errs.push(field::invalid(
            path,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
    errs
}

/// Upstream `ValidateResourceQuantityValue`.
pub(crate) fn validate_quantity_value(name: &str, q: &Quantity, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if is_negative(q) {
        let msg = kas_apimachinery::validation::meta::IS_NEGATIVE_ERROR_MSG;
        errs.push(field::invalid(path, q.canonical(), msg));
    }
    if is_integer_resource_name(name) && q.milli_value() % 1000 != 0 {
        errs.push(field::invalid(
            path,
            raw(q.go_syntax()),
            "must be an integer",
        ));
    }
    errs
}

/// Upstream `IsHugePageResourceValueDivisible`.
fn huge_page_divisible(name: &str, q: &Quantity) -> bool {
    let Some(size) = name
        .strip_prefix("hugepages-")
        .and_then(|s| Quantity::parse(s).ok())
    else {
        return false;
    };
    let page = size.value();
    if page <= 0 || size.milli_value() % 1000 != 0 {
        return false;
    }
    q.value() % page == 0
}

/// Upstream `validateResourceQuantityHugePageValue`.
fn huge_page_value(name: &str, q: &Quantity, path: &Path) -> Option<field::Error> {
    if huge_page_divisible(name, q) {
        return None;
    }
    let s = q.canonical();
    let msg = format!("{s} is not positive integer multiple of {name}");
    Some(field::invalid(path, s.as_str(), &msg))
}

/// The parsed quantities of a resource list; unparsable ones are the decoder's to refuse.
fn list(requirements: &Value, key: &str) -> Vec<(String, Quantity)> {
    let empty = Map::new();
    let map = requirements
        .get(key)
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    map.iter()
        .filter_map(|(k, v)| {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return None,
            };
            Quantity::parse(&s).ok().map(|q| (k.clone(), q))
        })
        .collect()
}

/// Upstream `ValidateContainerResourceRequirements` (resource claims aside: DRA is off).
pub fn validate_resource_requirements(requirements: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let lim_path = path.child("limits");
    let req_path = path.child("requests");
    let limits = list(requirements, "limits");
    let requests = list(requirements, "requests");
    let qos = |n: &str| n == "cpu" || n == "memory";
    let mut cpu_or_memory = false;
    let mut huge_pages = false;
    for (name, q) in &limits {
        let p = lim_path.key(name);
        errs.extend(validate_container_resource_name(name, &p));
        errs.extend(validate_quantity_value(name, q, &p));
        if is_huge_page_resource_name(name) {
            huge_pages = true;
            errs.extend(huge_page_value(name, q, &p));
        }
        cpu_or_memory |= qos(name);
    }
    for (name, q) in &requests {
        let p = req_path.key(name);
        errs.extend(validate_container_resource_name(name, &p));
        errs.extend(validate_quantity_value(name, q, &p));
        if let Some((_, limit)) = limits.iter().find(|(n, _)| n == name) {
            let ord = q.cmp_value(limit);
            if ord != Ordering::Equal && !is_overcommit_allowed(name) {
                let msg = format!("must be equal to {name} limit of {}", limit.canonical());
                errs.push(field::invalid(&req_path, q.canonical(), &msg));
            } else if ord == Ordering::Greater {
                let msg = format!(
                    "must be less than or equal to {name} limit of {}",
                    limit.canonical()
                );
                errs.push(field::invalid(&req_path, q.canonical(), &msg));
            }
        } else if !is_overcommit_allowed(name) {
            let msg = "Limit must be set for non overcommitable resources";
            errs.push(field::required(&lim_path, msg));
        }
        if is_huge_page_resource_name(name) {
            huge_pages = true;
            errs.extend(huge_page_value(name, q, &p));
        }
        cpu_or_memory |= qos(name);
    }
    if !cpu_or_memory && huge_pages {
        errs.push(field::forbidden(path, "HugePages require cpu or memory"));
    }
    errs
}
