//! `RequestInfo`: what a request is about (verb, group, version, resource, namespace, name),
//! parsed from its path and query exactly as upstream's `RequestInfoFactory` does
//! (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go, with `AuthorizeWithSelectors`
//! on, as it is by default in 1.33).

use kas_apimachinery::fields;
use kas_apimachinery::golang::strconv::parse_int;
use kas_apimachinery::validation::path::is_valid_path_segment_name;

use crate::error::{Error, Result};
use crate::url::{Query, unescape_path};

/// Upstream's `request.RequestInfo`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestInfo {
    pub is_resource_request: bool,
    /// The URL path, percent-decoded as Go's `req.URL.Path` is.
    pub path: String,
    /// Lowercase verb: get, list, watch, create, update, patch, delete, deletecollection,
    /// proxy, or, for a non-resource request, the lowercase HTTP method.
    pub verb: String,
    pub api_prefix: String,
    pub api_group: String,
    pub api_version: String,
    pub namespace: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    pub parts: Vec<String>,
    /// The raw `fieldSelector` query value, set only for list, watch and deletecollection
    /// requests whose verb did not come from a `/watch/` path prefix.
    pub field_selector: String,
    /// The raw `labelSelector` query value, set under the same conditions.
    pub label_selector: String,
}

/// Upstream's `RequestInfoFactory`: which path prefixes hold APIs.
#[derive(Clone, Debug)]
pub struct RequestInfoFactory {
    /// `{"api", "apis"}` by default.
    pub api_prefixes: Vec<String>,
    /// `{"apis"}` by default: prefixes followed by a group. Upstream stores the complement
    /// (`GrouplessAPIPrefixes`); a prefix in `api_prefixes` but not here is groupless.
    pub grouped_api_prefixes: Vec<String>,
}

impl Default for RequestInfoFactory {
    fn default() -> Self {
        Self {
            api_prefixes: vec!["api".into(), "apis".into()],
            grouped_api_prefixes: vec!["apis".into()],
        }
    }
}

/// Path words that carry the verb (`/api/v1/watch/pods`); deprecated upstream, still served.
const SPECIAL_VERBS: [&str; 2] = ["proxy", "watch"];
/// Of those, the ones after which nothing is a subresource.
const SPECIAL_VERBS_NO_SUBRESOURCES: [&str; 1] = ["proxy"];
/// What may follow `/namespaces/{name}` as a subresource of the namespace itself.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];
/// Verbs for which upstream records the raw selectors.
const VERBS_WITH_SELECTORS: [&str; 3] = ["list", "watch", "deletecollection"];
/// `BasicLongRunningRequestCheck` as kube-apiserver configures it.
const LONG_RUNNING_VERBS: [&str; 2] = ["watch", "proxy"];
const LONG_RUNNING_SUBRESOURCES: [&str; 5] = ["attach", "exec", "proxy", "log", "portforward"];

impl RequestInfoFactory {
    /// Upstream `RequestInfoFactory.NewRequestInfo`, keeping only the info: on the one error
    /// upstream reports (see `try_new_request_info`), the info as far as it was parsed.
    pub fn new_request_info(&self, method: &http::Method, uri: &http::Uri) -> RequestInfo {
        self.parse(method, uri).0
    }

    /// Upstream `RequestInfoFactory.NewRequestInfo` with its error: `/api/v1/watch` or
    /// `/api/v1/proxy` with nothing after the verb. Upstream's `WithRequestInfo` filter
    /// answers it with `responsewriters::internal_error`, the error text prefixed with
    /// `failed to create RequestInfo: `.
    pub fn try_new_request_info(
        &self,
        method: &http::Method,
        uri: &http::Uri,
    ) -> Result<RequestInfo> {
        match self.parse(method, uri) {
            (info, None) => Ok(info),
            (_, Some(err)) => Err(err),
        }
    }

