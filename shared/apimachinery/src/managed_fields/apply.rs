//! Server-side apply: structured-merge-diff's `Updater.Apply`, as upstream's field manager
//! runs it for `application/apply-patch+yaml`.
//!
//! 1. The applied configuration is merged into the live object (`TypedValue.Merge`):
//!    structs and maps key by key, associative lists and sets item by item, anything else
//!    (scalars, atomic lists and structs) taken from the configuration.
//! 2. The applier now owns exactly its configuration's fields (`ToFieldSet`).
//! 3. Fields it applied last time and no longer applies are removed, unless another
//!    manager owns them (`prune`).
//! 4. The result is compared with the live object: a field another manager owns whose
//!    value the apply changes is a conflict (409), unless `force` moves it to the applier.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value};

use super::compare::{Comparison, Shape, as_list, as_map, compare, element, shape};
use super::set::{FieldSet, field};
use super::{APPLY, Comparisons, Entry, Operation, UPDATE, cap_update_managers, server_fields};
use crate::schema::{ListType, Message};
use crate::status::{Status, StatusCause, StatusDetails, StatusReason};

/// What an apply made of the live object.
pub struct Applied {
    /// The new object (without `metadata.managedFields`).
    pub object: Value,
    pub entries: Vec<Entry>,
}

/// A field another manager owns and the apply would change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// Upstream's printed manager: `"name"`, or `"name" using v1` for an updater.
    pub manager: String,
    /// The path as structured-merge-diff prints it: `.data.a`, `.items[name="x"]`.
    pub path: String,
}

/// Applies `config` to `live` (both in the request's API version; `live` as Go writes it,
/// without managed fields); `force` takes conflicting fields from their managers instead
/// of failing. `compare_in` compares `live` with a candidate in another API
/// version, for the managers that wrote through it (`None`: leave them alone).
pub fn apply(
    mut entries: Vec<Entry>,
    live: &Value,
    config: &Value,
    schema: &'static Message,
    compare_in: &dyn Fn(&str, &Value) -> Option<Comparison>,
    op: &Operation<'_>,
    force: bool,
) -> Result<Applied, Vec<Conflict>> {
    let root = Shape::Fields(schema);
    let merged = merge(Some(live), Some(config), root).unwrap_or(Value::Null);
    let is_mine = |e: &Entry| {
        e.operation == APPLY && e.manager == op.manager && e.subresource == op.subresource
    };
    let last = entries.iter().position(is_mine).map(|i| entries.remove(i));
    let set = field_set(config, schema).recursive_difference(&op.ignored);
    let object = match &last {
        Some(last) if last.api_version == op.api_version && !last.fields.is_empty() => {
            prune(&merged, &entries, &set, &last.fields, root, op.api_version)
        }
        _ => merged,
    };

    // Every other manager, compared in its own version.
    let compare_other = |version: &str| compare_in(version, &object);
    let own = compare(live, &object, schema);
    let mut comparisons = Comparisons::new(op, own, &compare_other);
    let mut conflicts: Vec<(Conflict, Vec<String>)> = Vec::new();
    let mut losses: Vec<(usize, FieldSet, FieldSet)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let Some(cmp) = comparisons.of(&e.api_version) else {
            continue;
        };
        let conflicting = e.fields.intersection(&cmp.changed());
        for path in conflicting.paths() {
            conflicts.push((
                Conflict {
                    manager: printed_manager(e),
                    path: path_string(&path),
                },
                path,
            ));
        }
        losses.push((i, conflicting, cmp.removed.clone()));
    }
    if !force && !conflicts.is_empty() {
        // kubectl taking over from client-side apply may change what its last applied
        // configuration set, where nobody changed it since (upstream's
        // lastAppliedManager).
        if op.manager == KUBECTL
            && let Some(allowed) = allowed_by_last_applied(live, schema, op.api_version)
        {
            conflicts.retain(|(_, path)| {
                !allowed.has(&path.iter().map(String::as_str).collect::<Vec<_>>())
            });
        }
        if !conflicts.is_empty() {
            let mut conflicts: Vec<Conflict> = conflicts.into_iter().map(|(c, _)| c).collect();
            conflicts.sort_by(|a, b| a.manager.cmp(&b.manager));
            return Err(conflicts);
        }
    }
    for (i, conflicting, removed) in losses {
        let e = &mut entries[i];
        e.fields = e.fields.difference(&conflicting).difference(&removed);
    }
    entries.retain(|e| !e.fields.is_empty());

    let changed = object != *live;
    let fields = set.difference(server_fields());
    if !fields.is_empty() {
        let time = match (&last, changed) {
            (Some(last), false) => last.time.clone(),
            _ if changed => Some(op.time.clone()),
            _ => None,
        };
        entries.push(Entry {
            manager: op.manager.to_owned(),
            operation: APPLY.to_owned(),
            api_version: op.api_version.to_owned(),
            time,
            subresource: op.subresource.to_owned(),
            fields,
        });
    }
    let mut object = object;
    if op.manager == KUBECTL && last_applied_of(&object).is_some() {
        set_last_applied(&mut object, config);
    }
    Ok(Applied {
        object,
        entries: cap_update_managers(entries),
    })
}

