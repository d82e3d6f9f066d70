//! RFC 7386 JSON merge patch as upstream applies it: evanphx/json-patch v4.12 `MergePatch`,
//! after the strict pre-decode that `handlers.applyJSPatch` runs under Warn and Strict.

use serde_json::{Map, Value};

use super::{FieldValidation, PatchError, Result};
use crate::golang::json::{describe, unmarshal};

const BAD_PATCH: &str = "Invalid JSON Patch";

/// Applies a merge patch body to `doc` under the server's default field validation (Warn).
pub fn merge_patch(doc: &Value, patch: &[u8]) -> Result<Value> {
    merge_patch_with(doc, patch, FieldValidation::Warn)
}

/// Applies a merge patch body to `doc`.
///
/// - A member set to `null` is removed; objects are merged member by member; any other value
///   replaces. Nulls are pruned from objects that the patch adds, kept inside arrays.
/// - A top-level array patch replaces the whole document (the caller's decode then fails).
/// - An undecodable body, or `null`, a string, number or bool, is 400 `Invalid JSON Patch`
///   (under Warn and Strict a non-object is rejected first with Go's decoding text).
pub fn merge_patch_with(doc: &Value, patch: &[u8], validation: FieldValidation) -> Result<Value> {
    let parsed = unmarshal(patch);
    if validation != FieldValidation::Ignore {
        match &parsed {
            Err(e) => return Err(PatchError::BadRequest(format!("error decoding patch: {e}"))),
            Ok(v) if !matches!(v, Value::Object(_) | Value::Null) => {
                return Err(PatchError::BadRequest(format!(
                    "error decoding patch: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    describe(v)
                )));
            }
            Ok(_) => {}
        }
    }
    let bad = || PatchError::BadRequest(BAD_PATCH.to_owned());
    match parsed.map_err(|_| bad())? {
        Value::Object(patch) => match doc {
            Value::Object(doc) => {
                let mut doc = doc.clone();
                merge_docs(&mut doc, patch);
                Ok(Value::Object(doc))
            }
            _ => {
                let mut patch = Value::Object(patch);
                prune_nulls(&mut patch);
                Ok(patch)
            }
        },
        mut array @ Value::Array(_) => {
            prune_nulls(&mut array);
            Ok(array)
        }
        _ => Err(bad()),
    }
}

fn merge_docs(doc: &mut Map<String, Value>, patch: Map<String, Value>) {
    for (k, v) in patch {
        if v.is_null() {
            doc.remove(&k);
            continue;
        }
        match doc.get_mut(&k) {
            Some(cur) if !cur.is_null() => merge(cur, v),
            _ => {
                let mut v = v;
                prune_nulls(&mut v);
                doc.insert(k, v);
            }
        }
    }
}

fn merge(cur: &mut Value, mut patch: Value) {
    match (&mut *cur, patch) {
        (Value::Object(c), Value::Object(p)) => merge_docs(c, p),
        // A patch that is no object replaces an object as it is, nulls and all.
        (Value::Object(_), p) => *cur = p,
        (_, p) => {
            patch = p;
            prune_nulls(&mut patch);
            *cur = patch;
        }
    }
}

/// Drops null members of objects, at any depth; arrays keep their null elements.
fn prune_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            m.values_mut().for_each(prune_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(prune_nulls),
        _ => {}
    }
}
