//! The routes of each resource, laid out as upstream's API installer
//! (`registerResourceHandlers`) lays them out: which actions a resource's verbs give, on
//! which paths, with which options, bodies and answers. Descriptors say what a resource
//! supports; nothing is probed.

use kas_apimachinery::schema::Message;

use crate::openapi::definitions::{self, Gvk};
use crate::openapi::parameters::{self, Param};
use crate::openapi::routes::{
    self, ANY, Body, MEDIA_TYPES, Method, Operation, PATCH_TYPES, PathItem, Response,
    STREAM_MEDIA_TYPES, accepted, created, ok, with_unauthorized,
};
use kas_registry::descriptor::{ResourceDescriptor, Scope, Subresource, Verb};

/// Upstream's route actions, in the order it registers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
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
    /// The verb the operation name starts with, its HTTP method and `x-kubernetes-action`.
    fn names(self) -> (&'static str, Method, &'static str) {
        match self {
            Action::List => ("list", Method::Get, "list"),
            Action::Post => ("create", Method::Post, "post"),
            Action::DeleteCollection => ("deletecollection", Method::Delete, "deletecollection"),
            Action::WatchList => ("watch", Method::Get, "watchlist"),
            Action::Get => ("read", Method::Get, "get"),
            Action::Put => ("replace", Method::Put, "put"),
            Action::Patch => ("patch", Method::Patch, "patch"),
            Action::Delete => ("delete", Method::Delete, "delete"),
            Action::Watch => ("watch", Method::Get, "watch"),
        }
    }
}

/// What a resource or one of its subresources puts in its group version's documents.
struct Resource<'a> {
    descriptor: &'a ResourceDescriptor,
    /// `""` for the resource itself, else `status` or `scale`.
    subresource: &'static str,
    /// The kind operation names use: the parent's, even for subresources.
    kind: &'static str,
    /// The definition the operations read and write, and the kind it is registered as.
    object: &'static str,
    gvk: Gvk,
    list: &'static str,
}

