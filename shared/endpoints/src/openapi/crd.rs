//! The routes of a custom resource, laid out as upstream's CRD OpenAPI builder lays them
//! out (`pkg/controller/openapi/builder`, `generateBuilder` and `buildRoute`) rather than
//! as the API installer does for built-in kinds: no watch routes; every operation
//! consumes and produces JSON and YAML (patches their three types); each verb takes its
//! options type's parameters (a get `GetOptions`', a deletecollection `ListOptions`'
//! without a body); patches answer 200 only; every operation names the custom kind in
//! `x-kubernetes-group-version-kind`, the scale routes too, whose bodies are Scale.

use kas_registry::descriptor::{ResourceDescriptor, SubresourceHandler};

use crate::openapi::definitions::{self, Gvk};
use crate::openapi::parameters::{self, Param};
use crate::openapi::routes::{
    self, Body, Method, Operation, Response, accepted, created, ok, with_unauthorized,
};

const JSON_YAML: &[&str] = &["application/json", "application/yaml"];
const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];

/// One route of upstream's builder: the verb its operation name starts with, the action,
/// and the object it answers.
struct Route<'a> {
    root: &'a str,
    /// `""`, `/{name}` or `/{name}/<subresource>`.
    path: String,
    method: Method,
    action: &'static str,
    verb: &'static str,
    sample: &'static str,
}

/// Every operation of a custom resource whose definitions are `kind_def` and `list_def`.
pub fn routes(
    d: &ResourceDescriptor,
    prefix: &str,
    kind_def: &'static str,
    list_def: &'static str,
) -> Vec<(String, Operation)> {
    let cluster_root = format!("{prefix}/{}", d.plural);
    let root = if d.namespaced() {
        format!("{prefix}/namespaces/{{namespace}}/{}", d.plural)
    } else {
        cluster_root.clone()
    };
    let route = |root, path: &str, method, action, verb, sample| Route {
        root,
        path: path.to_owned(),
        method,
        action,
        verb,
        sample,
    };
    let mut all = Vec::new();
    if d.namespaced() {
        let r = route(&cluster_root, "", Method::Get, "list", "list", list_def);
        all.push(operation(d, &r, Some("ForAllNamespaces")));
    }
    let status = routes::STATUS;
    let main = [
        ("", Method::Get, "list", "list", list_def),
        ("", Method::Post, "post", "create", kind_def),
        (
            "",
            Method::Delete,
            "deletecollection",
            "deletecollection",
            status,
        ),
        ("/{name}", Method::Get, "get", "read", kind_def),
        ("/{name}", Method::Put, "put", "replace", kind_def),
        ("/{name}", Method::Delete, "delete", "delete", status),
        ("/{name}", Method::Patch, "patch", "patch", kind_def),
    ];
    for (path, method, action, verb, sample) in main {
        all.push(operation(
            d,
            &route(&root, path, method, action, verb, sample),
            None,
        ));
    }
    for sub in d.subresources {
        let sample = match (&sub.handler, &sub.kind) {
            (SubresourceHandler::Status, _) => kind_def,
            (SubresourceHandler::Scale(_), Some(k)) => k.schema.name,
            _ => continue,
        };
        let path = format!("/{{name}}/{}", sub.name);
        for (method, action, verb) in [
            (Method::Get, "get", "read"),
            (Method::Put, "put", "replace"),
            (Method::Patch, "patch", "patch"),
        ] {
            let r = route(&root, &path, method, action, verb, sample);
            all.push(operation(d, &r, None));
        }
    }
    all
}

/// The subresource of a route's path (`status` of `/{name}/status`), else `""`.
fn subresource(path: &str) -> &str {
    path.strip_prefix("/{name}/").unwrap_or("")
}

/// Upstream `GetArticleForNoun` with a space on each side.
fn article(noun: &str) -> &'static str {
    let vowel = noun
        .chars()
        .next()
        .is_some_and(|c| "AEIOUaeiou".contains(c));
    if vowel { " an " } else { " a " }
}

