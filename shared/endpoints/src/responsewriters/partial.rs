//! The PartialObjectMetadata transform (`Accept: ...;as=PartialObjectMetadata;g=meta.k8s.io;
//! v=v1`, or `as=PartialObjectMetadataList`), as upstream's `transformResponseObject` does
//! it: an object becomes `{kind: PartialObjectMetadata, apiVersion: meta.k8s.io/<v>,
//! metadata}`, a list becomes a `PartialObjectMetadataList` with the list's metadata and
//! items that each carry their own kind and apiVersion, and watch events (bookmarks too)
//! carry PartialObjectMetadata. client-go's metadata client (the garbage collector, the
//! namespace controller) reads everything this way, in protobuf first.
//!
//! Cost: an object's metadata is found by one serde_json pass over its stored bytes that
//! skips every other field without building it; no `Value` of the object is made. JSON
//! answers copy the metadata's stored bytes as they are, so nothing is re-encoded and the
//! metadata reads exactly as in a full answer. Protobuf answers decode only the metadata
//! into a `Value` and encode it with ObjectMeta's schema. A list of 10,000 objects thus
//! costs one scan of its bytes, plus, in protobuf, a decode and an encode of each
//! object's metadata.

use crate::negotiation::{MediaType, MediaTypeOptions};
use bytes::{BufMut, Bytes, BytesMut};
use kas_apimachinery::protobuf;
use kas_apimachinery::runtime::GroupVersionKind;
use kas_apimachinery::schema::Message;
use kas_apimachinery::{Status, StatusReason};
use kas_storage::{ListResult, ObjectRef};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::responsewriters::encode;
use crate::responsewriters::protobuf as proto;
use kas_registry::ResourceDescriptor;
use kas_registry::error::{Error, Result};

const KIND: &str = "PartialObjectMetadata";
const LIST_KIND: &str = "PartialObjectMetadataList";

/// What Go's `encoding/json` writes for an empty ObjectMeta (a bookmark's is not empty).
const EMPTY_META: &str = r#"{"creationTimestamp":null}"#;

/// The `meta.k8s.io` versions that have PartialObjectMetadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaVersion {
    V1,
    V1beta1,
}

/// The transform a client asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partial {
    /// `as=PartialObjectMetadataList`; otherwise `as=PartialObjectMetadata`.
    pub list: bool,
    pub version: MetaVersion,
}

impl Partial {
    /// The transform `as`/`g`/`v` name, if they name one.
    pub fn from_gvk(gvk: &GroupVersionKind) -> Option<Partial> {
        if gvk.group != "meta.k8s.io" {
            return None;
        }
        let version = match gvk.version.as_str() {
            "v1" => MetaVersion::V1,
            "v1beta1" => MetaVersion::V1beta1,
            _ => return None,
        };
        let list = match gvk.kind.as_str() {
            KIND => false,
            LIST_KIND => true,
            _ => return None,
        };
        Some(Partial { list, version })
    }

    /// The transform of a negotiated answer, if it asks for one.
    pub fn from_options(opts: &MediaTypeOptions) -> Option<Partial> {
        opts.convert.as_ref().and_then(Partial::from_gvk)
    }

