//! The REST verbs of `flunders` and `fischers` under `/apis/<group>/<version>/`: create,
//! get, list (or watch with `?watch=true`), update, merge or JSON patch, delete, with
//! upstream-shaped `Status` errors and Table answers for kubectl.

use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use kas_apimachinery::labels;
use kas_apimachinery::status::Status;
use serde_json::{Value, json};

use super::api::{GroupVersion, Resource};
use super::auth::User;
use super::reply::{self, Body};
use super::state::State;
use super::store::{self, Event};
use super::{table, watch};

/// Bodies larger than this are refused (upstream's limit is 3 MiB).
const MAX_BODY: usize = 3 << 20;

/// A request's object: resource, namespace, name and subresource from the path.
#[derive(Debug, PartialEq, Eq)]
pub struct Target {
    pub resource: &'static Resource,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

impl Target {
    /// `rest` is the path after `/apis/<group>/<version>/`; `None` for a path that names
    /// nothing served (404).
    pub fn parse(gv: &GroupVersion, rest: &str) -> Option<Target> {
        let all: Vec<&str> = rest.split('/').collect();
        if all.iter().any(|s| s.is_empty()) {
            return None;
        }
        let (namespace, parts) = match all.as_slice() {
            ["namespaces", ns, tail @ ..] if !tail.is_empty() => (Some((*ns).to_owned()), tail),
            parts => (None, parts),
        };
        let (plural, name, subresource) = match parts {
            [p] => (*p, None, None),
            [p, n] => (*p, Some((*n).to_owned()), None),
            [p, n, s] => (*p, Some((*n).to_owned()), Some((*s).to_owned())),
            _ => return None,
        };
        let resource = gv.resource(plural)?;
        let scoped_right = match (resource.namespaced, &namespace) {
            (true, Some(_)) | (false, None) => true,
            // A namespaced resource across namespaces: list and watch only.
            (true, None) => name.is_none(),
            (false, Some(_)) => false,
        };
        scoped_right.then_some(Target {
            resource,
            namespace,
            name,
            subresource,
        })
    }

    fn ns(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }

    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }
}

/// The query parameters the verbs read.
#[derive(Default)]
struct Query {
    watch: bool,
    resource_version: Option<String>,
    label_selector: Option<String>,
    field_selector: Option<String>,
    timeout_seconds: Option<u64>,
    include_object: Option<String>,
}

impl Query {
    fn parse(query: Option<&str>) -> Query {
        let mut q = Query::default();
        for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            match k.as_ref() {
                "watch" => q.watch = matches!(v.as_ref(), "true" | "1"),
                "resourceVersion" => q.resource_version = Some(v.into_owned()),
                "labelSelector" => q.label_selector = Some(v.into_owned()),
                "fieldSelector" => q.field_selector = Some(v.into_owned()),
                "timeoutSeconds" => q.timeout_seconds = v.parse().ok(),
                "includeObject" => q.include_object = Some(v.into_owned()),
                _ => {}
            }
        }
        q
    }
}

pub async fn handle(
    state: &State,
    req: Request<hyper::body::Incoming>,
    user: &User,
    target: &Target,
) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let query = Query::parse(parts.uri.query());
    let accept = header_str(&parts.headers, header::ACCEPT);
    let content_type = header_str(&parts.headers, header::CONTENT_TYPE);
    let body = match read_body(body).await {
        Ok(b) => b,
        Err(s) => return reply::status(&s),
    };
    let verb = Verb {
        state,
        target,
        user,
    };
    let result = match (&parts.method, target.name.is_some()) {
        (&Method::GET, false) if query.watch => verb.watch(&query),
        (&Method::GET, false) => verb.list(&query, &accept),
        (&Method::GET, true) => verb.get(&query, &accept),
        (&Method::POST, false) => verb.create(&body),
        (&Method::PUT, true) => verb.update(&body),
        (&Method::PATCH, true) => verb.patch(&content_type, &body),
        (&Method::DELETE, true) => verb.delete(),
        (method, _) => Err(Box::new(Status::method_not_supported(
            &state.gv.group,
            target.resource.plural,
            &method.as_str().to_lowercase(),
        ))),
    };
    result.unwrap_or_else(|s| reply::status(&s))
}

