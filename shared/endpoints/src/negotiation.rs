//! Content negotiation, after upstream's `handlers/negotiation` (negotiate.go, errors.go) and
//! the vendored `munnerz/goautoneg` Accept parser it relies on.
//!
//! The server advertises what upstream's codec factory advertises (JSON, YAML, protobuf, in
//! that order), so 406 and 415 messages list the same types. An endpoint that cannot write
//! some of them (custom resources have no protobuf) says so through its restrictions
//! (`standard_media_types`), as upstream's `StandardSerializers`.

// Errors here are a `Status`, answered at once by the caller; boxing it would only move the
// allocation to the rare failure path's caller.
#![allow(clippy::result_large_err)]

use std::collections::BTreeMap;

use kas_apimachinery::Status;
use kas_apimachinery::golang::strconv::parse_bool;
use kas_apimachinery::runtime::GroupVersionKind;

use crate::url::Query;

pub const MEDIA_TYPE_JSON: &str = "application/json";
pub const MEDIA_TYPE_YAML: &str = "application/yaml";
pub const MEDIA_TYPE_PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// Upstream `MediaTypesForSerializer`: every supported media type, in preference order.
pub const SUPPORTED_MEDIA_TYPES: &[&str] = &[MEDIA_TYPE_JSON, MEDIA_TYPE_YAML, MEDIA_TYPE_PROTOBUF];

/// Upstream's stream media types: those serializers with a stream serializer (YAML has none).
pub const SUPPORTED_STREAM_MEDIA_TYPES: &[&str] = &[
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
];

/// One of the server's serializers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MediaType {
    Json,
    Yaml,
    Protobuf,
}

impl MediaType {
    /// Preference order, as upstream's `SupportedMediaTypes()`.
    pub const ALL: [MediaType; 3] = [MediaType::Json, MediaType::Yaml, MediaType::Protobuf];

    pub fn as_str(self) -> &'static str {
        match self {
            MediaType::Json => MEDIA_TYPE_JSON,
            MediaType::Yaml => MEDIA_TYPE_YAML,
            MediaType::Protobuf => MEDIA_TYPE_PROTOBUF,
        }
    }

    /// `("application", "json")` and so on.
    pub fn type_and_subtype(self) -> (&'static str, &'static str) {
        self.as_str()
            .split_once('/')
            .unwrap_or((self.as_str(), "*"))
    }

    /// Whether upstream has a stream (watch) serializer for this type.
    pub fn has_stream_serializer(self) -> bool {
        !matches!(self, MediaType::Yaml)
    }

    /// Whether upstream has a pretty serializer for this type (JSON only).
    pub fn has_pretty_serializer(self) -> bool {
        matches!(self, MediaType::Json)
    }

    fn from_type_subtype(t: &str, sub: &str) -> Option<MediaType> {
        MediaType::ALL
            .into_iter()
            .find(|m| m.type_and_subtype() == (t, sub))
    }
}

/// Upstream `MediaTypeOptions`: the chosen serializer and the parameters of the clause that
/// chose it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaTypeOptions {
    pub accepted: MediaType,
    /// `pretty=1` on the clause; after `negotiate_output_media_type`, the final decision
    /// (also `?pretty=` or a human user agent), and only for a type with a pretty serializer.
    pub pretty: bool,
    /// `stream=...`; empty when absent.
    pub stream: String,
    /// `as`/`g`/`v`: a request to transform the response (Table, PartialObjectMetadata...).
    pub convert: Option<GroupVersionKind>,
    /// `sv=...`; empty when absent.
    pub use_server_version: String,
    /// `export=1`.
    pub export: bool,
    /// Parameter names not understood, sorted (upstream's order is Go map order).
    pub unrecognized: Vec<String>,
}

impl MediaTypeOptions {
    fn plain(accepted: MediaType) -> MediaTypeOptions {
        MediaTypeOptions {
            accepted,
            pretty: false,
            stream: String::new(),
            convert: None,
            use_server_version: String::new(),
            export: false,
            unrecognized: Vec::new(),
        }
    }
}

