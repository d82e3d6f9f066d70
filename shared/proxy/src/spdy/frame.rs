//! SPDY/3.1 frames (draft-mbelshe-httpbis-spdy-00, as moby/spdystream speaks it for
//! kubectl and kubelets): their layout, and the name/value header blocks compressed with
//! zlib over the spec's dictionary, one compression context per direction of a connection.

use std::sync::LazyLock;

use bytes::Bytes;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

pub const TYPE_SYN_STREAM: u16 = 1;
pub const TYPE_SYN_REPLY: u16 = 2;
pub const TYPE_RST_STREAM: u16 = 3;
pub const TYPE_SETTINGS: u16 = 4;
pub const TYPE_PING: u16 = 6;
pub const TYPE_GOAWAY: u16 = 7;
pub const TYPE_HEADERS: u16 = 8;
pub const TYPE_WINDOW_UPDATE: u16 = 9;
pub const FLAG_FIN: u8 = 0x01;
/// The largest frame payload (24-bit length).
pub const MAX_LENGTH: usize = (1 << 24) - 1;

/// Header names and values as a header block holds them (names lowercase; several
/// values of one name NUL-joined).
pub type Headers = Vec<(String, String)>;

/// One frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    SynStream {
        stream_id: u32,
        associated_to: u32,
        priority: u8,
        flags: u8,
        headers: Headers,
    },
    SynReply {
        stream_id: u32,
        flags: u8,
        headers: Headers,
    },
    RstStream {
        stream_id: u32,
        status: u32,
    },
    Settings {
        flags: u8,
        /// `(flags << 24 | id, value)` as sent.
        entries: Vec<(u32, u32)>,
    },
    Ping {
        id: u32,
    },
    GoAway {
        last_good_stream_id: u32,
        status: u32,
    },
    Headers {
        stream_id: u32,
        flags: u8,
        headers: Headers,
    },
    WindowUpdate {
        stream_id: u32,
        delta: u32,
    },
    Data {
        stream_id: u32,
        flags: u8,
        data: Bytes,
    },
    /// A control frame of a type this codec does not know: skipped, as the spec says.
    Unknown {
        frame_type: u16,
    },
}

/// The SPDY/3 header dictionary: the spec's words, each after its 4-byte length, then
/// its run of status lines, dates and media types.
pub static DICTIONARY: LazyLock<Vec<u8>> = LazyLock::new(|| {
    const WORDS: [&str; 65] = [
        "options",
        "head",
        "post",
        "put",
        "delete",
        "trace",
        "accept",
        "accept-charset",
        "accept-encoding",
        "accept-language",
        "accept-ranges",
        "age",
        "allow",
        "authorization",
        "cache-control",
        "connection",
        "content-base",
        "content-encoding",
        "content-language",
        "content-length",
        "content-location",
        "content-md5",
        "content-range",
        "content-type",
        "date",
        "etag",
        "expect",
        "expires",
        "from",
        "host",
        "if-match",
        "if-modified-since",
        "if-none-match",
        "if-range",
        "if-unmodified-since",
        "last-modified",
        "location",
        "max-forwards",
        "pragma",
        "proxy-authenticate",
        "proxy-authorization",
        "range",
        "referer",
        "retry-after",
        "server",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "user-agent",
        "vary",
        "via",
        "warning",
        "www-authenticate",
        "method",
        "get",
        "status",
        "200 OK",
        "version",
        "HTTP/1.1",
        "url",
        "public",
        "set-cookie",
        "keep-alive",
        "origin",
    ];
    const TAIL: &str = concat!(
        "100101201202205206300302303304305306307402405406407408409410411412413414415416417",
        "502504505203 Non-Authoritative Information204 No Content301 Moved Permanently",
        "400 Bad Request401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error",
        "501 Not Implemented503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct ",
        "Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,",
        "image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,",
        "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8",
        "charset=iso-8859-1,utf-,*,enq=0.",
    );
    let mut out = Vec::new();
    for word in WORDS {
        out.extend_from_slice(&(word.len() as u32).to_be_bytes());
        out.extend_from_slice(word.as_bytes());
    }
    out.extend_from_slice(TAIL.as_bytes());
    out
});

