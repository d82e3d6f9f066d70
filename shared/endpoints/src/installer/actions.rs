//! The routes of each resource, laid out as upstream's API installer
//! (`registerResourceHandlers`) lays them out: which actions a resource's and its
//! subresources' verbs give, on which paths, what each consumes and produces. The router
//! matches requests against these routes and the OpenAPI documents describe them, so the
//! two cannot disagree. Descriptors say what a resource supports; nothing is probed.

use kas_registry::descriptor::{
    ConnectMethod, ResourceDescriptor, Scope, Subresource, SubresourceHandler, Verb,
};

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
    /// A connecter's route for one of its methods (upstream's `CONNECT` action).
    Connect(ConnectMethod),
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
            Action::Connect(m) => match m {
                ConnectMethod::Get => http::Method::GET,
                ConnectMethod::Post => http::Method::POST,
                ConnectMethod::Put => http::Method::PUT,
                ConnectMethod::Patch => http::Method::PATCH,
                ConnectMethod::Delete => http::Method::DELETE,
                ConnectMethod::Head => http::Method::HEAD,
                ConnectMethod::Options => http::Method::OPTIONS,
            },
        }
    }

    /// What its route produces (go-restful's `Produces`).
    pub fn produces(self) -> &'static [&'static str] {
        match self {
            Action::List | Action::WatchList | Action::Watch => STREAM_MEDIA_TYPES,
            // Upstream's connect routes produce anything.
            Action::Connect(_) => ANY,
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
pub fn routes(d: &ResourceDescriptor) -> Vec<Route> {
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

fn resource_routes(d: &ResourceDescriptor) -> Vec<Route> {
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
    if let SubresourceHandler::Connect(spec) = sub.handler {
        // Upstream registers one CONNECT route per method on the item path, then, for
        // connecters with a subpath, one per method on `<item>/{path:*}`.
        let mut paths = vec![path.clone()];
        if spec.subpath {
            paths.push(format!("{path}/{{path:*}}"));
        }
        return paths
            .into_iter()
            .flat_map(|path| {
                spec.methods.iter().map(move |m| Route {
                    action: Action::Connect(*m),
                    path: path.clone(),
                    all_namespaces: false,
                    subresource: Some(sub),
                })
            })
            .collect();
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::descriptor::{ConnectSpec, fixtures};

    static EXEC: Subresource = Subresource::connect(
        "exec",
        &[Verb::Create, Verb::Get],
        ConnectSpec {
            methods: &[ConnectMethod::Get, ConnectMethod::Post],
            subpath: false,
            kind: "PodExecOptions",
        },
    );
    static PROXY: Subresource = Subresource::proxy("PodProxyOptions");
    static SUBS: [Subresource; 2] = [EXEC, PROXY];
    static POD: ResourceDescriptor = ResourceDescriptor {
        subresources: &SUBS,
        ..fixtures::CONFIG_MAP
    };

    #[test]
    fn connecters_get_a_route_per_method_and_proxies_a_subpath() {
        let connect: Vec<(String, http::Method)> = routes(&POD)
            .into_iter()
            .filter(|r| matches!(r.action, Action::Connect(_)))
            .map(|r| (r.path.clone(), r.action.method()))
            .collect();
        let exec = "namespaces/{namespace}/configmaps/{name}/exec".to_owned();
        assert_eq!(connect[0], (exec.clone(), http::Method::GET));
        assert_eq!(connect[1], (exec, http::Method::POST));
        let proxy = "namespaces/{namespace}/configmaps/{name}/proxy";
        let paths: Vec<&str> = connect[2..].iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths.len(), 14);
        assert!(paths[..7].iter().all(|p| *p == proxy));
        assert!(
            paths[7..]
                .iter()
                .all(|p| *p == format!("{proxy}/{{path:*}}"))
        );
        assert_eq!(connect[10].1, http::Method::POST);
        assert_eq!(connect[15].1, http::Method::OPTIONS);
        assert_eq!(Action::Connect(ConnectMethod::Head).produces(), ANY);
    }
}