/// Upstream `EndpointRestrictions`: what an endpoint allows beyond the plain media types.
pub trait EndpointRestrictions {
    /// Whether the endpoint serves `mime_type/mime_sub_type`, transformed into `target` when
    /// one is asked for.
    fn allows_media_type_transform(
        &self,
        mime_type: &str,
        mime_sub_type: &str,
        target: Option<&GroupVersionKind>,
    ) -> bool;
    fn allows_server_version(&self, version: &str) -> bool;
    fn allows_stream_schema(&self, schema: &str) -> bool;
}

/// Upstream `DefaultEndpointRestrictions`: no transformations, no server versions, `watch`
/// streams.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultEndpointRestrictions;

impl EndpointRestrictions for DefaultEndpointRestrictions {
    fn allows_media_type_transform(
        &self,
        _: &str,
        _: &str,
        target: Option<&GroupVersionKind>,
    ) -> bool {
        target.is_none()
    }
    fn allows_server_version(&self, _: &str) -> bool {
        false
    }
    fn allows_stream_schema(&self, schema: &str) -> bool {
        schema == "watch"
    }
}

/// The restrictions of a resource endpoint, as upstream's `RequestScope` implements them.
#[derive(Clone, Debug)]
pub struct ResourceRestrictions {
    /// Upstream `StandardSerializers`: when set (CRDs), the only types served untransformed.
    pub standard_media_types: Option<Vec<MediaType>>,
    /// Whether the resource has a `TableConvertor` (every built-in and CRD store has one).
    pub table_convertor: bool,
    /// Upstream `MetaGroupVersion.Version`, `v1`.
    pub meta_version: String,
}

impl Default for ResourceRestrictions {
    fn default() -> Self {
        ResourceRestrictions {
            standard_media_types: None,
            table_convertor: true,
            meta_version: "v1".to_owned(),
        }
    }
}

impl EndpointRestrictions for ResourceRestrictions {
    fn allows_media_type_transform(
        &self,
        mime_type: &str,
        mime_sub_type: &str,
        target: Option<&GroupVersionKind>,
    ) -> bool {
        let Some(gvk) = target else {
            return match &self.standard_media_types {
                None => true,
                Some(types) => types
                    .iter()
                    .any(|m| m.type_and_subtype() == (mime_type, mime_sub_type)),
            };
        };
        let meta = gvk.group == "meta.k8s.io" && (gvk.version == "v1" || gvk.version == "v1beta1");
        if !meta {
            return false;
        }
        match gvk.kind.as_str() {
            "Table" => {
                self.table_convertor
                    && mime_type == "application"
                    && (mime_sub_type == "json" || mime_sub_type == "yaml")
            }
            "PartialObjectMetadata" | "PartialObjectMetadataList" => true,
            _ => false,
        }
    }
    fn allows_server_version(&self, version: &str) -> bool {
        version == self.meta_version
    }
    fn allows_stream_schema(&self, schema: &str) -> bool {
        schema == "watch"
    }
}

/// One clause of an Accept header, as goautoneg parses it.
#[derive(Clone, Debug, PartialEq)]
pub struct AcceptClause {
    pub mime_type: String,
    pub sub_type: String,
    pub q: f64,
    pub params: BTreeMap<String, String>,
}

/// goautoneg's `nextSplitElement`: the text before the first `sep` and the text after it.
fn next_split(s: &str, sep: char) -> (&str, &str) {
    match s.find(sep) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    }
}

fn trim_spaces(s: &str) -> &str {
    s.trim_matches(' ')
}

/// Go's `strconv.ParseFloat(s, 32)` as goautoneg uses it (the value is not trimmed): a
/// syntax error yields 0, an overflow infinity.
fn parse_q(s: &str) -> f64 {
    s.parse::<f32>().map(f64::from).unwrap_or(0.0)
}

