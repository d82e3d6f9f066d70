//! Malformed input fails with gogo's and the serializer's errors; no input panics.

use serde_json::{Value, json};

use super::enc;
use super::schemas::{CONFIG_MAP, EVENT, KITCHEN, NODE, PDB, RESOURCE_QUOTA};
use crate::protobuf::wire::{begin_nested, end_nested};
use crate::protobuf::{
    Error, MAX_DEPTH, decode, decode_envelope, decode_watch_event, encode, next_frame,
};
use crate::schema::Message;

fn decode_err(bytes: &[u8], msg: &Message) -> String {
    match decode(bytes, msg) {
        Ok(v) => panic!("{bytes:?} decoded to {v}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn malformed_bodies_fail_with_gogos_errors() {
    let full = enc(
        &json!({"metadata": {"name": "n"}, "data": {"k": "v"}}),
        &CONFIG_MAP,
    );
    assert_eq!(
        decode_err(&full[..full.len() - 1], &CONFIG_MAP),
        "unexpected EOF"
    );
    assert_eq!(decode_err(&[0x0a], &CONFIG_MAP), "unexpected EOF");
    assert_eq!(decode_err(&[0x0a, 0x80], &CONFIG_MAP), "unexpected EOF");
    assert_eq!(
        decode_err(&[0x08, 1], &CONFIG_MAP),
        "proto: wrong wireType = 0 for field Metadata"
    );
    assert_eq!(
        decode_err(&[0x00], &CONFIG_MAP),
        "proto: ConfigMap: illegal tag 0 (wire type 0)"
    );
    assert_eq!(
        decode_err(&[0x0c], &CONFIG_MAP),
        "proto: ConfigMap: wiretype end group for non-group"
    );
    assert_eq!(
        decode_err(&[0x0a, 2, 0x38, 0x80], &CONFIG_MAP),
        "unexpected EOF",
        "a varint cut short inside ObjectMeta"
    );
    assert_eq!(
        decode_err(&[0x0a, 1, 0x00], &CONFIG_MAP),
        "proto: ObjectMeta: illegal tag 0 (wire type 0)"
    );
    assert_eq!(
        decode_err(
            &[
                0x0a, 12, 0x38, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01
            ],
            &CONFIG_MAP
        ),
        "proto: integer overflow"
    );
    assert_eq!(
        decode_err(&[0x0f], &CONFIG_MAP),
        "proto: wrong wireType = 7 for field Metadata"
    );
    assert_eq!(
        decode_err(&[0xa7, 0x06], &CONFIG_MAP),
        "proto: illegal wireType 7",
        "an unknown field of an impossible wire type cannot be skipped"
    );
}

#[test]
fn unknown_fields_are_skipped_and_repeats_merge() {
    let base = enc(&json!({"metadata": {"name": "n"}}), &CONFIG_MAP);
    let mut with_unknown = base.clone();
    // field 100 varint, field 101 fixed64, field 102 bytes, field 103 group, field 104 fixed32
    with_unknown.extend_from_slice(&[0xa0, 0x06, 0x96, 0x01]);
    with_unknown.extend_from_slice(&[0xa9, 0x06, 1, 2, 3, 4, 5, 6, 7, 8]);
    with_unknown.extend_from_slice(&[0xb2, 0x06, 2, b'h', b'i']);
    with_unknown.extend_from_slice(&[0xbb, 0x06, 0x08, 1, 0xbc, 0x06]);
    with_unknown.extend_from_slice(&[0xc5, 0x06, 1, 2, 3, 4]);
    assert_eq!(
        decode(&with_unknown, &CONFIG_MAP).unwrap(),
        decode(&base, &CONFIG_MAP).unwrap()
    );

    // A second metadata merges into the first; a second name replaces the first.
    let mut merged = base.clone();
    merged.extend_from_slice(&[0x0a, 4, 0x1a, 2, b'n', b's']);
    merged.extend_from_slice(&[0x0a, 3, 0x0a, 1, b'm']);
    let v = decode(&merged, &CONFIG_MAP).unwrap();
    assert_eq!(v["metadata"]["name"], "m");
    assert_eq!(v["metadata"]["namespace"], "ns");
    // Repeated fields accumulate, map entries replace by key.
    let extra = [
        0x12, 6, 0x0a, 1, b'k', 0x12, 1, b'1', 0x12, 6, 0x0a, 1, b'k', 0x12, 1, b'2',
    ];
    assert_eq!(
        decode(&extra, &CONFIG_MAP).unwrap()["data"],
        json!({"k": "2"})
    );
}

#[test]
fn repeated_scalars_may_be_packed() {
    // ints = 16 (key 0x82 0x01): packed [1, 300, -1] then one unpacked 7
    let mut bytes = vec![0x82, 0x01, 13, 1, 0xac, 0x02];
    bytes.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    bytes.extend_from_slice(&[0x80, 0x01, 7]);
    let v = decode(&bytes, &KITCHEN).unwrap();
    assert_eq!(v["ints"], json!([1, 300, -1, 7]));
    // A varint beyond 32 bits keeps its low 32 bits in an int32, as Go's shifts do.
    let v = decode(&[0x28, 0x80, 0x80, 0x80, 0x80, 0x10], &KITCHEN).unwrap();
    assert!(v.get("small").is_none(), "1 << 32 is 0 in an int32: {v}");
    // Encoding never packs: one key per element, as gogo's proto2 output.
    let bytes = enc(&json!({"ints": [1, 2]}), &KITCHEN);
    assert!(
        bytes
            .windows(6)
            .any(|w| w == [0x80, 0x01, 1, 0x80, 0x01, 2])
    );
}

#[test]
fn envelopes_are_checked_like_the_serializer() {
    assert_eq!(decode_envelope(b"").unwrap_err().to_string(), "empty data");
    assert_eq!(
        decode_envelope(b"{}").unwrap_err().to_string(),
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    );
    assert_eq!(
        decode_envelope(b"k8s\x00").unwrap_err().to_string(),
        "empty body"
    );
    assert_eq!(
        decode_envelope(b"k8s\x00\x0a\x05").unwrap_err().to_string(),
        "unexpected EOF"
    );
    assert_eq!(
        decode_envelope(b"k8s\x00\x10\x01").unwrap_err().to_string(),
        "proto: wrong wireType = 0 for field Raw"
    );
    let unknown = decode_envelope(b"k8s\x00\x0a\x04\x0a\x02v1").unwrap();
    assert_eq!(
        (unknown.api_version.as_str(), unknown.kind.as_str()),
        ("v1", "")
    );
    assert!(unknown.raw.is_empty());
}

#[test]
fn watch_events_are_checked_like_client_go() {
    let frame = crate::protobuf::encode_watch_event("NOPE", b"k8s\x00");
    let (body, _) = next_frame(&frame).unwrap();
    assert_eq!(
        decode_watch_event(body).unwrap_err().to_string(),
        "got invalid watch event type: NOPE"
    );
    for t in ["ADDED", "MODIFIED", "DELETED", "ERROR", "BOOKMARK"] {
        let frame = crate::protobuf::encode_watch_event(t, b"x");
        let (body, _) = next_frame(&frame).unwrap();
        assert_eq!(decode_watch_event(body).unwrap().event_type, t);
    }
}

/// `depth` nested `next` messages of the recursive NODE.
fn nested_value(depth: usize) -> Value {
    (0..depth).fold(json!({"name": "leaf"}), |inner, _| json!({"next": inner}))
}

fn nested_bytes(depth: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let marks: Vec<usize> = (0..depth).map(|_| begin_nested(2, &mut out)).collect();
    for mark in marks.into_iter().rev() {
        end_nested(mark, &mut out);
    }
    out
}

#[test]
fn nesting_is_bounded() {
    let ok = nested_value(MAX_DEPTH - 1);
    assert_eq!(super::round_trip(&ok, &NODE), ok);
    let mut out = Vec::new();
    let too_deep = nested_value(MAX_DEPTH + 5);
    assert!(matches!(
        encode(&too_deep, &NODE, &mut out),
        Err(Error::TooDeep)
    ));
    assert!(decode(&nested_bytes(MAX_DEPTH - 1), &NODE).is_ok());
    assert!(matches!(
        decode(&nested_bytes(MAX_DEPTH + 5), &NODE),
        Err(Error::TooDeep)
    ));
    // Far deeper: still an error, not a stack overflow.
    assert!(matches!(
        decode(&nested_bytes(5_000), &NODE),
        Err(Error::TooDeep)
    ));
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn bytes(&mut self, max: u64) -> Vec<u8> {
        let len = self.below(max);
        (0..len).map(|_| self.next() as u8).collect()
    }
}

const SCHEMAS: [&Message; 6] = [&CONFIG_MAP, &EVENT, &KITCHEN, &NODE, &PDB, &RESOURCE_QUOTA];

fn decode_everything(bytes: &[u8]) {
    for msg in SCHEMAS {
        let _ = decode(bytes, msg);
    }
    let _ = decode_envelope(bytes);
    let _ = decode_watch_event(bytes);
    let _ = next_frame(bytes);
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        decode_everything(&rng.bytes(64));
    }
    // Random bytes behind plausible keys reach deeper code.
    for _ in 0..20_000 {
        let mut bytes = vec![(rng.below(32) as u8) << 3 | 2];
        bytes.extend(rng.bytes(48));
        decode_everything(&bytes);
    }
}

#[test]
fn truncated_and_mutated_encodings_never_panic() {
    let full = json!({
        "str": "s", "blob": "AQ==", "when": "2024-01-01T00:00:00Z",
        "micro": "2024-01-01T00:00:00.5Z", "qty": "1", "port": "p", "fields": {},
        "raw": [1], "child": {"name": "c"}, "ints": [1, -2], "children": [{}],
        "labels": {"a": "b"}, "quantities": {"q": "1"}, "extra": {"e": ["x"]},
        "matrix": [[1]], "blobMap": {"b": "AQ=="},
    });
    let bytes = enc(&full, &KITCHEN);
    for end in 0..bytes.len() {
        decode_everything(&bytes[..end]);
    }
    let mut rng = Rng(42);
    for _ in 0..20_000 {
        let mut mutated = bytes.clone();
        for _ in 0..=rng.below(3) {
            let at = rng.below(mutated.len() as u64) as usize;
            mutated[at] = rng.next() as u8;
        }
        decode_everything(&mutated);
    }
}

/// A random JSON value of at most `depth` levels.
fn random_value(rng: &mut Rng, depth: u32) -> Value {
    let strings = ["", "a", "AQ==", "1Gi", "2024-01-01T00:00:00Z", "<&>", "x y"];
    match rng.below(if depth == 0 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.below(2) == 1),
        2 => json!(rng.next() as i64 >> rng.below(64)),
        3 => json!(f64::from(rng.below(1000) as u32) / 7.0),
        4 => json!(strings[rng.below(strings.len() as u64) as usize]),
        5 => Value::Array(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth - 1))
                .collect(),
        ),
        _ => {
            let names = [
                "str", "small", "when", "qty", "port", "child", "ints", "labels", "extra", "raw",
                "name", "value", "matrix", "metadata", "data",
            ];
            let obj = (0..rng.below(5))
                .map(|_| {
                    let name = names[rng.below(names.len() as u64) as usize];
                    (name.to_string(), random_value(rng, depth - 1))
                })
                .collect();
            Value::Object(obj)
        }
    }
}

#[test]
fn random_values_never_panic_and_what_encodes_decodes() {
    let mut rng = Rng(7);
    for _ in 0..20_000 {
        let value = random_value(&mut rng, 4);
        for msg in SCHEMAS {
            let mut out = Vec::new();
            if encode(&value, msg, &mut out).is_ok() {
                decode(&out, msg).unwrap_or_else(|e| panic!("{value} in {}: {e}", msg.name));
            }
        }
    }
}