/// The manager whose applies keep client-side apply's annotation.
const KUBECTL: &str = "kubectl";

/// The annotation client-side apply keeps its last configuration in.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

fn last_applied_of(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/annotations")?
        .get(LAST_APPLIED)?
        .as_str()
        .filter(|s| !s.is_empty())
}

/// Upstream's `lastAppliedUpdater`: the annotation becomes the applied configuration
/// (without the annotation), as Go's JSON encoder writes it, newline included.
fn set_last_applied(object: &mut Value, config: &Value) {
    let mut config = config.clone();
    if let Some(annotations) = config
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.remove(LAST_APPLIED);
    }
    let Ok(bytes) = crate::golang::json::to_vec(&config) else {
        return;
    };
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    text.push('\n');
    if let Some(annotations) = object
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.insert(LAST_APPLIED.to_owned(), Value::String(text));
    }
}

/// The fields client-side apply last set that still hold the values it set
/// (`allowedConflictsFromLastApplied`): `None` without a usable annotation.
fn allowed_by_last_applied(
    live: &Value,
    schema: &'static Message,
    api_version: &str,
) -> Option<FieldSet> {
    let last: Value = serde_json::from_str(last_applied_of(live)?).ok()?;
    if last.get("apiVersion").and_then(Value::as_str) != Some(api_version) {
        return None;
    }
    let cmp = compare(&last, live, schema);
    Some(
        field_set(&last, schema)
            .difference(&cmp.modified)
            .difference(&cmp.added)
            .difference(&cmp.removed),
    )
}

/// Upstream's 409 for conflicts (`NewConflictError`).
pub fn conflict_status(conflicts: &[Conflict]) -> Status {
    let message = match conflicts {
        [one] => format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            one.manager, one.path
        ),
        _ => {
            let mut lines = Vec::new();
            let mut managers: Vec<&str> = conflicts.iter().map(|c| c.manager.as_str()).collect();
            managers.dedup();
            for m in managers {
                lines.push(format!("conflicts with {m}:"));
                for c in conflicts.iter().filter(|c| c.manager == m) {
                    lines.push(format!("- {}", c.path));
                }
            }
            format!(
                "Apply failed with {} conflicts: {}",
                conflicts.len(),
                lines.join("\n")
            )
        }
    };
    let causes = conflicts
        .iter()
        .map(|c| StatusCause {
            reason: Some("FieldManagerConflict".to_owned()),
            message: Some(format!("conflict with {}", c.manager)),
            field: Some(c.path.clone()),
        })
        .collect();
    let mut status = Status::failure(409, StatusReason::Conflict, message);
    status.details = Some(StatusDetails {
        causes,
        ..StatusDetails::default()
    });
    status
}

/// Upstream's `printManager` of a manager identifier (which carries no time).
fn printed_manager(e: &Entry) -> String {
    let mut out = crate::golang::strconv::quote(&e.manager);
    if !e.subresource.is_empty() {
        out = format!(
            "{out} with subresource {}",
            crate::golang::strconv::quote(&e.subresource)
        );
    }
    if e.operation == UPDATE {
        out = format!("{out} using {}", e.api_version);
    }
    out
}

/// A path as `fieldpath.Path.String` prints it.
pub fn path_string(path: &[String]) -> String {
    let mut out = String::new();
    for pe in path {
        if let Some(name) = pe.strip_prefix("f:") {
            out.push('.');
            out.push_str(name);
        } else if let Some(key) = pe.strip_prefix("k:") {
            let fields: Map<String, Value> = serde_json::from_str(key).unwrap_or_default();
            let parts: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{k}={}", value_string(v)))
                .collect();
            out.push_str(&format!("[{}]", parts.join(",")));
        } else if let Some(v) = pe.strip_prefix("v:") {
            let v: Value = serde_json::from_str(v).unwrap_or(Value::Null);
            out.push_str(&format!("[={}]", value_string(&v)));
        } else if let Some(i) = pe.strip_prefix("i:") {
            out.push_str(&format!("[{i}]"));
        }
    }
    out
}

