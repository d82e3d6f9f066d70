//! Merging Swagger 2.0 documents as upstream's aggregator does, after kube-openapi's
//! `pkg/aggregator` over JSON values: `filter_by_paths` (`FilterSpecByPathsWithoutSideEffects`:
//! keep the paths under some prefixes and drop the definitions only the dropped paths
//! used) and `merge` (`MergeSpecsIgnorePathConflictRenamingDefinitionsAndParameters`: a
//! path the destination has is ignored; a definition or parameter of the same name but
//! other content is renamed `<name>_v2`, `_v3`, ... (reusing a renamed one that matches);
//! definitions equal but for their `x-kubernetes-group-version-kind` get the union of
//! both lists).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

const DEFINITION_PREFIX: &str = "#/definitions/";
const PARAMETER_PREFIX: &str = "#/parameters/";
const GVK: &str = "x-kubernetes-group-version-kind";

/// Calls `f` with every `$ref` in `value`.
fn each_ref<'a>(value: &'a Value, f: &mut impl FnMut(&'a str)) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => f(r),
                    _ => each_ref(v, f),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| each_ref(v, f)),
        _ => {}
    }
}

/// The path items of a `paths` object (its `x-` extensions are not paths).
fn path_items(paths: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    paths.iter().filter(|(k, _)| !k.starts_with("x-"))
}

/// The definitions the paths use, following references between definitions.
fn used_definitions(spec: &Value) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let mut pending: Vec<String> = Vec::new();
    let note = |r: &str, pending: &mut Vec<String>| {
        if let Some(name) = r.strip_prefix(DEFINITION_PREFIX) {
            pending.push(name.to_owned());
        }
    };
    if let Some(paths) = spec.get("paths").and_then(Value::as_object) {
        for (_, item) in path_items(paths) {
            each_ref(item, &mut |r| note(r, &mut pending));
        }
    }
    let definitions = spec.get("definitions");
    while let Some(name) = pending.pop() {
        if !used.insert(name.clone()) {
            continue;
        }
        if let Some(def) = definitions.and_then(|d| d.get(&name)) {
            each_ref(def, &mut |r| note(r, &mut pending));
        }
    }
    used
}

/// `spec` with only the paths under one of `prefixes`, and without the definitions only
/// the other paths used (unused ones stay).
pub fn filter_by_paths(spec: &Value, prefixes: &[String]) -> Value {
    let Some(paths) = spec.get("paths").and_then(Value::as_object) else {
        return spec.clone();
    };
    let initially_used = used_definitions(spec);
    let kept: Map<String, Value> = paths
        .iter()
        .filter(|(k, _)| k.starts_with("x-") || prefixes.iter().any(|p| k.starts_with(p)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut out = spec.clone();
    out["paths"] = Value::Object(kept);
    let used = used_definitions(&out);
    if let Some(defs) = out.get_mut("definitions").and_then(Value::as_object_mut) {
        defs.retain(|k, _| used.contains(k) || !initially_used.contains(k));
        if defs.is_empty() {
            out.as_object_mut().map(|o| o.remove("definitions"));
        }
    }
    out
}

/// Rewrites every `$ref` named in `renames` (whole references).
fn rename_refs(value: &mut Value, renames: &BTreeMap<String, String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                match v {
                    Value::String(r) if k == "$ref" => {
                        if let Some(new) = renames.get(r.as_str()) {
                            *r = new.clone();
                        }
                    }
                    _ => rename_refs(v, renames),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rename_refs(v, renames)),
        _ => {}
    }
}

/// Renames the entries of `section` (`definitions` or `parameters`) in `source` that
/// `dest` has with other content, and the references to them.
fn rename_conflicts(
    dest: &Value,
    source: &mut Value,
    section: &str,
    prefix: &str,
    equal: fn(&Value, &Value) -> bool,
) {
    let (Some(theirs), Some(ours)) = (
        source.get(section).and_then(Value::as_object),
        dest.get(section).and_then(Value::as_object),
    ) else {
        return;
    };
    let mut used: BTreeSet<String> = ours.keys().cloned().collect();
    let mut renames: BTreeMap<String, String> = BTreeMap::new();
    'entries: for (name, value) in theirs {
        match ours.get(name) {
            None => continue,
            Some(existing) if equal(existing, value) => continue,
            Some(_) => {}
        }
        let mut i = 1;
        let mut candidate;
        loop {
            i += 1;
            candidate = format!("{name}_v{i}");
            match ours.get(&candidate) {
                Some(existing) if equal(existing, value) => {
                    renames.insert(name.clone(), candidate);
                    continue 'entries;
                }
                Some(_) => {}
                None => break,
            }
        }
        while used.contains(&candidate) || theirs.contains_key(&candidate) {
            i += 1;
            candidate = format!("{name}_v{i}");
        }
        used.insert(candidate.clone());
        renames.insert(name.clone(), candidate);
    }
    if renames.is_empty() {
        return;
    }
    let refs: BTreeMap<String, String> = renames
        .iter()
        .map(|(old, new)| (format!("{prefix}{old}"), format!("{prefix}{new}")))
        .collect();
    rename_refs(source, &refs);
    if let Some(entries) = source.get_mut(section).and_then(Value::as_object_mut) {
        let old = std::mem::take(entries);
        *entries = old
            .into_iter()
            .map(|(k, v)| (renames.get(&k).cloned().unwrap_or(k), v))
            .collect();
    }
}