struct Verb<'a> {
    state: &'a State,
    target: &'a Target,
    user: &'a User,
}

/// A failure `Status`, boxed: it is large and the error path is rare.
type Failure = Box<Status>;

type Answer = Result<Response<Body>, Failure>;

fn bad_request(message: &str) -> Failure {
    Box::new(Status::bad_request(message))
}

impl Verb<'_> {
    fn r(&self) -> &'static Resource {
        self.target.resource
    }

    fn error(&self, e: store::Error, name: &str) -> Failure {
        let (g, plural) = (&self.state.gv.group, self.r().plural);
        Box::new(match e {
            store::Error::NotFound => Status::not_found(g, plural, name),
            store::Error::AlreadyExists => Status::already_exists(g, plural, name),
            store::Error::Conflict => Status::conflict(
                g,
                plural,
                name,
                "the object has been modified; please apply your changes to the latest version and try again",
            ),
            store::Error::Invalid(field, message) => {
                let cause = kas_apimachinery::status::StatusCause {
                    reason: Some("FieldValueRequired".into()),
                    message: Some(message),
                    field: Some(field),
                };
                Status::invalid(g, self.r().kind, name, vec![cause])
            }
            store::Error::BadRequest(message) => Status::bad_request(&message),
            store::Error::Expired(asked, oldest) => Status::resource_expired(&format!(
                "too old resource version: {asked} ({})",
                oldest.saturating_sub(1)
            )),
        })
    }

    fn get(&self, query: &Query, accept: &str) -> Answer {
        let t = self.target;
        let object = self
            .state
            .store
            .get(self.r(), t.ns(), t.name())
            .map_err(|e| self.error(e, t.name()))?;
        if table::wanted(accept) {
            let rv = object["metadata"]["resourceVersion"].as_str().unwrap_or("");
            let include = query.include_object.as_deref();
            return Ok(reply::json(
                StatusCode::OK,
                &table::table(std::slice::from_ref(&object), rv, include),
            ));
        }
        Ok(reply::json(StatusCode::OK, &object))
    }

    fn list(&self, query: &Query, accept: &str) -> Answer {
        let filter = Filter::new(query)?;
        let (items, rv) = self
            .state
            .store
            .list(self.r(), self.target.namespace.as_deref());
        let items: Vec<Value> = items.into_iter().filter(|o| filter.matches(o)).collect();
        let rv = rv.to_string();
        if table::wanted(accept) {
            let include = query.include_object.as_deref();
            return Ok(reply::json(
                StatusCode::OK,
                &table::table(&items, &rv, include),
            ));
        }
        let list = json!({
            "kind": format!("{}List", self.r().kind),
            "apiVersion": self.state.gv.api_version(),
            "metadata": {"resourceVersion": rv},
            "items": items,
        });
        Ok(reply::json(StatusCode::OK, &list))
    }

    fn watch(&self, query: &Query) -> Answer {
        let filter = Filter::new(query)?;
        let since = match query.resource_version.as_deref() {
            None | Some("") => None,
            Some(rv) => Some(
                rv.parse::<u64>()
                    .map_err(|_| bad_request(&format!("invalid resource version: {rv}")))?,
            ),
        };
        let timeout = query.timeout_seconds.map(Duration::from_secs);
        let ns = self.target.namespace.as_deref();
        match self.state.store.watch(self.r(), ns, since) {
            Ok(start) => {
                let keep = move |e: &Event| filter.matches(&e.object);
                Ok(watch::respond(start, keep, timeout))
            }
            Err(e) => Ok(watch::error(&self.error(e, ""))),
        }
    }

    fn create(&self, body: &[u8]) -> Answer {
        let mut object = self.decode(body)?;
        self.check_namespace(&mut object)?;
        let name = object["metadata"]["name"].as_str().unwrap_or("").to_owned();
        let created = self
            .state
            .store
            .create(self.r(), self.target.ns(), object, self.user)
            .map_err(|e| self.error(e, &name))?;
        Ok(reply::json(StatusCode::CREATED, &created))
    }

    fn update(&self, body: &[u8]) -> Answer {
        let mut object = self.decode(body)?;
        self.check_namespace(&mut object)?;
        let name = self.target.name();
        match object["metadata"]["name"].as_str() {
            Some(n) if n == name => {}
            other => {
                return Err(Box::new(Status::bad_request(&format!(
                    "the name of the object ({}) does not match the name on the URL ({name})",
                    other.unwrap_or("")
                ))));
            }
        }
        let updated = self
            .state
            .store
            .update(self.r(), self.target.ns(), name, self.user, |_| Ok(object))
            .map_err(|e| self.error(e, name))?;
        Ok(reply::json(StatusCode::OK, &updated))
    }

    fn patch(&self, content_type: &str, body: &[u8]) -> Answer {
        use kas_apimachinery::patch::{json_patch, merge_patch};
        let media = content_type.split(';').next().unwrap_or("").trim();
        let apply: fn(&Value, &[u8]) -> kas_apimachinery::patch::Result<Value> = match media {
            "application/merge-patch+json" => merge_patch,
            "application/json-patch+json" => json_patch,
            _ => {
                return Err(Box::new(Status::unsupported_media_type(&[
                    "application/json-patch+json",
                    "application/merge-patch+json",
                ])));
            }
        };
        let name = self.target.name();
        let patched = self
            .state
            .store
            .update(self.r(), self.target.ns(), name, self.user, |old| {
                apply(old, body).map_err(|e| store::Error::BadRequest(e.to_string()))
            });
        match patched {
            Ok(object) => Ok(reply::json(StatusCode::OK, &object)),
            Err(e) => Err(self.error(e, name)),
        }
    }

    fn delete(&self) -> Answer {
        let name = self.target.name();
        let old = self
            .state
            .store
            .delete(self.r(), self.target.ns(), name)
            .map_err(|e| self.error(e, name))?;
        // Upstream's generic store answers a finished delete with a Success Status.
        let status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": {
                "name": name,
                "group": self.state.gv.group,
                "kind": self.r().plural,
                "uid": old["metadata"]["uid"],
            },
        });
        Ok(reply::json(StatusCode::OK, &status))
    }

    /// The body as an object of this resource's kind, apiVersion and kind filled in.
    fn decode(&self, body: &[u8]) -> Result<Value, Failure> {
        let mut object: Value = serde_json::from_slice(body)
            .map_err(|e| bad_request(&format!("error decoding the body: {e}")))?;
        let Some(map) = object.as_object_mut() else {
            return Err(Box::new(Status::bad_request(
                "the body is not a JSON object",
            )));
        };
        let (kind, api_version) = (self.r().kind, self.state.gv.api_version());
        match map.get("kind").and_then(Value::as_str) {
            None | Some("") => {}
            Some(k) if k == kind => {}
            Some(k) => {
                return Err(Box::new(Status::bad_request(&format!(
                    "the object provided is unrecognized (must be of type {kind}): kind {k}"
                ))));
            }
        }
        map.insert("kind".into(), json!(kind));
        map.insert("apiVersion".into(), json!(api_version));
        Ok(object)
    }

    /// Upstream's `EnsureObjectNamespaceMatchesRequestNamespace`.
    fn check_namespace(&self, object: &mut Value) -> Result<(), Failure> {
        if !object["metadata"].is_object() {
            object["metadata"] = json!({});
        }
        let meta = &mut object["metadata"];
        let sent = meta["namespace"].as_str().unwrap_or("").to_owned();
        match &self.target.namespace {
            Some(ns) if sent.is_empty() || sent == *ns => meta["namespace"] = json!(ns),
            Some(_) => {
                return Err(Box::new(Status::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                )));
            }
            None => {
                if let Some(m) = meta.as_object_mut() {
                    m.remove("namespace");
                }
            }
        }
        Ok(())
    }
}