/// goautoneg `ParseAccept`: clauses sorted by its comparator. Malformed ranges are dropped;
/// only spaces (not tabs) are trimmed; nothing is lower-cased; a `q` that does not parse
/// is 0 and clauses with q=0 are kept, exactly as upstream.
pub fn parse_accept(header: &str) -> Vec<AcceptClause> {
    let mut clauses = Vec::new();
    let mut remaining = header;
    while !remaining.is_empty() {
        let (part, rest) = next_split(remaining, ',');
        remaining = rest;
        let part = trim_spaces(part);
        let (range, mut params_text) = next_split(part, ';');
        let (t, after_slash) = next_split(range, '/');
        let mime_type = trim_spaces(t).to_owned();
        let sub_type = if after_slash.is_empty() {
            if mime_type != "*" {
                continue;
            }
            "*".to_owned()
        } else {
            let (sub, extra) = next_split(after_slash, '/');
            if !extra.is_empty() {
                continue;
            }
            trim_spaces(sub).to_owned()
        };
        let mut clause = AcceptClause {
            mime_type,
            sub_type,
            q: 1.0,
            params: BTreeMap::new(),
        };
        while !params_text.is_empty() {
            let (param, rest) = next_split(params_text, ';');
            params_text = rest;
            let (key, after_eq) = next_split(param, '=');
            if after_eq.is_empty() {
                continue;
            }
            let (value, extra) = next_split(after_eq, '=');
            if !extra.is_empty() {
                continue;
            }
            let key = trim_spaces(key);
            if key == "q" {
                clause.q = parse_q(value);
            } else {
                clause
                    .params
                    .insert(key.to_owned(), trim_spaces(value).to_owned());
            }
        }
        clauses.push(clause);
    }
    sort_like_go(&mut clauses);
    clauses
}

/// goautoneg's `Less`, which is not a strict weak order (it ignores q once the first test
/// fails), so the result depends on the algorithm: Go's `sort.Sort` runs an insertion sort
/// for up to 12 elements, reproduced here. (Beyond 12 clauses Go's pdqsort may order
/// incomparable clauses differently.)
fn sort_like_go(clauses: &mut [AcceptClause]) {
    fn less(a: &AcceptClause, b: &AcceptClause) -> bool {
        a.q > b.q
            || (a.mime_type != "*" && b.mime_type == "*")
            || (a.sub_type != "*" && b.sub_type == "*")
    }
    for i in 1..clauses.len() {
        let mut j = i;
        while j > 0 && less(&clauses[j], &clauses[j - 1]) {
            clauses.swap(j, j - 1);
            j -= 1;
        }
    }
}

/// Upstream `acceptMediaTypeOptions`: the options of a clause, or `None` when the endpoint
/// does not allow them and the clause must be skipped.
fn accept_media_type_options(
    params: &BTreeMap<String, String>,
    accepts: MediaType,
    endpoint: &dyn EndpointRestrictions,
) -> Option<MediaTypeOptions> {
    let mut options = MediaTypeOptions::plain(accepts);
    for (k, v) in params {
        match k.as_str() {
            "as" => options.convert.get_or_insert_with(Default::default).kind = v.clone(),
            "g" => options.convert.get_or_insert_with(Default::default).group = v.clone(),
            "v" => options.convert.get_or_insert_with(Default::default).version = v.clone(),
            "stream" => {
                if !v.is_empty()
                    && (!accepts.has_stream_serializer() || !endpoint.allows_stream_schema(v))
                {
                    return None;
                }
                options.stream = v.clone();
            }
            "sv" => {
                if !v.is_empty() && !endpoint.allows_server_version(v) {
                    return None;
                }
                options.use_server_version = v.clone();
            }
            "export" => options.export = v == "1",
            "pretty" => options.pretty = v == "1",
            _ => options.unrecognized.push(k.clone()),
        }
    }
    let (t, sub) = accepts.type_and_subtype();
    if !endpoint.allows_media_type_transform(t, sub, options.convert.as_ref()) {
        return None;
    }
    Some(options)
}

