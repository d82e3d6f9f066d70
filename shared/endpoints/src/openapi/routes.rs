//! The operations a role serves, as upstream's API installer lays them out for each
//! resource (`registerResourceHandlers`) and as its discovery handlers register
//! themselves: paths, methods, operation ids, parameters, bodies, media types and
//! responses. Both documents render these; nothing here knows a dialect.

use crate::installer::actions::MEDIA_TYPES;
use crate::openapi::definitions::Gvk;
use crate::openapi::parameters::Param;

pub const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
pub const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
pub const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Method {
    Get,
    Put,
    Post,
    Delete,
    Patch,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "get",
            Method::Put => "put",
            Method::Post => "post",
            Method::Delete => "delete",
            Method::Patch => "patch",
        }
    }
}

/// A request body: the definition it is.
#[derive(Clone, Debug)]
pub struct Body {
    pub schema: &'static str,
    pub required: bool,
}

#[derive(Clone, Debug)]
pub struct Response {
    pub code: u16,
    pub description: &'static str,
    /// The definition answered; `None` for 401, which upstream adds to every operation.
    pub schema: Option<&'static str>,
}

#[derive(Clone, Debug)]
pub struct Operation {
    pub method: Method,
    pub id: String,
    pub description: String,
    pub tag: String,
    /// `x-kubernetes-action`; discovery operations have none.
    pub action: Option<&'static str>,
    /// `x-kubernetes-group-version-kind`; discovery operations have none.
    pub gvk: Option<Gvk>,
    /// Path and query parameters not shared by every operation of the path, sorted.
    pub params: Vec<Param>,
    pub body: Option<Body>,
    /// The Content-Types of the body (upstream lists them on body-less operations too).
    pub consumes: &'static [&'static str],
    pub produces: &'static [&'static str],
    pub responses: Vec<Response>,
}

/// One path and its operations; `params` are those every operation has (upstream hoists
/// them), sorted by name and location.
#[derive(Clone, Debug)]
pub struct PathItem {
    pub path: String,
    pub params: Vec<Param>,
    pub operations: Vec<Operation>,
}

impl PathItem {
    /// The path item object of either document version, given how that version writes a
    /// parameter and an operation: the shared parameters, then each operation by method.
    pub fn to_json(
        &self,
        parameter: fn(&Param) -> serde_json::Value,
        operation: fn(&Operation) -> serde_json::Value,
    ) -> serde_json::Value {
        let mut v = serde_json::Map::new();
        if !self.params.is_empty() {
            let params = self.params.iter().map(parameter).collect();
            v.insert("parameters".into(), serde_json::Value::Array(params));
        }
        for op in &self.operations {
            v.insert(op.method.as_str().into(), operation(op));
        }
        serde_json::Value::Object(v)
    }
}