/// Upstream `descriptionFor`.
fn description(kind: &str, r: &Route<'_>) -> String {
    let article = match r.verb {
        "list" => " objects of kind ",
        "read" | "replace" | "patch" => " the specified ",
        "create" | "delete" => article(kind),
        _ => "",
    };
    let sub = match subresource(&r.path) {
        "" => String::new(),
        s => format!(" {s} of"),
    };
    match r.verb {
        "patch" => format!("partially update{sub}{article}{kind}"),
        "deletecollection" if sub.is_empty() => format!("delete collection of {kind}"),
        "deletecollection" => format!("delete collection of{sub} a {kind}"),
        verb => format!("{verb}{sub}{article}{kind}"),
    }
}

fn title(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn operation(d: &ResourceDescriptor, r: &Route<'_>, suffix: Option<&str>) -> (String, Operation) {
    let full = format!("{}{}", r.root, r.path);
    let namespaced = if d.namespaced() { "Namespaced" } else { "" };
    let name = match suffix {
        Some(s) => format!("{}{}{s}", r.verb, d.kind),
        None => format!(
            "{}{namespaced}{}{}",
            r.verb,
            d.kind,
            title(subresource(&r.path))
        ),
    };
    let (id, tag) = routes::operation_id_and_tag(&name, &full);
    let mut params: Vec<Param> = Vec::new();
    if full.contains("{namespace}") {
        params.push(parameters::namespace());
    }
    if full.contains("{name}") {
        params.push(parameters::name(d.kind));
    }
    params.extend(parameters::pretty());
    let body = |schema, required| Some(Body { schema, required });
    let (options, body, mut responses): (Vec<Param>, Option<Body>, Vec<Response>) = match r.action {
        "get" => (parameters::get_options(), None, vec![ok(r.sample)]),
        "list" | "deletecollection" => (parameters::list_options(&[]), None, vec![ok(r.sample)]),
        "put" => (
            parameters::write_options(),
            body(r.sample, true),
            vec![ok(r.sample), created(r.sample)],
        ),
        "patch" => (
            parameters::patch_options(),
            body(definitions::PATCH, true),
            vec![ok(r.sample)],
        ),
        "post" => (
            parameters::write_options(),
            body(r.sample, true),
            vec![ok(r.sample), created(r.sample), accepted(r.sample)],
        ),
        _ => (
            parameters::delete_options(),
            body(routes::DELETE_OPTIONS, false),
            vec![ok(r.sample), accepted(r.sample)],
        ),
    };
    params.extend(options);
    responses.sort_by_key(|r| r.code);
    let op = Operation {
        method: r.method,
        id,
        description: description(d.kind, r),
        tag,
        action: Some(r.action),
        gvk: Some(Gvk {
            group: d.group,
            version: d.version,
            kind: d.kind,
        }),
        params,
        body,
        consumes: if r.method == Method::Patch {
            PATCH_TYPES
        } else {
            JSON_YAML
        },
        produces: JSON_YAML,
        responses: with_unauthorized(responses),
    };
    (full, op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::descriptor::{ScaleSpec, Scope, Subresource};

    const SUBRESOURCES: &[Subresource] = &[
        Subresource::STATUS,
        Subresource::scale(ScaleSpec {
            spec_replicas: ".spec.replicas",
            status_replicas: ".status.replicas",
            label_selector: None,
        }),
    ];

    fn foo(scope: Scope) -> ResourceDescriptor {
        ResourceDescriptor {
            group: "foo-group",
            version: "foo-version",
            kind: "Foo",
            list_kind: "FooList",
            plural: "foos",
            scope,
            subresources: SUBRESOURCES,
            ..kas_registry::descriptor::fixtures::LEASE
        }
    }

    /// Upstream's `TestCRDRouteParameterBuilder`: the paths, their namespace and name
    /// parameters, their actions, and what they consume.
    #[test]
    fn route_parameters() {
        let p = "/apis/foo-group/foo-version";
        let namespaced = [
            (format!("{p}/foos"), false, false, vec!["list"]),
            (
                format!("{p}/namespaces/{{namespace}}/foos"),
                true,
                false,
                vec!["deletecollection", "list", "post"],
            ),
            (
                format!("{p}/namespaces/{{namespace}}/foos/{{name}}"),
                true,
                true,
                vec!["delete", "get", "patch", "put"],
            ),
            (
                format!("{p}/namespaces/{{namespace}}/foos/{{name}}/scale"),
                true,
                true,
                vec!["get", "patch", "put"],
            ),
            (
                format!("{p}/namespaces/{{namespace}}/foos/{{name}}/status"),
                true,
                true,
                vec!["get", "patch", "put"],
            ),
        ];
        let cluster = [
            (
                format!("{p}/foos"),
                false,
                false,
                vec!["deletecollection", "list", "post"],
            ),
            (
                format!("{p}/foos/{{name}}"),
                false,
                true,
                vec!["delete", "get", "patch", "put"],
            ),
            (
                format!("{p}/foos/{{name}}/scale"),
                false,
                true,
                vec!["get", "patch", "put"],
            ),
            (
                format!("{p}/foos/{{name}}/status"),
                false,
                true,
                vec!["get", "patch", "put"],
            ),
        ];
        for (scope, want) in [
            (Scope::Namespaced, namespaced.to_vec()),
            (Scope::Cluster, cluster.to_vec()),
        ] {
            let d = foo(scope);
            let items = routes::path_items(routes(&d, p, "x.Foo", "x.FooList"));
            assert_eq!(items.len(), want.len(), "{scope:?}");
            for (path, namespace, name, actions) in want {
                let item = items.iter().find(|i| i.path == path).expect("a path");
                let has = |n: &str| item.params.iter().any(|q| q.name == n);
                assert_eq!(has("namespace"), namespace, "{path}");
                assert_eq!(has("name"), name, "{path}");
                let mut got: Vec<&str> = item.operations.iter().filter_map(|o| o.action).collect();
                got.sort_unstable();
                assert_eq!(got, actions, "{path}");
                for op in &item.operations {
                    let want: &[&str] = if op.action == Some("patch") {
                        PATCH_TYPES
                    } else {
                        JSON_YAML
                    };
                    assert_eq!(op.consumes, want, "{path}");
                }
            }
        }
    }

    #[test]
    fn operations_are_upstreams() {
        let d = foo(Scope::Namespaced);
        let ops = routes(&d, "/apis/foo-group/foo-version", "x.Foo", "x.FooList");
        let find = |path_end: &str, method| {
            ops.iter()
                .find(|(p, o)| p.ends_with(path_end) && o.method == method)
                .map(|(_, o)| o)
                .expect("an operation")
        };
        let list_all = find("version/foos", Method::Get);
        assert_eq!(list_all.id, "listFooGroupFooVersionFooForAllNamespaces");
        assert_eq!(list_all.description, "list objects of kind Foo");
        let dc = find("{namespace}/foos", Method::Delete);
        assert_eq!(dc.id, "deleteFooGroupFooVersionCollectionNamespacedFoo");
        assert_eq!(dc.description, "delete collection of Foo");
        assert!(dc.body.is_none());
        assert!(dc.params.iter().any(|p| p.name == "labelSelector"));
        assert!(!dc.params.iter().any(|p| p.name == "propagationPolicy"));
        let create = find("{namespace}/foos", Method::Post);
        assert_eq!(create.description, "create a Foo");
        let codes: Vec<u16> = create.responses.iter().map(|r| r.code).collect();
        assert_eq!(codes, [200, 201, 202, 401]);
        let get = find("{name}", Method::Get);
        assert_eq!(get.description, "read the specified Foo");
        assert!(get.params.iter().any(|p| p.name == "resourceVersion"));
        let delete = find("{name}", Method::Delete);
        assert_eq!(delete.description, "delete a Foo");
        assert_eq!(delete.body.as_ref().map(|b| b.required), Some(false));
        let patch = find("{name}/status", Method::Patch);
        assert_eq!(patch.id, "patchFooGroupFooVersionNamespacedFooStatus");
        assert_eq!(
            patch.description,
            "partially update status of the specified Foo"
        );
        let codes: Vec<u16> = patch.responses.iter().map(|r| r.code).collect();
        assert_eq!(codes, [200, 401]);
        let scale = find("{name}/scale", Method::Put);
        assert_eq!(scale.description, "replace scale of the specified Foo");
        assert_eq!(scale.gvk.map(|g| g.kind), Some("Foo"));
        assert_eq!(
            scale.responses[0].schema,
            Some("io.k8s.api.autoscaling.v1.Scale")
        );
        let name = scale.params.iter().find(|p| p.name == "name");
        assert_eq!(name, Some(&parameters::name("Foo")));
        assert_eq!(article("Ingress"), " an ");
    }
}
