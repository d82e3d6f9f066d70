//! RFC 6902 JSON patch as upstream applies it: decoded as `handlers.applyJSPatch` does,
//! applied with evanphx/json-patch v4.12 rules.

use serde_json::{Map, Value};

use super::{FieldValidation, PatchError, Result};
use crate::golang::json::{describe, unmarshal};
use crate::golang::strconv::atoi;

/// Upstream's `maxJSONPatchOperations`.
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10000;

/// Applies a JSON patch body to `doc` under the server's default field validation (Warn).
pub fn json_patch(doc: &Value, patch: &[u8]) -> Result<Value> {
    json_patch_with(doc, patch, FieldValidation::Warn)
}

/// Applies a JSON patch body to `doc`. Decoding failures are 400 (prefixed
/// `error decoding patch: ` under Warn and Strict, as upstream's strict pre-decode does), too
/// many operations 413, and any failure while applying 422.
pub fn json_patch_with(doc: &Value, patch: &[u8], validation: FieldValidation) -> Result<Value> {
    let ops = decode(patch, validation)?;
    if ops.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(PatchError::TooManyOperations {
            max: MAX_JSON_PATCH_OPERATIONS,
            got: ops.len(),
        });
    }
    let mut doc = doc.clone();
    for op in &ops {
        apply_op(&mut doc, op).map_err(PatchError::Unprocessable)?;
    }
    Ok(doc)
}

fn decode(patch: &[u8], validation: FieldValidation) -> Result<Vec<Map<String, Value>>> {
    let strict = validation != FieldValidation::Ignore;
    let value = unmarshal(patch).map_err(|e| {
        PatchError::BadRequest(if strict {
            format!("error decoding patch: {e}")
        } else {
            e
        })
    })?;
    if let Some(e) = strict.then(|| strict_type_error(&value)).flatten() {
        return Err(PatchError::BadRequest(format!("error decoding patch: {e}")));
    }
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .into_iter()
            .map(|item| match item {
                Value::Object(op) => Ok(op),
                Value::Null => Ok(Map::new()),
                other => Err(PatchError::BadRequest(format!(
                    "json: cannot unmarshal {} into Go value of type jsonpatch.Operation",
                    describe(&other)
                ))),
            })
            .collect(),
        other => Err(PatchError::BadRequest(format!(
            "json: cannot unmarshal {} into Go value of type jsonpatch.Patch",
            describe(&other)
        ))),
    }
}

/// The first type error of decoding into upstream's `[]handlers.jsonPatchOp`.
fn strict_type_error(value: &Value) -> Option<String> {
    let items = match value {
        Value::Null => return None,
        Value::Array(items) => items,
        other => {
            return Some(format!(
                "json: cannot unmarshal {} into Go value of type []handlers.jsonPatchOp",
                describe(other)
            ));
        }
    };
    for item in items {
        match item {
            Value::Null => {}
            Value::Object(op) => {
                for field in ["op", "path", "from"] {
                    match op.get(field) {
                        None | Some(Value::Null | Value::String(_)) => {}
                        Some(other) => {
                            return Some(format!(
                                "json: cannot unmarshal {} into Go struct field jsonPatchOp.{field} of type string",
                                describe(other)
                            ));
                        }
                    }
                }
            }
            other => {
                return Some(format!(
                    "json: cannot unmarshal {} into Go value of type handlers.jsonPatchOp",
                    describe(other)
                ));
            }
        }
    }
    None
}

const MISSING: &str = "missing value";
const INVALID_INDEX: &str = "invalid index referenced";

fn kind(op: &Map<String, Value>) -> &str {
    match op.get("op") {
        Some(Value::String(s)) => s,
        _ => "unknown",
    }
}

/// `Operation.Path()` / `From()`: the string, or why not.
fn string_field(op: &Map<String, Value>, field: &str) -> Result<String, String> {
    match op.get(field) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Null) | None if field == "path" => {
            Err(format!("operation missing path field: {MISSING}"))
        }
        Some(Value::Null) | None => Err(format!("operation, missing from field: {MISSING}")),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go value of type string",
            describe(other)
        )),
    }
}

