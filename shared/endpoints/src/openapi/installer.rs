//! The routes of each resource, laid out as upstream's API installer
//! (`registerResourceHandlers`) lays them out: which actions a resource's verbs give, on
//! which paths, with which options, bodies and answers. Descriptors say what a resource
//! supports; nothing is probed.

use kas_apimachinery::schema::Message;

use crate::installer::actions::{self, Action};
use crate::openapi::definitions::{self, Gvk};
use crate::openapi::parameters::{self, Param};
use crate::openapi::routes::{
    self, Body, Method, Operation, PathItem, Response, accepted, created, ok, with_unauthorized,
};
use kas_registry::descriptor::{ResourceDescriptor, Scope, Subresource, Verb};

/// The verb the operation name starts with, its method and `x-kubernetes-action`.
fn names(action: Action) -> (&'static str, Method, &'static str) {
    match action {
        Action::List => ("list", Method::Get, "list"),
        Action::Post => ("create", Method::Post, "post"),
        Action::DeleteCollection => ("deletecollection", Method::Delete, "deletecollection"),
        Action::WatchList => ("watch", Method::Get, "watchlist"),
        Action::Get => ("read", Method::Get, "get"),
        Action::Put => ("replace", Method::Put, "put"),
        Action::Patch => ("patch", Method::Patch, "patch"),
        Action::Delete => ("delete", Method::Delete, "delete"),
        Action::Watch => ("watch", Method::Get, "watch"),
        // Connect routes are left out of the documents (see `routes`).
        Action::Connect(_) => ("connect", Method::Get, "connect"),
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

    fn sub(d: &'a ResourceDescriptor, sub: &'static Subresource) -> Resource<'a> {
        let mut r = Resource::main(d);
        r.subresource = sub.name;
        if let Some(k) = &sub.kind {
            r.object = k.schema.name;
            r.gvk = Gvk {
                group: k.group,
                version: k.version,
                kind: k.kind,
            };
        }
        r
    }

    fn namespaced(&self) -> bool {
        self.descriptor.scope == Scope::Namespaced
    }
}

/// Every route of one group version: its discovery document and its resources'.
pub fn group_version(
    group: &str,
    version: &str,
    resources: &[&ResourceDescriptor],
    published: &[super::Published],
) -> Vec<PathItem> {
    let prefix = crate::installer::actions::prefix(group, version);
    let mut all = Vec::new();
    // Upstream serves custom resources' discovery outside go-restful: a group version of
    // custom resources only has no discovery operation.
    if !super::all_published(resources.iter().copied(), published) {
        all.push(routes::discovery(
            &format!("{prefix}/"),
            "getAPIResources",
            "Lists the resources of the group version and what each supports.",
            "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList",
        ));
    }
    for d in resources {
        // Custom resources are laid out by upstream's CRD builder instead.
        if let Some(p) = published.iter().find(|p| p.describes(d)) {
            all.extend(super::crd::routes(d, &prefix, p.kind, p.list));
            continue;
        }
        // Connect subresources' operations (upstream's `connect...` ones) are not
        // described yet.
        let described = actions::routes(d)
            .into_iter()
            .filter(|r| !matches!(r.action, Action::Connect(_)));
        for route in described {
            let r = match route.subresource {
                None => Resource::main(d),
                Some(sub) => Resource::sub(d, sub),
            };
            let layout = layout(&r, &route, &prefix);
            let op = operation(&r, &layout);
            all.push((layout.path, op));
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

/// A route with its full path and its path parameters: the namespace, and the name, whose
/// description names the kind the route is registered for (Scale for scale).
fn layout(r: &Resource<'_>, route: &actions::Route, prefix: &str) -> Layout {
    let mut params = Vec::new();
    for segment in route.segments() {
        match segment {
            "{namespace}" => params.push(parameters::namespace()),
            "{name}" => params.push(parameters::name(r.gvk.kind)),
            _ => {}
        }
    }
    Layout {
        action: route.action,
        path: format!("{prefix}/{}", route.path),
        params,
        all_namespaces: route.all_namespaces,
    }
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
    let (verb, ..) = names(layout.action);
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
    let (_, method, action) = names(layout.action);
    let (id, tag) = routes::operation_id_and_tag(&operation_name(r, layout), &layout.path);
    let mut params = layout.params.clone();
    params.extend(parameters::pretty());
    let shape = shape(r, layout.action);
    let (consumes, produces) = (layout.action.consumes(), layout.action.produces());
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
        consumes,
        produces,
        responses: with_unauthorized(shape.responses),
    }
}

/// What an action takes and gives, besides its path parameters and `pretty`.
struct Shape {
    params: Vec<Param>,
    body: Option<Body>,
    responses: Vec<Response>,
}

fn shape(r: &Resource<'_>, action: Action) -> Shape {
    let body = |schema, required| Some(Body { schema, required });
    let (params, body, responses) = match action {
        Action::Get => (Vec::new(), None, vec![ok(r.object)]),
        Action::List => (parameters::list_options(&[]), None, vec![ok(r.list)]),
        Action::Put => (
            parameters::write_options(),
            body(r.object, true),
            vec![ok(r.object), created(r.object)],
        ),
        Action::Patch => (
            parameters::patch_options(),
            body(definitions::PATCH, true),
            vec![ok(r.object), created(r.object)],
        ),
        Action::Post => (
            parameters::write_options(),
            body(r.object, true),
            vec![ok(r.object), created(r.object), accepted(r.object)],
        ),
        Action::Delete => (
            parameters::delete_options(),
            body(routes::DELETE_OPTIONS, false),
            vec![ok(routes::STATUS), accepted(routes::STATUS)],
        ),
        Action::DeleteCollection => {
            let mut params = parameters::delete_options();
            params.extend(parameters::list_options(&["watch", "allowWatchBookmarks"]));
            (
                params,
                body(routes::DELETE_OPTIONS, false),
                vec![ok(routes::STATUS)],
            )
        }
        Action::Watch | Action::WatchList => (
            parameters::list_options(&[]),
            None,
            vec![ok(routes::WATCH_EVENT)],
        ),
        Action::Connect(_) => (Vec::new(), None, vec![ok(routes::STATUS)]),
    };
    Shape {
        params,
        body,
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
        Action::List if r.descriptor.allows(Verb::Watch) => {
            format!("Lists or watches {kind} objects.")
        }
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
        Action::Connect(_) => format!("Connects to the {} of the {kind}.", r.subresource),
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
        subresources: &[Subresource::STATUS],
        table_columns: &[],
        table_name_and_age: true,
        storage_resource: "namespaces",
        schema: Some(&kas_api::core::v1::NAMESPACE),
        list_schema: Some(&kas_api::core::v1::NAMESPACE_LIST),
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
        let items = group_version("coordination.k8s.io", "v1", &[&LEASE], &[]);
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
        let items = group_version("", "v1", &[&NAMESPACE], &[]);
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
        let items = group_version("coordination.k8s.io", "v1", &[&LEASE], &[]);
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
