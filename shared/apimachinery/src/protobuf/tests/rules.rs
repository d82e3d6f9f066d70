//! Go's JSON rules on the way out and `encoding/json`'s on the way in, kind by kind.

use serde_json::{Value, json};

use super::schemas::{CONFIG_MAP, EVENT, KITCHEN, LEASE, OWNER_REFERENCE, PDB};
use super::{enc, round_trip};
use crate::protobuf::{Error, decode, encode};

fn err(value: Value, msg: &crate::schema::Message) -> String {
    let mut out = Vec::new();
    match encode(&value, msg, &mut out) {
        Ok(()) => panic!("{value} encoded"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn an_empty_object_decodes_to_gos_zero_struct() {
    // The famous `"creationTimestamp": null`: structs are never omitted, zero Time is null.
    assert_eq!(
        decode(&[], &CONFIG_MAP).unwrap(),
        json!({"metadata": {"creationTimestamp": null}})
    );
    assert_eq!(
        decode(&[], &EVENT).unwrap(),
        json!({
            "metadata": {"creationTimestamp": null},
            "involvedObject": {},
            "source": {},
            "firstTimestamp": null,
            "lastTimestamp": null,
            "eventTime": null,
            "reportingComponent": "",
            "reportingInstance": "",
        })
    );
    // Fields without omitempty are written at their zero value; pointers are not.
    assert_eq!(
        decode(&[], &OWNER_REFERENCE).unwrap(),
        json!({"apiVersion": "", "kind": "", "name": "", "uid": ""})
    );
    let pdb = decode(&[], &PDB).unwrap();
    assert_eq!(
        pdb["status"],
        json!({"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0})
    );
    assert_eq!(pdb["spec"], json!({}));
}

#[test]
fn absent_non_pointer_fields_are_written_as_zero_values() {
    // Go decodes {} into a struct whose strings, ints and structs are zero, and gogo
    // writes them all; pointers, nil slices and nil maps are not written.
    let bytes = enc(&json!({}), &OWNER_REFERENCE);
    assert_eq!(bytes, [0x0a, 0, 0x1a, 0, 0x22, 0, 0x2a, 0]);
    // null is the same as absent for a value, and nil for a pointer.
    let with_nulls = json!({"kind": null, "controller": null});
    assert_eq!(enc(&with_nulls, &OWNER_REFERENCE), bytes);
}

#[test]
fn pointers_are_present_only_when_set() {
    let lease = json!({"spec": {"holderIdentity": "", "leaseDurationSeconds": 0}});
    let back = round_trip(&lease, &LEASE);
    // Set pointers survive with zero values; unset ones stay absent.
    assert_eq!(
        back["spec"],
        json!({"holderIdentity": "", "leaseDurationSeconds": 0})
    );
    let cm = round_trip(&json!({"immutable": false}), &CONFIG_MAP);
    assert_eq!(cm["immutable"], json!(false));
    assert!(
        round_trip(&json!({}), &CONFIG_MAP)
            .get("immutable")
            .is_none()
    );
    // A pointer to the zero time is set: written as an empty message, read back as null.
    let meta = json!({"metadata": {"deletionTimestamp": "0001-01-01T00:00:00Z"}});
    let back = round_trip(&meta, &CONFIG_MAP);
    assert_eq!(back["metadata"]["deletionTimestamp"], Value::Null);
    assert!(
        round_trip(
            &json!({"metadata": {"deletionTimestamp": null}}),
            &CONFIG_MAP
        )["metadata"]
            .get("deletionTimestamp")
            .is_none()
    );
    // A pointer without omitempty is null when nil.
    assert_eq!(round_trip(&json!({}), &KITCHEN)["alwaysPtr"], Value::Null);
}

#[test]
fn every_kind_round_trips() {
    let full = json!({
        "str": "s",
        "ptrStr": "p",
        "alwaysStr": "a",
        "flag": true,
        "small": -5,
        "big": 9_007_199_254_740_993_i64,
        "blob": "AAEC/w==",
        "when": "2024-02-29T23:59:59Z",
        "micro": "2024-02-29T23:59:59.123456Z",
        "qty": "1500m",
        "port": "http",
        "fields": {"f:metadata": {"f:labels": {}}},
        "raw": {"apiVersion": "v1", "list": [1, "two", null, 3.5]},
        "child": {"name": "c", "value": 1},
        "ptrChild": {"value": 0},
        "ints": [1, -1, 2_147_483_647],
        "strs": ["a", ""],
        "children": [{"name": "x", "value": 2}, {"value": 0}],
        "blobs": ["", "AQ=="],
        "labels": {"z": "1", "a": ""},
        "quantities": {"cpu": "2", "memory": "1Gi"},
        "extra": {"groups": ["a", "b"]},
        "matrix": [[1, 2], [3]],
        "blobMap": {"k": "AQ==", "empty": ""},
        "ptrInt": 0,
        "alwaysPtr": false,
        "alwaysBlob": "AQ==",
        "flags": [true, false],
        "ptrPort": 8080,
        "ptrQty": "0",
    });
    assert_eq!(round_trip(&full, &KITCHEN), full);
    // An empty slice inside a map or slice is an empty wrapper message, read back as nil.
    let nested = json!({"extra": {"none": []}, "matrix": [[]]});
    let back = round_trip(&nested, &KITCHEN);
    assert_eq!(back["extra"], json!({"none": null}));
    assert_eq!(back["matrix"], json!([null]));
}

#[test]
fn zero_values_follow_omitempty() {
    let zero = json!({
        "str": "", "flag": false, "small": 0, "big": 0, "blob": "", "ints": [], "labels": {},
        "blobMap": {}, "children": [], "strs": [],
    });
    assert_eq!(
        round_trip(&zero, &KITCHEN),
        json!({
            "alwaysStr": "",
            "when": null,
            "micro": null,
            "qty": "0",
            "port": 0,
            "raw": null,
            "child": {"value": 0},
            // no omitempty: a nil slice or map is null, and an empty one reads back nil
            "strs": null,
            "labels": null,
            "alwaysPtr": null,
            "alwaysBlob": null,
        })
    );
}

#[test]
fn bytes_distinguish_nil_from_empty() {
    // "" is an empty, non-nil []byte: written (key and zero length). null is nil: not.
    let after_metadata = |b: Vec<u8>| b[2 + usize::from(b[1])..].to_vec();
    assert_eq!(
        after_metadata(enc(&json!({"binaryData": {"a": ""}}), &CONFIG_MAP)),
        [0x1a, 5, 0x0a, 1, b'a', 0x12, 0]
    );
    assert_eq!(
        after_metadata(enc(&json!({"binaryData": {"a": null}}), &CONFIG_MAP)),
        [0x1a, 3, 0x0a, 1, b'a']
    );
    // gogo reads a missing []byte map value as empty, not nil.
    let back = round_trip(&json!({"binaryData": {"a": null}}), &CONFIG_MAP);
    assert_eq!(back["binaryData"], json!({"a": ""}));
    let kitchen = round_trip(&json!({"alwaysBlob": ""}), &KITCHEN);
    assert_eq!(kitchen["alwaysBlob"], json!(""));
    // Go's base64 ignores line breaks and requires padding.
    let back = round_trip(&json!({"blob": "AA\r\nEC"}), &KITCHEN);
    assert_eq!(back["blob"], json!("AAEC"));
    assert_eq!(
        round_trip(&json!({"blob": "AAEC\n"}), &KITCHEN)["blob"],
        "AAEC"
    );
    let missing_padding = err(json!({"blob": "AQ"}), &KITCHEN);
    assert!(missing_padding.starts_with("illegal base64 data at input byte"));
    assert!(err(json!({"blob": "A*=="}), &KITCHEN).ends_with("input byte 1"));
}

#[test]
fn time_is_seconds_in_utc_and_micro_time_keeps_microseconds() {
    let t = json!({
        "when": "2024-01-01T01:30:00.999+01:30",
        "micro": "2024-01-01T00:00:00.123456789-00:30",
    });
    assert_eq!(
        round_trip(&t, &KITCHEN)["when"],
        json!("2024-01-01T00:00:00Z"),
        "fraction dropped, offset applied"
    );
    assert_eq!(
        round_trip(&t, &KITCHEN)["micro"],
        json!("2024-01-01T00:30:00.123456Z")
    );
    // Time writes nanos = 0 whatever the JSON fraction: 0x10 0x00 closes the Timestamp.
    let bytes = enc(&json!({"when": "1970-01-01T00:00:01.5Z"}), &KITCHEN);
    let at = bytes.windows(2).position(|w| w == [0x42, 4]).unwrap();
    assert_eq!(&bytes[at..at + 6], &[0x42, 4, 0x08, 1, 0x10, 0]);
    // Before 1970 seconds are negative (ten-byte varints) and floor the fraction.
    let back = round_trip(&json!({"micro": "1969-12-31T23:59:59.000001Z"}), &KITCHEN);
    assert_eq!(back["micro"], json!("1969-12-31T23:59:59.000001Z"));
    // The zero time is an empty message.
    let zero = enc(&json!({"when": "0001-01-01T00:00:00Z"}), &KITCHEN);
    assert!(zero.windows(2).any(|w| w == [0x42, 0]));
    assert_eq!(
        err(json!({"when": "yesterday"}), &KITCHEN),
        r#"parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as RFC 3339"#
    );
}

#[test]
fn time_from_the_wire_ignores_nanos_and_micro_time_truncates_them() {
    // when (8) = {seconds 1, nanos 999}; micro (9) = {seconds 1, nanos 1999}
    let bytes = [
        0x42, 5, 0x08, 1, 0x10, 0xe7, 0x07, 0x4a, 5, 0x08, 1, 0x10, 0xcf, 0x0f,
    ];
    let v = decode(&bytes, &KITCHEN).unwrap();
    assert_eq!(v["when"], json!("1970-01-01T00:00:01Z"));
    assert_eq!(v["micro"], json!("1970-01-01T00:00:01.000001Z"));
    // A Timestamp with no fields is not the zero time but the epoch.
    let v = decode(&[0x42, 2, 0x10, 0], &KITCHEN).unwrap();
    assert_eq!(v["when"], json!("1970-01-01T00:00:00Z"));
    // seconds of Go's zero time read back as null.
    let mut zero = vec![0x42, 11, 0x08];
    crate::protobuf::wire::put_varint(&mut zero, crate::golang::time::ZERO_UNIX as u64);
    assert_eq!(decode(&zero, &KITCHEN).unwrap()["when"], Value::Null);
}

#[test]
fn quantities_and_int_or_strings() {
    let v = json!({"qty": 2.5, "port": 80, "quantities": {"a": null}});
    let back = round_trip(&v, &KITCHEN);
    assert_eq!(
        back["qty"],
        json!("2.5"),
        "a JSON number is read as its text"
    );
    assert_eq!(back["port"], json!(80));
    assert_eq!(
        back["quantities"],
        json!({"a": "0"}),
        "null is the zero Quantity"
    );
    // IntOrString writes all three fields: {type = 1, intVal = 2, strVal = 3}.
    let bytes = enc(&json!({"port": "http"}), &KITCHEN);
    let at = bytes.windows(2).position(|w| w == [0x5a, 10]).unwrap();
    assert_eq!(
        &bytes[at..at + 12],
        &[0x5a, 10, 0x08, 1, 0x10, 0, 0x1a, 4, b'h', b't', b't', b'p']
    );
    assert_eq!(
        err(json!({"qty": "ten"}), &KITCHEN),
        crate::protobuf::quantity::ERR_FORMAT_WRONG
    );
    assert_eq!(
        err(json!({"port": 1.5}), &KITCHEN),
        "json: cannot unmarshal number 1.5 into Go struct field Kitchen.port of type int32"
    );
    // An IntOrString of another type cannot be written as JSON.
    let bad = [0x5a, 2, 0x08, 2];
    assert!(matches!(
        decode(&bad, &KITCHEN),
        Err(Error::IntOrStringType)
    ));
    // A malformed Quantity on the wire fails as ParseQuantity does.
    let bad = [0x52, 3, 0x0a, 1, b'x'];
    assert!(matches!(decode(&bad, &KITCHEN), Err(Error::Quantity(_))));
}

#[test]
fn embedded_json_is_compact_with_gos_escaping() {
    let bytes = enc(&json!({"raw": {"a": "<b>"}}), &KITCHEN);
    let raw = br#"{"a":"\u003cb\u003e"}"#;
    let at = bytes.windows(raw.len()).position(|w| w == raw);
    assert!(at.is_some(), "{bytes:?}");
    // RawExtension bytes that are not JSON cannot be written as JSON.
    let not_json = [0x6a, 3, 0x0a, 1, b'x'];
    assert!(matches!(
        decode(&not_json, &KITCHEN),
        Err(Error::EmbeddedContentType(_))
    ));
    let broken = [0x6a, 3, 0x0a, 1, b'{'];
    assert!(matches!(
        decode(&broken, &KITCHEN),
        Err(Error::EmbeddedJson { .. })
    ));
}

#[test]
fn wrong_json_types_are_errors() {
    let cases = [
        (
            json!({"str": 1}),
            "number into Go struct field Kitchen.str of type string",
        ),
        (
            json!({"flag": "yes"}),
            "string into Go struct field Kitchen.flag of type bool",
        ),
        (
            json!({"small": 2_147_483_648_i64}),
            "number 2147483648 into Go struct field Kitchen.small of type int32",
        ),
        (
            json!({"big": 1.0}),
            "number 1.0 into Go struct field Kitchen.big of type int64",
        ),
        (
            json!({"ints": {}}),
            "object into Go struct field Kitchen.ints of type []int32",
        ),
        (
            json!({"ints": ["1"]}),
            "string into Go struct field Kitchen.ints of type int32",
        ),
        (
            json!({"labels": []}),
            "array into Go struct field Kitchen.labels of type map[string]string",
        ),
        (
            json!({"child": {"value": "1"}}),
            "string into Go struct field Child.child.value of type int32",
        ),
        (
            json!({"extra": {"g": "a"}}),
            "string into Go struct field Kitchen.extra of type []string",
        ),
        (
            json!({"child": 1}),
            "number into Go struct field Kitchen.child of type v1.Child",
        ),
    ];
    for (value, want) in cases {
        assert_eq!(
            err(value, &KITCHEN),
            format!("json: cannot unmarshal {want}")
        );
    }
    assert_eq!(
        err(json!([1]), &KITCHEN),
        "json: cannot unmarshal array into Go value of type v1.Kitchen"
    );
}

#[test]
fn null_elements_are_zero_values() {
    let v = json!({"strs": [null], "children": [null], "ints": [null], "matrix": [null]});
    assert_eq!(
        round_trip(&v, &KITCHEN),
        json!({
            "alwaysStr": "", "when": null, "micro": null, "qty": "0", "port": 0, "raw": null,
            "child": {"value": 0}, "labels": null, "alwaysPtr": null, "alwaysBlob": null,
            "strs": [""], "children": [{"value": 0}], "ints": [0], "matrix": [null],
        })
    );
}

#[test]
fn map_entries_are_sorted_by_key_bytes() {
    let v = json!({"labels": {"b": "", "B": "", "a": "", "é": "", "aa": ""}});
    let bytes = enc(&v, &KITCHEN);
    let keys: Vec<u8> = bytes
        .windows(3)
        .filter(|w| w[0] == 0xa2 && w[1] == 0x01)
        .map(|w| w[2])
        .collect();
    // every entry is {key, value ""}: length 2 + key + 2
    assert_eq!(keys, [5, 5, 6, 5, 6], "B, a, aa, b, é in byte order");
    let sorted: Vec<String> = round_trip(&v, &KITCHEN)["labels"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(sorted, ["B", "a", "aa", "b", "é"]);
}
