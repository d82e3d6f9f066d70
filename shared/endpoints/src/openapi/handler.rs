//! Serving the documents as upstream's handlers do (kube-openapi's `handler` for v2 and
//! `handler3` for v3, behind kube-aggregator's spec proxier, through Go's
//! `http.ServeContent`):
//!
//! - `/openapi/v2`: JSON or gnostic protobuf by `Accept` (406 with no body otherwise),
//!   `ETag` (SHA-512 of the JSON, shared by both forms), `Vary: Accept`,
//!   `Last-Modified`, 304 on `If-None-Match` / `If-Modified-Since`.
//! - `/openapi/v3`: the index, with no `ETag` and `Last-Modified` now; the aggregator sets
//!   no Content-Type, so Go sniffs `text/plain; charset=utf-8`.
//! - `/openapi/v3/<path>`: JSON by `Accept`; with `?hash=` equal to the `ETag` the answer
//!   is `Cache-Control: public, immutable` and expires in a year, with a stale hash a 301
//!   to the current URL; unknown paths are a 404 with no body.
//!
//! Every other answer carries upstream's global `Cache-Control: no-cache, private`.
//! Not served: byte ranges, gzip, and v3 as protobuf (no 1.33 client asks for it).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::{Body, body};
use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{HeaderMap, Method, Request, Response, StatusCode};

use crate::openapi::OpenApi;

/// A document's bytes and their hash, computed once.
pub struct Document {
    pub bytes: Bytes,
    /// Upper-case hex SHA-512 of `bytes`, unquoted.
    pub etag: String,
}

impl Document {
    pub fn new(bytes: Vec<u8>) -> Document {
        let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA512, &bytes);
        let etag = digest.as_ref().iter().map(|b| format!("{b:02X}")).collect();
        Document {
            bytes: kas_storage::exact(bytes),
            etag,
        }
    }
}

const V2_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
/// What `/openapi/v2` answers to, by `Accept` subtype (of `application`).
const V2_SUBTYPES: &[(&str, bool)] = &[
    ("json", false),
    ("com.github.proto-openapi.spec.v2@v1.0+protobuf", true),
    ("com.github.proto-openapi.spec.v2.v1.0+protobuf", true),
];

impl OpenApi {
    /// The answer to a request for an OpenAPI document; `None` for any other path.
    pub fn serve(&self, req: &Request<Body>) -> Option<Response<Body>> {
        self.serve_merged(req, None)
    }

    /// Serves the documents with a delegate's merged in (see `openapi::merged`): `/openapi/v2`
    /// and the v3 index are the union; a v3 document this role does not have is the
    /// delegate's to answer (`None`).
    pub(crate) fn serve_merged(
        &self,
        req: &Request<Body>,
        openapi: Option<&super::Delegated>,
    ) -> Option<Response<Body>> {
        let path = req.uri().path();
        Some(match path {
            "/openapi/v2" => match openapi {
                Some(d) => self.serve_v2_doc(req, d.v2(self)),
                None => self.serve_v2_doc(req, self.v2()),
            },
            "/openapi/v3" => match openapi {
                Some(d) => self.serve_root_bytes(req, d.root(self)),
                None => self.serve_root(req),
            },
            _ => {
                let key = path.strip_prefix("/openapi/v3/")?;
                if openapi.is_some() && !self.v3().docs.contains_key(key) {
                    return None;
                }
                self.serve_v3(req, key)
            }
        })
    }

    fn serve_v2_doc(&self, req: &Request<Body>, v2: &super::V2) -> Response<Body> {
        serve_v2(req, v2, self.built)
    }

    fn serve_root(&self, req: &Request<Body>) -> Response<Body> {
        serve_v3_root(req, self.v3().root.clone())
    }

    fn serve_root_bytes(&self, req: &Request<Body>, root: Bytes) -> Response<Body> {
        serve_v3_root(req, root)
    }

    fn serve_v3(&self, req: &Request<Body>, key: &str) -> Response<Body> {
        let Some(doc) = self.v3().docs.get(key) else {
            return status(StatusCode::NOT_FOUND, HeaderMap::new());
        };
        let mut headers = HeaderMap::new();
        headers.insert(header::VARY, HeaderValue::from_static("Accept"));
        if negotiate(req, &[("json", false)]).is_none() {
            return status(StatusCode::NOT_ACCEPTABLE, headers);
        }
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        set(&mut headers, header::ETAG, &format!("\"{}\"", doc.etag));
        let query = crate::url::Query::parse(req.uri().query().unwrap_or(""));
        match query.first("hash").filter(|h| !h.is_empty()) {
            Some(hash) if hash != doc.etag => {
                let url = format!("/openapi/v3/{key}?hash={}", doc.etag);
                set(&mut headers, header::LOCATION, &url);
                return status(StatusCode::MOVED_PERMANENTLY, headers);
            }
            Some(_) => {
                // The URL names these exact bytes: they may be cached for good.
                headers.insert(
                    header::CACHE_CONTROL,
                    HeaderValue::from_static("public, immutable"),
                );
                let expires = SystemTime::now() + Duration::from_secs(365 * 86_400);
                set(&mut headers, header::EXPIRES, &date(expires, "UTC"));
            }
            None => {}
        }
        serve_content(req, headers, self.built, doc.bytes.clone())
    }
}

