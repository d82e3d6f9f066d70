//! URL decoding as Go's `net/url` does it, so that paths and query parameters mean what
//! they mean upstream: `%XX` must be two hex digits, `+` is a space only in queries, and
//! a query pair with a `;` or a bad escape is dropped.

use crate::error::{Error, Result};

/// Go's `url.PathUnescape` (what `req.URL.Path` holds): decodes `%XX`, keeps `+`. Bytes
/// that are not UTF-8 become U+FFFD (Go keeps them raw; names with them are invalid anyway).
pub fn unescape_path(raw: &str) -> Result<String> {
    unescape(raw, false)
}

/// Go's `url.QueryUnescape`: like `unescape_path`, and `+` becomes a space.
pub fn unescape_query_component(raw: &str) -> Result<String> {
    unescape(raw, true)
}

fn unescape(raw: &str, plus_is_space: bool) -> Result<String> {
    if !raw.contains('%') && (!plus_is_space || !raw.contains('+')) {
        return Ok(raw.to_owned());
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hi = bytes.get(i + 1).and_then(|b| hex(*b));
                let lo = bytes.get(i + 2).and_then(|b| hex(*b));
                let (Some(hi), Some(lo)) = (hi, lo) else {
                    let end = (i + 3).min(bytes.len());
                    let bad = String::from_utf8_lossy(&bytes[i..end]).into_owned();
                    return Err(Error::InvalidEscape(bad));
                };
                out.push(hi << 4 | lo);
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Go's `url.QueryEscape`: letters, digits and `-_.~` stay, a space is `+`, every other
/// byte is `%XX` in upper case.
pub fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Go's `url.Values` as `url.ParseQuery` builds it: the pairs in order, keys repeated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    /// Go's `url.ParseQuery`, ignoring its error as `req.URL.Query()` does: pairs with a
    /// `;` or a bad escape are skipped, empty pairs too.
    pub fn parse(raw: &str) -> Query {
        let mut pairs = Vec::new();
        for pair in raw.split('&') {
            if pair.is_empty() || pair.contains(';') {
                continue;
            }
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            if let (Ok(k), Ok(v)) = (unescape_query_component(k), unescape_query_component(v)) {
                pairs.push((k, v));
            }
        }
        Query { pairs }
    }

    /// The first value for `key` (Go's `values[key][0]`), if there is one.
    pub fn first(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Go's `url.Values.Encode`: keys sorted, each key's values in order, every key and
    /// value `QueryEscape`d (the query a proxy sends on: upstream's aggregator re-encodes
    /// `req.URL.Query()`).
    pub fn encode(&self) -> String {
        let mut keys: Vec<&str> = self.pairs.iter().map(|(k, _)| k.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut out = String::new();
        for key in keys {
            for value in self.all(key) {
                if !out.is_empty() {
                    out.push('&');
                }
                out.push_str(&query_escape(key));
                out.push('=');
                out.push_str(&query_escape(value));
            }
        }
        out
    }

    /// Every value for `key`, in order.
    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_encode_as_go() {
        let q = Query::parse("watch=1&labelSelector=a%3Db,c+in+(x)&a=2&watch=0&t=%7E*");
        assert_eq!(
            q.encode(),
            "a=2&labelSelector=a%3Db%2Cc+in+%28x%29&t=~%2A&watch=1&watch=0"
        );
        assert_eq!(Query::parse("").encode(), "");
    }

    #[test]
    fn path_unescape() {
        assert_eq!(unescape_path("/api/v1/a%20b+c").unwrap(), "/api/v1/a b+c");
        assert_eq!(unescape_path("/a%2Fb%2f").unwrap(), "/a/b/");
        assert_eq!(
            unescape_path("/a%zzb").unwrap_err().to_string(),
            r#"invalid URL escape "%zz""#
        );
        assert_eq!(
            unescape_path("/a%4").unwrap_err(),
            Error::InvalidEscape("%4".into())
        );
        assert_eq!(unescape_path("/%C3%A9").unwrap(), "/é");
    }

    #[test]
    fn query_parse_like_go() {
        let q = Query::parse("watch=1&a=x+y%21&a=2&&b&bad=%zz&c=1;d=2&e==f");
        assert_eq!(q.first("watch"), Some("1"));
        assert_eq!(q.all("a").collect::<Vec<_>>(), vec!["x y!", "2"]);
        assert_eq!(q.first("b"), Some(""));
        assert_eq!(q.first("bad"), None);
        assert_eq!(q.first("c"), None);
        assert_eq!(q.first("e"), Some("=f"));
        assert_eq!(q.first("missing"), None);
    }
}