/// Upstream's `ToValidOperationID`: keeps letters, `_` and (not first) digits, and
/// capitalizes what follows anything else.
fn valid_operation_id(s: &str, capitalize_first: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut capitalize = capitalize_first;
    for (i, c) in s.char_indices() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_numeric()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

const VERBS: &[&str] = &[
    "get", "log", "read", "replace", "patch", "delete", "watch", "connect", "proxy", "list",
    "create",
];

/// Upstream's `GetOperationIDAndTags`: the group and version go between the verb and the
/// rest of the route's operation name (`list` + `CoreV1` + `NamespacedConfigMap`), and
/// the tag is `<group>_<version>`. The core group is called `core`; `.k8s.io` is dropped.
pub fn operation_id_and_tag(operation: &str, path: &str) -> (String, String) {
    // The shortest verb wins: "deletecollection..." is "delete" + "Collection...".
    let verb = VERBS
        .iter()
        .filter(|v| operation.starts_with(*v))
        .min_by_key(|v| v.len())
        .copied()
        .unwrap_or("");
    let rest = &operation[verb.len()..];
    let mut parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    if parts.first() == Some(&"api") {
        parts.splice(0..1, ["apis", "core"]);
    }
    let mut id = verb.to_owned();
    let tag;
    if parts.len() >= 2 && parts[0] == "apis" {
        let group = parts[1].trim_end_matches(".k8s.io");
        id.push_str(&valid_operation_id(group, !id.is_empty()));
        let mut t = valid_operation_id(group, false);
        if parts.len() > 2 {
            id.push_str(&valid_operation_id(parts[2], !id.is_empty()));
            t = format!("{t}_{}", valid_operation_id(parts[2], false));
        }
        tag = t;
    } else {
        tag = valid_operation_id(parts.first().copied().unwrap_or(""), false);
    }
    let capitalize = !id.is_empty();
    id.push_str(&valid_operation_id(rest, capitalize));
    (id, tag)
}

pub(super) fn ok(schema: &'static str) -> Response {
    Response {
        code: 200,
        description: "OK",
        schema: Some(schema),
    }
}

pub(super) fn created(schema: &'static str) -> Response {
    Response {
        code: 201,
        description: "Created",
        schema: Some(schema),
    }
}

pub(super) fn accepted(schema: &'static str) -> Response {
    Response {
        code: 202,
        description: "Accepted",
        schema: Some(schema),
    }
}

/// Upstream adds 401 to every operation of a server with authentication.
pub(super) fn with_unauthorized(mut responses: Vec<Response>) -> Vec<Response> {
    responses.push(Response {
        code: 401,
        description: "Unauthorized",
        schema: None,
    });
    responses
}

/// Sorts parameters as upstream does: by name, then location.
pub fn sort_params(params: &mut [Param]) {
    params.sort_by(|a, b| (a.name, a.location).cmp(&(b.name, b.location)));
}

/// Groups operations by path and hoists the parameters every operation of a path has.
pub fn path_items(routes: Vec<(String, Operation)>) -> Vec<PathItem> {
    let mut items: Vec<PathItem> = Vec::new();
    for (path, op) in routes {
        match items.iter_mut().find(|i| i.path == path) {
            Some(item) => item.operations.push(op),
            None => items.push(PathItem {
                path,
                params: Vec::new(),
                operations: vec![op],
            }),
        }
    }
    for item in &mut items {
        hoist_common(item);
    }
    items.sort_by(|a, b| a.path.cmp(&b.path));
    items
}

fn hoist_common(item: &mut PathItem) {
    let Some(first) = item.operations.first() else {
        return;
    };
    let key = |p: &Param| (p.name, p.location);
    let common: Vec<Param> = first
        .params
        .iter()
        .filter(|p| {
            item.operations
                .iter()
                .all(|op| op.params.iter().any(|q| key(q) == key(p)))
        })
        .cloned()
        .collect();
    for op in &mut item.operations {
        op.params
            .retain(|p| !common.iter().any(|c| key(c) == key(p)));
        sort_params(&mut op.params);
    }
    item.params = common;
    sort_params(&mut item.params);
}

/// The discovery operation of a path (`/api/`, `/apis/`, `/apis/<g>/`, `/apis/<g>/<v>/`).
pub fn discovery(
    path: &str,
    operation: &str,
    description: &str,
    schema: &'static str,
) -> (String, Operation) {
    let (id, tag) = operation_id_and_tag(operation, path);
    let op = Operation {
        method: Method::Get,
        id,
        description: description.to_owned(),
        tag,
        action: None,
        gvk: None,
        params: Vec::new(),
        body: None,
        consumes: MEDIA_TYPES,
        produces: MEDIA_TYPES,
        responses: with_unauthorized(vec![ok(schema)]),
    };
    (path.to_owned(), op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_ids_splice_group_and_version_after_the_verb() {
        let cases = [
            (
                "listNamespacedConfigMap",
                "/api/v1/namespaces/{namespace}/configmaps",
                "listCoreV1NamespacedConfigMap",
                "core_v1",
            ),
            (
                "deletecollectionNamespacedConfigMap",
                "/api/v1/namespaces/{namespace}/configmaps",
                "deleteCoreV1CollectionNamespacedConfigMap",
                "core_v1",
            ),
            (
                "listFlowSchema",
                "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
                "listFlowcontrolApiserverV1FlowSchema",
                "flowcontrolApiserver_v1",
            ),
            ("getAPIVersions", "/api/", "getCoreAPIVersions", "core"),
            ("getAPIVersions", "/apis/", "getAPIVersions", "apis"),
            (
                "getAPIGroup",
                "/apis/events.k8s.io/",
                "getEventsAPIGroup",
                "events",
            ),
            (
                "getAPIResources",
                "/apis/autoscaling/v2/",
                "getAutoscalingV2APIResources",
                "autoscaling_v2",
            ),
        ];
        for (operation, path, id, tag) in cases {
            assert_eq!(
                operation_id_and_tag(operation, path),
                (id.to_owned(), tag.to_owned()),
                "{operation} {path}"
            );
        }
    }
}