fn apply_op(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    match kind(op) {
        "add" => add(doc, op),
        "remove" => remove(doc, op),
        "replace" => replace(doc, op),
        "move" => move_op(doc, op),
        "test" => test(doc, op),
        "copy" => copy(doc, op),
        other => Err(format!("Unexpected kind: {other}")),
    }
}

/// The operation's value; a missing `value` behaves as `null` (evanphx stores a nil node).
fn value_of(op: &Map<String, Value>) -> Value {
    op.get("value").cloned().unwrap_or(Value::Null)
}

fn decode_key(k: &str) -> String {
    k.replace("~1", "/").replace("~0", "~")
}

/// Resolves a (possibly negative) index against `len`; `None` when out of range.
fn resolve(idx: i64, len: usize) -> Option<usize> {
    let len = len as i64;
    let idx = if idx < 0 { idx + len } else { idx };
    (0..len).contains(&idx).then_some(idx as usize)
}

fn invalid_index(idx: i64) -> String {
    format!("Unable to access invalid index: {idx}: {INVALID_INDEX}")
}

/// evanphx `findObject`: the container holding the last segment of `path`, and that
/// segment decoded. Every step must reach a non-null object or array.
fn find_object<'a>(doc: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let split: Vec<&str> = path.split('/').collect();
    if split.len() < 2 {
        return None;
    }
    let mut cur = doc;
    for part in &split[1..split.len() - 1] {
        let part = decode_key(part);
        let next = match cur {
            Value::Object(m) => m.get_mut(&part)?,
            Value::Array(a) => {
                let len = a.len();
                let idx = resolve(part.parse::<i64>().ok()?, len)?;
                &mut a[idx]
            }
            _ => return None,
        };
        if !matches!(next, Value::Object(_) | Value::Array(_)) {
            return None;
        }
        cur = next;
    }
    Some((cur, decode_key(split[split.len() - 1])))
}

/// `container.get`: `Ok(None)` for a missing or null object member.
fn get(con: &Value, key: &str) -> Result<Option<Value>, String> {
    match con {
        Value::Object(m) => Ok(m.get(key).filter(|v| !v.is_null()).cloned()),
        Value::Array(a) => {
            let idx = atoi(key).map_err(|e| e.to_string())?;
            match resolve(idx, a.len()) {
                Some(i) => Ok(Some(a[i].clone()).filter(|v| !v.is_null())),
                None => Err(invalid_index(idx)),
            }
        }
        _ => Err(MISSING.to_owned()),
    }
}

fn con_add(con: &mut Value, key: &str, val: Value) -> Result<(), String> {
    match con {
        Value::Object(m) => {
            m.insert(key.to_owned(), val);
            Ok(())
        }
        Value::Array(a) => {
            if key == "-" {
                a.push(val);
                return Ok(());
            }
            let idx = atoi(key)
                .map_err(|e| format!("value was not a proper array index: '{key}': {e}"))?;
            let len = a.len() as i64 + 1;
            if idx >= len || idx < -len {
                return Err(invalid_index(idx));
            }
            let at = if idx < 0 { idx + len } else { idx };
            a.insert(at as usize, val);
            Ok(())
        }
        _ => Err(MISSING.to_owned()),
    }
}

fn con_remove(con: &mut Value, key: &str) -> Result<(), String> {
    match con {
        Value::Object(m) => match m.remove(key) {
            Some(_) => Ok(()),
            None => Err(format!(
                "Unable to remove nonexistent key: {key}: {MISSING}"
            )),
        },
        Value::Array(a) => {
            let idx = atoi(key).map_err(|e| e.to_string())?;
            match resolve(idx, a.len()) {
                Some(i) => {
                    a.remove(i);
                    Ok(())
                }
                None => Err(invalid_index(idx)),
            }
        }
        _ => Err(MISSING.to_owned()),
    }
}

fn add(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let path = string_field(op, "path")
        .map_err(|_| format!("add operation failed to decode path: {MISSING}"))?;
    let (con, key) = find_object(doc, &path).ok_or_else(|| {
        format!("add operation does not apply: doc is missing path: \"{path}\": {MISSING}")
    })?;
    con_add(con, &key, value_of(op)).map_err(|e| format!("error in add for path: '{path}': {e}"))
}

