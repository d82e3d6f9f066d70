//! Upstream's downward-API selectors (`validateObjectFieldSelector`,
//! `validateContainerResourceFieldSelector`) and key selectors of env vars.

use kas_apimachinery::resource::Quantity;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::is_qualified_name;
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use serde_json::Value;

use super::json::{invalid_each, str_of};
use crate::resources::configmaps::is_config_map_key;

/// Upstream `validEnvDownwardAPIFieldPathExpressions`, sorted.
pub const ENV_FIELD_PATHS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// Upstream `validVolumeDownwardAPIFieldPathExpressions`, sorted.
pub const VOLUME_FIELD_PATHS: [&str; 5] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
];

/// Upstream `validContainerResourceFieldPathExpressions`, sorted.
const RESOURCE_FIELD_PATHS: [&str; 6] = [
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

/// Labels `ConvertDownwardAPIFieldLabel` accepts unsubscripted.
const CONVERTIBLE_LABELS: [&str; 14] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.serviceAccountName",
    "spec.schedulerName",
    "status.phase",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// Upstream `fieldpath.SplitMaybeSubscriptedPath`.
fn split_subscripted(field_path: &str) -> Option<(&str, &str)> {
    let s = field_path.strip_suffix("']")?;
    let (path, subscript) = s.split_once("['")?;
    (!path.is_empty()).then_some((path, subscript))
}

/// Upstream `podshelper.ConvertDownwardAPIFieldLabel` (its error text).
fn convert_field_label<'a>(version: &str, label: &'a str) -> Result<&'a str, String> {
    if version != "v1" {
        return Err(format!("unsupported pod version: {version}"));
    }
    if let Some((path, _)) = split_subscripted(label) {
        return match path {
            "metadata.annotations" | "metadata.labels" => Ok(label),
            _ => Err(format!("field label does not support subscript: {label}")),
        };
    }
    if CONVERTIBLE_LABELS.contains(&label) {
        return Ok(label);
    }
    if label == "spec.host" {
        return Ok("spec.nodeName");
    }
    Err(format!("field label not supported: {label}"))
}

/// Upstream `validateObjectFieldSelector`.
pub fn validate_object_field_selector(
    fs: &Value,
    expressions: &[&str],
    path: &Path,
) -> Vec<field::Error> {
    let api_version = str_of(fs, "apiVersion");
    if api_version.is_empty() {
        return vec![field::required(&path.child("apiVersion"), "")];
    }
    let field_path = str_of(fs, "fieldPath");
    if field_path.is_empty() {
        return vec![field::required(&path.child("fieldPath"), "")];
    }
    let internal = match convert_field_label(api_version, field_path) {
        Ok(p) => p,
        Err(e) => {
            let msg = format!("error converting fieldPath: {e}");
            return vec![field::invalid(&path.child("fieldPath"), field_path, &msg)];
        }
    };
    match split_subscripted(internal) {
        Some(("metadata.annotations", sub)) => {
            let sub = sub.to_lowercase();
            invalid_each(path, &sub, is_qualified_name(&sub))
        }
        Some(("metadata.labels", sub)) => invalid_each(path, sub, is_qualified_name(sub)),
        Some((p, _)) => vec![field::invalid(path, p, "does not support subscript")],
        None if !expressions.contains(&internal) => {
            vec![field::not_supported(
                &path.child("fieldPath"),
                internal,
                expressions,
            )]
        }
        None => Vec::new(),
    }
}

const MEMORY_DIVISORS: [&str; 13] = [
    "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei",
];

/// Upstream `validateContainerResourceDivisor`.
fn validate_divisor(resource: &str, divisor: Option<&str>, path: &Path) -> Vec<field::Error> {
    let Some(q) = divisor.and_then(|d| Quantity::parse(d).ok()) else {
        return Vec::new();
    };
    if q.is_zero() {
        return Vec::new();
    }
    let s = q.canonical();
    let p = path.child("divisor");
    let units = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei";
    let bad = match resource {
        "limits.cpu" | "requests.cpu" if !["1m", "1"].contains(&s.as_str()) => {
            Some("only divisor's values 1m and 1 are supported with the cpu resource".to_owned())
        }
        "limits.memory" | "requests.memory" if !MEMORY_DIVISORS.contains(&s.as_str()) => Some(
            format!("only divisor's values {units} are supported with the memory resource"),
        ),
        "limits.ephemeral-storage" | "requests.ephemeral-storage"
            if !MEMORY_DIVISORS.contains(&s.as_str()) =>
        {
            Some(format!(
                "only divisor's values {units} are supported with the local ephemeral storage resource"
            ))
        }
        _ => None,
    };
    let huge = (resource.starts_with("requests.hugepages-")
        || resource.starts_with("limits.hugepages-"))
        && !MEMORY_DIVISORS.contains(&s.as_str());
    let mut errs: Vec<field::Error> = bad
        .iter()
        .map(|m| field::invalid(&p, resource, m))
        .collect();
    if huge {
        let m = format!("only divisor's values {units} are supported with the hugepages resource");
        errs.push(field::invalid(&p, resource, &m));
    }
    errs
}

/// Upstream `validateContainerResourceFieldSelector` (hugepages prefixes allowed).
pub fn validate_resource_field_selector(
    fs: &Value,
    path: &Path,
    volume: bool,
) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let resource = str_of(fs, "resource");
    if volume && str_of(fs, "containerName").is_empty() {
        errs.push(field::required(&path.child("containerName"), ""));
    } else if resource.is_empty() {
        errs.push(field::required(&path.child("resource"), ""));
    } else if !RESOURCE_FIELD_PATHS.contains(&resource)
        && !resource.starts_with("limits.hugepages-")
        && !resource.starts_with("requests.hugepages-")
    {
        errs.push(field::not_supported(
            &path.child("resource"),
            resource,
            &RESOURCE_FIELD_PATHS,
        ));
    }
    let divisor = fs.get("divisor").and_then(divisor_str);
    errs.extend(validate_divisor(resource, divisor.as_deref(), path));
    errs
}

fn divisor_str(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Upstream `validateConfigMapKeySelector` / `validateSecretKeySelector`.
pub fn validate_key_selector(s: &Value, path: &Path) -> Vec<field::Error> {
    let name = str_of(s, "name");
    let mut errs = invalid_each(
        &path.child("name"),
        name,
        name_is_dns_subdomain(name, false),
    );
    let key = str_of(s, "key");
    if key.is_empty() {
        errs.push(field::required(&path.child("key"), ""));
    } else {
        errs.extend(invalid_each(
            &path.child("key"),
            key,
            is_config_map_key(key),
        ));
    }
    errs
}