/// Upstream `NegotiateMediaTypeOptions`: the first clause (in goautoneg order) that matches a
/// served type and whose parameters the endpoint allows. An empty header selects JSON.
pub fn negotiate_media_type_options(
    header: &str,
    endpoint: &dyn EndpointRestrictions,
) -> Option<MediaTypeOptions> {
    if header.is_empty() {
        return Some(MediaTypeOptions::plain(MediaType::Json));
    }
    for clause in parse_accept(header) {
        for accepts in MediaType::ALL {
            let (t, sub) = accepts.type_and_subtype();
            let matches = (clause.mime_type == t
                && (clause.sub_type == sub || clause.sub_type == "*"))
                || (clause.mime_type == "*" && clause.sub_type == "*");
            if !matches {
                continue;
            }
            if let Some(options) = accept_media_type_options(&clause.params, accepts, endpoint) {
                return Some(options);
            }
        }
    }
    None
}

/// Upstream `isPrettyPrint`: a `pretty` query value decides when present and non-empty
/// (Go's `strconv.ParseBool`, anything unparsable is false); otherwise a curl, Wget or
/// Mozilla/5.0 user agent asks for it.
pub fn is_pretty_print(raw_query: Option<&str>, user_agent: Option<&str>) -> bool {
    if let Some(raw) = raw_query.filter(|q| q.contains("pretty")) {
        let query = Query::parse(raw);
        if let Some(pp) = query.first("pretty").filter(|v| !v.is_empty()) {
            return parse_bool(pp).unwrap_or(false);
        }
    }
    let ua = user_agent.unwrap_or_default();
    ua.starts_with("curl") || ua.starts_with("Wget") || ua.starts_with("Mozilla/5.0")
}

/// Upstream `NegotiateOutputMediaType`: the response type for `Accept` (absent is empty),
/// or 406 listing every supported type. `pretty` in the result is the final decision.
pub fn negotiate_output_media_type(
    accept: Option<&str>,
    raw_query: Option<&str>,
    user_agent: Option<&str>,
    endpoint: &dyn EndpointRestrictions,
) -> Result<MediaTypeOptions, Status> {
    let mut options = negotiate_media_type_options(accept.unwrap_or_default(), endpoint)
        .ok_or_else(|| Status::not_acceptable(SUPPORTED_MEDIA_TYPES))?;
    options.pretty = (options.pretty || is_pretty_print(raw_query, user_agent))
        && options.accepted.has_pretty_serializer();
    Ok(options)
}

/// Upstream `NegotiateOutputMediaTypeStream`: the watch stream type, or 406 listing the
/// stream types.
pub fn negotiate_output_media_type_stream(
    accept: Option<&str>,
    endpoint: &dyn EndpointRestrictions,
) -> Result<MediaTypeOptions, Status> {
    negotiate_media_type_options(accept.unwrap_or_default(), endpoint)
        .filter(|o| o.accepted.has_stream_serializer())
        .ok_or_else(|| Status::not_acceptable(SUPPORTED_STREAM_MEDIA_TYPES))
}

/// Upstream `NegotiateInputSerializerForMediaType`: the body's type from `Content-Type`
/// (absent or empty means JSON), parsed as Go's `mime.ParseMediaType` does; anything else
/// is 415 listing the supported (or, for a streaming body, the stream) types.
pub fn negotiate_input_media_type(
    content_type: Option<&str>,
    streaming: bool,
) -> Result<MediaType, Status> {
    let content_type = content_type
        .filter(|c| !c.is_empty())
        .unwrap_or(MEDIA_TYPE_JSON);
    if let Some(essence) = parse_media_type(content_type) {
        let (t, sub) = essence.split_once('/').unwrap_or((essence.as_str(), ""));
        if let Some(m) = MediaType::from_type_subtype(t, sub) {
            return Ok(m);
        }
    }
    Err(Status::unsupported_media_type(if streaming {
        SUPPORTED_STREAM_MEDIA_TYPES
    } else {
        SUPPORTED_MEDIA_TYPES
    }))
}