    pub fn api_version(self) -> &'static str {
        match self.version {
            MetaVersion::V1 => "meta.k8s.io/v1",
            MetaVersion::V1beta1 => "meta.k8s.io/v1beta1",
        }
    }

    fn list_schema(self) -> &'static Message {
        match self.version {
            MetaVersion::V1 => &kas_api::meta::v1::PARTIAL_OBJECT_METADATA_LIST,
            MetaVersion::V1beta1 => &kas_api::meta::v1beta1::PARTIAL_OBJECT_METADATA_LIST,
        }
    }

    /// One object's answer (GET, and the object a write returns) in `media`, from its JSON
    /// with or without type. A list transform of an object is upstream's 406.
    pub fn object(self, d: &ResourceDescriptor, media: MediaType, json: &[u8]) -> Result<Bytes> {
        if self.list {
            return Err(not_acceptable(format!(
                "you requested {LIST_KIND}, but the requested object is not a list ({})",
                go_type(d, d.kind)
            )));
        }
        match media {
            MediaType::Protobuf => self.object_protobuf(json),
            MediaType::Json | MediaType::Yaml => self.object_json(json),
        }
    }

    /// A list's answer in `media`. An object transform of a list is upstream's 406.
    pub fn list(
        self,
        d: &ResourceDescriptor,
        media: MediaType,
        result: &ListResult,
    ) -> Result<Bytes> {
        if !self.list {
            return Err(not_acceptable(format!(
                "you requested {KIND}, but the requested object is a list ({})",
                go_type(d, d.list_kind)
            )));
        }
        match media {
            MediaType::Protobuf => self.list_protobuf(result),
            MediaType::Json | MediaType::Yaml => self.list_json(result),
        }
    }

    /// `{"kind":"PartialObjectMetadata","apiVersion":...,"metadata":<the stored bytes>}`.
    pub fn object_json(self, json: &[u8]) -> Result<Bytes> {
        let meta = raw_metadata(json)?;
        let mut out = BytesMut::with_capacity(meta.get().len() + 80);
        self.put_item_json(meta.get().as_bytes(), &mut out);
        Ok(out.freeze())
    }

    fn put_item_json(self, meta: &[u8], out: &mut BytesMut) {
        out.put_slice(b"{\"kind\":\"");
        out.put_slice(KIND.as_bytes());
        out.put_slice(b"\",\"apiVersion\":\"");
        out.put_slice(self.api_version().as_bytes());
        out.put_slice(b"\",\"metadata\":");
        out.put_slice(meta);
        out.put_u8(b'}');
    }

    /// The list as upstream's encoder writes it: list metadata in ListMeta's field order,
    /// and `"items":null` when there are none, as the transform leaves a nil slice.
    fn list_json(self, result: &ListResult) -> Result<Bytes> {
        let metas = result
            .items
            .iter()
            .map(|o| raw_metadata(&o.json))
            .collect::<Result<Vec<_>>>()?;
        let size: usize = metas.iter().map(|m| m.get().len() + 80).sum();
        let mut out = BytesMut::with_capacity(size + 160);
        out.put_slice(b"{\"kind\":\"");
        out.put_slice(LIST_KIND.as_bytes());
        out.put_slice(b"\",\"apiVersion\":\"");
        out.put_slice(self.api_version().as_bytes());
        out.put_slice(b"\",\"metadata\":");
        out.put_slice(&list_meta_json(result));
        if metas.is_empty() {
            out.put_slice(b",\"items\":null}\n");
            return Ok(out.freeze());
        }
        out.put_slice(b",\"items\":[");
        for (i, meta) in metas.iter().enumerate() {
            if i > 0 {
                out.put_u8(b',');
            }
            self.put_item_json(meta.get().as_bytes(), &mut out);
        }
        out.put_slice(b"]}\n");
        Ok(out.freeze())
    }

    /// The enveloped PartialObjectMetadata message.
    pub fn object_protobuf(self, json: &[u8]) -> Result<Bytes> {
        self.envelope(metadata_value(json)?)
    }

    /// The enveloped PartialObjectMetadata message of `metadata`, an ObjectMeta value.
    fn envelope(self, metadata: Value) -> Result<Bytes> {
        let item = json!({ "metadata": metadata });
        protobuf::encode_object(
            &item,
            &kas_api::meta::v1::PARTIAL_OBJECT_METADATA,
            self.api_version(),
            KIND,
        )
        .map(Bytes::from)
        .map_err(encoding_failed)
    }

    /// The enveloped list message; the list schema of the version places the fields
    /// (v1beta1's numbers differ from v1's).
    fn list_protobuf(self, result: &ListResult) -> Result<Bytes> {
        let items = result
            .items
            .iter()
            .map(|o| Ok(json!({"metadata": metadata_value(&o.json)?})))
            .collect::<Result<Vec<_>>>()?;
        let list = json!({"metadata": list_meta(result), "items": items});
        protobuf::encode_object(&list, self.list_schema(), self.api_version(), LIST_KIND)
            .map(Bytes::from)
            .map_err(encoding_failed)
    }
}

