//! Watch streams in protobuf (`application/vnd.kubernetes.protobuf;stream=watch`).
//!
//! Upstream's watch handler (`apiserver/pkg/endpoints/handlers/watch.go`, `response.go`)
//! encodes each event's object with the negotiated serializer, the enveloped one, into
//! `metav1.WatchEvent { string type = 1; RawExtension object = 2; }`, then encodes that
//! event with the media type's *stream* serializer and writes it as one frame. For
//! protobuf the stream serializer is the raw serializer (`codec_factory.go`:
//! `StreamSerializer: protoRawSerializer`), which writes the bare message with no magic
//! and no `Unknown`; the framer (`util/framer`) puts a 4-byte big-endian length in front.
//! client-go reads it back the same way (`rest/watch/decoder.go`). So a frame is
//!
//! ```text
//! u32be(len) WatchEvent{ type, object{ raw = "k8s\0" Unknown{v1, ConfigMap, <object>} } }
//! ```

use super::wire::{LEN, Reader, begin_nested, end_nested, write_bytes_field};
use super::{Error, Result};

/// The media type of a protobuf watch stream.
pub const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// The event types client-go's decoder accepts.
const EVENT_TYPES: [&str; 5] = ["ADDED", "MODIFIED", "DELETED", "ERROR", "BOOKMARK"];

/// A decoded `metav1.WatchEvent`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WatchEvent {
    pub event_type: String,
    /// The object's envelope (`object.raw`).
    pub object: Vec<u8>,
}

/// One frame of a watch stream: the event of `event_type` (`ADDED`, `MODIFIED`, ...)
/// carrying `object_envelope`, the object as [`super::encode_envelope`] writes it.
pub fn encode_watch_event(event_type: &str, object_envelope: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(object_envelope.len() + event_type.len() + 16);
    write_watch_event(event_type, object_envelope, &mut out);
    out
}

/// [`encode_watch_event`], appending to `out`.
pub fn write_watch_event(event_type: &str, object_envelope: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    // gogo writes both fields always; the RawExtension writes raw because it is non-nil.
    write_bytes_field(1, event_type.as_bytes(), out);
    let mark = begin_nested(2, out);
    write_bytes_field(1, object_envelope, out);
    end_nested(mark, out);
    // The framer writes uint32(len): Go truncates, and no event comes near 4 GiB.
    let len = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&len.to_be_bytes());
}

/// Splits the first frame off a stream: `Some((frame, rest))`, or `None` until the buffer
/// holds a whole frame.
pub fn next_frame(buf: &[u8]) -> Option<(&[u8], &[u8])> {
    let (header, rest) = buf.split_first_chunk::<4>()?;
    let len = u32::from_be_bytes(*header) as usize;
    (rest.len() >= len).then(|| rest.split_at(len))
}

/// Decodes one frame's `WatchEvent` and checks its type as client-go's decoder does.
pub fn decode_watch_event(frame: &[u8]) -> Result<WatchEvent> {
    let mut event = WatchEvent::default();
    let mut r = Reader::new(frame);
    while let Some((tag, wire_type)) = r.next_field("WatchEvent")? {
        if tag > 2 {
            r.skip(wire_type)?;
            continue;
        }
        if wire_type != LEN {
            let field = if tag == 1 { "Type" } else { "Object" };
            return Err(Error::WrongWireType {
                wire_type,
                field: field.into(),
            });
        }
        let bytes = r.bytes()?;
        if tag == 1 {
            event.event_type = crate::golang::json::coerce_utf8(bytes).into_owned();
        } else {
            decode_raw_extension(bytes, &mut event.object)?;
        }
    }
    if !EVENT_TYPES.contains(&event.event_type.as_str()) {
        return Err(Error::InvalidWatchEventType(event.event_type));
    }
    Ok(event)
}

fn decode_raw_extension(bytes: &[u8], raw: &mut Vec<u8>) -> Result<()> {
    let mut r = Reader::new(bytes);
    while let Some((tag, wire_type)) = r.next_field("RawExtension")? {
        if tag != 1 {
            r.skip(wire_type)?;
            continue;
        }
        if wire_type != LEN {
            return Err(Error::WrongWireType {
                wire_type,
                field: "Raw".into(),
            });
        }
        *raw = r.bytes()?.to_vec();
    }
    Ok(())
}
