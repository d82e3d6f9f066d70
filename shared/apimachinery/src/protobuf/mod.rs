//! The Kubernetes protobuf codec (`application/vnd.kubernetes.protobuf`), for objects held
//! as JSON values and described by [`crate::schema::Message`]s.
//!
//! Upstream encodes Go structs with gogo-generated code; here the struct is implied. The
//! rule both directions follow is: **the bytes are what gogo's `Marshal` writes for the
//! struct Go's `encoding/json` would decode from the value, and the value is what
//! `encoding/json` writes for the struct gogo's `Unmarshal` makes of the bytes.** From
//! that rule (k8s's gogo output, `k8s.io/apimachinery` v0.33):
//!
//! - Fields go out in tag order. Non-pointer strings, ints, bools and structs are always
//!   written, zero or not; pointers only when set; `[]byte` when not nil (a JSON `""` is an
//!   empty, non-nil slice); repeated fields element by element, scalars unpacked; maps as
//!   entries `{key = 1, value = 2}` sorted by key, both always written except a nil
//!   `[]byte` value. JSON `null` is what Go makes of it: no change for a value, nil for a
//!   pointer, slice or map.
//! - Reading, repeated scalars may also be packed, unknown fields are skipped, a repeated
//!   singular message merges into the first, and errors carry gogo's texts
//!   (`unexpected EOF`, `proto: wrong wireType = 0 for field Name`, ...).
//! - JSON out follows `encoding/json`: `omitempty` drops zero strings, numbers, bools and
//!   empty slices and maps but never a struct; a nil slice, map or pointer without
//!   `omitempty` is `null`; `metav1.Time` and `MicroTime` are `null` when zero.
//! - Well-known types (`Kind::Time`, ...) are the messages upstream hand-writes: Time is a
//!   `Timestamp` of whole seconds, MicroTime keeps microseconds, the zero time is an empty
//!   message; Quantity is `{string = 1}` (the string as it is, syntax-checked; see
//!   [`quantity`]); IntOrString is `{type = 1, intVal = 2, strVal = 3}`; FieldsV1 and
//!   RawExtension carry compact JSON (Go's escaping, [`crate::golang::json::to_vec`]) in field 1,
//!   as apiextensions' `JSON` does; `JSONSchemaPropsOr{Array,Bool,StringArray}` are their
//!   protobuf messages, written from and read into the JSON form their `MarshalJSON` and
//!   `UnmarshalJSON` use. A `double` is eight bytes, written as Go's JSON writes a float64.
//! - An array or map directly inside an array or map (`map[string]ExtraValue` where
//!   `ExtraValue []string`) is a wrapper message holding it as field 1, as go-to-protobuf
//!   generates for named slice types.
//!
//! Framing, from upstream's serializers: a single object or list is the envelope, the
//! magic `k8s\0` then `runtime.Unknown { typeMeta, raw, contentEncoding, contentType }`
//! ([`envelope`]). A watch stream is length-prefixed frames (4 bytes, big endian) each
//! holding a **bare** `metav1.WatchEvent`, without envelope, because the stream
//! serializer is the raw protobuf serializer (`codec_factory.go`); only the object inside
//! the event is enveloped ([`watch`]).
//!
//! Nesting is limited to [`MAX_DEPTH`] messages, so input cannot exhaust the stack
//! through a recursive schema. Nothing here panics on any input.
//!
//! Pure: no I/O.

mod decode;
mod encode;
pub mod envelope;
mod list;
pub mod quantity;
mod render;
mod state;
pub mod watch;
pub mod wire;

#[cfg(test)]
mod tests;

pub use decode::decode;
pub use encode::encode;
pub use envelope::{
    MAGIC, MEDIA_TYPE, Unknown, decode_envelope, encode_envelope, encode_object, write_envelope,
};
pub use list::{ListItem, encode_list};
pub use watch::{
    WATCH_MEDIA_TYPE, WatchEvent, decode_watch_event, encode_watch_event, next_frame,
    write_watch_event,
};
pub use wire::write_bytes_field;