/// `/openapi/v2` from `v2`, last modified at `modified`.
pub fn serve_v2(req: &Request<Body>, v2: &super::V2, modified: SystemTime) -> Response<Body> {
    let mut headers = HeaderMap::new();
    headers.insert(header::VARY, HeaderValue::from_static("Accept"));
    let Some(protobuf) = negotiate(req, V2_SUBTYPES) else {
        return status(StatusCode::NOT_ACCEPTABLE, headers);
    };
    let (content_type, bytes) = if protobuf {
        (V2_PROTOBUF, v2.protobuf())
    } else {
        ("application/json", v2.json.bytes.clone())
    };
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    set(&mut headers, header::ETAG, &format!("\"{}\"", v2.json.etag));
    serve_content(req, headers, modified, bytes)
}

/// `/openapi/v3` from the index's bytes.
pub fn serve_v3_root(req: &Request<Body>, root: Bytes) -> Response<Body> {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    // The aggregator merges the index per request and stamps it with the time.
    serve_content(req, headers, SystemTime::now(), root)
}

fn set(headers: &mut HeaderMap, name: header::HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        headers.insert(name, v);
    }
}

/// An answer without a body (404, 406, 301).
fn status(code: StatusCode, mut headers: HeaderMap) -> Response<Body> {
    default_cache_control(&mut headers);
    let mut resp = Response::new(body::empty());
    *resp.status_mut() = code;
    *resp.headers_mut() = headers;
    resp
}

/// Upstream's `WithCacheControl` filter: every answer is private and revalidated unless
/// its handler said otherwise.
fn default_cache_control(headers: &mut HeaderMap) {
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache, private"),
        );
    }
}

/// One `Accept` clause, as goautoneg parses it.
struct Clause<'a> {
    type_: &'a str,
    subtype: &'a str,
    q: f32,
}

/// goautoneg's `ParseAccept`: clauses by quality, specific before wildcards. Like Go's
/// sort of a short slice, an insertion sort with goautoneg's comparison.
fn parse_accept(header: &str) -> Vec<Clause<'_>> {
    let mut clauses: Vec<Clause<'_>> = Vec::new();
    for part in header.split(',') {
        let mut params = part.trim_matches(' ').split(';');
        let range = params.next().unwrap_or("");
        let mut sp = range.split('/');
        let type_ = sp.next().unwrap_or("").trim_matches(' ');
        let subtype = match (sp.next(), sp.next()) {
            (None, _) if type_ == "*" => "*",
            (Some(sub), None) => sub.trim_matches(' '),
            _ => continue,
        };
        let mut q = 1.0;
        for param in params {
            if let Some((token, value)) = param.split_once('=')
                && token.trim_matches(' ') == "q"
            {
                q = value.parse().unwrap_or(0.0);
            }
        }
        clauses.push(Clause { type_, subtype, q });
    }
    let less = |a: &Clause<'_>, b: &Clause<'_>| {
        a.q > b.q || (a.type_ != "*" && b.type_ == "*") || (a.subtype != "*" && b.subtype == "*")
    };
    for i in 1..clauses.len() {
        let mut j = i;
        while j > 0 && less(&clauses[j], &clauses[j - 1]) {
            clauses.swap(j, j - 1);
            j -= 1;
        }
    }
    clauses
}

/// The first `application/<subtype>` of `offers` an `Accept` clause admits, in clause
/// order (quality is only for ordering: upstream serves even a `q=0` match).
fn negotiate<T: Copy>(req: &Request<Body>, offers: &[(&str, T)]) -> Option<T> {
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .unwrap_or("*/*");
    parse_accept(accept).iter().find_map(|c| {
        if c.type_ != "application" && c.type_ != "*" {
            return None;
        }
        offers
            .iter()
            .find(|(sub, _)| c.subtype == *sub || c.subtype == "*")
            .map(|(_, v)| *v)
    })
}

