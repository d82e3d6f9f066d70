//! Response bodies built from stored bytes. Objects are stored without `kind` and
//! `apiVersion`; an object answer gets them spliced in front of its cached JSON, and a list
//! is its items' cached JSON joined (streamed by `list_stream`), so no object is encoded
//! per request or per watcher.

use bytes::{BufMut, Bytes, BytesMut};
use kas_storage::latency::{self, Layer};
use kas_storage::{ListResult, ObjectRef};
use serde_json::Value;

use kas_registry::ResourceDescriptor;

fn type_meta(d: &ResourceDescriptor, kind: &str) -> String {
    format!(
        "{{\"kind\":\"{kind}\",\"apiVersion\":\"{}\"",
        d.api_version()
    )
}

/// Stored JSON (`{...}` without type) with `kind` and `apiVersion` in front.
pub fn with_type_meta(d: &ResourceDescriptor, json: &[u8]) -> Bytes {
    let head = type_meta(d, d.kind);
    let mut out = BytesMut::with_capacity(json.len() + head.len() + 2);
    put_typed(&mut out, head.as_bytes(), json);
    out.freeze()
}

/// Whether a list's items carry their type: those of a resource without a Go type
/// (custom resources) do, as upstream's `UnstructuredList` writes each item whole.
pub(crate) fn typed_items(d: &ResourceDescriptor) -> bool {
    d.schema.is_none()
}

/// The type meta a typed list item starts with, when items carry one.
pub(crate) fn item_head(d: &ResourceDescriptor) -> Option<Bytes> {
    typed_items(d).then(|| Bytes::from(type_meta(d, d.kind)))
}

/// How many bytes `put_typed` adds in front of `json`.
pub(crate) fn typed_len(head: &[u8], json: &[u8]) -> usize {
    match json {
        [b'{', b'}'] | [] => head.len() + 1 - json.len(),
        [b'{', ..] => head.len(),
        _ => head.len() + ",\"object\":".len() + 1,
    }
}

/// `json` with the type meta `head` spliced in front.
pub(crate) fn put_typed(out: &mut BytesMut, head: &[u8], json: &[u8]) {
    out.put_slice(head);
    match json {
        [b'{', b'}'] | [] => out.put_u8(b'}'),
        [b'{', rest @ ..] => {
            out.put_u8(b',');
            out.put_slice(rest);
        }
        other => {
            // Not an object: cannot happen for stored objects; keep it visible.
            out.put_slice(b",\"object\":");
            out.put_slice(other);
            out.put_u8(b'}');
        }
    }
}

pub fn object(d: &ResourceDescriptor, obj: &ObjectRef) -> Bytes {
    latency::track_fn(Layer::Serialization, || with_type_meta(d, &obj.json))
}

/// A value that is not stored (dry run): with type, encoded once.
pub fn value(d: &ResourceDescriptor, v: &Value) -> Bytes {
    latency::track_fn(Layer::Serialization, || {
        let mut v = v.clone();
        kas_registry::meta::strip_type_meta(&mut v);
        with_type_meta(
            d,
            &serde_json::to_vec(&v).unwrap_or_else(|_| b"{}".to_vec()),
        )
    })
}

/// `<Kind>List` with upstream's list metadata; items are typeless, as upstream writes
/// typed lists (see [`typed_items`]).
pub fn list(d: &ResourceDescriptor, result: &ListResult) -> Bytes {
    latency::track_fn(Layer::Serialization, || list_bytes(d, result))
}

fn list_bytes(d: &ResourceDescriptor, result: &ListResult) -> Bytes {
    let head = list_head(d, result);
    let item_head = item_head(d);
    let size: usize = result.items.iter().map(|o| o.json.len() + 1).sum();
    let mut out = BytesMut::with_capacity(head.len() + size + LIST_TAIL.len());
    out.put_slice(&head);
    for (i, item) in result.items.iter().enumerate() {
        if i > 0 {
            out.put_u8(b',');
        }
        match &item_head {
            Some(h) => put_typed(&mut out, h, &item.json),
            None => out.put_slice(&item.json),
        }
    }
    out.put_slice(LIST_TAIL);
    out.freeze()
}

/// What closes a list after its last item.
pub(crate) const LIST_TAIL: &[u8] = b"]}\n";

/// A list's metadata with its resourceVersion; none for revision 0, the list of a
/// resource that is not stored (upstream's computed lists carry none).
pub(crate) fn list_meta(resource_version: u64) -> serde_json::Map<String, Value> {
    let mut meta = serde_json::Map::new();
    if resource_version != 0 {
        meta.insert(
            "resourceVersion".into(),
            Value::String(resource_version.to_string()),
        );
    }
    meta
}

/// A list up to its first item: type, metadata and `"items":[`.
pub(crate) fn list_head(d: &ResourceDescriptor, result: &ListResult) -> Bytes {
    let mut meta = list_meta(result.resource_version);
    match &result.continue_token {
        Some(c) => _ = meta.insert("continue".into(), Value::String(c.clone())),
        // Upstream's `UnstructuredList.SetContinue` writes the field even when empty.
        None if typed_items(d) => _ = meta.insert("continue".into(), Value::String(String::new())),
        None => {}
    }
    if let Some(n) = result.remaining_item_count {
        meta.insert("remainingItemCount".into(), Value::from(n));
    }
    let meta = serde_json::to_vec(&meta).unwrap_or_else(|_| b"{}".to_vec());
    let mut out = BytesMut::with_capacity(meta.len() + 96);
    out.put_slice(type_meta(d, d.list_kind).as_bytes());
    out.put_slice(b",\"metadata\":");
    out.put_slice(&meta);
    out.put_slice(b",\"items\":[");
    out.freeze()
}

/// One watch event line: `{"type":"ADDED","object":{...}}`.
pub fn watch_event(kind: &str, object: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(object.len() + 32);
    out.put_slice(b"{\"type\":\"");
    out.put_slice(kind.as_bytes());
    out.put_slice(b"\",\"object\":");
    out.put_slice(object);
    out.put_slice(b"}\n");
    out.freeze()
}

/// A bookmark's object: only the type and the resourceVersion, as upstream sends it.
pub fn bookmark(d: &ResourceDescriptor, resource_version: u64) -> Bytes {
    let obj = format!(
        "{},\"metadata\":{{\"resourceVersion\":\"{resource_version}\",\"creationTimestamp\":null}}}}",
        type_meta(d, d.kind)
    );
    watch_event("BOOKMARK", obj.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: ResourceDescriptor = kas_registry::descriptor::fixtures::LEASE;

    #[test]
    fn splices_type_meta() {
        let b = with_type_meta(&D, br#"{"metadata":{"name":"a"}}"#);
        let v: Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(v["kind"], "Lease");
        assert_eq!(v["apiVersion"], "coordination.k8s.io/v1");
        assert_eq!(v["metadata"]["name"], "a");
        let empty: Value = serde_json::from_slice(&with_type_meta(&D, b"{}")).unwrap();
        assert_eq!(empty["kind"], "Lease");
    }

    #[test]
    fn bookmarks_and_events_are_json_lines() {
        let b = bookmark(&D, 42);
        assert!(b.ends_with(b"\n"));
        let v: Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(v["type"], "BOOKMARK");
        assert_eq!(v["object"]["metadata"]["resourceVersion"], "42");
    }
}