/// How many messages deep a value or a body may nest.
pub const MAX_DEPTH: usize = 128;

/// The result type of this module.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why bytes or a value could not be converted. Texts are upstream's where upstream has one.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// gogo's `io.ErrUnexpectedEOF`: a field runs past the end of its message.
    #[error("unexpected EOF")]
    UnexpectedEof,
    /// gogo's `ErrIntOverflowGenerated`: a varint longer than ten bytes.
    #[error("proto: integer overflow")]
    IntOverflow,
    /// gogo's `ErrInvalidLengthGenerated`.
    #[error("proto: negative length found during unmarshaling")]
    InvalidLength,
    /// gogo's `ErrUnexpectedEndOfGroupGenerated`.
    #[error("proto: unexpected end of group")]
    UnexpectedEndOfGroup,
    #[error("proto: illegal wireType {0}")]
    IllegalWireType(u8),
    #[error("proto: {message}: wiretype end group for non-group")]
    EndGroupForNonGroup { message: &'static str },
    /// `wire` is the whole key, as upstream prints it.
    #[error("proto: {message}: illegal tag {tag} (wire type {wire})")]
    IllegalTag {
        message: &'static str,
        tag: i32,
        wire: u64,
    },
    /// `field` is the Go field name, derived from the JSON name.
    #[error("proto: wrong wireType = {wire_type} for field {field}")]
    WrongWireType { wire_type: u8, field: String },
    #[error("object nests deeper than {MAX_DEPTH} messages")]
    TooDeep,
    /// A JSON value of the wrong type for its field, as `encoding/json` reports it.
    #[error(
        "json: cannot unmarshal {value} into Go struct field {strukt}.{field} of type {go_type}"
    )]
    JsonType {
        value: String,
        strukt: &'static str,
        field: String,
        go_type: String,
    },
    /// A top-level value that is not a JSON object.
    #[error("json: cannot unmarshal {value} into Go value of type {go_type}")]
    JsonValueType { value: String, go_type: String },
    /// A `[]byte` field whose JSON string is not standard base64.
    #[error("illegal base64 data at input byte {0}")]
    Base64(usize),
    /// A Time or MicroTime that is not RFC 3339; `value` is Go-quoted.
    #[error("parsing time {value} as \"{layout}\": cannot parse {value} as RFC 3339")]
    Time { value: String, layout: &'static str },
    /// `resource.ParseQuantity`'s errors.
    #[error("{0}")]
    Quantity(&'static str),
    /// An IntOrString whose type is neither 0 (int) nor 1 (string).
    #[error("impossible IntOrString.Type")]
    IntOrStringType,
    /// FieldsV1 or RawExtension bytes that are not JSON.
    #[error("failed to parse {what} bytes as JSON: {source}")]
    EmbeddedJson {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    /// FieldsV1 or RawExtension bytes in no content type this codec reads (CBOR, or empty).
    #[error("cannot convert {0} with unrecognized content type to unstructured")]
    EmbeddedContentType(&'static str),
    /// `JSONSchemaPropsOrBool.UnmarshalJSON` of neither a boolean nor an object.
    #[error("boolean or JSON schema expected")]
    SchemaOrBool,
    /// apiextensions' `JSON` whose bytes are not JSON, as `encoding/json` reports what its
    /// `MarshalJSON` returned.
    #[error("json: error calling MarshalJSON for type *v1.JSON: {0}")]
    JsonMarshal(String),
    /// A float64 JSON cannot hold (NaN, infinities), as `encoding/json` refuses it.
    #[error("json: unsupported value: {0}")]
    UnsupportedFloat(String),
    /// `protobuf.Serializer.Decode` of zero bytes.
    #[error("empty data")]
    EmptyData,
    /// `protobuf.Serializer.Decode` of bytes without the `k8s\0` magic.
    #[error(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    )]
    MissingPrefix,
    /// `protobuf.Serializer.Decode` of the magic alone.
    #[error("empty body")]
    EmptyBody,
    /// client-go's watch decoder on an event type it does not know.
    #[error("got invalid watch event type: {0}")]
    InvalidWatchEventType(String),
}