/// What goes wrong reading or writing frames.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("spdy: {0}")]
    Invalid(&'static str),
    #[error("spdy: header block: {0}")]
    Compression(String),
}

/// The header compression contexts of one connection: one for what it writes, one for
/// what it reads.
pub struct Codec {
    deflate: Compress,
    inflate: Decompress,
}

impl Default for Codec {
    fn default() -> Self {
        Codec::new()
    }
}

impl Codec {
    pub fn new() -> Codec {
        let mut deflate = Compress::new(Compression::best(), true);
        // The dictionary is a constant a zlib stream accepts; setting it cannot fail.
        let _ = deflate.set_dictionary(&DICTIONARY);
        Codec {
            deflate,
            inflate: Decompress::new(true),
        }
    }

    /// Appends `frame` to `out`.
    pub fn encode(&mut self, frame: &Frame, out: &mut Vec<u8>) -> Result<(), FrameError> {
        let mut body = Vec::new();
        let (frame_type, flags) = match frame {
            Frame::Data {
                stream_id,
                flags,
                data,
            } => {
                if data.len() > MAX_LENGTH {
                    return Err(FrameError::Invalid("data frame too large"));
                }
                out.extend_from_slice(&(stream_id & 0x7fff_ffff).to_be_bytes());
                out.extend_from_slice(&length_word(*flags, data.len()));
                out.extend_from_slice(data);
                return Ok(());
            }
            Frame::SynStream {
                stream_id,
                associated_to,
                priority,
                flags,
                headers,
            } => {
                body.extend_from_slice(&(stream_id & 0x7fff_ffff).to_be_bytes());
                body.extend_from_slice(&(associated_to & 0x7fff_ffff).to_be_bytes());
                body.push(priority << 5);
                body.push(0);
                self.header_block(headers, &mut body)?;
                (TYPE_SYN_STREAM, *flags)
            }
            Frame::SynReply {
                stream_id,
                flags,
                headers,
            } => {
                body.extend_from_slice(&(stream_id & 0x7fff_ffff).to_be_bytes());
                self.header_block(headers, &mut body)?;
                (TYPE_SYN_REPLY, *flags)
            }
            Frame::Headers {
                stream_id,
                flags,
                headers,
            } => {
                body.extend_from_slice(&(stream_id & 0x7fff_ffff).to_be_bytes());
                self.header_block(headers, &mut body)?;
                (TYPE_HEADERS, *flags)
            }
            Frame::RstStream { stream_id, status } => {
                body.extend_from_slice(&stream_id.to_be_bytes());
                body.extend_from_slice(&status.to_be_bytes());
                (TYPE_RST_STREAM, 0)
            }
            Frame::Settings { flags, entries } => {
                body.extend_from_slice(&(entries.len() as u32).to_be_bytes());
                for (id, value) in entries {
                    body.extend_from_slice(&id.to_be_bytes());
                    body.extend_from_slice(&value.to_be_bytes());
                }
                (TYPE_SETTINGS, *flags)
            }
            Frame::Ping { id } => {
                body.extend_from_slice(&id.to_be_bytes());
                (TYPE_PING, 0)
            }
            Frame::GoAway {
                last_good_stream_id,
                status,
            } => {
                body.extend_from_slice(&last_good_stream_id.to_be_bytes());
                body.extend_from_slice(&status.to_be_bytes());
                (TYPE_GOAWAY, 0)
            }
            Frame::WindowUpdate { stream_id, delta } => {
                body.extend_from_slice(&stream_id.to_be_bytes());
                body.extend_from_slice(&delta.to_be_bytes());
                (TYPE_WINDOW_UPDATE, 0)
            }
            Frame::Unknown { .. } => return Err(FrameError::Invalid("unknown frame type")),
        };
        if body.len() > MAX_LENGTH {
            return Err(FrameError::Invalid("control frame too large"));
        }
        out.extend_from_slice(&(0x8000_0000u32 | (3 << 16) | u32::from(frame_type)).to_be_bytes());
        out.extend_from_slice(&length_word(flags, body.len()));
        out.extend_from_slice(&body);
        Ok(())
    }