/// `metadata` of an object's JSON, as its bytes, found without building the rest.
fn raw_metadata(json: &[u8]) -> Result<&RawValue> {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        metadata: Option<&'a RawValue>,
    }
    let head: Head<'_> = serde_json::from_slice(json).map_err(stored_object)?;
    match head.metadata {
        Some(meta) => Ok(meta),
        None => serde_json::from_str(EMPTY_META).map_err(stored_object),
    }
}

/// `metadata` of an object's JSON, decoded alone.
fn metadata_value(json: &[u8]) -> Result<Value> {
    #[derive(Deserialize)]
    struct Head {
        metadata: Option<Value>,
    }
    let head: Head = serde_json::from_slice(json).map_err(stored_object)?;
    Ok(head.metadata.unwrap_or_else(|| json!({})))
}

fn stored_object(e: serde_json::Error) -> Error {
    Status::internal_error(&format!("decoding stored object: {e}")).into()
}

fn encoding_failed(e: protobuf::Error) -> Error {
    Status::internal_error(&format!("encoding protobuf: {e}")).into()
}

/// Upstream's `errNotAcceptable`: a 406 with only a message.
fn not_acceptable(message: String) -> Error {
    Status::failure(406, StatusReason::NotAcceptable, message).into()
}

/// The `%T` upstream prints in its 406: the internal type the registry returned, whose
/// package is named after the group (`""` and `events.k8s.io` share `core`'s Event).
fn go_type(d: &ResourceDescriptor, kind: &str) -> String {
    let package = match d.group {
        "" | "events.k8s.io" => "core",
        "internal.apiserver.k8s.io" => "apiserverinternal",
        group => group.split('.').next().unwrap_or(group),
    };
    format!("*{package}.{kind}")
}

/// The list's ListMeta as a value (protobuf).
fn list_meta(result: &ListResult) -> Value {
    let mut meta = json!({"resourceVersion": result.resource_version.to_string()});
    if let Some(c) = &result.continue_token {
        meta["continue"] = json!(c);
    }
    if let Some(n) = result.remaining_item_count {
        meta["remainingItemCount"] = json!(n);
    }
    meta
}

/// The list's ListMeta as JSON, in Go's field order (a `Map` would sort the keys).
fn list_meta_json(result: &ListResult) -> Vec<u8> {
    let mut out = format!("{{\"resourceVersion\":\"{}\"", result.resource_version);
    if let Some(c) = &result.continue_token {
        out.push_str(",\"continue\":");
        out.push_str(&serde_json::to_string(c).unwrap_or_else(|_| "\"\"".to_owned()));
    }
    if let Some(n) = result.remaining_item_count {
        out.push_str(&format!(",\"remainingItemCount\":{n}"));
    }
    out.push('}');
    out.into_bytes()
}

/// A watch event's object as JSON: the PartialObjectMetadata when one was asked for,
/// else the object with its type.
pub fn watch_object(d: &ResourceDescriptor, partial: Option<Partial>, o: &ObjectRef) -> Bytes {
    match partial {
        // Bytes the storage encoded always decode; the fallback only keeps the stream going.
        Some(p) => p
            .object_json(&o.json)
            .unwrap_or_else(|_| empty_object_json(p)),
        None => encode::object(d, o),
    }
}

fn empty_object_json(p: Partial) -> Bytes {
    let mut out = BytesMut::new();
    p.put_item_json(EMPTY_META.as_bytes(), &mut out);
    out.freeze()
}

/// A watch event's enveloped object in protobuf, transformed as [`watch_object`].
pub fn watch_object_protobuf(
    d: &ResourceDescriptor,
    partial: Option<Partial>,
    o: &ObjectRef,
) -> Result<Bytes> {
    match partial {
        Some(p) => p.object_protobuf(&o.json),
        None => proto::stored(d, o),
    }
}

