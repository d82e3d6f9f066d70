//! Upstream `objectmeta.Validate` (`validation.go`): TypeMeta and ObjectMeta of embedded
//! resources.

use std::collections::BTreeMap;

use kas_apimachinery::validation::field::{self, ErrorList, Path};
use kas_apimachinery::validation::is_dns1035_label;
use kas_apimachinery::validation::meta::{
    validate_annotations, validate_labels, validate_nonnegative_field, validate_object_name,
    validate_path_segment_name,
};
use serde_json::{Map, Value};

use super::decode_error;
use crate::schema::Structural;
use crate::schema::gofmt::bad_value;

/// Upstream `Validate`: the TypeMeta and ObjectMeta of every embedded resource of `obj`
/// (and of the root with `is_resource_root`). Object keys are visited in sorted order.
pub fn validate_embedded_resources(
    pth: &Path,
    obj: &Value,
    s: &Structural,
    is_resource_root: bool,
) -> ErrorList {
    if is_resource_root && !s.extensions.x_embedded_resource {
        let mut root = s.clone();
        root.extensions.x_embedded_resource = true;
        return validate_value(pth, obj, &root);
    }
    validate_value(pth, obj, s)
}

fn validate_value(pth: &Path, x: &Value, s: &Structural) -> ErrorList {
    let mut errs = ErrorList::new();
    match x {
        Value::Object(map) => {
            if s.extensions.x_embedded_resource {
                errs.extend(validate_embedded_resource(pth, map));
            }
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for k in keys {
                let v = &map[k.as_str()];
                if let Some(prop) = s.properties.get(k.as_str()) {
                    errs.extend(validate_value(&pth.child(k), v, prop));
                } else if let Some(ap) = &s.additional_properties
                    && let Some(ap) = ap.structural.as_deref()
                {
                    errs.extend(validate_value(&pth.key(k), v, ap));
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = s.items.as_deref() {
                for (i, v) in items.iter().enumerate() {
                    errs.extend(validate_value(&pth.index(i), v, item));
                }
            }
        }
        _ => {}
    }
    errs
}

fn validate_embedded_resource(pth: &Path, x: &Map<String, Value>) -> ErrorList {
    let mut errs = ErrorList::new();
    if !x.contains_key("apiVersion") {
        errs.push(field::required(
            &pth.child("apiVersion"),
            "must not be empty",
        ));
    }
    if !x.contains_key("kind") {
        errs.push(field::required(&pth.child("kind"), "must not be empty"));
    }
    if let Some(v) = x.get("apiVersion") {
        let p = pth.child("apiVersion");
        match v.as_str() {
            None => errs.push(field::invalid(&p, bad_value(v), "must be a string")),
            Some("") => errs.push(field::invalid(&p, "", "must not be empty")),
            Some(gv) if gv.matches('/').count() > 1 => errs.push(field::invalid(
                &p,
                gv,
                &format!("unexpected GroupVersion string: {gv}"),
            )),
            Some(_) => {}
        }
    }
    if let Some(v) = x.get("kind") {
        let p = pth.child("kind");
        match v.as_str() {
            None => errs.push(field::invalid(&p, bad_value(v), "must be a string")),
            Some("") => errs.push(field::invalid(&p, "", "must not be empty")),
            Some(kind) => {
                let msgs = is_dns1035_label(&kind.to_lowercase());
                if !msgs.is_empty() {
                    let detail = format!(
                        "may have mixed case, but should otherwise match: {}",
                        msgs.join(",")
                    );
                    errs.push(field::invalid(&p, kind, &detail));
                }
            }
        }
    }
    if let Some(v) = x.get("metadata") {
        errs.extend(validate_metadata(&pth.child("metadata"), v));
    }
    errs
}

fn string_map(meta: &Value, key: &str) -> BTreeMap<String, String> {
    meta.get(key)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// `GetObjectMeta` then `ValidateObjectMeta` with path-segment names, the name defaulted
/// to `fakename`, namespaced when a namespace is set.
fn validate_metadata(p: &Path, v: &Value) -> ErrorList {
    if let Some(err) = decode_error(v) {
        return vec![field::invalid(p, bad_value(v), &err)];
    }
    let str_field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default();
    let name = match str_field("name") {
        "" => "fakename",
        n => n,
    };
    let namespace = str_field("namespace");
    let mut errs = validate_object_name(
        name,
        str_field("generateName"),
        namespace,
        !namespace.is_empty(),
        validate_path_segment_name,
        p,
    );
    let generation = v.get("generation").and_then(Value::as_i64).unwrap_or(0);
    errs.extend(validate_nonnegative_field(
        generation,
        &p.child("generation"),
    ));
    errs.extend(validate_labels(
        &string_map(v, "labels"),
        &p.child("labels"),
    ));
    errs.extend(validate_annotations(
        &string_map(v, "annotations"),
        &p.child("annotations"),
    ));
    errs
}
