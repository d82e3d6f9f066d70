//! Which route a request takes, as kube-apiserver's go-restful container picks it: the web
//! service whose root path best matches (`/api`, `/api/v1`, `/apis/<group>`,
//! `/apis/<group>/<version>`), then its routes whose path templates match the remaining
//! segments (`CurlyRouter`), then the JSR 311 checks in go-restful's order: the method
//! (405), the request's Content-Type against what the route consumes (415), and the
//! `Accept` header against what it produces (406). Each failure is the `Status` upstream's
//! `serviceErrorHandler` writes for it (`NewGenericServerResponse`: go-restful's text,
//! `details: {}`).
//!
//! A path under no web service is not this role's: it goes to the next one, whose end is
//! upstream's plain-text `404 page not found`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use http::{HeaderMap, Method};
use kas_apimachinery::Status;
use kas_registry::Result;
use kas_registry::Subresource;

use super::actions::{self, Action, Route};
use super::resource::Resource;

/// One route of a group version with its template split into segments.
struct Compiled {
    route: Route,
    resource: Arc<Resource>,
    segments: Vec<Segment>,
    literals: usize,
}

enum Segment {
    Literal(String),
    Namespace,
    Name,
    /// `{path:*}`: the rest of the path, one segment or more.
    Rest,
}

/// The routes of one group version's web service, by the resource each serves, so that
/// a request compares itself with the few routes its path can name.
#[derive(Default)]
struct GroupVersion {
    by_resource: HashMap<String, Vec<Compiled>>,
}

/// The web services of a role.
#[derive(Default)]
pub(crate) struct Router {
    /// `/api/v1`, `/apis/<group>/<version>`.
    group_versions: HashMap<String, GroupVersion>,
    /// `/apis/<group>`: only its discovery document.
    groups: HashSet<String>,
    /// `/api`: only the legacy root document.
    legacy: bool,
    /// The roots (`/apis/<g>`, `/apis/<g>/<v>`) that serve custom resources only. Upstream
    /// serves those with its CRD handler, not go-restful: a path none of their routes
    /// match goes to the delegate, whose end is the plain-text `404 page not found`.
    custom: HashSet<String>,
}

/// What a request is routed to.
pub(crate) enum Selected {
    /// The discovery document of the web service at this root (`/api`, `/api/v1`,
    /// `/apis/<g>`, `/apis/<g>/<v>`).
    Discovery(String),
    Resource(Matched),
}

/// A resource's route. The path's namespace and name are the `RequestInfo`'s, which
/// handlers read as upstream's context-based naming does.
pub(crate) struct Matched {
    pub resource: Arc<Resource>,
    pub action: Action,
    pub subresource: Option<&'static Subresource>,
}

impl Router {
    pub(crate) fn new(resources: &[Arc<Resource>]) -> Router {
        let mut router = Router::default();
        let mut typed = HashSet::new();
        for resource in resources {
            let d = resource.store.descriptor;
            let root = actions::prefix(d.group, d.version);
            let group_root = format!("/apis/{}", d.group);
            // A resource without a Go type is a custom resource.
            if d.schema.is_some() {
                typed.insert(root.clone());
                typed.insert(group_root.clone());
            } else if !d.group.is_empty() {
                router.custom.insert(root.clone());
                router.custom.insert(group_root.clone());
            }
            if d.group.is_empty() {
                router.legacy = true;
            } else {
                router.groups.insert(group_root);
            }
            let gv = router.group_versions.entry(root).or_default();
            for route in actions::routes(d) {
                let segments: Vec<Segment> = route
                    .segments()
                    .map(|s| match s {
                        "{namespace}" => Segment::Namespace,
                        "{name}" => Segment::Name,
                        "{path:*}" => Segment::Rest,
                        other => Segment::Literal(other.to_owned()),
                    })
                    .collect();
                let literals = segments
                    .iter()
                    .filter(|s| matches!(s, Segment::Literal(_)))
                    .count();
                gv.by_resource
                    .entry(d.plural.to_owned())
                    .or_default()
                    .push(Compiled {
                        route,
                        resource: resource.clone(),
                        segments,
                        literals,
                    });
            }
        }
        router.custom.retain(|root| !typed.contains(root));
        router
    }