/// Go's `mime.ParseMediaType`, reduced to what negotiation needs: the lower-cased
/// `type/subtype` when the whole value (parameters included) is well formed, else `None`.
pub fn parse_media_type(v: &str) -> Option<String> {
    let (essence, mut rest) = match v.find(';') {
        Some(i) => (&v[..i], &v[i..]),
        None => (v, ""),
    };
    let essence = essence.trim().to_ascii_lowercase();
    let (typ, after) = consume_token(&essence);
    if typ.is_empty() {
        return None;
    }
    if !after.is_empty() {
        let sub = after.strip_prefix('/')?;
        let (subtype, tail) = consume_token(sub);
        if subtype.is_empty() || !tail.is_empty() {
            return None;
        }
    }
    let mut seen: Vec<String> = Vec::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        match consume_media_param(rest) {
            Some((key, tail)) => {
                if seen.contains(&key) {
                    return None;
                }
                seen.push(key);
                rest = tail;
            }
            None if rest.trim() == ";" => break,
            None => return None,
        }
    }
    Some(essence)
}

fn is_token_char(c: char) -> bool {
    c.is_ascii() && c > ' ' && c != '\u{7f}' && !"()<>@,;:\\\"/[]?=".contains(c)
}

fn consume_token(v: &str) -> (&str, &str) {
    let end = v.find(|c| !is_token_char(c)).unwrap_or(v.len());
    (&v[..end], &v[end..])
}

/// `; key=value` with a token or quoted-string value; the lower-cased key and the rest.
fn consume_media_param(v: &str) -> Option<(String, &str)> {
    let rest = v.strip_prefix(';')?.trim_start();
    let (key, rest) = consume_token(rest);
    if key.is_empty() {
        return None;
    }
    let rest = rest.trim_start().strip_prefix('=')?.trim_start();
    let rest = if let Some(quoted) = rest.strip_prefix('"') {
        let mut escaped = false;
        let mut end = None;
        for (i, c) in quoted.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    end = Some(i + 1);
                    break;
                }
                _ => {}
            }
        }
        &quoted[end?..]
    } else {
        let (value, rest) = consume_token(rest);
        if value.is_empty() {
            return None;
        }
        rest
    };
    Some((key.to_ascii_lowercase(), rest))
}

/// Upstream `types.PatchType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PatchType {
    Json,
    Merge,
    StrategicMerge,
    ApplyYaml,
    ApplyCbor,
}

impl PatchType {
    pub fn as_str(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::StrategicMerge => "application/strategic-merge-patch+json",
            PatchType::ApplyYaml => "application/apply-patch+yaml",
            PatchType::ApplyCbor => "application/apply-patch+cbor",
        }
    }
}

/// The patch types of a built-in resource in 1.33 (CBOR apply needs the alpha
/// `CBORServingAndStorage` gate and is left out).
pub const BUILTIN_PATCH_TYPES: &[PatchType] = &[
    PatchType::Json,
    PatchType::Merge,
    PatchType::StrategicMerge,
    PatchType::ApplyYaml,
];

/// The patch types of a custom resource: no strategic merge.
pub const CUSTOM_RESOURCE_PATCH_TYPES: &[PatchType] =
    &[PatchType::Json, PatchType::Merge, PatchType::ApplyYaml];

/// Upstream's patch handler: `Content-Type` cut at a `;` that is not its first character,
/// then compared exactly (no trimming, no case folding) with `supported`; otherwise 415
/// listing `supported`.
pub fn negotiate_patch_type(
    content_type: Option<&str>,
    supported: &[PatchType],
) -> Result<PatchType, Status> {
    let mut ct = content_type.unwrap_or_default();
    if let Some(i) = ct.find(';').filter(|i| *i > 0) {
        ct = &ct[..i];
    }
    supported
        .iter()
        .copied()
        .find(|p| p.as_str() == ct)
        .ok_or_else(|| {
            let names: Vec<&str> = supported.iter().map(|p| p.as_str()).collect();
            Status::unsupported_media_type(&names)
        })
}

#[cfg(test)]
mod tests;