/// Go's `http.ServeContent` for a document in memory: `Last-Modified`, then the
/// conditional requests a cache sends (`If-None-Match`, else `If-Modified-Since`).
fn serve_content(
    req: &Request<Body>,
    mut headers: HeaderMap,
    modified: SystemTime,
    bytes: Bytes,
) -> Response<Body> {
    default_cache_control(&mut headers);
    set(&mut headers, header::LAST_MODIFIED, &date(modified, "GMT"));
    let get_or_head = matches!(*req.method(), Method::GET | Method::HEAD);
    let etag = headers
        .get(header::ETAG)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let not_modified = match req.headers().get(header::IF_NONE_MATCH) {
        Some(v) => {
            let matched = none_match(v.to_str().unwrap_or(""), etag);
            if matched && !get_or_head {
                return status(StatusCode::PRECONDITION_FAILED, headers);
            }
            matched
        }
        None => {
            get_or_head
                && req
                    .headers()
                    .get(header::IF_MODIFIED_SINCE)
                    .and_then(|v| parse_date(v.to_str().ok()?))
                    .is_some_and(|since| civil(modified).0 <= since)
        }
    };
    if not_modified {
        headers.remove(header::CONTENT_TYPE);
        if headers.contains_key(header::ETAG) {
            headers.remove(header::LAST_MODIFIED);
        }
        return status(StatusCode::NOT_MODIFIED, headers);
    }
    let mut resp = Response::new(body::full(bytes));
    *resp.headers_mut() = headers;
    resp
}

/// Whether an `If-None-Match` list names `etag` (weak comparison, `*` matches any).
fn none_match(list: &str, etag: &str) -> bool {
    let opaque = |t: &str| t.trim().trim_start_matches("W/").to_owned();
    list.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || (!etag.is_empty() && opaque(candidate) == opaque(etag))
    })
}

/// A time broken down in UTC: (year, month, day, hour, minute, second), which orders
/// chronologically, and the weekday (0 is Sunday).
fn civil(t: SystemTime) -> ((i64, u32, u32, u32, u32, u32), usize) {
    let stamp = kas_registry::meta::rfc3339(t);
    let num = |range: std::ops::Range<usize>| stamp.get(range).and_then(|s| s.parse().ok());
    let year = num(0..4).unwrap_or(1970) as i64;
    let parts = [5..7, 8..10, 11..13, 14..16, 17..19].map(|r| num(r).unwrap_or(0) as u32);
    let days = t
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400);
    let weekday = ((days + 4) % 7) as usize;
    (
        (year, parts[0], parts[1], parts[2], parts[3], parts[4]),
        weekday,
    )
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `Mon, 02 Jan 2006 15:04:05 <zone>`: HTTP's date with `GMT`, Go's `time.RFC1123` with
/// the zone name (`UTC` on a server in UTC) for `Expires`.
fn date(t: SystemTime, zone: &str) -> String {
    let ((y, mo, d, h, mi, s), wd) = civil(t);
    let month = MONTHS[(mo as usize).saturating_sub(1).min(11)];
    format!(
        "{}, {d:02} {month} {y:04} {h:02}:{mi:02}:{s:02} {zone}",
        DAYS[wd]
    )
}

/// An HTTP date in its preferred form; other forms read as absent.
fn parse_date(s: &str) -> Option<(i64, u32, u32, u32, u32, u32)> {
    let fields: Vec<&str> = s.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = fields.as_slice() else {
        return None;
    };
    let month = MONTHS.iter().position(|m| m == month)? as u32 + 1;
    let mut hms = time.split(':').map(|p| p.parse::<u32>().ok());
    let (h, mi, sec) = (hms.next()??, hms.next()??, hms.next()??);
    Some((year.parse().ok()?, month, day.parse().ok()?, h, mi, sec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_clauses_order_like_goautoneg() {
        let order: Vec<_> = parse_accept("*/*;q=0.8, application/json;q=0.9, text/plain")
            .iter()
            .map(|c| format!("{}/{}", c.type_, c.subtype))
            .collect();
        assert_eq!(order, ["text/plain", "application/json", "*/*"]);
        assert!(parse_accept("a/b/c, bogus").is_empty());
        assert_eq!(parse_accept("*")[0].subtype, "*");
    }

    #[test]
    fn dates_format_and_parse() {
        let t = UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(date(t, "GMT"), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(date(UNIX_EPOCH, "UTC"), "Thu, 01 Jan 1970 00:00:00 UTC");
        assert_eq!(
            parse_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some((1994, 11, 6, 8, 49, 37))
        );
        assert_eq!(parse_date("Sunday, 06-Nov-94 08:49:37 GMT"), None);
        assert_eq!(civil(t).0, (1994, 11, 6, 8, 49, 37));
    }

    #[test]
    fn if_none_match_compares_weakly() {
        assert!(none_match("\"A\", W/\"B\"", "\"B\""));
        assert!(none_match("*", "\"B\""));
        assert!(!none_match("\"A\"", "\"B\""));
        assert!(!none_match("\"A\"", ""));
    }
}