    /// The frame whose 8-byte head is `head` and whose payload is `payload`.
    pub fn decode(&mut self, head: [u8; 8], payload: Bytes) -> Result<Frame, FrameError> {
        let first = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        let flags = head[4];
        if first & 0x8000_0000 == 0 {
            return Ok(Frame::Data {
                stream_id: first & 0x7fff_ffff,
                flags,
                data: payload,
            });
        }
        let frame_type = (first & 0xffff) as u16;
        let word = |at: usize| -> Result<u32, FrameError> {
            payload
                .get(at..at + 4)
                .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or(FrameError::Invalid("invalid control frame"))
        };
        Ok(match frame_type {
            TYPE_SYN_STREAM => Frame::SynStream {
                stream_id: word(0)? & 0x7fff_ffff,
                associated_to: word(4)? & 0x7fff_ffff,
                priority: payload.get(8).copied().unwrap_or(0) >> 5,
                flags,
                headers: self.read_block(payload.get(10..).unwrap_or_default())?,
            },
            TYPE_SYN_REPLY => Frame::SynReply {
                stream_id: word(0)? & 0x7fff_ffff,
                flags,
                headers: self.read_block(payload.get(4..).unwrap_or_default())?,
            },
            TYPE_HEADERS => Frame::Headers {
                stream_id: word(0)? & 0x7fff_ffff,
                flags,
                headers: self.read_block(payload.get(4..).unwrap_or_default())?,
            },
            TYPE_RST_STREAM => Frame::RstStream {
                stream_id: word(0)? & 0x7fff_ffff,
                status: word(4)?,
            },
            TYPE_SETTINGS => {
                let n = word(0)? as usize;
                let entries = (0..n)
                    .map(|i| Ok((word(4 + 8 * i)?, word(8 + 8 * i)?)))
                    .collect::<Result<Vec<_>, FrameError>>()?;
                Frame::Settings { flags, entries }
            }
            TYPE_PING => Frame::Ping { id: word(0)? },
            TYPE_GOAWAY => Frame::GoAway {
                last_good_stream_id: word(0)? & 0x7fff_ffff,
                status: word(4).unwrap_or(0),
            },
            TYPE_WINDOW_UPDATE => Frame::WindowUpdate {
                stream_id: word(0)? & 0x7fff_ffff,
                delta: word(4)? & 0x7fff_ffff,
            },
            other => Frame::Unknown { frame_type: other },
        })
    }

    /// A header block, compressed and flushed (zlib's sync flush: the peer reads it
    /// whole from this frame).
    fn header_block(&mut self, headers: &Headers, out: &mut Vec<u8>) -> Result<(), FrameError> {
        let mut plain = Vec::new();
        plain.extend_from_slice(&(headers.len() as u32).to_be_bytes());
        for (name, value) in headers {
            for part in [name.to_ascii_lowercase().as_bytes(), value.as_bytes()] {
                plain.extend_from_slice(&(part.len() as u32).to_be_bytes());
                plain.extend_from_slice(part);
            }
        }
        let mut input = plain.as_slice();
        loop {
            out.reserve(input.len() + 64);
            let before = self.deflate.total_in();
            self.deflate
                .compress_vec(input, out, FlushCompress::Sync)
                .map_err(|e| FrameError::Compression(e.to_string()))?;
            let used = (self.deflate.total_in() - before) as usize;
            input = &input[used..];
            // A sync flush is complete when it left room in the output.
            if input.is_empty() && out.len() < out.capacity() {
                return Ok(());
            }
        }
    }

    fn read_block(&mut self, compressed: &[u8]) -> Result<Headers, FrameError> {
        let mut plain = Vec::with_capacity(compressed.len() * 4 + 64);
        let mut input = compressed;
        loop {
            let before = self.inflate.total_in();
            if plain.len() == plain.capacity() {
                plain.reserve(plain.capacity().max(256));
            }
            match self
                .inflate
                .decompress_vec(input, &mut plain, FlushDecompress::Sync)
            {
                Ok(Status::StreamEnd) => break,
                Ok(_) => {}
                Err(e) if e.needs_dictionary().is_some() => {
                    self.inflate
                        .set_dictionary(&DICTIONARY)
                        .map_err(|e| FrameError::Compression(e.to_string()))?;
                }
                Err(e) => return Err(FrameError::Compression(e.to_string())),
            }
            input = &input[(self.inflate.total_in() - before) as usize..];
            if input.is_empty() && plain.len() < plain.capacity() {
                break;
            }
        }
        parse_block(&plain)
    }
}