/// A BOOKMARK event line; upstream transforms a bookmark's object like any other.
pub fn bookmark(d: &ResourceDescriptor, partial: Option<Partial>, resource_version: u64) -> Bytes {
    let Some(p) = partial else {
        return encode::bookmark(d, resource_version);
    };
    let meta = format!("{{\"resourceVersion\":\"{resource_version}\",\"creationTimestamp\":null}}");
    let mut out = BytesMut::new();
    p.put_item_json(meta.as_bytes(), &mut out);
    encode::watch_event("BOOKMARK", &out)
}

/// A BOOKMARK frame in protobuf, transformed as [`bookmark`].
pub fn bookmark_protobuf(
    d: &ResourceDescriptor,
    partial: Option<Partial>,
    resource_version: u64,
) -> Result<Bytes> {
    let Some(p) = partial else {
        return proto::bookmark(d, resource_version);
    };
    let object = p.envelope(json!({"resourceVersion": resource_version.to_string()}))?;
    Ok(proto::watch_event("BOOKMARK", &object))
}

/// How many events a watch may send. With `as=PartialObjectMetadataList` upstream's
/// transform fails on the first event, its encoder cannot write the untransformed object
/// in meta.k8s.io, and the stream ends; here it ends before the first event.
pub fn watch_event_limit(partial: Option<Partial>) -> usize {
    match partial {
        Some(p) if p.list => 0,
        _ => usize::MAX,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    const D: ResourceDescriptor = kas_registry::descriptor::fixtures::CONFIG_MAP;

    const V1: Partial = Partial {
        list: false,
        version: MetaVersion::V1,
    };
    const V1_LIST: Partial = Partial {
        list: true,
        version: MetaVersion::V1,
    };
    const V1BETA1_LIST: Partial = Partial {
        list: true,
        version: MetaVersion::V1beta1,
    };

    fn object(name: &str, rv: u64) -> ObjectRef {
        let value = json!({
            "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}"),
                "labels": {"a": "<b>"}, "creationTimestamp": "2024-01-02T03:04:05Z"},
            "data": {"big": "x".repeat(64)},
        });
        Arc::new(kas_storage::Object::new(format!("ns/{name}"), rv, value).unwrap())
    }

    fn list(items: Vec<ObjectRef>) -> ListResult {
        ListResult {
            items,
            resource_version: 42,
            continue_token: Some("tok\"en".to_owned()),
            remaining_item_count: Some(3),
        }
    }

    fn gvk(kind: &str, group: &str, version: &str) -> GroupVersionKind {
        GroupVersionKind {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
        }
    }

    #[test]
    fn only_meta_kinds_and_versions_name_a_transform() {
        let p = |k, g, v| Partial::from_gvk(&gvk(k, g, v));
        assert_eq!(p(KIND, "meta.k8s.io", "v1"), Some(V1));
        assert_eq!(p(LIST_KIND, "meta.k8s.io", "v1"), Some(V1_LIST));
        assert_eq!(p(LIST_KIND, "meta.k8s.io", "v1beta1"), Some(V1BETA1_LIST));
        assert_eq!(p("Table", "meta.k8s.io", "v1"), None);
        assert_eq!(p(KIND, "meta.k8s.io", "v2"), None);
        assert_eq!(p(KIND, "", "v1"), None);
    }

    #[test]
    fn an_object_keeps_only_its_metadata_bytes() {
        let o = object("a", 7);
        let bytes = V1.object(&D, MediaType::Json, &o.json).unwrap();
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["kind"], "PartialObjectMetadata");
        assert_eq!(v["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(v["metadata"]["name"], "a");
        assert_eq!(v["metadata"]["resourceVersion"], "7");
        assert!(v.get("data").is_none(), "{v}");
        // The stored metadata, byte for byte (escapes and all), not re-encoded.
        let stored = raw_metadata(&o.json).unwrap().get().to_owned();
        assert!(
            std::str::from_utf8(&bytes).unwrap().contains(&stored),
            "{bytes:?}"
        );
        // An object that already carries its type (a write's answer) works the same.
        let typed = encode::object(&D, &o);
        assert_eq!(V1.object(&D, MediaType::Json, &typed).unwrap(), bytes);
        let beta = Partial {
            list: false,
            version: MetaVersion::V1beta1,
        };
        let v: Value =
            serde_json::from_slice(&beta.object(&D, MediaType::Yaml, &o.json).unwrap()).unwrap();
        assert_eq!(v["apiVersion"], "meta.k8s.io/v1beta1");
    }

    #[test]
    fn a_list_has_typed_items_and_go_ordered_list_meta() {
        let result = list(vec![object("a", 5), object("b", 6)]);
        let bytes = V1_LIST.list(&D, MediaType::Json, &result).unwrap();
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(
            text.starts_with(
                r#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"42","continue":"tok\"en","remainingItemCount":3},"items":[{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"#
            ),
            "{text}"
        );
        assert!(text.ends_with("]}\n"));
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        let items = v["items"].as_array().unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[1]["metadata"]["name"], "b");
        assert_eq!(items[1]["kind"], "PartialObjectMetadata");
        assert!(items.iter().all(|i| i.get("data").is_none()));
    }

    #[test]
    fn an_empty_list_has_null_items_as_upstream() {
        let mut result = list(Vec::new());
        result.continue_token = None;
        result.remaining_item_count = None;
        let bytes = V1_LIST.list(&D, MediaType::Json, &result).unwrap();
        assert_eq!(
            &bytes[..],
            &b"{\"kind\":\"PartialObjectMetadataList\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{\"resourceVersion\":\"42\"},\"items\":null}\n"[..]
        );
    }

    #[test]
    fn a_kind_mismatch_is_upstreams_406() {
        let o = object("a", 7);
        let e = V1_LIST
            .object(&D, MediaType::Json, &o.json)
            .unwrap_err()
            .to_status();
        assert_eq!(e.code, 406);
        assert_eq!(e.reason, Some(StatusReason::NotAcceptable));
        assert_eq!(
            e.message.as_deref(),
            Some(
                "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)"
            )
        );
        let e = V1
            .list(&D, MediaType::Protobuf, &list(vec![o]))
            .unwrap_err()
            .to_status();
        assert_eq!(e.code, 406);
        assert_eq!(
            e.message.as_deref(),
            Some(
                "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)"
            )
        );
    }

    #[test]
    fn go_types_are_named_after_the_internal_packages() {
        let with_group = |group| ResourceDescriptor { group, ..D };
        assert_eq!(
            go_type(&with_group("events.k8s.io"), "Event"),
            "*core.Event"
        );
        assert_eq!(
            go_type(&with_group("coordination.k8s.io"), "LeaseList"),
            "*coordination.LeaseList"
        );
        assert_eq!(
            go_type(&with_group("rbac.authorization.k8s.io"), "Role"),
            "*rbac.Role"
        );
        assert_eq!(
            go_type(&with_group("apps"), "Deployment"),
            "*apps.Deployment"
        );
    }

    fn unwrap_envelope(bytes: &[u8], kind: &str, api_version: &str) -> Vec<u8> {
        let unknown = protobuf::decode_envelope(bytes).unwrap();
        assert_eq!(
            (unknown.kind.as_str(), unknown.api_version.as_str()),
            (kind, api_version)
        );
        unknown.raw
    }

    #[test]
    fn an_object_in_protobuf_is_its_metadata_message() {
        let o = object("a", 7);
        let bytes = V1.object(&D, MediaType::Protobuf, &o.json).unwrap();
        let raw = unwrap_envelope(&bytes, KIND, "meta.k8s.io/v1");
        let v = protobuf::decode(&raw, &kas_api::meta::v1::PARTIAL_OBJECT_METADATA).unwrap();
        assert_eq!(v["metadata"]["name"], "a");
        assert_eq!(v["metadata"]["uid"], "uid-a");
        assert_eq!(v["metadata"]["labels"]["a"], "<b>");
        assert_eq!(v["metadata"]["resourceVersion"], "7");
        // Field 1 (metadata) is all there is.
        assert_eq!(raw[0], 0x0a);
    }

    #[test]
    fn lists_in_protobuf_follow_each_versions_numbers() {
        let result = list(vec![object("a", 5), object("b", 6)]);
        let bytes = V1_LIST.list(&D, MediaType::Protobuf, &result).unwrap();
        let raw = unwrap_envelope(&bytes, LIST_KIND, "meta.k8s.io/v1");
        // v1: ListMeta (1) first.
        assert_eq!(raw[0], 0x0a);
        let v = protobuf::decode(&raw, &kas_api::meta::v1::PARTIAL_OBJECT_METADATA_LIST).unwrap();
        assert_eq!(v["metadata"]["resourceVersion"], "42");
        assert_eq!(v["metadata"]["continue"], "tok\"en");
        assert_eq!(v["metadata"]["remainingItemCount"], 3);
        assert_eq!(v["items"][1]["metadata"]["name"], "b");

        let bytes = V1BETA1_LIST.list(&D, MediaType::Protobuf, &result).unwrap();
        let raw = unwrap_envelope(&bytes, LIST_KIND, "meta.k8s.io/v1beta1");
        let v =
            protobuf::decode(&raw, &kas_api::meta::v1beta1::PARTIAL_OBJECT_METADATA_LIST).unwrap();
        assert_eq!(v["metadata"]["resourceVersion"], "42");
        assert_eq!(v["items"][0]["metadata"]["name"], "a");
        // v1beta1: items (1) come first, and a v1 reading would see them as ListMeta.
        assert_eq!(raw[0], 0x0a);
        let misread =
            protobuf::decode(&raw, &kas_api::meta::v1::PARTIAL_OBJECT_METADATA_LIST).unwrap();
        assert_ne!(misread["metadata"]["resourceVersion"], "42");
    }

    #[test]
    fn watch_objects_and_bookmarks_are_transformed() {
        let o = object("w", 9);
        let v: Value = serde_json::from_slice(&watch_object(&D, Some(V1), &o)).unwrap();
        assert_eq!(v["kind"], "PartialObjectMetadata");
        assert_eq!(v["metadata"]["name"], "w");
        let v: Value = serde_json::from_slice(&watch_object(&D, None, &o)).unwrap();
        assert_eq!(v["kind"], "ConfigMap");

        let line = bookmark(&D, Some(V1), 11);
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["type"], "BOOKMARK");
        assert_eq!(v["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(v["object"]["metadata"]["resourceVersion"], "11");

        let frame = bookmark_protobuf(&D, Some(V1), 11).unwrap();
        let (frame, rest) = protobuf::next_frame(&frame).unwrap();
        assert!(rest.is_empty());
        let event = protobuf::decode_watch_event(frame).unwrap();
        assert_eq!(event.event_type, "BOOKMARK");
        let raw = unwrap_envelope(&event.object, KIND, "meta.k8s.io/v1");
        let v = protobuf::decode(&raw, &kas_api::meta::v1::PARTIAL_OBJECT_METADATA).unwrap();
        assert_eq!(v["metadata"]["resourceVersion"], "11");

        let bytes = watch_object_protobuf(&D, Some(V1), &o).unwrap();
        unwrap_envelope(&bytes, KIND, "meta.k8s.io/v1");

        assert_eq!(watch_event_limit(Some(V1_LIST)), 0);
        assert_eq!(watch_event_limit(Some(V1)), usize::MAX);
        assert_eq!(watch_event_limit(None), usize::MAX);
    }

    #[test]
    fn bad_stored_bytes_are_an_error_not_a_panic() {
        for bad in [&b"not json"[..], b"", b"\"str\"", b"{\"metadata\":"] {
            assert_eq!(
                V1.object(&D, MediaType::Json, bad)
                    .unwrap_err()
                    .to_status()
                    .code,
                500
            );
            assert!(V1.object(&D, MediaType::Protobuf, bad).is_err());
        }
        let v: Value =
            serde_json::from_slice(&V1.object(&D, MediaType::Json, b"{}").unwrap()).unwrap();
        assert_eq!(v["metadata"], json!({"creationTimestamp": null}));
    }
}