/// Label and field selectors (`metadata.name`, `metadata.namespace`).
struct Filter {
    labels: labels::Selector,
    fields: Vec<(String, bool, String)>,
}

impl Filter {
    fn new(query: &Query) -> Result<Filter, Failure> {
        let labels = match query.label_selector.as_deref() {
            None | Some("") => labels::Selector::everything(),
            Some(s) => labels::Selector::parse(s)
                .map_err(|e| bad_request(&format!("unable to parse requirement: {e}")))?,
        };
        let mut fields = Vec::new();
        for term in query.field_selector.as_deref().unwrap_or("").split(',') {
            if term.is_empty() {
                continue;
            }
            let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (f, true, v)
            } else {
                return Err(Box::new(Status::bad_request(&format!(
                    "invalid selector: '{term}'"
                ))));
            };
            if !matches!(field, "metadata.name" | "metadata.namespace") {
                return Err(Box::new(Status::bad_request(&format!(
                    "field label not supported: {field}"
                ))));
            }
            fields.push((field.to_owned(), equal, value.to_owned()));
        }
        Ok(Filter { labels, fields })
    }

    fn matches(&self, object: &Value) -> bool {
        self.labels.matches_json(object)
            && self.fields.iter().all(|(field, equal, value)| {
                let key = field.trim_start_matches("metadata.");
                let actual = object["metadata"][key].as_str().unwrap_or("");
                (actual == value) == *equal
            })
    }
}

