//! `metadata.managedFields` for Update operations: which field manager set which fields,
//! after upstream's field manager (`k8s.io/apimachinery/pkg/util/managedfields`) and
//! structured-merge-diff's `Updater.Update`.
//!
//! On every create, update and patch the writer (the `fieldManager` parameter, else the
//! User-Agent up to its first `/`) takes the paths the write added or modified; every
//! other manager loses those paths and the removed ones; a manager left with nothing is
//! dropped. The paths are compared in each entry's API version. Fields a strategy resets
//! (a namespace's `status` on the main resource) and the server's metadata
//! (`metadata.name`, `uid`, ...) are never owned. Past ten Update entries the oldest are
//! merged into `ancient-changes`. Server-side apply (the Apply operation) is in
//! [`apply`].

mod apply;
mod compare;
mod set;

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

pub use apply::{Applied, Conflict, apply, conflict_status, field_set, item_path, path_string};
pub use compare::{Comparison, compare, paths};
pub use set::FieldSet;

/// Upstream's `DefaultMaxUpdateManagers`.
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// The entry the oldest Update managers are merged into past the cap.
pub const ANCIENT_CHANGES: &str = "ancient-changes";

/// Upstream's `FieldManagerMaxLength`.
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;

pub const UPDATE: &str = "Update";
pub const APPLY: &str = "Apply";

/// One `ManagedFieldsEntry`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub manager: String,
    pub operation: String,
    pub api_version: String,
    /// RFC 3339 in seconds.
    pub time: Option<String>,
    pub subresource: String,
    pub fields: FieldSet,
}

impl Entry {
    /// Whether this is the entry of `op`'s manager (upstream's manager identifier: manager,
    /// operation, subresource and, for updates, the API version).
    fn is(&self, op: &Operation<'_>) -> bool {
        self.operation == UPDATE
            && self.manager == op.manager
            && self.api_version == op.api_version
            && self.subresource == op.subresource
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("manager".into(), json!(self.manager));
        m.insert("operation".into(), json!(self.operation));
        m.insert("apiVersion".into(), json!(self.api_version));
        if let Some(t) = &self.time {
            m.insert("time".into(), json!(t));
        }
        m.insert("fieldsType".into(), json!("FieldsV1"));
        m.insert("fieldsV1".into(), self.fields.to_json());
        if !self.subresource.is_empty() {
            m.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(m)
    }

    /// An entry as stored; `None` unless its fields are `FieldsV1`.
    pub fn from_json(v: &Value) -> Option<Entry> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        if s("fieldsType") != "FieldsV1" {
            return None;
        }
        let fields = match v.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::default(),
            Some(f) => FieldSet::from_json(f)?,
        };
        Some(Entry {
            manager: s("manager"),
            operation: s("operation"),
            api_version: s("apiVersion"),
            time: v.get("time").and_then(Value::as_str).map(str::to_owned),
            subresource: s("subresource"),
            fields,
        })
    }
}

/// The entries of `metadata.managedFields`; `None` when one does not decode.
pub fn decode(managed: Option<&Value>) -> Option<Vec<Entry>> {
    match managed {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::Array(items)) => items.iter().map(Entry::from_json).collect(),
        Some(_) => None,
    }
}

/// Whether a write's `metadata.managedFields` asks to reset them: an empty list, or one
/// entry with nothing set (upstream's `isResetManagedFields`).
pub fn is_reset(managed: Option<&Value>) -> bool {
    let empty = |v: &Value| match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        _ => false,
    };
    match managed {
        Some(Value::Array(items)) => match items.as_slice() {
            [] => true,
            [Value::Object(entry)] => entry.values().all(empty),
            _ => false,
        },
        _ => false,
    }
}

/// `metadata.managedFields` of `entries`, in upstream's order: Apply before Update, then
/// oldest first, then by manager, API version and subresource.
pub fn encode(entries: &[Entry]) -> Value {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|p, q| {
        (
            &p.operation,
            seconds(p),
            &p.manager,
            &p.api_version,
            &p.subresource,
        )
            .cmp(&(
                &q.operation,
                seconds(q),
                &q.manager,
                &q.api_version,
                &q.subresource,
            ))
    });
    Value::Array(sorted.into_iter().map(Entry::to_json).collect())
}

/// An entry's time for ordering; RFC 3339 UTC strings in seconds order as their instants.
fn seconds(e: &Entry) -> &str {
    e.time.as_deref().unwrap_or("")
}

/// The write being recorded.
pub struct Operation<'a> {
    pub manager: &'a str,
    /// The API version the request was made in.
    pub api_version: &'a str,
    /// `""` for the resource itself, else `status`, `finalize`, ...
    pub subresource: &'a str,
    /// Now, RFC 3339 in seconds.
    pub time: String,
    /// The paths the strategy resets for this (sub)resource, which nobody owns.
    pub ignored: FieldSet,
}

/// The manager of a write: the `fieldManager` parameter, else the User-Agent up to its
/// first `/` without unprintable characters and cut at 128 bytes (upstream's
/// `prefixFromUserAgent`), else `unknown`.
pub fn manager(field_manager: Option<&str>, user_agent: Option<&str>) -> String {
    if let Some(m) = field_manager.filter(|m| !m.is_empty()) {
        return m.to_owned();
    }
    let prefix = user_agent.unwrap_or("").split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in prefix
        .chars()
        .filter(|c| crate::golang::strconv::is_print(*c))
    {
        if out.len() + c.len_utf8() > FIELD_MANAGER_MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    if out.is_empty() {
        "unknown".to_owned()
    } else {
        out
    }
}

/// The server's fields, which no manager owns (upstream's `stripMetaManager`).
fn server_fields() -> &'static FieldSet {
    static FIELDS: std::sync::LazyLock<FieldSet> = std::sync::LazyLock::new(|| {
        let mut s = FieldSet::default();
        for path in [
            &["apiVersion"][..],
            &["kind"],
            &["metadata"],
            &["metadata", "name"],
            &["metadata", "namespace"],
            &["metadata", "creationTimestamp"],
            &["metadata", "selfLink"],
            &["metadata", "uid"],
            &["metadata", "clusterName"],
            &["metadata", "generation"],
            &["metadata", "managedFields"],
            &["metadata", "resourceVersion"],
        ] {
            let path: Vec<String> = path.iter().map(|p| set::field(p)).collect();
            s.insert(&path);
        }
        s
    });
    &FIELDS
}

