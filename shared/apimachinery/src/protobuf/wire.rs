//! The protobuf wire format: varints, keys and length-delimited fields, written forwards and
//! read with the checks (and the error texts) of gogo's generated `Unmarshal` and
//! `skipGenerated`, so a malformed body fails as it fails upstream.

use super::{Error, Result};

/// Wire type of varint fields (`int32`, `int64`, `bool`, enums).
pub const VARINT: u8 = 0;
/// Wire type of 8-byte fixed fields (`double`: apiextensions' schema bounds).
pub const FIXED64: u8 = 1;
/// Wire type of strings, bytes, messages, map entries and packed repeated scalars.
pub const LEN: u8 = 2;
/// Wire type of a (deprecated) group start; only ever skipped.
pub const START_GROUP: u8 = 3;
/// Wire type of a group end.
pub const END_GROUP: u8 = 4;
/// Wire type of 4-byte fixed fields.
pub const FIXED32: u8 = 5;

/// Appends `v` as a base-128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The number of bytes [`put_varint`] writes for `v` (gogo's `sovGenerated`).
pub fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends the key of field `tag` with wire type `wire_type`.
pub fn put_key(out: &mut Vec<u8>, tag: u32, wire_type: u8) {
    put_varint(out, (u64::from(tag) << 3) | u64::from(wire_type));
}

/// Appends field `tag` as a varint field.
pub fn write_varint_field(tag: u32, v: u64, out: &mut Vec<u8>) {
    put_key(out, tag, VARINT);
    put_varint(out, v);
}

/// Appends field `tag` as a `double`: eight bytes, little endian.
pub fn write_double_field(tag: u32, v: f64, out: &mut Vec<u8>) {
    put_key(out, tag, FIXED64);
    out.extend_from_slice(&v.to_bits().to_le_bytes());
}