    /// The route of a request whose (unescaped) path is `path`; `None` when no web service
    /// of this role claims the path.
    pub(crate) fn select(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
    ) -> Option<Result<Selected>> {
        let tokens: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (root_len, gv) = self.web_service(&tokens)?;
        let rest = &tokens[root_len..];
        if rest.is_empty() || rest == [""] {
            let root = format!("/{}", tokens[..root_len].join("/"));
            return Some(discovery(method, headers).map(|()| Selected::Discovery(root)));
        }
        let root = format!("/{}", tokens[..root_len].join("/"));
        let Some(gv) = gv else {
            // `/api` and `/apis/<group>` serve their document only.
            return (!self.custom.contains(&root)).then(|| Err(not_found().into()));
        };
        match gv.select(method, rest, headers) {
            Some(selected) => Some(selected.map(Selected::Resource)),
            None if self.custom.contains(&root) => None,
            None => Some(Err(not_found().into())),
        }
    }

    /// The web service whose root the path starts with, the longest first, and how many
    /// tokens the root has.
    fn web_service(&self, tokens: &[&str]) -> Option<(usize, Option<&GroupVersion>)> {
        let root = |n: usize| format!("/{}", tokens[..n].join("/"));
        match tokens {
            ["api", _, ..] => match self.group_versions.get(&root(2)) {
                Some(gv) => Some((2, Some(gv))),
                None => self.legacy.then_some((1, None)),
            },
            ["api", ..] => self.legacy.then_some((1, None)),
            ["apis", _, _, ..] => match self.group_versions.get(&root(3)) {
                Some(gv) => Some((3, Some(gv))),
                None => self.groups.contains(&root(2)).then_some((2, None)),
            },
            ["apis", _] => self.groups.contains(&root(2)).then_some((2, None)),
            _ => None,
        }
    }
}

impl GroupVersion {
    /// The route of the rest of a path; `None` when no route's template matches it.
    fn select(
        &self,
        method: &Method,
        rest: &[&str],
        headers: &HeaderMap,
    ) -> Option<Result<Matched>> {
        // A route names its resource at the start, after `watch/`, after
        // `namespaces/{namespace}/`, or after both.
        let mut names: Vec<&str> = Vec::with_capacity(4);
        for offset in [0, 1, 2, 3] {
            if let Some(name) = rest.get(offset)
                && !names.contains(name)
            {
                names.push(name);
            }
        }
        let mut candidates: Vec<&Compiled> = names
            .iter()
            .filter_map(|name| self.by_resource.get(*name))
            .flatten()
            .filter(|c| c.matches(rest))
            .collect();
        if candidates.is_empty() {
            return None;
        }
        // CurlyRouter's order: more static segments first.
        candidates.sort_by_key(|c| std::cmp::Reverse(c.literals));
        let chosen = detect_route(&candidates, method, headers, |c| c.route.action);
        Some(chosen.map(|chosen| Matched {
            resource: chosen.resource.clone(),
            action: chosen.route.action,
            subresource: chosen.route.subresource,
        }))
    }
}

impl Compiled {
    fn matches(&self, rest: &[&str]) -> bool {
        if matches!(self.segments.last(), Some(Segment::Rest)) {
            let fixed = self.segments.len() - 1;
            return rest.len() > fixed
                && self.segments[..fixed]
                    .iter()
                    .zip(rest)
                    .all(|(s, t)| match s {
                        Segment::Literal(l) => l == t,
                        _ => !t.is_empty(),
                    });
        }
        self.segments.len() == rest.len()
            && self.segments.iter().zip(rest).all(|(s, t)| match s {
                Segment::Literal(l) => l == t,
                // Upstream's namers refuse an empty name or namespace; no route has one.
                Segment::Namespace | Segment::Name | Segment::Rest => !t.is_empty(),
            })
    }
}

/// go-restful's `RouterJSR311.detectRoute` over the routes that match the path: the first
/// with the request's method, a consumable Content-Type and an acceptable answer.
fn detect_route<'a, T>(
    candidates: &[&'a T],
    method: &Method,
    headers: &HeaderMap,
    action: impl Fn(&T) -> Action,
) -> Result<&'a T> {
    let by_method: Vec<&'a T> = candidates
        .iter()
        .copied()
        .filter(|c| action(c).method() == method)
        .collect();
    if by_method.is_empty() {
        return Err(generic(405, "405: Method Not Allowed"));
    }
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let content_type = header(http::header::CONTENT_TYPE).unwrap_or("");
    let by_type: Vec<&'a T> = by_method
        .iter()
        .copied()
        .filter(|c| consumes(action(c), method, content_type))
        .collect();
    let length = header(http::header::CONTENT_LENGTH).unwrap_or("");
    if by_type.is_empty() && length.parse::<u64>().is_ok_and(|n| n > 0) {
        return Err(generic(415, "415: Unsupported Media Type"));
    }
    let accept = header(http::header::ACCEPT)
        .filter(|a| !a.is_empty())
        .unwrap_or("*/*");
    if let Some(chosen) = by_type
        .iter()
        .find(|c| accepts(action(c).produces(), accept))
    {
        return Ok(chosen);
    }
    let available: Vec<&str> = by_type
        .iter()
        .flat_map(|c| action(c).produces().iter().copied())
        .collect();
    let available = available.join(", ");
    let bodied = matches!(*method, Method::POST | Method::PUT | Method::PATCH);
    if bodied && (length.is_empty() || length == "0") {
        return Err(generic(
            415,
            &format!("415: Unsupported Media Type\n\nAvailable representations: {available}"),
        ));
    }
    Err(generic(
        406,
        &format!("406: Not Acceptable\n\nAvailable representations: {available}"),
    ))
}

