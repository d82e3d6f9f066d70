//! Table conversion (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), as upstream's
//! default table convertor and printers write it: a Name column, the resource's columns, an
//! Age column, and each row's object as PartialObjectMetadata unless `includeObject` says
//! otherwise.

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use serde_json::{Value, json};

use kas_registry::store::Store;

pub const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
pub(crate) const AGE_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

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
pub fn table<'a>(
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

/// Seconds since the epoch of an RFC 3339 UTC timestamp (`2006-01-02T15:04:05Z`).
fn parse_rfc3339(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let n = |r: std::ops::Range<usize>| ts.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hh, mm, ss) = (n(11..13)?, n(14..16)?, n(17..19)?);
    // Days from civil (Howard Hinnant).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// Upstream's `translateTimestampSince`: `<unknown>` without a timestamp, else
/// `duration.HumanDuration`.
pub fn age(ts: &str) -> String {
    let Some(created) = parse_rfc3339(ts) else {
        return "<unknown>".to_owned();
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    human_duration(now - created)
}

/// Upstream's `duration.HumanDuration`, on whole seconds.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    if seconds < 0 {
        return "0s".to_owned();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_match_upstream() {
        for (secs, want) in [
            (-2, "<invalid>"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (125, "2m5s"),
            (600, "10m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 60, "3h1m"),
            (8 * 3600, "8h"),
            (48 * 3600, "2d"),
            (49 * 3600, "2d1h"),
            (8 * 86_400, "8d"),
            (2 * 365 * 86_400, "2y"),
            (2 * 365 * 86_400 + 86_400, "2y1d"),
            (9 * 365 * 86_400, "9y"),
        ] {
            assert_eq!(human_duration(secs), want, "{secs}");
        }
    }

    #[test]
    fn timestamps_parse() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2000-02-29T00:00:00Z"), Some(951_782_400));
        assert_eq!(parse_rfc3339("nope"), None);
        assert_eq!(age(""), "<unknown>");
    }
}
