//! Streaming lists (`sendInitialEvents=true`, KEP 3157): the bookmark that ends the initial
//! events, as upstream 1.33 writes it. Its object carries two annotations: upstream's
//! cache watcher sets `k8s.io/initial-events-end: "true"`, and its watch handler adds
//! `kubernetes.io/initial-events-list-blueprint`, the empty list of the resource encoded as
//! the answer is (JSON or protobuf, a PartialObjectMetadataList when asked for metadata
//! only), in base64; client-go's `WatchList` refuses a bookmark without it.

use crate::negotiation::MediaTypeOptions;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http::HeaderMap;
use kas_apimachinery::{Status, protobuf};
use serde_json::{Value, json};

use crate::responsewriters::encode;
use crate::responsewriters::partial::{MetaVersion, Partial};
use crate::responsewriters::protobuf as proto;
use kas_registry::ResourceDescriptor;
use kas_registry::error::Result;

const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";
const LIST_BLUEPRINT: &str = "kubernetes.io/initial-events-list-blueprint";
const PARTIAL_LIST_KIND: &str = "PartialObjectMetadataList";

/// Upstream's `watchListEndpointRestrictions`: a streaming list is never a Table, so
/// `as=Table` is not acceptable (a client's fallback media type is taken instead).
pub(crate) fn negotiate(headers: &HeaderMap, query: Option<&str>) -> Result<MediaTypeOptions> {
    crate::responsewriters::negotiated::negotiate_media(headers, query, false)
}

/// The bookmark's `metadata` for protobuf, with the blueprint already encoded.
fn metadata(resource_version: u64, blueprint: &[u8]) -> Value {
    json!({
        "resourceVersion": resource_version.to_string(),
        "annotations": {
            INITIAL_EVENTS_END: "true",
            LIST_BLUEPRINT: STANDARD.encode(blueprint),
        },
    })
}

/// The JSON event line.
pub(crate) fn bookmark_json(
    d: &ResourceDescriptor,
    partial: Option<Partial>,
    resource_version: u64,
) -> Result<Bytes> {
    // Go's encoder ends the document with a newline; upstream keeps it in the blueprint.
    let blueprint = match partial {
        None => format!(
            "{{\"kind\":\"{}\",\"apiVersion\":\"{}\",\"metadata\":{{}},\"items\":null}}\n",
            d.list_kind,
            d.api_version()
        ),
        Some(p) => format!(
            "{{\"kind\":\"{PARTIAL_LIST_KIND}\",\"apiVersion\":\"{}\",\"metadata\":{{}},\"items\":null}}\n",
            p.api_version()
        ),
    };
    // Written out: ObjectMeta's fields go in Go's declaration order, not sorted.
    let object = format!(
        "{{\"metadata\":{{\"resourceVersion\":\"{resource_version}\",\"creationTimestamp\":null,\
         \"annotations\":{{\"{INITIAL_EVENTS_END}\":\"true\",\"{LIST_BLUEPRINT}\":\"{}\"}}}}}}",
        STANDARD.encode(blueprint)
    );
    let bytes = object.as_bytes();
    let object = match partial {
        None => encode::with_type_meta(d, bytes),
        Some(p) => p.object_json(bytes)?,
    };
    Ok(encode::watch_event("BOOKMARK", &object))
}

