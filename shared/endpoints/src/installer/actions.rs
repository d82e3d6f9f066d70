//! The routes of each resource, laid out as upstream's API installer
//! (`registerResourceHandlers`) lays them out: which actions a resource's and its
//! subresources' verbs give, on which paths, what each consumes and produces. The router
//! matches requests against these routes and the OpenAPI documents describe them, so the
//! two cannot disagree. Descriptors say what a resource supports; nothing is probed.

use kas_registry::descriptor::{ResourceDescriptor, Scope, Subresource, Verb};

/// What every answer can be encoded as (upstream's serializers; CBOR is off in 1.33), in
/// the order upstream's `MediaTypesForSerializer` lists them.
pub const MEDIA_TYPES: &[&str] = crate::negotiation::SUPPORTED_MEDIA_TYPES;
/// The above plus the watch stream framings: what lists and watches produce.
pub const STREAM_MEDIA_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
];
/// Request bodies: upstream's web services consume any Content-Type and negotiate later.
pub const ANY: &[&str] = &["*/*"];
/// What the PATCH routes of built-in resources consume.
pub const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// The root path of a group version's web service: `/api/v1`, `/apis/<group>/<version>`.
pub fn prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

/// Upstream's route actions, in the order it registers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    List,
    Post,
    DeleteCollection,
    WatchList,
    Get,
    Put,
    Patch,
    Delete,
    Watch,
}

impl Action {
    /// The HTTP method of its route.
    pub fn method(self) -> http::Method {
        match self {
            Action::List | Action::WatchList | Action::Get | Action::Watch => http::Method::GET,
            Action::Post => http::Method::POST,
            Action::Put => http::Method::PUT,
            Action::Patch => http::Method::PATCH,
            Action::Delete | Action::DeleteCollection => http::Method::DELETE,
        }
    }

    /// What its route produces (go-restful's `Produces`).
    pub fn produces(self) -> &'static [&'static str] {
        match self {
            Action::List | Action::WatchList | Action::Watch => STREAM_MEDIA_TYPES,
            _ => MEDIA_TYPES,
        }
    }

    /// What its route consumes (go-restful's `Consumes`).
    pub fn consumes(self) -> &'static [&'static str] {
        match self {
            Action::Patch => PATCH_TYPES,
            _ => ANY,
        }
    }

    /// The verb a subresource's route serves with this action (upstream registers a
    /// subresource's actions on its item path only).
    fn for_subresource(verb: Verb) -> Option<Action> {
        match verb {
            Verb::Get => Some(Action::Get),
            Verb::Create => Some(Action::Post),
            Verb::Update => Some(Action::Put),
            Verb::Patch => Some(Action::Patch),
            Verb::Delete => Some(Action::Delete),
            Verb::List | Verb::Watch | Verb::DeleteCollection => None,
        }
    }
}

/// One route of a resource: an action on a path relative to its group version, such as
/// `namespaces/{namespace}/configmaps/{name}`.
#[derive(Clone, Debug)]
pub struct Route {
    pub action: Action,
    pub path: String,
    /// The list and watch across all namespaces of a namespaced resource.
    pub all_namespaces: bool,
    pub subresource: Option<&'static Subresource>,
}

impl Route {
    /// The path's segments; `{namespace}` and `{name}` are parameters.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.path.split('/')
    }
}

/// Every route of a resource and its subresources, in upstream's registration order.
pub fn routes(d: &'static ResourceDescriptor) -> Vec<Route> {
    let mut out = resource_routes(d);
    for sub in d.subresources {
        out.extend(subresource_routes(d, sub));
    }
    out
}

fn scope_prefix(d: &ResourceDescriptor) -> &'static str {
    match d.scope {
        Scope::Namespaced => "namespaces/{namespace}/",
        Scope::Cluster => "",
    }
}

fn resource_routes(d: &'static ResourceDescriptor) -> Vec<Route> {
    let collection = format!("{}{}", scope_prefix(d), d.plural);
    let item = format!("{collection}/{{name}}");
    let watch_list = d.allows(Verb::Watch) && d.allows(Verb::List);
    let route = |action, path: String, all_namespaces| Route {
        action,
        path,
        all_namespaces,
        subresource: None,
    };
    let candidates = [
        (Action::List, d.allows(Verb::List), collection.clone()),
        (Action::Post, d.allows(Verb::Create), collection.clone()),
        (
            Action::DeleteCollection,
            d.allows(Verb::DeleteCollection),
            collection.clone(),
        ),
        (Action::WatchList, watch_list, format!("watch/{collection}")),
        (Action::Get, d.allows(Verb::Get), item.clone()),
        (Action::Put, d.allows(Verb::Update), item.clone()),
        (Action::Patch, d.allows(Verb::Patch), item.clone()),
        (Action::Delete, d.allows(Verb::Delete), item.clone()),
        (
            Action::Watch,
            d.allows(Verb::Watch),
            format!("watch/{item}"),
        ),
    ];
    let mut out: Vec<Route> = candidates
        .into_iter()
        .filter(|(_, allowed, _)| *allowed)
        .map(|(action, _, path)| route(action, path, false))
        .collect();
    if d.scope == Scope::Namespaced {
        if d.allows(Verb::List) {
            out.push(route(Action::List, d.plural.to_owned(), true));
        }
        if watch_list {
            out.push(route(
                Action::WatchList,
                format!("watch/{}", d.plural),
                true,
            ));
        }
    }
    out
}

fn subresource_routes(d: &ResourceDescriptor, sub: &'static Subresource) -> Vec<Route> {
    let path = format!("{}{}/{{name}}/{}", scope_prefix(d), d.plural, sub.name);
    // Upstream's order of actions, whatever order the table lists the verbs in.
    let order = [
        Action::Post,
        Action::Get,
        Action::Put,
        Action::Patch,
        Action::Delete,
    ];
    let declared: Vec<Action> = sub
        .verbs
        .iter()
        .filter_map(|v| Action::for_subresource(*v))
        .collect();
    order
        .into_iter()
        .filter(|a| declared.contains(a))
        .map(|action| Route {
            action,
            path: path.clone(),
            all_namespaces: false,
            subresource: Some(sub),
        })
        .collect()
}
