//! Tests of the protobuf codec against test descriptions of upstream types
//! ([`schemas`]): golden bytes worked out by hand from the `.proto` field numbers, Go's JSON
//! rules, malformed input, and (ignored by default) upstream's own round-trip fixtures.

mod golden;
mod robustness;
mod rules;
mod schema_props;
mod schemas;
mod upstream;

use serde_json::Value;

use super::{decode, encode};
use crate::schema::Message;

/// The encoding of `value`, which must encode.
fn enc(value: &Value, msg: &Message) -> Vec<u8> {
    let mut out = Vec::new();
    encode(value, msg, &mut out).unwrap_or_else(|e| panic!("encode {value}: {e}"));
    out
}

/// JSON → protobuf → JSON.
fn round_trip(value: &Value, msg: &Message) -> Value {
    decode(&enc(value, msg), msg).unwrap_or_else(|e| panic!("decode {value}: {e}"))
}