/// The protobuf frame.
pub(crate) fn bookmark_protobuf(
    d: &ResourceDescriptor,
    partial: Option<Partial>,
    resource_version: u64,
) -> Result<Bytes> {
    let empty = json!({ "metadata": {} });
    let encoding_failed = |e: protobuf::Error| Status::internal_error(&e.to_string());
    let blueprint = match partial {
        None => {
            let schema = d
                .list_schema
                .ok_or_else(|| Status::not_acceptable(&["application/json", "application/yaml"]))?;
            protobuf::encode_object(&empty, schema, &d.api_version(), d.list_kind)
                .map_err(encoding_failed)?
        }
        Some(p) => {
            let schema = match p.version {
                MetaVersion::V1 => &kas_api::meta::v1::PARTIAL_OBJECT_METADATA_LIST,
                MetaVersion::V1beta1 => &kas_api::meta::v1beta1::PARTIAL_OBJECT_METADATA_LIST,
            };
            protobuf::encode_object(&empty, schema, p.api_version(), PARTIAL_LIST_KIND)
                .map_err(encoding_failed)?
        }
    };
    let object = json!({ "metadata": metadata(resource_version, &blueprint) });
    let enveloped = match partial {
        None => proto::object(d, &object)?,
        Some(p) => {
            let bytes =
                serde_json::to_vec(&object).map_err(|e| Status::internal_error(&e.to_string()))?;
            p.object_protobuf(&bytes)?
        }
    };
    Ok(proto::watch_event("BOOKMARK", &enveloped))
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: ResourceDescriptor = kas_registry::descriptor::fixtures::CONFIG_MAP;

    fn blueprint(meta: &Value) -> Vec<u8> {
        let b64 = meta["annotations"][LIST_BLUEPRINT].as_str().unwrap();
        STANDARD.decode(b64).unwrap()
    }

    #[test]
    fn the_json_bookmark_is_upstreams() {
        let line = bookmark_json(&D, None, 42).unwrap();
        let event: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(event["type"], "BOOKMARK");
        let object = &event["object"];
        assert_eq!(object["kind"], "ConfigMap");
        assert_eq!(object["apiVersion"], "v1");
        let meta = &object["metadata"];
        assert_eq!(meta["resourceVersion"], "42");
        assert_eq!(meta["annotations"][INITIAL_EVENTS_END], "true");
        assert_eq!(
            String::from_utf8(blueprint(meta)).unwrap(),
            "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":null}\n"
        );
        // Go writes map keys sorted and ObjectMeta's fields in declaration order.
        let text = String::from_utf8(line.to_vec()).unwrap();
        assert!(text.starts_with(
            "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"42\",\"creationTimestamp\":null,\"annotations\":{\"k8s.io/initial-events-end\":\"true\",\"kubernetes.io/initial-events-list-blueprint\":\""
        ), "{text}");
    }

    #[test]
    fn metadata_only_streams_get_a_partial_list_blueprint() {
        let p = Partial {
            list: false,
            version: MetaVersion::V1,
        };
        let line = bookmark_json(&D, Some(p), 7).unwrap();
        let event: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(event["object"]["kind"], "PartialObjectMetadata");
        let meta = &event["object"]["metadata"];
        assert_eq!(meta["annotations"][INITIAL_EVENTS_END], "true");
        let list: Value = serde_json::from_slice(&blueprint(meta)).unwrap();
        assert_eq!(list["kind"], PARTIAL_LIST_KIND);
        assert_eq!(list["apiVersion"], "meta.k8s.io/v1");
    }

    #[test]
    fn the_protobuf_bookmark_carries_a_protobuf_blueprint() {
        let frame = bookmark_protobuf(&D, None, 42).unwrap();
        let (frame, rest) = protobuf::next_frame(&frame).unwrap();
        assert!(rest.is_empty());
        let event = protobuf::decode_watch_event(frame).unwrap();
        assert_eq!(event.event_type, "BOOKMARK");
        let unknown = protobuf::decode_envelope(&event.object).unwrap();
        assert_eq!(unknown.kind, "ConfigMap");
        let object = protobuf::decode(&unknown.raw, &kas_api::core::v1::CONFIG_MAP).unwrap();
        let meta = &object["metadata"];
        assert_eq!(meta["resourceVersion"], "42");
        assert_eq!(meta["annotations"][INITIAL_EVENTS_END], "true");
        let list = protobuf::decode_envelope(&blueprint(meta)).unwrap();
        assert_eq!(
            (list.api_version.as_str(), list.kind.as_str()),
            ("v1", "ConfigMapList")
        );
    }
}