    fn parse(&self, method: &http::Method, uri: &http::Uri) -> (RequestInfo, Option<Error>) {
        // A bad escape never gets this far upstream (Go's server answers 400 first); keep
        // the raw path rather than guess.
        let path = unescape_path(uri.path()).unwrap_or_else(|_| uri.path().to_owned());
        let mut info = RequestInfo {
            path,
            verb: method.as_str().to_ascii_lowercase(),
            ..RequestInfo::default()
        };

        let trimmed = info.path.trim_matches('/');
        let parts: Vec<String> = if trimmed.is_empty() {
            Vec::new()
        } else {
            trimmed.split('/').map(str::to_owned).collect()
        };
        if parts.len() < 3 || !self.api_prefixes.contains(&parts[0]) {
            return (info, None);
        }
        let mut cur: &[String] = &parts;
        info.api_prefix = cur[0].clone();
        cur = &cur[1..];

        if self.grouped_api_prefixes.contains(&info.api_prefix) {
            // The prefix is consumed, so this asks for four parts in all.
            if cur.len() < 3 {
                return (info, None);
            }
            info.api_group = cur[0].clone();
            cur = &cur[1..];
        }

        info.is_resource_request = true;
        info.api_version = cur[0].clone();
        cur = &cur[1..];

        let verb_via_path_prefix = SPECIAL_VERBS.contains(&cur[0].as_str());
        if verb_via_path_prefix {
            if cur.len() < 2 {
                let err = Error::KindAndNamespace {
                    url: display_url(uri),
                };
                return (info, Some(err));
            }
            info.verb = cur[0].clone();
            cur = &cur[1..];
        } else {
            info.verb = verb_for_method(method.as_str()).to_owned();
        }

        fill_parts(&mut info, cur);

        let query = Query::parse(uri.query().unwrap_or_default());
        if info.name.is_empty() && info.verb == "get" {
            self.collection_get(&mut info, &query);
        }
        if info.name.is_empty() && info.verb == "delete" {
            info.verb = "deletecollection".to_owned();
        }

        // Selector authorization ignores the deprecated /watch/ paths: only their
        // collection form honours selectors.
        if !verb_via_path_prefix && VERBS_WITH_SELECTORS.contains(&info.verb.as_str()) {
            if let Some(v) = query.first("fieldSelector") {
                info.field_selector = v.to_owned();
            }
            if let Some(v) = query.first("labelSelector") {
                info.label_selector = v.to_owned();
            }
        }
        (info, None)
    }

    /// A GET without a name is a list or a watch; a `metadata.name=` field selector then
    /// names the object, as upstream's decoding of `ListOptions` does.
    fn collection_get(&self, info: &mut RequestInfo, query: &Query) {
        // Go's bool conversion: anything but "false" or "0" (any case) is true.
        let watch = query
            .first("watch")
            .is_some_and(|v| !matches!(v.to_ascii_lowercase().as_str(), "false" | "0"));
        info.verb = if watch { "watch" } else { "list" }.to_owned();

        // Upstream decodes the whole ListOptions; if any of it fails to decode, it keeps
        // only `watch` and so never takes the name from the field selector.
        if !list_options_decode(query) {
            return;
        }
        let Some(raw) = query.first("fieldSelector") else {
            return;
        };
        let Ok(selector) = fields::parse_selector(raw) else {
            return;
        };
        if let Some(name) = selector.requires_exact_match("metadata.name")
            && is_valid_path_segment_name(name).is_empty()
        {
            info.name = name.to_owned();
        }
    }
}

/// Sets namespace, parts, resource, name and subresource from what follows the version
/// (and the path verb, if any).
fn fill_parts(info: &mut RequestInfo, mut cur: &[String]) {
    // /namespaces/{namespace}/{resource}/...: make the parts relative to the resource,
    // unless what follows the namespace is one of its own subresources.
    if cur[0] == "namespaces" && cur.len() > 1 {
        info.namespace = cur[1].clone();
        if cur.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&cur[2].as_str()) {
            cur = &cur[2..];
        }
    }
    info.parts = cur.to_vec();

    // parts: resource/name/subresource/anything/else
    let n = info.parts.len();
    if n >= 3 && !SPECIAL_VERBS_NO_SUBRESOURCES.contains(&info.verb.as_str()) {
        info.subresource = info.parts[2].clone();
    }
    if n >= 2 {
        info.name = info.parts[1].clone();
    }
    if n >= 1 {
        info.resource = info.parts[0].clone();
    }
}

/// Whether upstream's `ListOptions` decoding would succeed apart from the field selector
/// (checked by the caller): the integer parameters must parse. Upstream also rejects an
/// unparsable `labelSelector` here; that check waits for a label-selector parser.
fn list_options_decode(query: &Query) -> bool {
    ["timeoutSeconds", "limit"].iter().all(|key| {
        query
            .first(key)
            .is_none_or(|v| parse_int(v, 10, 64).is_ok())
    })
}

fn verb_for_method(method: &str) -> &'static str {
    match method {
        "POST" => "create",
        "GET" | "HEAD" => "get",
        "PUT" => "update",
        "PATCH" => "patch",
        "DELETE" => "delete",
        _ => "",
    }
}

/// Go's `%v` of `req.URL` for a server request: the escaped path and the raw query.
fn display_url(uri: &http::Uri) -> String {
    match uri.query() {
        Some(q) if !q.is_empty() => format!("{}?{q}", uri.path()),
        _ => uri.path().to_owned(),
    }
}

impl RequestInfo {
    /// Upstream's default long-running check (`BasicLongRunningRequestCheck` with verbs
    /// watch, proxy and subresources attach, exec, proxy, log, portforward), which also
    /// counts non-resource `/debug/pprof/` requests.
    pub fn is_long_running(&self) -> bool {
        LONG_RUNNING_VERBS.contains(&self.verb.as_str())
            || (self.is_resource_request
                && LONG_RUNNING_SUBRESOURCES.contains(&self.subresource.as_str()))
            || (!self.is_resource_request && self.path.starts_with("/debug/pprof/"))
    }
}

#[cfg(test)]
mod tests;

/// The address of the connection a request came on (Go's `Request.RemoteAddr`), a request
/// extension the server sets; audit's source IPs end with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemoteAddr(pub std::net::SocketAddr);