fn remove(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let path = string_field(op, "path")
        .map_err(|_| format!("remove operation failed to decode path: {MISSING}"))?;
    let (con, key) = find_object(doc, &path).ok_or_else(|| {
        format!("remove operation does not apply: doc is missing path: \"{path}\": {MISSING}")
    })?;
    con_remove(con, &key).map_err(|e| format!("error in remove for path: '{path}': {e}"))
}

fn replace(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let path = string_field(op, "path")
        .map_err(|e| format!("replace operation failed to decode path: {e}"))?;
    if path.is_empty() {
        let val = value_of(op);
        if !matches!(val, Value::Object(_) | Value::Array(_)) {
            return Err("replace operation value must be object or array".to_owned());
        }
        *doc = val;
        return Ok(());
    }
    let (con, key) = find_object(doc, &path).ok_or_else(|| {
        format!("replace operation does not apply: doc is missing path: {path}: {MISSING}")
    })?;
    // A missing object member is no error here: evanphx v4 then adds it.
    get(con, &key).map_err(|_| {
        format!("replace operation does not apply: doc is missing key: {path}: {MISSING}")
    })?;
    match con {
        Value::Object(m) => {
            m.insert(key, value_of(op));
        }
        Value::Array(a) => {
            let idx = atoi(&key).map_err(|e| e.to_string())?;
            if let Some(i) = resolve(idx, a.len()) {
                a[i] = value_of(op);
            }
        }
        _ => {}
    }
    Ok(())
}

fn move_op(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let from = string_field(op, "from")
        .map_err(|e| format!("move operation failed to decode from: {e}"))?;
    let (con, key) = find_object(doc, &from).ok_or_else(|| {
        format!("move operation does not apply: doc is missing from path: {from}: {MISSING}")
    })?;
    let val = get(con, &key).map_err(|e| format!("error in move for path: '{key}': {e}"))?;
    con_remove(con, &key).map_err(|e| format!("error in move for path: '{key}': {e}"))?;
    let path = string_field(op, "path")
        .map_err(|e| format!("move operation failed to decode path: {e}"))?;
    let (con, key) = find_object(doc, &path).ok_or_else(|| {
        format!("move operation does not apply: doc is missing destination path: {path}: {MISSING}")
    })?;
    con_add(con, &key, val.unwrap_or(Value::Null))
        .map_err(|e| format!("error in move for path: '{path}': {e}"))
}

fn test(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let path = string_field(op, "path")
        .map_err(|e| format!("test operation failed to decode path: {e}"))?;
    let failed = || format!("testing value {path} failed: test failed");
    if path.is_empty() {
        return if op.get("value") == Some(doc) {
            Ok(())
        } else {
            Err(failed())
        };
    }
    let (con, key) = find_object(doc, &path).ok_or_else(|| {
        format!("test operation does not apply: is missing path: {path}: {MISSING}")
    })?;
    let val = get(con, &key).map_err(|e| format!("error in test for path: '{path}': {e}"))?;
    match (val, op.get("value")) {
        // A missing or null member passes against `"value": null`.
        (None, Some(Value::Null)) => Ok(()),
        (Some(v), Some(want)) if &v == want => Ok(()),
        _ => Err(failed()),
    }
}

fn copy(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let from = string_field(op, "from")
        .map_err(|e| format!("copy operation failed to decode from: {e}"))?;
    let (con, key) = find_object(doc, &from).ok_or_else(|| {
        format!("copy operation does not apply: doc is missing from path: {from}: {MISSING}")
    })?;
    let val = get(con, &key).map_err(|e| format!("error in copy for from: '{from}': {e}"))?;
    let path = string_field(op, "path")
        .map_err(|_| format!("copy operation failed to decode path: {MISSING}"))?;
    let (con, key) = find_object(doc, &path).ok_or_else(|| {
        format!("copy operation does not apply: doc is missing destination path: {path}: {MISSING}")
    })?;
    // evanphx copies a missing member as null.
    con_add(con, &key, val.unwrap_or(Value::Null))
        .map_err(|e| format!("error while adding value during copy: {e}"))
}