fn header_str(headers: &http::HeaderMap, name: header::HeaderName) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

async fn read_body(body: hyper::body::Incoming) -> Result<Bytes, Failure> {
    let limited = http_body_util::Limited::new(body, MAX_BODY);
    match limited.collect().await {
        Ok(b) => Ok(b.to_bytes()),
        Err(e) => Err(Box::new(Status::request_entity_too_large(&e.to_string()))),
    }
}

#[cfg(test)]
mod tests {
    use super::super::api::{FISCHERS, FLUNDERS};
    use super::*;

    fn wardle() -> GroupVersion {
        GroupVersion::default()
    }

    #[test]
    fn paths_name_a_resource_in_its_scope() {
        let t = Target::parse(&wardle(), "namespaces/ns/flunders/a/echo").unwrap();
        assert_eq!(t.resource, &FLUNDERS);
        assert_eq!((t.ns(), t.name()), ("ns", "a"));
        assert_eq!(t.subresource.as_deref(), Some("echo"));
        assert!(
            Target::parse(&wardle(), "flunders").is_some(),
            "across namespaces"
        );
        assert!(
            Target::parse(&wardle(), "flunders/a").is_none(),
            "a name needs a namespace"
        );
        assert_eq!(
            Target::parse(&wardle(), "fischers/f").unwrap().resource,
            &FISCHERS
        );
        assert!(Target::parse(&wardle(), "namespaces/ns/fischers").is_none());
        assert!(Target::parse(&wardle(), "namespaces/ns").is_none());
        assert!(Target::parse(&wardle(), "widgets").is_none());
        assert!(Target::parse(&wardle(), "namespaces//flunders").is_none());
    }

    #[test]
    fn field_selectors_match_name_and_namespace() {
        let query = Query {
            field_selector: Some("metadata.name=a,metadata.namespace!=kube-system".into()),
            ..Query::default()
        };
        let f = Filter::new(&query).unwrap();
        assert!(f.matches(&json!({"metadata": {"name": "a", "namespace": "ns"}})));
        assert!(!f.matches(&json!({"metadata": {"name": "b", "namespace": "ns"}})));
        let bad = Query {
            field_selector: Some("spec.x=1".into()),
            ..Query::default()
        };
        assert!(Filter::new(&bad).is_err());
    }
}
