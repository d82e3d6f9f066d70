//! Strategic merge patch: upstream's `strategicpatch.StrategicMergeMapPatch` (server side:
//! parallel lists merged, unmatched nulls ignored), with a [`PatchSchema`] for the struct
//! tags.
//!
//! Upstream walks the patch's keys in Go's random map order; here they go in sorted order
//! (`$`-directives first), which gives the same result whenever upstream's is stable.

use serde_json::{Map, Value};

use super::order::{
    DIRECTIVE, bad_arg_type, deduplicate_scalars, find_by_key, go_eq, no_merge_key,
    normalize_element_order, partition, slice_element_type, validate_patch_with_set_order_list,
};
use super::schema::{PatchMeta, PatchSchema, PatchStrategy};
use super::{PatchError, Result};
use crate::golang::fmt::{GoKind, sprint_s, sprint_type_of, sprint_v};
use crate::golang::json::{describe, unmarshal};
use crate::golang::strconv::quote;

const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER: &str = "$setElementOrder";
const LIST_TYPE: &str = "[]interface {}";

fn bad_request(msg: &str) -> PatchError {
    PatchError::BadRequest(msg.to_owned())
}

/// Applies a strategic merge patch body, decoded as upstream's `strategicPatchObject` does
/// (a body that is no JSON object is 400 with Go's decoding text; `null` changes nothing).
pub fn strategic_merge_patch_bytes(
    original: &Value,
    patch: &[u8],
    schema: &dyn PatchSchema,
) -> Result<Value> {
    let patch = unmarshal(patch).map_err(PatchError::BadRequest)?;
    strategic_merge_patch(original, &patch, schema)
}

/// Applies a decoded strategic merge patch to `original`, both JSON objects.
///
/// Maps merge recursively and `null` deletes a key. Lists whose field has no `merge`
/// strategy are replaced; merging lists of maps merge element-wise by merge key, merging
/// primitive lists are unioned. Directives: `$patch: replace|delete` on maps and list
/// elements, `$retainKeys`, `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>`.
pub fn strategic_merge_patch(
    original: &Value,
    patch: &Value,
    schema: &dyn PatchSchema,
) -> Result<Value> {
    let original = match original {
        Value::Object(m) => m.clone(),
        _ => return Err(bad_request("invalid JSON document")),
    };
    let patch = match patch {
        Value::Object(m) => m.clone(),
        Value::Null => return Ok(Value::Object(original)),
        other => {
            return Err(PatchError::BadRequest(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                describe(other)
            )));
        }
    };
    let merger = Merger { schema };
    merger
        .merge_map(&mut Vec::new(), original, patch)
        .map(Value::Object)
}

struct Merger<'a> {
    schema: &'a dyn PatchSchema,
}

/// `extractKey`: the field a `$deleteFromPrimitiveList/...` or `$setElementOrder/...` key
/// names.
fn extract_key(key: &str, prefix: &str) -> Result<String> {
    match key.split_once('/') {
        Some((head, rest)) if head == prefix => Ok(rest.to_owned()),
        _ if prefix == DELETE_FROM_PRIMITIVE_LIST => {
            Err(bad_request("invalid patch format of primitive list"))
        }
        _ => Err(bad_request("invalid patch format of setElementOrder list")),
    }
}

fn sorted_keys(m: &Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<String> = m.keys().cloned().collect();
    keys.sort();
    keys
}

/// `handleDirectiveInMergeMap`.
fn directive_in_map(
    directive: &Value,
    mut patch: Map<String, Value>,
) -> Result<Map<String, Value>> {
    match directive.as_str() {
        Some("replace") => {
            patch.remove(DIRECTIVE);
            Ok(patch)
        }
        Some("delete") => Ok(Map::new()),
        _ => Err(bad_patch_type(directive, &patch)),
    }
}

fn bad_patch_type(directive: &Value, m: &Map<String, Value>) -> PatchError {
    PatchError::Other(format!(
        "unknown patch type: {} in map: {}",
        sprint_s(directive),
        sprint_v(&Value::Object(m.clone()))
    ))
}

/// `applyRetainKeysDirective`: drops the keys of `original` not listed in `$retainKeys`,
/// after checking that the patch sets no other key.
fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<()> {
    let Some(retain) = patch.remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let bad = || bad_request("invalid patch format of retainKeys");
    let list = retain.as_array().ok_or_else(bad)?;
    let listed = |k: &str| list.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null()
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            || k.starts_with(SET_ELEMENT_ORDER)
        {
            continue;
        }
        if !listed(k) {
            return Err(bad());
        }
    }
    original.retain(|k, _| listed(k));
    Ok(())
}

