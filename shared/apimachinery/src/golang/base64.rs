//! Go's `encoding/base64` with its failure offsets: `[]byte` fields in JSON and Secret
//! data are `StdEncoding` (padded), continue tokens `RawURLEncoding` (URL alphabet, no
//! padding). Decoding skips `\r` and `\n`, ignores stray bits in the last symbol (Go's
//! encodings are not strict), and fails as Go's `decodeQuantum` does, naming the
//! offending input byte (`illegal base64 data at input byte 3`).

/// Go's `CorruptInputError`: the offset of the offending input byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("illegal base64 data at input byte {0}")]
pub struct CorruptInputError(pub usize);

/// A base64 alphabet with or without padding (Go's `*base64.Encoding`).
#[derive(Debug)]
pub struct Encoding {
    alphabet: &'static [u8; 64],
    padded: bool,
}

/// Go's `base64.StdEncoding`.
pub const STD_ENCODING: Encoding = Encoding {
    alphabet: b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    padded: true,
};

/// Go's `base64.RawURLEncoding`.
pub const RAW_URL_ENCODING: Encoding = Encoding {
    alphabet: b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
    padded: false,
};

impl Encoding {
    /// Go's `EncodeToString`.
    pub fn encode_to_string(&self, src: &[u8]) -> String {
        let mut out = String::with_capacity(src.len().div_ceil(3) * 4);
        for chunk in src.chunks(3) {
            let b = [
                chunk[0],
                chunk.get(1).copied().unwrap_or(0),
                chunk.get(2).copied().unwrap_or(0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(char::from(
                        self.alphabet[((n >> (18 - 6 * i)) & 63) as usize],
                    ));
                } else if self.padded {
                    out.push('=');
                }
            }
        }
        out
    }

    fn decode_symbol(&self, c: u8) -> Option<u8> {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            _ if c == self.alphabet[62] => 62,
            _ if c == self.alphabet[63] => 63,
            _ => return None,
        };
        Some(v)
    }

    /// Go's `DecodeString`.
    pub fn decode_string(&self, src: &str) -> Result<Vec<u8>, CorruptInputError> {
        let src = src.as_bytes();
        let mut out = Vec::with_capacity(src.len() / 4 * 3 + 3);
        let mut si = 0;
        while si < src.len() {
            si = self.decode_quantum(src, si, &mut out)?;
        }
        Ok(out)
    }

    /// Go's `decodeQuantum`: one group of up to four symbols from `si`, appended to `out`;
    /// the offset after it, or where the input is corrupt.
    fn decode_quantum(
        &self,
        src: &[u8],
        mut si: usize,
        out: &mut Vec<u8>,
    ) -> Result<usize, CorruptInputError> {
        let skip_newlines = |mut i: usize| {
            while i < src.len() && (src[i] == b'\n' || src[i] == b'\r') {
                i += 1;
            }
            i
        };
        let mut buf = [0u8; 4];
        let mut len = 4;
        let mut j = 0;
        let mut trailing = None;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(si);
                }
                if j == 1 || self.padded {
                    return Err(CorruptInputError(si - j));
                }
                len = j;
                break;
            }
            let c = src[si];
            si += 1;
            if let Some(v) = self.decode_symbol(c) {
                buf[j] = v;
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if !self.padded || c != b'=' || j < 2 {
                return Err(CorruptInputError(si - 1));
            }
            if j == 2 {
                // "==" is expected; the first '=' is consumed.
                si = skip_newlines(si);
                if si == src.len() {
                    return Err(CorruptInputError(src.len()));
                }
                if src[si] != b'=' {
                    return Err(CorruptInputError(si - 1));
                }
                si += 1;
            }
            si = skip_newlines(si);
            if si < src.len() {
                trailing = Some(si);
            }
            len = j;
            break;
        }
        let n = (u32::from(buf[0]) << 18)
            | (u32::from(buf[1]) << 12)
            | (u32::from(buf[2]) << 6)
            | u32::from(buf[3]);
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..len - 1]);
        match trailing {
            Some(offset) => Err(CorruptInputError(offset)),
            None => Ok(si),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_encoding_matches_go() {
        let (enc, dec) = (
            |b: &[u8]| STD_ENCODING.encode_to_string(b),
            |s: &str| STD_ENCODING.decode_string(s).map_err(|e| e.0),
        );
        for (plain, encoded) in [
            ("", ""),
            ("a", "YQ=="),
            ("ab", "YWI="),
            ("abc", "YWJj"),
            ("hello!", "aGVsbG8h"),
            ("hello world", "aGVsbG8gd29ybGQ="),
        ] {
            assert_eq!(enc(plain.as_bytes()), encoded);
            assert_eq!(dec(encoded).unwrap(), plain.as_bytes());
        }
        assert_eq!(enc(&[0xfb, 0xff]), "+/8=");
        assert_eq!(dec("YW\nJj\r\n").unwrap(), b"abc");
        // Go's CorruptInputError offsets, quantum by quantum.
        assert_eq!(dec("YQ"), Err(0));
        assert_eq!(dec("YWJ"), Err(0));
        assert_eq!(dec("YW*j"), Err(2));
        assert_eq!(dec("Y==="), Err(1));
        assert_eq!(dec("YQ="), Err(3));
        assert_eq!(dec("YQ=x"), Err(2));
        assert_eq!(dec("YWI=YWJj"), Err(4));
        assert_eq!(dec("not base64!"), Err(3));
        assert_eq!(dec("A*=="), Err(1));
        assert_eq!(dec("-_8="), Err(0));
        // Stray bits in the last symbol are ignored (Go's encodings are not strict).
        assert_eq!(dec("YR=="), Ok(b"a".to_vec()));
        assert_eq!(
            STD_ENCODING.decode_string("=").unwrap_err().to_string(),
            "illegal base64 data at input byte 0"
        );
    }

    #[test]
    fn raw_url_encoding_matches_go() {
        let dec = |s: &str| RAW_URL_ENCODING.decode_string(s).map_err(|e| e.0);
        assert_eq!(dec(""), Ok(Vec::new()));
        assert_eq!(dec("Zm9v").unwrap(), b"foo");
        assert_eq!(dec("Zm8").unwrap(), b"fo");
        assert_eq!(dec("Zg").unwrap(), b"f");
        assert_eq!(dec("Zm\r\n9v").unwrap(), b"foo");
        assert_eq!(dec("_-8").unwrap(), [0xff, 0xef]);
        assert_eq!(dec("abc="), Err(3));
        assert_eq!(dec("ab+c"), Err(2));
        assert_eq!(dec("abcde"), Err(4));
        for data in [
            &b""[..],
            b"f",
            b"fo",
            b"foo",
            b"foob",
            b"fooba",
            b"foobar",
            &[0xfb, 0xff],
        ] {
            let encoded = RAW_URL_ENCODING.encode_to_string(data);
            assert_eq!(dec(&encoded).unwrap(), data);
        }
        assert_eq!(RAW_URL_ENCODING.encode_to_string(b"foobar"), "Zm9vYmFy");
        assert_eq!(RAW_URL_ENCODING.encode_to_string(&[0xfb, 0xff]), "-_8");
    }
}