/// Appends field `tag` as a length-delimited field holding `bytes`: a string, a `bytes`
/// field, or a message that is already encoded. Lists use it to splice cached item bytes.
pub fn write_bytes_field(tag: u32, bytes: &[u8], out: &mut Vec<u8>) {
    put_key(out, tag, LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Starts a length-delimited field whose content is written next into `out`; returns the
/// mark to pass to [`end_nested`]. One byte is reserved for the length, the usual size, so
/// only messages of 128 bytes or more are moved when the length is known.
pub fn begin_nested(tag: u32, out: &mut Vec<u8>) -> usize {
    put_key(out, tag, LEN);
    out.push(0);
    out.len()
}

/// Ends the field [`begin_nested`] started: writes the content's length in front of it.
pub fn end_nested(mark: usize, out: &mut Vec<u8>) {
    let len = out.len() - mark;
    let n = varint_len(len as u64);
    if n > 1 {
        out.splice(mark..mark, std::iter::repeat_n(0, n - 1));
    }
    let mut prefix = Vec::with_capacity(n);
    put_varint(&mut prefix, len as u64);
    out[mark - 1..mark - 1 + n].copy_from_slice(&prefix);
}

/// A cursor over one message's bytes.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// A varint as gogo reads it: at most ten bytes (bits past 64 are dropped, as Go's
    /// shifts drop them), `integer overflow` after that, `unexpected EOF` at the end.
    pub fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        let mut shift = 0u32;
        loop {
            if shift >= 64 {
                return Err(Error::IntOverflow);
            }
            let b = *self.buf.get(self.pos).ok_or(Error::UnexpectedEof)?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
            shift += 7;
        }
    }

    /// The eight bytes of a fixed 64-bit field, after its key.
    pub fn fixed64(&mut self) -> Result<u64> {
        let end = self.checked_end(8)?;
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&self.buf[self.pos..end]);
        self.pos = end;
        Ok(u64::from_le_bytes(bytes))
    }

    /// The content of a length-delimited field, after its key.
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let len = self.varint()?;
        let end = self.checked_end(len)?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    /// Where a run of `len` bytes from here ends; gogo converts the length to a Go `int`,
    /// so one that is negative there (or overflows) is `negative length`, and one past the
    /// end of the buffer is `unexpected EOF`.
    fn checked_end(&self, len: u64) -> Result<usize> {
        let end = (self.pos as u64)
            .checked_add(len)
            .filter(|end| *end <= i64::MAX as u64)
            .ok_or(Error::InvalidLength)?;
        if end > self.buf.len() as u64 {
            return Err(Error::UnexpectedEof);
        }
        Ok(end as usize)
    }

    /// The next field's number and wire type, or `None` at the end of the message. Like
    /// gogo, a field number is the key's bits above the wire type truncated to `int32`, and
    /// an end-group key or a number that is not positive is an error naming `message`.
    pub fn next_field(&mut self, message: &'static str) -> Result<Option<(u32, u8)>> {
        if self.is_empty() {
            return Ok(None);
        }
        let wire = self.varint()?;
        let field = (wire >> 3) as i32;
        let wire_type = (wire & 7) as u8;
        if wire_type == END_GROUP {
            return Err(Error::EndGroupForNonGroup { message });
        }
        if field <= 0 {
            return Err(Error::IllegalTag {
                message,
                tag: field,
                wire,
            });
        }
        Ok(Some((field as u32, wire_type)))
    }

    /// Skips the value of a field whose key was just read, as `skipGenerated` does: groups
    /// are skipped to their matching end, whatever their content.
    pub fn skip(&mut self, wire_type: u8) -> Result<()> {
        let mut depth = 0usize;
        let mut wire_type = wire_type;
        loop {
            match wire_type {
                VARINT => {
                    self.varint()?;
                }
                FIXED64 => self.advance(8)?,
                LEN => {
                    self.bytes()?;
                }
                START_GROUP => depth += 1,
                END_GROUP => {
                    if depth == 0 {
                        return Err(Error::UnexpectedEndOfGroup);
                    }
                    depth -= 1;
                }
                FIXED32 => self.advance(4)?,
                other => return Err(Error::IllegalWireType(other)),
            }
            if depth == 0 {
                return Ok(());
            }
            if self.is_empty() {
                return Err(Error::UnexpectedEof);
            }
            wire_type = (self.varint()? & 7) as u8;
        }
    }

    fn advance(&mut self, n: u64) -> Result<()> {
        self.pos = self.checked_end(n)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_have_the_right_length() {
        for v in [
            0u64,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            u32::MAX as u64,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v), "{v}");
            assert_eq!(Reader::new(&out).varint().unwrap(), v);
        }
        let mut out = Vec::new();
        put_varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        // A negative int32 is sign-extended to ten bytes, as Go's uint64(int32) does.
        let mut out = Vec::new();
        put_varint(&mut out, -1i64 as u64);
        assert_eq!(out.len(), 10);
    }

    #[test]
    fn overlong_varints_overflow_and_short_ones_end_early() {
        let eleven = [0xffu8; 11];
        assert!(matches!(
            Reader::new(&eleven).varint(),
            Err(Error::IntOverflow)
        ));
        assert!(matches!(
            Reader::new(&[0x80]).varint(),
            Err(Error::UnexpectedEof)
        ));
    }

    #[test]
    fn nested_lengths_are_patched_in_front_of_the_content() {
        for len in [0usize, 5, 127, 128, 20_000] {
            let mut out = vec![0xee];
            let mark = begin_nested(3, &mut out);
            out.extend(std::iter::repeat_n(7u8, len));
            end_nested(mark, &mut out);
            let mut r = Reader::new(&out[1..]);
            assert_eq!(r.next_field("T").unwrap(), Some((3, LEN)));
            assert_eq!(r.bytes().unwrap().len(), len);
            assert!(r.is_empty());
        }
    }

    #[test]
    fn lengths_past_the_end_or_negative_are_rejected() {
        assert!(matches!(
            Reader::new(&[0x05, 1, 2]).bytes(),
            Err(Error::UnexpectedEof)
        ));
        let mut huge = Vec::new();
        put_varint(&mut huge, u64::MAX);
        assert!(matches!(
            Reader::new(&huge).bytes(),
            Err(Error::InvalidLength)
        ));
    }

    #[test]
    fn keys_are_checked_like_gogo() {
        let err = Reader::new(&[0x0c]).next_field("ObjectMeta").unwrap_err();
        assert_eq!(
            err.to_string(),
            "proto: ObjectMeta: wiretype end group for non-group"
        );
        let err = Reader::new(&[0x02]).next_field("ObjectMeta").unwrap_err();
        assert_eq!(
            err.to_string(),
            "proto: ObjectMeta: illegal tag 0 (wire type 2)"
        );
    }

    #[test]
    fn skip_handles_every_wire_type_and_groups() {
        // field 1 group { field 2 varint 5 } end group, then field 3 fixed32.
        let data = [0x0b, 0x10, 0x05, 0x0c, 0x1d, 1, 2, 3, 4];
        let mut r = Reader::new(&data);
        let (_, wt) = r.next_field("T").unwrap().unwrap();
        r.skip(wt).unwrap();
        let (tag, wt) = r.next_field("T").unwrap().unwrap();
        assert_eq!((tag, wt), (3, FIXED32));
        r.skip(wt).unwrap();
        assert!(r.is_empty());
        assert!(matches!(
            Reader::new(&[0x0b]).skip(START_GROUP),
            Err(Error::UnexpectedEof)
        ));
        assert!(matches!(
            Reader::new(&[1, 2]).skip(FIXED64),
            Err(Error::UnexpectedEof)
        ));
        assert!(matches!(
            Reader::new(&[]).skip(6),
            Err(Error::IllegalWireType(6))
        ));
    }
}