/// The discovery route of a web service: GET only, answering the serializers' types.
fn discovery(method: &Method, headers: &HeaderMap) -> Result<()> {
    struct Discovery;
    detect_route(&[&Discovery], method, headers, |_| Action::Get).map(|_| ())
}

/// go-restful's `Route.matchesContentType`: a mime type of the header (parameters dropped)
/// equal to one the route consumes; an empty header matches the body-less methods, and is
/// `application/octet-stream` for the others.
fn consumes(action: Action, method: &Method, content_type: &str) -> bool {
    let consumable = action.consumes();
    if consumable.contains(&"*/*") {
        return true;
    }
    let content_type = match content_type {
        "" if matches!(
            *method,
            Method::GET | Method::HEAD | Method::OPTIONS | Method::DELETE | Method::TRACE
        ) =>
        {
            return true;
        }
        "" => "application/octet-stream",
        other => other,
    };
    mime_types(content_type).any(|m| consumable.contains(&m))
}

/// go-restful's `Route.matchesAccept`: `*/*`, or a mime type (parameters dropped) the route
/// produces exactly; `application/*` is not expanded.
fn accepts(produces: &[&str], accept: &str) -> bool {
    produces.contains(&"*/*") || mime_types(accept).any(|m| m == "*/*" || produces.contains(&m))
}

/// The comma-separated mime types of a header, each without its parameters.
fn mime_types(header: &str) -> impl Iterator<Item = &str> {
    header
        .split(',')
        .map(|m| m.split(';').next().unwrap_or("").trim())
}

/// go-restful's error as upstream's `serviceErrorHandler` writes it.
fn generic(code: u16, server_message: &str) -> kas_registry::Error {
    Status::generic_server_response(code, server_message).into()
}

/// A 404 for a path under a web service that no route matches.
fn not_found() -> Status {
    Status::generic_server_response(404, "404: Page Not Found")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_matches_go_restful() {
        let produces = crate::installer::actions::MEDIA_TYPES;
        assert!(accepts(produces, "*/*"));
        assert!(accepts(
            produces,
            "application/json;as=Table;g=meta.k8s.io;v=v1"
        ));
        assert!(accepts(produces, "text/html, application/yaml;q=0.5"));
        assert!(accepts(produces, " application/vnd.kubernetes.protobuf "));
        // Wildcard subtypes are not expanded, and parameters are never compared.
        assert!(!accepts(produces, "application/*"));
        assert!(!accepts(produces, "text/html"));
        assert!(!accepts(produces, "application/json-patch+json"));
    }

    #[test]
    fn content_types_match_go_restful() {
        // Routes that consume anything take anything.
        assert!(consumes(Action::Post, &Method::POST, "text/plain"));
        assert!(consumes(
            Action::Patch,
            &Method::PATCH,
            "application/merge-patch+json"
        ));
        assert!(consumes(
            Action::Patch,
            &Method::PATCH,
            "application/apply-patch+yaml; charset=utf-8"
        ));
        assert!(!consumes(Action::Patch, &Method::PATCH, "application/json"));
        // No Content-Type on a PATCH is application/octet-stream.
        assert!(!consumes(Action::Patch, &Method::PATCH, ""));
    }

    #[test]
    fn route_errors_are_generic_server_responses() {
        let headers = HeaderMap::new();
        let err = discovery(&Method::POST, &headers).unwrap_err().to_status();
        assert_eq!(err.code, 405);
        assert_eq!(
            String::from_utf8(err.to_json()).unwrap(),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}"#
        );
        let mut html = HeaderMap::new();
        html.insert(http::header::ACCEPT, "text/html".parse().unwrap());
        let err = discovery(&Method::GET, &html).unwrap_err().to_status();
        assert_eq!(err.code, 406);
        assert_eq!(
            err.message.as_deref(),
            Some(
                "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf"
            )
        );
        assert!(discovery(&Method::GET, &headers).is_ok());
    }
}