fn as_list(v: Option<&Value>) -> Result<Option<Vec<Value>>> {
    match v {
        None => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a.clone())),
        Some(other) => Err(bad_arg_type(LIST_TYPE, other)),
    }
}

impl Merger<'_> {
    /// `LookupPatchMetadata` for field `key` of the struct at `path`.
    fn lookup(&self, path: &[String], key: &str) -> Result<PatchMeta> {
        let mut full: Vec<&str> = path.iter().map(String::as_str).collect();
        full.push(key);
        if let Some(name) = self.schema.unknown_field(&full) {
            return Err(PatchError::Other(format!(
                "unable to find api field in struct {name} for the json field {}",
                quote(key)
            )));
        }
        Ok(self.schema.lookup(&full).unwrap_or_default())
    }

    /// `mergeMap`.
    fn merge_map(
        &self,
        path: &mut Vec<String>,
        mut original: Map<String, Value>,
        mut patch: Map<String, Value>,
    ) -> Result<Map<String, Value>> {
        if let Some(directive) = patch.get(DIRECTIVE).cloned() {
            return directive_in_map(&directive, patch);
        }
        apply_retain_keys(&mut original, &mut patch)?;
        self.merge_set_element_order(path, &mut original, &mut patch)?;
        for key in sorted_keys(&patch) {
            let Some(patch_v) = patch.remove(&key) else {
                continue;
            };
            let (key, is_delete_list) = if key.starts_with(DELETE_FROM_PRIMITIVE_LIST) {
                let field = extract_key(&key, DELETE_FROM_PRIMITIVE_LIST)?;
                (if field.is_empty() { key } else { field }, true)
            } else {
                (key, false)
            };
            if patch_v.is_null() {
                original.remove(&key);
                continue;
            }
            let same_type = original
                .get(&key)
                .map(|o| GoKind::of(o) == GoKind::of(&patch_v));
            if same_type != Some(true) {
                original.insert(key, patch_v);
                continue;
            }
            let meta = self.lookup(path, &key)?;
            let orig_v = original.remove(&key).unwrap_or_default();
            let merged = match (orig_v, patch_v) {
                (Value::Object(o), Value::Object(p)) if meta.strategy != PatchStrategy::Replace => {
                    path.push(key.clone());
                    let merged = self.merge_map(path, o, p);
                    path.pop();
                    Value::Object(merged?)
                }
                (Value::Array(o), Value::Array(p)) => Value::Array(self.merge_slice_handler(
                    path,
                    &key,
                    o,
                    p,
                    meta,
                    is_delete_list,
                )?),
                (_, p) => p,
            };
            original.insert(key, merged);
        }
        Ok(original)
    }

    /// `mergeSliceHandler`: merging lists merge, all others are replaced by the patch's.
    fn merge_slice_handler(
        &self,
        path: &mut Vec<String>,
        key: &str,
        original: Vec<Value>,
        patch: Vec<Value>,
        meta: PatchMeta,
        is_delete_list: bool,
    ) -> Result<Vec<Value>> {
        if meta.strategy != PatchStrategy::Merge {
            return Ok(patch);
        }
        path.push(key.to_owned());
        path.push("[]".to_owned());
        let merged = self.merge_slice(
            path,
            original,
            patch,
            meta.merge_key.unwrap_or(""),
            is_delete_list,
        );
        path.truncate(path.len() - 2);
        merged
    }

    /// `mergeSlice`; `path` ends with the list's `[]`.
    fn merge_slice(
        &self,
        path: &mut Vec<String>,
        original: Vec<Value>,
        patch: Vec<Value>,
        merge_key: &str,
        is_delete_list: bool,
    ) -> Result<Vec<Value>> {
        if original.is_empty() && patch.is_empty() {
            return Ok(original);
        }
        let kind = slice_element_type(&[&original, &patch])?;
        let (original, patch, merged) = if kind != GoKind::Map {
            if is_delete_list {
                return Ok(original
                    .into_iter()
                    .filter(|v| !patch.iter().any(|d| go_eq(d, v)))
                    .collect());
            }
            let mut both = original.clone();
            both.extend(patch.iter().cloned());
            (original, patch, deduplicate_scalars(both))
        } else {
            if merge_key.is_empty() {
                return Err(PatchError::Other(
                    "cannot merge lists without merge key for type struct".to_owned(),
                ));
            }
            let (original, patch) = special_elements(original, patch, merge_key)?;
            let merged = self.merge_by_key(path, original.clone(), &patch, merge_key)?;
            (original, patch, merged)
        };
        let (patch_items, server_only) = partition(merged, &patch, merge_key)?;
        normalize_element_order(patch_items, server_only, &patch, &original, merge_key, kind)
    }

    /// `mergeSliceWithoutSpecialElements`: merges each patch element into the original
    /// element with the same merge key, or appends it.
    fn merge_by_key(
        &self,
        path: &mut Vec<String>,
        mut original: Vec<Value>,
        patch: &[Value],
        merge_key: &str,
    ) -> Result<Vec<Value>> {
        for v in patch {
            let m = v
                .as_object()
                .ok_or_else(|| bad_arg_type("map[string]interface {}", v))?;
            let key_value = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
            match find_by_key(&original, merge_key, key_value)? {
                Some(i) => {
                    let o = match std::mem::take(&mut original[i]) {
                        Value::Object(o) => o,
                        _ => Map::new(),
                    };
                    original[i] = Value::Object(self.merge_map(path, o, m.clone())?);
                }
                None => original.push(v.clone()),
            }
        }
        Ok(original)
    }

    /// `mergePatchIntoOriginal`: merges each list named by a `$setElementOrder/<field>` with
    /// its patch and orders the result: `$setElementOrder` first, then the patch's order,
    /// then the live list's.
    fn merge_set_element_order(
        &self,
        path: &mut Vec<String>,
        original: &mut Map<String, Value>,
        patch: &mut Map<String, Value>,
    ) -> Result<()> {
        let keys: Vec<String> = sorted_keys(patch)
            .into_iter()
            .filter(|k| k.starts_with(SET_ELEMENT_ORDER))
            .collect();
        for key in keys {
            let Some(order) = patch.remove(&key) else {
                continue;
            };
            let order = match order {
                Value::Array(a) => a,
                other => {
                    return Err(PatchError::Other(format!(
                        "expected a {LIST_TYPE}, but received a {}",
                        sprint_type_of(&other)
                    )));
                }
            };
            let field = extract_key(&key, SET_ELEMENT_ORDER)?;
            let original_list = as_list(original.get(&field))?;
            let patch_list = as_list(patch.get(&field))?;
            let meta = self.lookup(path, &field)?;
            let merge_key = meta.merge_key.unwrap_or("");
            validate_patch_with_set_order_list(
                patch_list.as_deref().unwrap_or_default(),
                &order,
                merge_key,
            )?;
            let original_items = original_list.clone().unwrap_or_default();
            let patch_items = patch_list.clone().unwrap_or_default();
            let merged = match (original_list, patch_list) {
                (Some(o), None) => o,
                (None, Some(p)) => p,
                (Some(o), Some(p)) => self.merge_slice_handler(path, &field, o, p, meta, false)?,
                (None, None) => continue,
            };
            let (in_order, server_only) = partition(merged, &order, merge_key)?;
            let kind = slice_element_type(&[&original_items, &patch_items])?;
            let both = normalize_element_order(
                in_order,
                server_only,
                &order,
                &original_items,
                merge_key,
                kind,
            )?;
            original.insert(field.clone(), Value::Array(both));
            patch.remove(&field);
        }
        Ok(())
    }
}

/// `mergeSliceWithSpecialElements`: applies `$patch: delete` elements to `original` and
/// `$patch: replace` to the whole list; returns the list to merge into and the patch
/// elements left.
fn special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut rest = Vec::new();
    let mut replace = false;
    for v in patch {
        let Some(m) = v.as_object() else {
            rest.push(v);
            continue;
        };
        let Some(directive) = m.get(DIRECTIVE) else {
            rest.push(v);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let key_value = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
                while let Some(i) = find_by_key(&original, merge_key, key_value)? {
                    original.remove(i);
                }
            }
            Some("replace") => replace = true,
            Some("merge") => {
                return Err(PatchError::Other(
                    "merging lists cannot yet be specified in the patch".to_owned(),
                ));
            }
            _ => return Err(bad_patch_type(directive, m)),
        }
    }
    if replace {
        return Ok((rest, Vec::new()));
    }
    Ok((original, rest))
}