fn length_word(flags: u8, len: usize) -> [u8; 4] {
    ((u32::from(flags) << 24) | (len as u32 & 0x00ff_ffff)).to_be_bytes()
}

/// A decompressed header block.
fn parse_block(plain: &[u8]) -> Result<Headers, FrameError> {
    let mut rest = plain;
    let count = take_u32(&mut rest)? as usize;
    let mut headers = Vec::with_capacity(count.min(64));
    for _ in 0..count {
        let name = take_text(&mut rest)?;
        let value = take_text(&mut rest)?;
        headers.push((name, value));
    }
    Ok(headers)
}

fn take_u32(rest: &mut &[u8]) -> Result<u32, FrameError> {
    let (word, tail) = rest
        .split_first_chunk::<4>()
        .ok_or(FrameError::Invalid("truncated header block"))?;
    *rest = tail;
    Ok(u32::from_be_bytes(*word))
}

fn take_text(rest: &mut &[u8]) -> Result<String, FrameError> {
    let len = take_u32(rest)? as usize;
    if rest.len() < len {
        return Err(FrameError::Invalid("truncated header block"));
    }
    let (text, tail) = rest.split_at(len);
    *rest = tail;
    Ok(String::from_utf8_lossy(text).into_owned())
}

/// The first value of `name` in a header block (values NUL-joined).
pub fn header<'a>(headers: &'a Headers, name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.split('\0').next().unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dictionary_is_the_specs() {
        // Draft 3's dictionary is 1423 bytes; a zlib stream names it by its Adler-32,
        // which a Go peer checks against its own.
        assert_eq!(DICTIONARY.len(), 1423);
        let mut out = Vec::new();
        Codec::new()
            .encode(
                &Frame::SynReply {
                    stream_id: 1,
                    flags: 0,
                    headers: Vec::new(),
                },
                &mut out,
            )
            .unwrap();
        // 8 bytes of frame head, the stream id, then zlib's header with FDICT.
        assert_eq!(out[12..14], [0x78, 0xf9]);
        assert_eq!(out[14..18], 0xe3c6_a7c2u32.to_be_bytes());
    }

    #[test]
    fn frames_round_trip_with_one_context_per_direction() {
        let mut writer = Codec::new();
        let mut reader = Codec::new();
        let frames = [
            Frame::SynStream {
                stream_id: 1,
                associated_to: 0,
                priority: 0,
                flags: 0,
                headers: vec![("streamtype".into(), "error".into())],
            },
            Frame::SynStream {
                stream_id: 3,
                associated_to: 0,
                priority: 0,
                flags: FLAG_FIN,
                headers: vec![
                    ("streamtype".into(), "stdout".into()),
                    ("port".into(), "80".into()),
                ],
            },
            Frame::SynReply {
                stream_id: 3,
                flags: 0,
                headers: Vec::new(),
            },
            Frame::Data {
                stream_id: 3,
                flags: FLAG_FIN,
                data: Bytes::from_static(b"hello"),
            },
            Frame::Ping { id: 7 },
            Frame::GoAway {
                last_good_stream_id: 3,
                status: 0,
            },
        ];
        let mut wire = Vec::new();
        for f in &frames {
            writer.encode(f, &mut wire).unwrap();
        }
        let mut at = 0;
        for f in &frames {
            let head: [u8; 8] = wire[at..at + 8].try_into().unwrap();
            let len = (u32::from_be_bytes([0, head[5], head[6], head[7]])) as usize;
            let payload = Bytes::copy_from_slice(&wire[at + 8..at + 8 + len]);
            assert_eq!(&reader.decode(head, payload).unwrap(), f);
            at += 8 + len;
        }
        assert_eq!(at, wire.len());
    }
}