/// The paths of `fields` (`status`, or dotted as `metadata.ownerReferences`), for
/// [`Operation::ignored`].
pub fn field_paths(fields: &[&str]) -> FieldSet {
    let mut s = FieldSet::default();
    for f in fields {
        let path: Vec<_> = f.split('.').map(set::field).collect();
        s.insert(&path);
    }
    s
}

/// Records `op` in `entries`. `compare_in` compares the old and new object in an API
/// version (`None` for a version it cannot express, whose entries are left alone).
pub fn update(
    mut entries: Vec<Entry>,
    compare_in: &dyn Fn(&str) -> Option<Comparison>,
    op: &Operation<'_>,
) -> Vec<Entry> {
    let own = compare_in(op.api_version).unwrap_or_default();
    let mut comparisons = Comparisons::new(op, own, compare_in);
    for e in &mut entries {
        let Some(cmp) = comparisons.of(&e.api_version) else {
            continue;
        };
        let taken = e.fields.intersection(&cmp.changed());
        e.fields = e.fields.difference(&taken).difference(&cmp.removed);
    }
    entries.retain(|e| !e.fields.is_empty());
    let current = comparisons.own.changed().difference(server_fields());
    if !current.is_empty() {
        match entries.iter_mut().find(|e| e.is(op)) {
            Some(e) => {
                e.fields = current.union(&e.fields);
                e.time = Some(op.time.clone());
            }
            None => entries.push(Entry {
                manager: op.manager.to_owned(),
                operation: UPDATE.to_owned(),
                api_version: op.api_version.to_owned(),
                time: Some(op.time.clone()),
                subresource: op.subresource.to_owned(),
                fields: current,
            }),
        }
    }
    cap_update_managers(entries)
}

/// The comparison each entry is judged by: the write's own, in its API version and without
/// the paths nobody owns, or another version's, compared once however many entries use it
/// (`None` for a version that cannot be compared).
struct Comparisons<'a> {
    api_version: String,
    own: Comparison,
    others: BTreeMap<String, Option<Comparison>>,
    compare_in: &'a dyn Fn(&str) -> Option<Comparison>,
}

impl<'a> Comparisons<'a> {
    fn new(
        op: &Operation<'_>,
        own: Comparison,
        compare_in: &'a dyn Fn(&str) -> Option<Comparison>,
    ) -> Self {
        Comparisons {
            api_version: op.api_version.to_owned(),
            own: own.without(&op.ignored),
            others: BTreeMap::new(),
            compare_in,
        }
    }

    fn of(&mut self, api_version: &str) -> Option<&Comparison> {
        if api_version == self.api_version {
            return Some(&self.own);
        }
        let compare_in = self.compare_in;
        self.others
            .entry(api_version.to_owned())
            .or_insert_with(|| compare_in(api_version))
            .as_ref()
    }
}

/// Past [`MAX_UPDATE_MANAGERS`] Update entries, merges the oldest into one
/// `ancient-changes` entry per API version (upstream's `capManagersManager`).
fn cap_update_managers(mut entries: Vec<Entry>) -> Vec<Entry> {
    let count = |es: &[Entry]| es.iter().filter(|e| e.operation == UPDATE).count();
    if count(&entries) <= MAX_UPDATE_MANAGERS {
        return entries;
    }
    let mut order: Vec<(String, String, String, String)> = entries
        .iter()
        .filter(|e| e.operation == UPDATE)
        .map(|e| {
            let t = seconds(e).to_owned();
            (
                t,
                e.manager.clone(),
                e.api_version.clone(),
                e.subresource.clone(),
            )
        })
        .collect();
    order.sort();
    let mut first_of_version: Vec<(String, (String, String))> = Vec::new();
    for (_, manager, version, subresource) in order {
        if count(&entries) <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some((_, first)) = first_of_version
            .iter()
            .find(|(v, _)| *v == version)
            .cloned()
        else {
            first_of_version.push((version, (manager, subresource)));
            continue;
        };
        let is = |e: &Entry, m: &str, s: &str| {
            e.operation == UPDATE
                && e.manager == m
                && e.api_version == version
                && e.subresource == s
        };
        let bucket_exists = entries.iter().any(|e| is(e, ANCIENT_CHANGES, ""));
        if !bucket_exists && let Some(e) = entries.iter_mut().find(|e| is(e, &first.0, &first.1)) {
            e.manager = ANCIENT_CHANGES.to_owned();
            e.subresource.clear();
        }
        let Some(pos) = entries.iter().position(|e| is(e, &manager, &subresource)) else {
            continue;
        };
        let merged = entries.remove(pos);
        if let Some(bucket) = entries.iter_mut().find(|e| is(e, ANCIENT_CHANGES, "")) {
            bucket.fields = merged.fields.union(&bucket.fields);
            bucket.time = merged.time;
        }
    }
    entries
}

#[cfg(test)]
mod tests;
