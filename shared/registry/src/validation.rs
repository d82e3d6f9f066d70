//! `ObjectMeta` validation every strategy starts with, after upstream's
//! `ValidateObjectMeta` and `ValidateObjectMetaUpdate`, on JSON objects.

use std::collections::BTreeMap;

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::{
    ValidateNameFn, validate_annotations, validate_labels, validate_object_name,
};
use serde_json::Value;

use crate::meta;
use crate::strategy::FieldErrors;

fn string_map(obj: &Value, field_name: &str) -> BTreeMap<String, String> {
    meta::metadata(obj)
        .and_then(|m| m.get(field_name))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// Name (by `name_fn`), generateName, namespace, labels and annotations.
pub fn validate_object_meta(obj: &Value, namespaced: bool, name_fn: ValidateNameFn) -> FieldErrors {
    let path = Path::new("metadata");
    let mut errs = validate_object_name(
        meta::name(obj),
        meta::str_field(obj, "generateName"),
        meta::namespace(obj),
        namespaced,
        name_fn,
        &path,
    );
    errs.extend(validate_labels(
        &string_map(obj, "labels"),
        &path.child("labels"),
    ));
    errs.extend(validate_annotations(
        &string_map(obj, "annotations"),
        &path.child("annotations"),
    ));
    errs.iter().map(field::Error::to_cause).collect()
}

/// What an update may not change in metadata, in upstream's order: no new finalizers on
/// an object being deleted, then the immutable fields.
pub fn validate_object_meta_update(new: &Value, old: &Value) -> FieldErrors {
    let path = Path::new("metadata");
    let mut errs = Vec::new();
    if meta::metadata(old).is_some_and(|m| m.contains_key("deletionTimestamp")) {
        errs.extend(validate_no_new_finalizers(
            new,
            old,
            &path.child("finalizers"),
        ));
    }
    for f in ["name", "namespace", "uid", "creationTimestamp"] {
        let (n, o) = (meta::str_field(new, f), meta::str_field(old, f));
        if n != o {
            errs.push(field::invalid(&path.child(f), n, "field is immutable").to_cause());
        }
    }
    let grace = |obj: &Value| {
        meta::metadata(obj)
            .and_then(|m| m.get("deletionGracePeriodSeconds"))
            .and_then(Value::as_i64)
    };
    if let Some(period) = grace(new)
        && grace(old) != Some(period)
    {
        let path = path.child("deletionGracePeriodSeconds");
        errs.push(field::invalid(&path, period, "field is immutable").to_cause());
    }
    errs
}

/// Upstream's `ValidateNoNewFinalizers`: the finalizers `new` has that `old` has not, as
/// Go prints a sorted `[]string`.
fn validate_no_new_finalizers(new: &Value, old: &Value, path: &Path) -> FieldErrors {
    use crate::store::gc::finalizers;
    let old: std::collections::BTreeSet<&str> = finalizers(old).into_iter().collect();
    let new: std::collections::BTreeSet<&str> = finalizers(new).into_iter().collect();
    let extra: Vec<String> = new
        .difference(&old)
        .map(|f| kas_apimachinery::golang::strconv::quote(f))
        .collect();
    if extra.is_empty() {
        return Vec::new();
    }
    let detail = format!(
        "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
        extra.join(", ")
    );
    vec![field::forbidden(path, &detail).to_cause()]
}
