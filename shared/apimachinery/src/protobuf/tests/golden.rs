//! Bytes worked out by hand from the field numbers in upstream's `generated.proto`.

use serde_json::json;

use super::schemas::{CONFIG_MAP, CONFIG_MAP_LIST, LIST_META};
use super::{enc, round_trip};
use crate::protobuf::{
    ListItem, decode_envelope, decode_watch_event, encode_envelope, encode_list, encode_object,
    encode_watch_event, next_frame,
};

fn config_map() -> serde_json::Value {
    json!({
        "metadata": {
            "name": "cm",
            "namespace": "ns",
            "creationTimestamp": "2008-01-01T01:01:01Z",
            "labels": {"b": "2", "a": "1"},
        },
        "immutable": true,
        "data": {"k": "v"},
        "binaryData": {"bin": "AQI="},
    })
}

/// A key byte is `tag << 3 | wire type` (0 varint, 2 length-delimited).
#[rustfmt::skip]
const CONFIG_MAP_BYTES: &[u8] = &[
    // ConfigMap.metadata = 1, ObjectMeta of 44 bytes:
    0x0a, 44,
        0x0a, 2, b'c', b'm',             // name = 1
        0x12, 0,                         // generateName = 2: non-pointer, written empty
        0x1a, 2, b'n', b's',             // namespace = 3
        0x22, 0,                         // selfLink = 4
        0x2a, 0,                         // uid = 5
        0x32, 0,                         // resourceVersion = 6
        0x38, 0,                         // generation = 7, varint 0
        0x42, 8,                         // creationTimestamp = 8, a Timestamp:
            0x08, 0xcd, 0xa1, 0xe6, 0xbb, 0x04, // seconds = 1199149261 (2008-01-01T01:01:01Z)
            0x10, 0,                     // nanos = 0, always written
        // deletionTimestamp (9) and deletionGracePeriodSeconds (10) are nil pointers.
        0x5a, 6, 0x0a, 1, b'a', 0x12, 1, b'1', // labels = 11, entries sorted by key
        0x5a, 6, 0x0a, 1, b'b', 0x12, 1, b'2',
    // ConfigMap.data = 2, one entry {key = 1, value = 2}
    0x12, 6, 0x0a, 1, b'k', 0x12, 1, b'v',
    // ConfigMap.binaryData = 3: "AQI=" is [1, 2]
    0x1a, 9, 0x0a, 3, b'b', b'i', b'n', 0x12, 2, 1, 2,
    // ConfigMap.immutable = 4, *bool true; last although Go declares it first
    0x20, 1,
];

#[test]
fn config_map_encodes_to_hand_computed_bytes() {
    assert_eq!(enc(&config_map(), &CONFIG_MAP), CONFIG_MAP_BYTES);
}

#[test]
fn config_map_decodes_to_go_json() {
    let mut want = config_map();
    want["metadata"]["labels"] = json!({"a": "1", "b": "2"});
    assert_eq!(
        crate::protobuf::decode(CONFIG_MAP_BYTES, &CONFIG_MAP).unwrap(),
        want
    );
    assert_eq!(round_trip(&config_map(), &CONFIG_MAP), want);
}

#[test]
fn envelope_wraps_the_object_like_the_serializer() {
    let env = encode_envelope("v1", "ConfigMap", CONFIG_MAP_BYTES);
    let mut want = b"k8s\x00".to_vec();
    // typeMeta = 1: TypeMeta { apiVersion = 1 "v1", kind = 2 "ConfigMap" }
    want.extend_from_slice(&[0x0a, 15, 0x0a, 2, b'v', b'1', 0x12, 9]);
    want.extend_from_slice(b"ConfigMap");
    // raw = 2: the object's message (67 bytes)
    want.extend_from_slice(&[0x12, CONFIG_MAP_BYTES.len() as u8]);
    want.extend_from_slice(CONFIG_MAP_BYTES);
    // contentEncoding = 3 and contentType = 4, written though empty
    want.extend_from_slice(&[0x1a, 0, 0x22, 0]);
    assert_eq!(env, want);

    let direct = encode_object(&config_map(), &CONFIG_MAP, "v1", "ConfigMap").unwrap();
    assert_eq!(direct, env);

    let unknown = decode_envelope(&env).unwrap();
    assert_eq!(unknown.api_version, "v1");
    assert_eq!(unknown.kind, "ConfigMap");
    assert_eq!(unknown.raw, CONFIG_MAP_BYTES);
    assert_eq!(unknown.content_encoding, "");
    assert_eq!(unknown.content_type, "");
    let mut again = Vec::new();
    unknown.encode(&mut again);
    assert_eq!(again, env);
}