/// A list item's path element as structured-merge-diff prints it: `[name="x"]` in an
/// associative list, `[=value]` in a set, `[i]` (its index) otherwise.
pub fn item_path(item: &Value, index: usize, list_type: Option<ListType>) -> String {
    match list_type {
        Some(lt @ (ListType::Map(_) | ListType::Set)) => path_string(&[element(item, lt)]),
        _ => format!("[{index}]"),
    }
}

/// structured-merge-diff's `value.ToString`.
fn value_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::String(s) => crate::golang::strconv::quote(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(value_string).collect::<Vec<_>>().join(",")
        ),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", value_string(v)))
            .collect(),
        other => other.to_string(),
    }
}

/// A child's shape under a struct or a map, and whether it is a declared struct field.
fn child(parent: Shape, key: &str) -> (Shape, bool) {
    match parent {
        // A key the struct takes only as one of its other fields is a map key there.
        Shape::Fields(msg) => msg.field(key).map_or((Shape::Leaf, false), |f| {
            let declared = f.name != crate::schema::OTHER_FIELDS;
            (shape(&f.kind, f.list_type), declared)
        }),
        Shape::Map(inner) => (shape(inner, None), false),
        _ => (Shape::Leaf, false),
    }
}

/// The shape under a path element.
fn under(parent: Shape, pe: &str) -> (Shape, bool) {
    match (parent, pe.strip_prefix("f:")) {
        (Shape::List(inner, _), _) => (shape(inner, None), false),
        (_, Some(name)) => child(parent, name),
        _ => (Shape::Leaf, false),
    }
}

/// `TypedValue.ToFieldSet`: the leaves, the list items, the keys of maps and the empty or
/// null values of `obj`.
pub fn field_set(obj: &Value, schema: &'static Message) -> FieldSet {
    let mut set = FieldSet::default();
    to_set(obj, Shape::Fields(schema), &mut Vec::new(), &mut set);
    set
}

fn to_set(v: &Value, sh: Shape, path: &mut Vec<String>, set: &mut FieldSet) {
    match sh {
        Shape::Fields(_) | Shape::Map(_) => {
            let Some(m) = v.as_object() else { return };
            for (k, val) in m {
                let (csh, declared) = child(sh, k);
                path.push(field(k));
                to_set(val, csh, path, set);
                let empty = val.is_null() || val.as_object().is_some_and(Map::is_empty);
                if empty || !declared {
                    set.insert(path);
                }
                path.pop();
            }
        }
        Shape::List(inner, list_type) => {
            let Some(items) = v.as_array() else { return };
            for item in items {
                path.push(element(item, list_type));
                to_set(item, shape(inner, None), path, set);
                set.insert(path);
                path.pop();
            }
        }
        Shape::Leaf => set.insert(path),
    }
}