fn schema_name(message: Option<&'static Message>) -> &'static str {
    // Descriptors without a schema exist only in tests; any object is a RawExtension.
    message.map_or(definitions::RAW_EXTENSION, |m| m.name)
}

impl<'a> Resource<'a> {
    fn main(d: &'a ResourceDescriptor) -> Resource<'a> {
        Resource {
            descriptor: d,
            subresource: "",
            kind: d.kind,
            object: schema_name(d.schema),
            gvk: Gvk {
                group: d.group,
                version: d.version,
                kind: d.kind,
            },
            list: schema_name(d.list_schema),
        }
    }

    fn sub(d: &'a ResourceDescriptor, sub: Subresource) -> Resource<'a> {
        let mut r = Resource::main(d);
        match sub {
            Subresource::Status => r.subresource = "status",
            Subresource::Finalize => r.subresource = "finalize",
            Subresource::Scale => {
                r.subresource = "scale";
                r.object = kas_api::autoscaling::v1::SCALE.name;
                r.gvk = Gvk {
                    group: "autoscaling",
                    version: "v1",
                    kind: "Scale",
                };
            }
        }
        r
    }

    fn namespaced(&self) -> bool {
        self.descriptor.scope == Scope::Namespaced
    }

    fn allows(&self, verb: Verb) -> bool {
        if self.subresource.is_empty() {
            self.descriptor.allows(verb)
        } else if self.subresource == "finalize" {
            verb == Verb::Update
        } else {
            // Upstream's status and scale subresources: get, update and patch.
            matches!(verb, Verb::Get | Verb::Update | Verb::Patch)
        }
    }
}

/// Every route of one group version: its discovery document and its resources'.
pub fn group_version(
    group: &str,
    version: &str,
    resources: &[&ResourceDescriptor],
) -> Vec<PathItem> {
    let prefix = routes::prefix(group, version);
    let mut all = vec![routes::discovery(
        &format!("{prefix}/"),
        "getAPIResources",
        "Lists the resources of the group version and what each supports.",
        "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList",
    )];
    for d in resources {
        all.extend(resource_routes(&Resource::main(d), &prefix));
        for sub in d.subresources {
            all.extend(resource_routes(&Resource::sub(d, *sub), &prefix));
        }
    }
    routes::path_items(all)
}

/// One route before it becomes an operation: where, what, and for which namespaces.
struct Layout {
    action: Action,
    path: String,
    params: Vec<Param>,
    all_namespaces: bool,
}

/// Upstream's action list for a resource: the collection, the item, the deprecated watch
/// paths, and for namespaced resources the list across all namespaces.
fn layouts(r: &Resource<'_>, prefix: &str) -> Vec<Layout> {
    let d = r.descriptor;
    let scope = if r.namespaced() {
        "namespaces/{namespace}/"
    } else {
        ""
    };
    let collection = format!("{scope}{}", d.plural);
    let mut item = format!("{collection}/{{name}}");
    if !r.subresource.is_empty() {
        item = format!("{item}/{}", r.subresource);
    }
    let mut scope_params = Vec::new();
    if r.namespaced() {
        scope_params.push(parameters::namespace());
    }
    let mut item_params = scope_params.clone();
    // Upstream names the kind the route is registered for: Scale for scale, else the
    // resource's own.
    item_params.push(parameters::name(r.gvk.kind));
    let watch_list = r.allows(Verb::Watch) && r.allows(Verb::List);
    let at = |action, path: &str, params: &Vec<Param>, all_namespaces| Layout {
        action,
        path: format!("{prefix}/{path}"),
        params: params.clone(),
        all_namespaces,
    };
    let mut out = Vec::new();
    let subresource = !r.subresource.is_empty();
    let candidates = [
        (Action::List, Verb::List, false),
        (Action::Post, Verb::Create, false),
        (Action::DeleteCollection, Verb::DeleteCollection, false),
        (Action::WatchList, Verb::Watch, false),
        (Action::Get, Verb::Get, true),
        (Action::Put, Verb::Update, true),
        (Action::Patch, Verb::Patch, true),
        (Action::Delete, Verb::Delete, true),
        (Action::Watch, Verb::Watch, true),
    ];
    for (action, verb, on_item) in candidates {
        let allowed = match action {
            Action::WatchList => watch_list,
            _ => r.allows(verb),
        };
        if !allowed || (subresource && !on_item) {
            continue;
        }
        let watch = matches!(action, Action::Watch | Action::WatchList);
        let path = match (on_item, watch) {
            (true, false) => item.clone(),
            (true, true) => format!("watch/{item}"),
            (false, false) => collection.clone(),
            (false, true) => format!("watch/{collection}"),
        };
        let params = if on_item { &item_params } else { &scope_params };
        out.push(at(action, &path, params, false));
    }
    if r.namespaced() && !subresource {
        if r.allows(Verb::List) {
            out.push(at(Action::List, d.plural, &Vec::new(), true));
        }
        if watch_list {
            let path = format!("watch/{}", d.plural);
            out.push(at(Action::WatchList, &path, &Vec::new(), true));
        }
    }
    out
}

fn resource_routes(r: &Resource<'_>, prefix: &str) -> Vec<(String, Operation)> {
    layouts(r, prefix)
        .into_iter()
        .map(|l| {
            let op = operation(r, &l);
            (l.path, op)
        })
        .collect()
}

fn title(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The name upstream gives the route before the group and version are spliced in.
fn operation_name(r: &Resource<'_>, layout: &Layout) -> String {
    let (verb, ..) = layout.action.names();
    let namespaced = if r.namespaced() && !layout.all_namespaces {
        "Namespaced"
    } else {
        ""
    };
    let list = if layout.action == Action::WatchList {
        "List"
    } else {
        ""
    };
    let suffix = if layout.all_namespaces {
        "ForAllNamespaces"
    } else {
        ""
    };
    format!(
        "{verb}{namespaced}{}{}{list}{suffix}",
        r.kind,
        title(r.subresource)
    )
}

fn operation(r: &Resource<'_>, layout: &Layout) -> Operation {
    let (_, method, action) = layout.action.names();
    let (id, tag) = routes::operation_id_and_tag(&operation_name(r, layout), &layout.path);
    let mut params = layout.params.clone();
    params.extend(parameters::pretty());
    let shape = shape(r, layout.action);
    params.extend(shape.params);
    Operation {
        method,
        id,
        description: description(r, layout.action),
        tag,
        action: Some(action),
        gvk: Some(r.gvk),
        params,
        body: shape.body,
        consumes: shape.consumes,
        produces: shape.produces,
        responses: with_unauthorized(shape.responses),
    }
}

/// What an action takes and gives, besides its path parameters and `pretty`.
struct Shape {
    params: Vec<Param>,
    body: Option<Body>,
    consumes: &'static [&'static str],
    produces: &'static [&'static str],
    responses: Vec<Response>,
}

fn shape(r: &Resource<'_>, action: Action) -> Shape {
    let body = |schema, required| Some(Body { schema, required });
    let (params, body, consumes, produces, responses) = match action {
        Action::Get => (Vec::new(), None, ANY, MEDIA_TYPES, vec![ok(r.object)]),
        Action::List => (
            parameters::list_options(&[]),
            None,
            ANY,
            STREAM_MEDIA_TYPES,
            vec![ok(r.list)],
        ),
        Action::Put => (
            parameters::write_options(),
            body(r.object, true),
            ANY,
            MEDIA_TYPES,
            vec![ok(r.object), created(r.object)],
        ),
        Action::Patch => (
            parameters::patch_options(),
            body(definitions::PATCH, true),
            PATCH_TYPES,
            MEDIA_TYPES,
            vec![ok(r.object), created(r.object)],
        ),
        Action::Post => (
            parameters::write_options(),
            body(r.object, true),
            ANY,
            MEDIA_TYPES,
            vec![ok(r.object), created(r.object), accepted(r.object)],
        ),
        Action::Delete => (
            parameters::delete_options(),
            body(routes::DELETE_OPTIONS, false),
            ANY,
            MEDIA_TYPES,
            vec![ok(routes::STATUS), accepted(routes::STATUS)],
        ),
        Action::DeleteCollection => {
            let mut params = parameters::delete_options();
            params.extend(parameters::list_options(&["watch", "allowWatchBookmarks"]));
            (
                params,
                body(routes::DELETE_OPTIONS, false),
                ANY,
                MEDIA_TYPES,
                vec![ok(routes::STATUS)],
            )
        }
        Action::Watch | Action::WatchList => (
            parameters::list_options(&[]),
            None,
            ANY,
            STREAM_MEDIA_TYPES,
            vec![ok(routes::WATCH_EVENT)],
        ),
    };
    Shape {
        params,
        body,
        consumes,
        produces,
        responses,
    }
}

fn description(r: &Resource<'_>, action: Action) -> String {
    let kind = r.kind;
    let of = |what: &str| match r.subresource {
        "" => format!("{what} the {kind}"),
        sub => format!("{what} the {sub} of the {kind}"),
    };
    match action {
        Action::Get => format!("{} with the given name.", of("Reads")),
        Action::Put => format!("{} with the given name.", of("Replaces")),
        Action::Patch => format!("{} with the given name.", of("Partially updates")),
        Action::Delete => format!("{} with the given name.", of("Deletes")),
        Action::Post => format!("Creates a {kind}."),
        Action::List if r.allows(Verb::Watch) => format!("Lists or watches {kind} objects."),
        Action::List => format!("Lists {kind} objects."),
        Action::DeleteCollection => format!("Deletes every {kind} the selectors match."),
        Action::Watch => format!(
            "Watches one {kind}. Deprecated: watch the list instead, with a field selector on \
             metadata.name."
        ),
        Action::WatchList => format!(
            "Watches the {kind} objects. Deprecated: use the watch parameter of the list \
             operation instead."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::descriptor::Scope;

    const LEASE: ResourceDescriptor = kas_registry::descriptor::fixtures::LEASE;

    const NAMESPACE: ResourceDescriptor = ResourceDescriptor {
        group: "",
        version: "v1",
        kind: "Namespace",
        list_kind: "NamespaceList",
        plural: "namespaces",
        singular: "namespace",
        short_names: &["ns"],
        categories: &[],
        scope: Scope::Cluster,
        verbs: &[
            Verb::Create,
            Verb::Delete,
            Verb::Get,
            Verb::List,
            Verb::Patch,
            Verb::Update,
            Verb::Watch,
        ],
        subresources: &[Subresource::Status],
        table_columns: &[],
        table_name_and_age: true,
        storage_resource: "namespaces",
        schema: Some(&kas_api::core::v1::NAMESPACE),
        list_schema: Some(&kas_api::core::v1::NAMESPACE_LIST),
        scale: None,
    };

    fn ids(items: &[PathItem]) -> Vec<(String, &'static str, String)> {
        let mut out: Vec<_> = items
            .iter()
            .flat_map(|i| {
                i.operations
                    .iter()
                    .map(|o| (i.path.clone(), o.method.as_str(), o.id.clone()))
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn namespaced_resource_operation_ids() {
        let items = group_version("coordination.k8s.io", "v1", &[&LEASE]);
        let p = "/apis/coordination.k8s.io/v1";
        let expected = [
            (format!("{p}/"), "get", "getCoordinationV1APIResources"),
            (
                format!("{p}/leases"),
                "get",
                "listCoordinationV1LeaseForAllNamespaces",
            ),
            (
                format!("{p}/namespaces/{{namespace}}/leases"),
                "delete",
                "deleteCoordinationV1CollectionNamespacedLease",
            ),
            (
                format!("{p}/namespaces/{{namespace}}/leases"),
                "get",
                "listCoordinationV1NamespacedLease",
            ),
            (
                format!("{p}/namespaces/{{namespace}}/leases"),
                "post",
                "createCoordinationV1NamespacedLease",
            ),
            (
                format!("{p}/namespaces/{{namespace}}/leases/{{name}}"),
                "delete",
                "deleteCoordinationV1NamespacedLease",
            ),
            (
                format!("{p}/namespaces/{{namespace}}/leases/{{name}}"),
                "get",
                "readCoordinationV1NamespacedLease",
            ),
            (
                format!("{p}/namespaces/{{namespace}}/leases/{{name}}"),
                "patch",
                "patchCoordinationV1NamespacedLease",
            ),
            (
                format!("{p}/namespaces/{{namespace}}/leases/{{name}}"),
                "put",
                "replaceCoordinationV1NamespacedLease",
            ),
            (
                format!("{p}/watch/leases"),
                "get",
                "watchCoordinationV1LeaseListForAllNamespaces",
            ),
            (
                format!("{p}/watch/namespaces/{{namespace}}/leases"),
                "get",
                "watchCoordinationV1NamespacedLeaseList",
            ),
            (
                format!("{p}/watch/namespaces/{{namespace}}/leases/{{name}}"),
                "get",
                "watchCoordinationV1NamespacedLease",
            ),
        ];
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(p, m, id)| (p, m, id.to_owned()))
            .collect();
        assert_eq!(ids(&items), expected);
    }

    #[test]
    fn cluster_scoped_resource_operation_ids() {
        let items = group_version("", "v1", &[&NAMESPACE]);
        let got = ids(&items);
        let expected = [
            ("/api/v1/", "get", "getCoreV1APIResources"),
            ("/api/v1/namespaces", "get", "listCoreV1Namespace"),
            ("/api/v1/namespaces", "post", "createCoreV1Namespace"),
            (
                "/api/v1/namespaces/{name}",
                "delete",
                "deleteCoreV1Namespace",
            ),
            ("/api/v1/namespaces/{name}", "get", "readCoreV1Namespace"),
            ("/api/v1/namespaces/{name}", "patch", "patchCoreV1Namespace"),
            ("/api/v1/namespaces/{name}", "put", "replaceCoreV1Namespace"),
            (
                "/api/v1/namespaces/{name}/status",
                "get",
                "readCoreV1NamespaceStatus",
            ),
            (
                "/api/v1/namespaces/{name}/status",
                "patch",
                "patchCoreV1NamespaceStatus",
            ),
            (
                "/api/v1/namespaces/{name}/status",
                "put",
                "replaceCoreV1NamespaceStatus",
            ),
            (
                "/api/v1/watch/namespaces",
                "get",
                "watchCoreV1NamespaceList",
            ),
            (
                "/api/v1/watch/namespaces/{name}",
                "get",
                "watchCoreV1Namespace",
            ),
        ];
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(p, m, id)| (p.to_owned(), m, id.to_owned()))
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn parameters_are_hoisted_and_patch_has_field_validation() {
        let items = group_version("coordination.k8s.io", "v1", &[&LEASE]);
        let item = items
            .iter()
            .find(|i| i.path.ends_with("/leases/{name}"))
            .unwrap();
        let common: Vec<_> = item.params.iter().map(|p| p.name).collect();
        assert_eq!(common, ["name", "namespace", "pretty"]);
        let patch = item
            .operations
            .iter()
            .find(|o| o.method == Method::Patch)
            .unwrap();
        let names: Vec<_> = patch.params.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            ["dryRun", "fieldManager", "fieldValidation", "force"]
        );
        assert!(
            patch
                .consumes
                .contains(&"application/strategic-merge-patch+json")
        );
        assert_eq!(patch.action, Some("patch"));
        assert_eq!(patch.gvk.map(|g| g.kind), Some("Lease"));
        // A path with one operation hoists everything but the body.
        let all = items
            .iter()
            .find(|i| i.path.ends_with("v1/leases"))
            .unwrap();
        assert!(all.operations[0].params.is_empty());
        assert!(all.params.iter().any(|p| p.name == "sendInitialEvents"));
        let collection = items
            .iter()
            .find(|i| i.path.ends_with("{namespace}/leases"))
            .unwrap();
        let delete = collection
            .operations
            .iter()
            .find(|o| o.method == Method::Delete)
            .unwrap();
        assert!(!delete.params.iter().any(|p| p.name == "watch"));
        assert!(delete.params.iter().any(|p| p.name == "propagationPolicy"));
        assert_eq!(delete.body.as_ref().map(|b| b.required), Some(false));
    }
}