#[test]
fn long_objects_get_multi_byte_lengths() {
    let big = json!({"metadata": {"name": "x".repeat(300)}});
    let bytes = enc(&big, &CONFIG_MAP);
    // metadata: 303 (name: key, 2-byte length, 300) + 10 (five empty strings)
    // + 2 (generation) + 2 (empty creationTimestamp) = 317 = 2 << 7 | 0x3d
    assert_eq!(&bytes[..3], &[0x0a, 0xbd, 0x02]);
    assert_eq!(&bytes[3..6], &[0x0a, 0xac, 0x02]); // name: 300
    assert_eq!(
        round_trip(&big, &CONFIG_MAP)["metadata"]["name"],
        "x".repeat(300)
    );
    let env = encode_envelope("v1", "ConfigMap", &bytes);
    assert_eq!(decode_envelope(&env).unwrap().raw, bytes);
}

#[test]
fn lists_splice_cached_items() {
    let cm = config_map();
    let meta = json!({"resourceVersion": "7"});
    let mut from_values = Vec::new();
    encode_list(&meta, &LIST_META, [&cm, &cm], &CONFIG_MAP, &mut from_values).unwrap();
    let mut mixed = Vec::new();
    let items = [ListItem::Encoded(CONFIG_MAP_BYTES), ListItem::Value(&cm)];
    encode_list(&meta, &LIST_META, items, &CONFIG_MAP, &mut mixed).unwrap();
    assert_eq!(mixed, from_values);

    // metadata = 1: ListMeta {selfLink = 1 "", resourceVersion = 2 "7", continue = 3 ""}
    let mut want = vec![0x0a, 7, 0x0a, 0, 0x12, 1, b'7', 0x1a, 0];
    for _ in 0..2 {
        want.extend_from_slice(&[0x12, CONFIG_MAP_BYTES.len() as u8]); // items = 2
        want.extend_from_slice(CONFIG_MAP_BYTES);
    }
    assert_eq!(from_values, want);

    let list = crate::protobuf::decode(&from_values, &CONFIG_MAP_LIST).unwrap();
    assert_eq!(list["metadata"], json!({"resourceVersion": "7"}));
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2));

    let mut empty = Vec::new();
    let none: [&serde_json::Value; 0] = [];
    encode_list(&json!({}), &LIST_META, none, &CONFIG_MAP, &mut empty).unwrap();
    assert_eq!(empty, [0x0a, 6, 0x0a, 0, 0x12, 0, 0x1a, 0]);
    // `items` has no omitempty: an empty list says `"items": null`, as Go's does.
    assert_eq!(
        crate::protobuf::decode(&empty, &CONFIG_MAP_LIST).unwrap(),
        json!({"metadata": {}, "items": null})
    );
}

#[test]
fn watch_frames_carry_a_bare_event_around_the_enveloped_object() {
    let object = encode_envelope("v1", "ConfigMap", CONFIG_MAP_BYTES);
    assert_eq!(object.len(), 94, "one-byte lengths below");
    let frame = encode_watch_event("ADDED", &object);
    // 4-byte big-endian length of the WatchEvent, no magic, no Unknown:
    // type = 1 (7 bytes), object = 2 (2 + RawExtension { raw = 1 } of 2 + 94 bytes)
    let mut want = vec![0, 0, 0, 7 + 2 + 96];
    want.extend_from_slice(&[0x0a, 5]);
    want.extend_from_slice(b"ADDED");
    want.extend_from_slice(&[0x12, 96, 0x0a, 94]);
    want.extend_from_slice(&object);
    assert_eq!(frame, want);

    let mut stream = frame.clone();
    stream.extend_from_slice(&encode_watch_event("DELETED", &object));
    let (first, rest) = next_frame(&stream).unwrap();
    let event = decode_watch_event(first).unwrap();
    assert_eq!(event.event_type, "ADDED");
    assert_eq!(event.object, object);
    let (second, rest) = next_frame(rest).unwrap();
    assert_eq!(decode_watch_event(second).unwrap().event_type, "DELETED");
    assert!(rest.is_empty());
    assert_eq!(next_frame(&frame[..frame.len() - 1]), None);
    assert_eq!(next_frame(&frame[..3]), None);
}
