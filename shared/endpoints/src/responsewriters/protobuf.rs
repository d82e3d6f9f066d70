//! Answers and request bodies in Kubernetes protobuf (`application/vnd.kubernetes.protobuf`),
//! for clients that ask for it (client-go's typed clients in kubectl, controllers). The
//! storage keeps JSON, so each protobuf answer is encoded from an object's JSON with its
//! kind's schema; nothing here runs for JSON clients.

use bytes::Bytes;
use kas_apimachinery::protobuf;
use kas_apimachinery::schema::Message;
use kas_apimachinery::{Status, protobuf::ListItem};
use kas_storage::{ListResult, ObjectRef};
use serde_json::{Value, json};

use kas_registry::ResourceDescriptor;
use kas_registry::error::{Error, Result};

pub const MEDIA_TYPE: &str = protobuf::MEDIA_TYPE;
pub const WATCH_MEDIA_TYPE: &str = protobuf::WATCH_MEDIA_TYPE;

fn schema(d: &ResourceDescriptor, list: bool) -> Result<&'static Message> {
    let schema = if list { d.list_schema } else { d.schema };
    schema.ok_or_else(|| Status::not_acceptable(&["application/json", "application/yaml"]).into())
}

fn encoding_failed(e: protobuf::Error) -> Error {
    Status::internal_error(&format!("encoding protobuf: {e}")).into()
}

/// One object, from JSON bytes that carry its `kind` and `apiVersion`.
pub fn object_from_json(d: &ResourceDescriptor, json: &[u8]) -> Result<Bytes> {
    let value: Value = serde_json::from_slice(json)
        .map_err(|e| Status::internal_error(&format!("decoding stored object: {e}")))?;
    object(d, &value)
}

/// One object of the resource's kind.
pub fn object(d: &ResourceDescriptor, value: &Value) -> Result<Bytes> {
    let bytes = protobuf::encode_object(value, schema(d, false)?, &d.api_version(), d.kind)
        .map_err(encoding_failed)?;
    Ok(Bytes::from(bytes))
}

/// A stored object (typeless JSON), enveloped with the resource's kind.
pub fn stored(d: &ResourceDescriptor, obj: &ObjectRef) -> Result<Bytes> {
    object(d, &obj.value()?)
}

/// `<Kind>List` with upstream's list metadata.
pub fn list(d: &ResourceDescriptor, result: &ListResult) -> Result<Bytes> {
    let mut meta = Value::Object(super::encode::list_meta(result.resource_version));
    if let Some(c) = &result.continue_token {
        meta["continue"] = json!(c);
    }
    if let Some(n) = result.remaining_item_count {
        meta["remainingItemCount"] = json!(n);
    }
    let items = result
        .items
        .iter()
        .map(|o| o.value())
        .collect::<Result<Vec<_>, _>>()?;
    let item_schema = schema(d, false)?;
    let mut raw = Vec::with_capacity(result.items.iter().map(|o| o.json.len()).sum());
    protobuf::encode_list(
        &meta,
        &kas_api::meta::v1::LIST_META,
        items.iter().map(ListItem::from),
        item_schema,
        &mut raw,
    )
    .map_err(encoding_failed)?;
    // The list message itself must exist for the kind to be served as protobuf.
    schema(d, true)?;
    Ok(Bytes::from(protobuf::encode_envelope(
        &d.api_version(),
        d.list_kind,
        &raw,
    )))
}

/// A `Status` (a watch's ERROR event).
pub fn status(status: &Status) -> Bytes {
    let value = serde_json::to_value(status).unwrap_or(Value::Null);
    protobuf::encode_object(&value, &kas_api::meta::v1::STATUS, "v1", "Status")
        .map(Bytes::from)
        .unwrap_or_default()
}

/// One framed watch event around an enveloped object.
pub fn watch_event(event_type: &str, object: &[u8]) -> Bytes {
    Bytes::from(protobuf::encode_watch_event(event_type, object))
}

/// A bookmark's object: only the resourceVersion, as upstream sends it.
pub fn bookmark(d: &ResourceDescriptor, resource_version: u64) -> Result<Bytes> {
    let obj = json!({"metadata": {"resourceVersion": resource_version.to_string()}});
    Ok(watch_event("BOOKMARK", &object(d, &obj)?))
}

/// A request body: the envelope's object, decoded with `schema`, with the envelope's
/// `apiVersion` and `kind` (the body's own type, checked by the caller as for JSON).
pub fn decode_body(bytes: &[u8], schema: &'static Message) -> Result<Value> {
    let bad = |e: protobuf::Error| -> Error { Status::bad_request(&e.to_string()).into() };
    let unknown = protobuf::decode_envelope(bytes).map_err(bad)?;
    let mut value = protobuf::decode(&unknown.raw, schema).map_err(bad)?;
    if let Some(map) = value.as_object_mut() {
        if !unknown.kind.is_empty() {
            map.insert("kind".into(), Value::String(unknown.kind));
        }
        if !unknown.api_version.is_empty() {
            map.insert("apiVersion".into(), Value::String(unknown.api_version));
        }
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_round_trips_through_the_envelope() {
        let cm = json!({"metadata": {"name": "a", "namespace": "ns"}, "data": {"k": "v"}});
        let bytes = protobuf::encode_object(&cm, &kas_api::core::v1::CONFIG_MAP, "v1", "ConfigMap")
            .unwrap();
        let back = decode_body(&bytes, &kas_api::core::v1::CONFIG_MAP).unwrap();
        assert_eq!(back["kind"], "ConfigMap");
        assert_eq!(back["apiVersion"], "v1");
        assert_eq!(back["metadata"]["name"], "a");
        assert_eq!(back["data"]["k"], "v");
        let err = decode_body(b"{}", &kas_api::core::v1::CONFIG_MAP).unwrap_err();
        assert_eq!(err.to_status().code, 400);
    }

    #[test]
    fn a_status_is_enveloped_as_v1_status() {
        let bytes = status(&Status::not_found("", "configmaps", "x"));
        let unknown = protobuf::decode_envelope(&bytes).unwrap();
        assert_eq!(
            (unknown.api_version.as_str(), unknown.kind.as_str()),
            ("v1", "Status")
        );
        let v = protobuf::decode(&unknown.raw, &kas_api::meta::v1::STATUS).unwrap();
        assert_eq!(v["code"], 404);
        assert_eq!(v["reason"], "NotFound");
    }
}
