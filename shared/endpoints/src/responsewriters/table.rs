//! Table conversion (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), as upstream's
//! default table convertor and printers write it: a Name column, the resource's columns, an
//! Age column, and each row's object as PartialObjectMetadata unless `includeObject` says
//! otherwise.

use std::time::SystemTime;

use bytes::Bytes;
use kas_apimachinery::duration::human_duration;
use kas_apimachinery::golang::time::{Time, parse_rfc3339};
use serde_json::{Value, json};

use kas_registry::store::Store;

pub const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
pub const AGE_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// Upstream's Name column, for resources whose printer places its columns itself.
pub const NAME_COLUMN: kas_registry::TableColumn = kas_registry::TableColumn {
    name: "Name",
    type_: "string",
    format: "name",
    description: NAME_DESCRIPTION,
    priority: 0,
};

/// Upstream's Age column (`translateTimestampSince` cells, see [`age`]).
pub const AGE_COLUMN: kas_registry::TableColumn = kas_registry::TableColumn {
    name: "Age",
    type_: "string",
    format: "",
    description: AGE_DESCRIPTION,
    priority: 0,
};

/// The columns of upstream's `NewDefaultTableConvertor` (resources without a printer of
/// their own: Roles, CustomResourceDefinitions): Name and Created At.
pub const DEFAULT_TABLE_COLUMNS: &[kas_registry::TableColumn] = &[
    NAME_COLUMN,
    kas_registry::TableColumn {
        name: "Created At",
        type_: "date",
        ..AGE_COLUMN
    },
];

/// The cells of upstream's default table convertor: the name and the creation time.
pub fn default_table_cells(obj: &serde_json::Value) -> Vec<serde_json::Value> {
    let created = obj
        .pointer("/metadata/creationTimestamp")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    vec![
        serde_json::Value::String(kas_registry::meta::name(obj).to_owned()),
        created,
    ]
}

/// `includeObject`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncludeObject {
    None,
    Metadata,
    Object,
}

fn columns(store: &Store) -> Vec<Value> {
    let d = store.descriptor;
    let mut cols = Vec::with_capacity(d.table_columns.len() + 2);
    if d.table_name_and_age {
        cols.push(json!({"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION, "priority": 0}));
    }
    for c in d.table_columns {
        cols.push(json!({"name": c.name, "type": c.type_, "format": c.format, "description": c.description, "priority": c.priority}));
    }
    if d.table_name_and_age {
        cols.push(json!({"name": "Age", "type": "string", "format": "", "description": AGE_DESCRIPTION, "priority": 0}));
    }
    cols
}

fn row(store: &Store, obj: &Value, include: IncludeObject) -> Value {
    let with_name_and_age = store.descriptor.table_name_and_age;
    let mut cells = Vec::new();
    if with_name_and_age {
        cells.push(json!(kas_registry::meta::name(obj)));
    }
    cells.extend(store.strategy.table_cells(obj));
    if with_name_and_age {
        cells.push(json!(age(kas_registry::meta::str_field(
            obj,
            "creationTimestamp"
        ))));
    }
    row_of(cells, include, obj, || {
        let mut full = obj.clone();
        if let Some(map) = full.as_object_mut() {
            map.insert("kind".into(), json!(store.descriptor.kind));
            map.insert("apiVersion".into(), json!(store.descriptor.api_version()));
        }
        full
    })
}

/// A row of `cells` carrying the object as `include` asks: nothing, its metadata as a
/// PartialObjectMetadata, or `full()`, the whole object with its type.
pub fn row_of(
    cells: Vec<Value>,
    include: IncludeObject,
    obj: &Value,
    full: impl FnOnce() -> Value,
) -> Value {
    let mut row = json!({"cells": cells});
    match include {
        IncludeObject::None => {}
        IncludeObject::Metadata => {
            row["object"] = json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj.get("metadata").cloned().unwrap_or(json!({})),
            });
        }
        IncludeObject::Object => row["object"] = full(),
    }
    row
}

/// A Table of `objects`; `list_meta` is the list's metadata (resourceVersion, continue).
/// The time it takes is the request's transform latency (upstream's
/// `transformResponseObject`).
pub fn table<'a>(
    store: &Store,
    objects: impl Iterator<Item = &'a Value>,
    list_meta: Value,
    include: IncludeObject,
    with_columns: bool,
) -> Bytes {
    kas_storage::latency::track_fn(kas_storage::latency::Layer::Transform, || {
        table_bytes(store, objects, list_meta, include, with_columns)
    })
}

fn table_bytes<'a>(
    store: &Store,
    objects: impl Iterator<Item = &'a Value>,
    list_meta: Value,
    include: IncludeObject,
    with_columns: bool,
) -> Bytes {
    let rows: Vec<Value> = objects.map(|o| row(store, o, include)).collect();
    let mut t = json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": if with_columns { Value::Array(columns(store)) } else { Value::Null },
        "rows": rows,
    });
    if !with_columns && let Some(map) = t.as_object_mut() {
        map.remove("columnDefinitions");
    }
    Bytes::from(serde_json::to_vec(&t).unwrap_or_default())
}

/// Upstream's `translateTimestampSince`: `<unknown>` without a timestamp, else
/// `duration.HumanDuration`.
pub fn age(ts: &str) -> String {
    let Some(created) = parse_rfc3339(ts).filter(|t| !t.is_zero()) else {
        return "<unknown>".to_owned();
    };
    let now = Time::from_system_time(SystemTime::now());
    human_duration(now.seconds - created.seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_are_unknown_without_a_timestamp() {
        assert_eq!(age(""), "<unknown>");
        assert_eq!(age("0001-01-01T00:00:00Z"), "<unknown>");
        assert_eq!(age("nope"), "<unknown>");
        let twenty_minutes_ago = SystemTime::now() - std::time::Duration::from_secs(1200);
        let ts = kas_apimachinery::golang::time::format_rfc3339(Time::from_system_time(
            twenty_minutes_ago,
        ));
        assert_eq!(age(&ts), "20m");
    }
}