/// A definition without its group-version-kinds.
fn without_gvk(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(map) = v.as_object_mut() {
        map.remove(GVK);
    }
    v
}

fn equal_modulo_gvks(a: &Value, b: &Value) -> bool {
    a == b || without_gvk(a) == without_gvk(b)
}

/// The union of two `x-kubernetes-group-version-kind` lists, sorted by
/// `group/version.kind` when the second added any; `None` when nothing changes.
fn merged_gvks(existing: &Value, source: &Value) -> Option<Value> {
    let theirs = source.get(GVK)?;
    let Some(ours) = existing.get(GVK) else {
        return Some(theirs.clone());
    };
    let (ours, theirs) = (ours.as_array()?, theirs.as_array()?);
    let key = |gvk: &Value| {
        let text = |k: &str| gvk.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        format!("{}/{}.{}", text("group"), text("version"), text("kind"))
    };
    let seen: BTreeSet<String> = ours.iter().map(key).collect();
    let added: Vec<&Value> = theirs.iter().filter(|g| !seen.contains(&key(g))).collect();
    if added.is_empty() {
        return None;
    }
    let mut all: Vec<Value> = ours.iter().chain(added).cloned().collect();
    all.sort_by_key(key);
    Some(Value::Array(all))
}

fn object<'a>(spec: &'a mut Value, section: &str) -> Option<&'a mut Map<String, Value>> {
    let map = spec.as_object_mut()?;
    map.entry(section)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
}

/// Merges `source` into `dest`; an error only for a path both still have (which the
/// filtering before rules out).
pub fn merge(dest: &mut Value, source: &Value) -> Result<(), String> {
    let Some(source_paths) = source.get("paths").and_then(Value::as_object) else {
        return Ok(());
    };
    let dest_paths = object(dest, "paths").ok_or("the destination is not an object")?;
    let keep: Vec<String> = path_items(source_paths)
        .filter(|(k, _)| !dest_paths.contains_key(*k))
        .map(|(k, _)| k.clone())
        .collect();
    if keep.is_empty() {
        return Ok(());
    }
    let mut source = match keep.len() == path_items(source_paths).count() {
        true => source.clone(),
        false => filter_by_paths(source, &keep),
    };
    rename_conflicts(
        dest,
        &mut source,
        "definitions",
        DEFINITION_PREFIX,
        equal_modulo_gvks,
    );
    rename_conflicts(dest, &mut source, "parameters", PARAMETER_PREFIX, |a, b| {
        a == b
    });
    let take = |s: &mut Value, k: &str| s.as_object_mut().and_then(|o| o.remove(k));
    if let Some(Value::Object(defs)) = take(&mut source, "definitions") {
        let ours = object(dest, "definitions").ok_or("the destination is not an object")?;
        for (name, def) in defs {
            match ours.get_mut(&name) {
                None => {
                    ours.insert(name, def);
                }
                Some(existing) => {
                    if let (Some(gvks), Some(map)) =
                        (merged_gvks(existing, &def), existing.as_object_mut())
                    {
                        map.insert(GVK.to_owned(), gvks);
                    }
                }
            }
        }
    }
    if let Some(Value::Object(params)) = take(&mut source, "parameters") {
        let ours = object(dest, "parameters").ok_or("the destination is not an object")?;
        for (name, param) in params {
            ours.entry(name).or_insert(param);
        }
    }
    if let Some(Value::Object(paths)) = take(&mut source, "paths") {
        let ours = object(dest, "paths").ok_or("the destination is not an object")?;
        for (path, item) in paths.into_iter().filter(|(k, _)| !k.starts_with("x-")) {
            if ours.contains_key(&path) {
                return Err(format!("unable to merge: duplicated path {path}"));
            }
            ours.insert(path, item);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