/// `TypedValue.Merge` with the configuration on the right: `None` when neither side has
/// a value.
fn merge(lhs: Option<&Value>, rhs: Option<&Value>, sh: Shape) -> Option<Value> {
    let leaf = || rhs.or(lhs).cloned();
    match sh {
        Shape::Fields(_) | Shape::Map(_) => {
            let (l, r) = (as_map(lhs), as_map(rhs));
            if l.is_none_or(Map::is_empty) && r.is_none_or(Map::is_empty) {
                return leaf();
            }
            let mut out = Map::new();
            for (k, lv) in l.into_iter().flatten() {
                let (csh, _) = child(sh, k);
                if let Some(v) = merge(Some(lv), r.and_then(|m| m.get(k)), csh) {
                    out.insert(k.clone(), v);
                }
            }
            for (k, rv) in r.into_iter().flatten() {
                if l.is_some_and(|m| m.contains_key(k)) {
                    continue;
                }
                if let Some(v) = merge(None, Some(rv), child(sh, k).0) {
                    out.insert(k.clone(), v);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Shape::List(inner, list_type) => {
            let (l, r) = (as_list(lhs), as_list(rhs));
            if l.is_none_or(Vec::is_empty) && r.is_none_or(Vec::is_empty) {
                return leaf();
            }
            let out = merge_lists(
                l.map_or(&[][..], Vec::as_slice),
                r.map_or(&[][..], Vec::as_slice),
                shape(inner, None),
                list_type,
            );
            (!out.is_empty()).then_some(Value::Array(out))
        }
        Shape::Leaf => leaf(),
    }
}

/// The items of two lists merged as structured-merge-diff orders them: the live order,
/// with the items both have in the configuration's order and new ones where the
/// configuration puts them.
fn merge_lists(lhs: &[Value], rhs: &[Value], item: Shape, list_type: ListType) -> Vec<Value> {
    let lpes: Vec<String> = lhs.iter().map(|v| element(v, list_type)).collect();
    let rpes: Vec<String> = rhs.iter().map(|v| element(v, list_type)).collect();
    let index = |pes: &[String], items: &'_ [Value]| -> HashMap<String, Value> {
        let mut m = HashMap::new();
        for (pe, v) in pes.iter().zip(items) {
            m.entry(pe.clone()).or_insert_with(|| v.clone());
        }
        m
    };
    let (observed_l, observed_r) = (index(&lpes, lhs), index(&rpes, rhs));
    let mut shared = rpes
        .iter()
        .filter(|pe| observed_l.contains_key(*pe))
        .collect::<Vec<_>>()
        .into_iter();
    let mut next_shared = shared.next();
    let mut merged_rhs: HashSet<&String> = HashSet::new();
    let mut out = Vec::new();
    let (mut li, mut ri) = (0, 0);
    while li < lpes.len() || ri < rpes.len() {
        if li < lpes.len() && ri < rpes.len() {
            let pe = &lpes[li];
            if *pe == rpes[ri] {
                merged_rhs.insert(pe);
                out.extend(merge(observed_l.get(pe), observed_r.get(pe), item));
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if observed_r.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lpes.len() {
            let pe = &lpes[li];
            if !observed_r.contains_key(pe) {
                out.extend(merge(Some(&lhs[li]), None, item));
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
            }
        }
        if ri < rpes.len() {
            let pe = &rpes[ri];
            merged_rhs.insert(pe);
            out.extend(merge(observed_l.get(pe), observed_r.get(pe), item));
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.next();
            }
        }
    }
    out
}

/// `TypedValue.RemoveItems`: `v` without the paths in `set`. A struct, map or list left
/// empty becomes null, as there.
fn remove_items(v: &Value, set: &FieldSet, sh: Shape) -> Value {
    match sh {
        Shape::Fields(_) | Shape::Map(_) => {
            let Some(m) = v.as_object().filter(|m| !m.is_empty()) else {
                return Value::Null;
            };
            let mut out = Map::new();
            for (k, val) in m {
                let sub = set.child(&field(k));
                if sub.is_some_and(FieldSet::is_member) {
                    continue;
                }
                let val = match sub {
                    Some(s) if !s.children.is_empty() => remove_items(val, s, child(sh, k).0),
                    _ => val.clone(),
                };
                out.insert(k.clone(), val);
            }
            if out.is_empty() {
                Value::Null
            } else {
                Value::Object(out)
            }
        }
        Shape::List(inner, list_type) => {
            let Some(items) = v.as_array().filter(|l| !l.is_empty()) else {
                return Value::Null;
            };
            let out: Vec<Value> = items
                .iter()
                .filter_map(|item| match set.child(&element(item, list_type)) {
                    Some(s) if s.member => None,
                    Some(s) if !s.children.is_empty() => {
                        Some(remove_items(item, s, shape(inner, None)))
                    }
                    _ => Some(item.clone()),
                })
                .collect();
            if out.is_empty() {
                Value::Null
            } else {
                Value::Array(out)
            }
        }
        Shape::Leaf if v.is_object() || v.is_array() => Value::Null,
        Shape::Leaf => v.clone(),
    }
}

/// `Set.EnsureNamedFieldsAreMembers`: every declared struct field on a path is a member.
fn ensure_named(set: &FieldSet, sh: Shape) -> FieldSet {
    let mut out = FieldSet {
        member: set.member,
        children: BTreeMap::new(),
    };
    for (pe, c) in &set.children {
        let (csh, declared) = under(sh, pe);
        let mut c = ensure_named(c, csh);
        c.member |= declared;
        out.children.insert(pe.clone(), c);
    }
    out
}

/// structured-merge-diff's `prune`: `merged` without the fields the applier applied last
/// time (`last`) that neither its configuration (`set`) nor another manager in this
/// version owns any more.
fn prune(
    merged: &Value,
    others: &[Entry],
    set: &FieldSet,
    last: &FieldSet,
    root: Shape,
    api_version: &str,
) -> Value {
    let last = ensure_named(last, root);
    let pruned = remove_items(merged, &last, root);
    // addBackOwnedItems
    let mut managed = set.clone();
    for e in others.iter().filter(|e| e.api_version == api_version) {
        managed = managed.union(&e.fields);
    }
    let fields_of = |v: &Value| match root {
        Shape::Fields(msg) => ensure_named(&field_set(v, msg), root),
        _ => FieldSet::default(),
    };
    let merged_set = fields_of(merged);
    let kept = fields_of(&pruned).union(&ensure_named(&managed, root));
    let pruned = remove_items(merged, &merged_set.difference(&kept), root);
    // addBackDanglingItems
    let dangling = merged_set
        .difference(&fields_of(&pruned))
        .intersection(&last);
    remove_items(merged, &dangling, root)
}

#[cfg(test)]
mod tests;
