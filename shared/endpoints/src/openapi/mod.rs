//! The OpenAPI documents of a role's resources, after upstream's `/openapi/v2` (Swagger
//! 2.0, JSON or gnostic protobuf) and `/openapi/v3` (OpenAPI 3.0: an index and one
//! document per group version and per discovery path), generated from data: the
//! descriptors give the paths and operations, their schema messages the definitions, but
//! for resources that publish their own (`Strategy::openapi_definitions`: custom
//! resources, whose definitions are their CRD's schema as upstream's CRD builder writes
//! it).
//!
//! Built once, at the first request for a document (v2 and v3 apart), and kept as bytes
//! with their hashes; later requests only pick a document and answer conditional requests
//! (`handler.rs`). A role no client asks (most test suites' controllers never do) neither
//! builds nor holds the several MiB they take.
//!
//! kubectl reads these to decide on server-side field validation: it looks for a
//! `fieldValidation` query parameter on the PATCH operation whose
//! `x-kubernetes-group-version-kind` is the object's kind, in the v3 document of its group
//! version (and in `/openapi/v2` only when v3 fails). `kubectl explain` renders the v3
//! definitions; `kubectl apply` finds patch strategies in them.

mod crd;
mod definitions;
mod gnostic;
pub(crate) mod handler;
mod installer;
mod parameters;
mod routes;
mod v2;
mod v3;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use kas_api::Message;

use definitions::{Catalog, Gvk};
pub use handler::{Document, serve_v2, serve_v3_root};
use kas_registry::descriptor::ResourceDescriptor;
use kas_registry::strategy::{OpenApiDialect, Strategy};
use routes::PathItem;

/// `info.version`: upstream writes its emulation version, major and minor only.
const INFO_VERSION: &str = "1.33";

/// The documents of one role, each set built on first use.
pub struct OpenApi {
    /// The role's descriptors, each with the schemas its documents describe (a custom
    /// resource's come from its strategy; see `Store::openapi_descriptor`).
    resources: Vec<ResourceDescriptor>,
    /// The resources that write their own definitions, asked when a document is built.
    published: Vec<Published>,
    v2: std::sync::OnceLock<V2>,
    v3: std::sync::OnceLock<V3>,
    /// When the role started (the documents' `Last-Modified`).
    built: SystemTime,
}

/// A resource whose kind and list definitions (named by its descriptor's schemas) its
/// strategy writes.
pub struct Published {
    /// The resource's group, version and plural.
    pub resource: (&'static str, &'static str, &'static str),
    pub kind: &'static str,
    pub list: &'static str,
    pub strategy: Arc<dyn Strategy>,
}

impl Published {
    fn describes(&self, d: &ResourceDescriptor) -> bool {
        self.resource == (d.group, d.version, d.plural)
    }

    fn add_to(&self, catalog: &mut Catalog, dialect: definitions::Dialect) {
        let d = match dialect {
            definitions::Dialect::V2 => OpenApiDialect::V2,
            definitions::Dialect::V3 => OpenApiDialect::V3,
        };
        if let Some(defs) = self.strategy.openapi_definitions(d) {
            catalog.publish(self.kind, defs.kind);
            catalog.publish(self.list, defs.list);
        }
    }
}

/// `/openapi/v2`: the JSON, and its protobuf form, which shares the JSON's ETag as
/// upstream's does. The protobuf form (2.7 MB for core's document) is made on its first
/// request: clients of 1.33 read v3, and most roles never serve it.
pub struct V2 {
    json: Document,
    protobuf: std::sync::OnceLock<Bytes>,
}

impl V2 {
    /// The JSON document and its hash.
    pub fn json(&self) -> &Document {
        &self.json
    }

    /// The gnostic protobuf form of the document.
    pub fn protobuf(&self) -> Bytes {
        self.protobuf
            .get_or_init(|| {
                let doc: serde_json::Value =
                    serde_json::from_slice(&self.json.bytes).unwrap_or_default();
                kas_storage::exact(gnostic::encode(&doc))
            })
            .clone()
    }

    pub fn new(doc: &serde_json::Value) -> V2 {
        V2 {
            protobuf: std::sync::OnceLock::new(),
            json: Document::new(to_vec(doc)),
        }
    }
}

/// A delegate's OpenAPI documents, merged into this role's on first use (upstream's
/// aggregator merges its delegates' specs): `/openapi/v2` is the union of paths and
/// definitions, the v3 index the union of documents.
pub(crate) struct Delegated {
    /// The delegate's v2 document as JSON, read once when first merged.
    v2: Bytes,
    root: serde_json::Value,
    merged_v2: std::sync::OnceLock<V2>,
    merged_root: std::sync::OnceLock<Bytes>,
}

impl Delegated {
    pub(crate) fn new(v2: Bytes, root: serde_json::Value) -> Delegated {
        Delegated {
            v2,
            root,
            merged_v2: Default::default(),
            merged_root: Default::default(),
        }
    }

    fn v2(&self, own: &OpenApi) -> &V2 {
        self.merged_v2.get_or_init(|| {
            let mut doc: serde_json::Value =
                serde_json::from_slice(&own.v2().json.bytes).unwrap_or_default();
            let theirs_v2: serde_json::Value = serde_json::from_slice(&self.v2).unwrap_or_default();
            for section in ["paths", "definitions"] {
                let theirs = theirs_v2.get(section).and_then(|v| v.as_object());
                if let (Some(ours), Some(theirs)) =
                    (doc.get_mut(section).and_then(|v| v.as_object_mut()), theirs)
                {
                    for (k, v) in theirs {
                        ours.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
            V2::new(&doc)
        })
    }

    fn root(&self, own: &OpenApi) -> Bytes {
        self.merged_root
            .get_or_init(|| {
                let mut root: serde_json::Value =
                    serde_json::from_slice(&own.v3().root).unwrap_or_default();
                if let (Some(ours), Some(theirs)) = (
                    root.get_mut("paths").and_then(|v| v.as_object_mut()),
                    self.root.get("paths").and_then(|v| v.as_object()),
                ) {
                    for (k, v) in theirs {
                        ours.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                to_vec(&root).into()
            })
            .clone()
    }
}

/// `/openapi/v3`: the index, and the documents by path below `/openapi/v3/` (`api/v1`,
/// `apis/coordination.k8s.io/v1`, `api`, ...).
struct V3 {
    root: Bytes,
    docs: BTreeMap<String, Document>,
}

impl OpenApi {
    pub fn new(resources: Vec<ResourceDescriptor>) -> OpenApi {
        OpenApi {
            resources,
            published: Vec::new(),
            v2: Default::default(),
            v3: Default::default(),
            built: SystemTime::now(),
        }
    }

    /// The `/openapi/v2` document (built on first use).
    pub fn v2_document(&self) -> serde_json::Value {
        serde_json::from_slice(&self.v2().json.bytes).unwrap_or_default()
    }

    /// The `/openapi/v3` index (built on first use).
    pub fn v3_root(&self) -> serde_json::Value {
        serde_json::from_slice(&self.v3().root).unwrap_or_default()
    }

    /// Whether `/openapi/v3/<key>` is one of this role's documents.
    pub fn has_v3(&self, key: &str) -> bool {
        self.v3().docs.contains_key(key)
    }

    /// Adds resources that write their own definitions.
    pub fn publishing(mut self, published: impl IntoIterator<Item = Published>) -> OpenApi {
        self.published.extend(published);
        self
    }

    fn catalog(&self, dialect: definitions::Dialect) -> Catalog {
        let resources: Vec<&ResourceDescriptor> = self.resources.iter().collect();
        let mut catalog = catalog(&resources);
        for p in &self.published {
            p.add_to(&mut catalog, dialect);
        }
        catalog
    }

    fn v2(&self) -> &V2 {
        self.v2.get_or_init(|| {
            let resources: Vec<&ResourceDescriptor> = self.resources.iter().collect();
            let catalog = self.catalog(definitions::Dialect::V2);
            let services = web_services(&resources, &self.published);
            let mut all: Vec<PathItem> = services.values().flatten().cloned().collect();
            all.sort_by(|a, b| a.path.cmp(&b.path));
            V2::new(&v2::document(&all, &catalog, INFO_VERSION))
        })
    }

    /// The documents (`apis/<group>/<version>`) of group versions of custom resources
    /// only, which upstream's CRD builder writes.
    fn custom_group_versions(&self) -> std::collections::BTreeSet<String> {
        let mut by_gv: BTreeMap<(&str, &str), Vec<&ResourceDescriptor>> = BTreeMap::new();
        for d in &self.resources {
            by_gv.entry((d.group, d.version)).or_default().push(d);
        }
        by_gv
            .into_iter()
            .filter(|(_, list)| all_published(list.iter().copied(), &self.published))
            .map(|((group, version), _)| {
                crate::installer::actions::prefix(group, version)[1..].to_owned()
            })
            .collect()
    }

    fn v3(&self) -> &V3 {
        self.v3.get_or_init(|| {
            let resources: Vec<&ResourceDescriptor> = self.resources.iter().collect();
            let catalog = self.catalog(definitions::Dialect::V3);
            let custom = self.custom_group_versions();
            let docs: BTreeMap<String, Document> = web_services(&resources, &self.published)
                .iter()
                .map(|(key, items)| {
                    let doc = if custom.contains(key) {
                        v3::crd_document(items, &catalog)
                    } else {
                        v3::document(items, &catalog, INFO_VERSION)
                    };
                    (key.clone(), Document::new(to_vec(&doc)))
                })
                .collect();
            let root = v3::root(docs.iter().map(|(k, d)| (k.as_str(), d.etag.as_str())));
            V3 {
                root: to_vec(&root).into(),
                docs,
            }
        })
    }
}

fn to_vec(value: &serde_json::Value) -> Vec<u8> {
    // Serializing a Value cannot fail: its keys are strings.
    serde_json::to_vec(value).unwrap_or_default()
}

/// The paths of each upstream web service, by its root without the leading `/`: the
/// group versions' resources, and the discovery documents of `/api`, `/apis` and each
/// group.
fn web_services(
    resources: &[&ResourceDescriptor],
    published: &[Published],
) -> BTreeMap<String, Vec<PathItem>> {
    let mut by_gv: BTreeMap<(&str, &str), Vec<&ResourceDescriptor>> = BTreeMap::new();
    for d in resources {
        by_gv.entry((d.group, d.version)).or_default().push(d);
    }
    let mut services = BTreeMap::new();
    let discovery = |path: String, operation, description, schema| {
        routes::path_items(vec![routes::discovery(
            &path,
            operation,
            description,
            schema,
        )])
    };
    for ((group, version), list) in &by_gv {
        let key = crate::installer::actions::prefix(group, version)[1..].to_owned();
        services.insert(
            key,
            installer::group_version(group, version, list, published),
        );
        let custom_group = all_published(
            resources.iter().copied().filter(|d| d.group == *group),
            published,
        );
        if !group.is_empty() && !custom_group && !services.contains_key(&format!("apis/{group}")) {
            let items = discovery(
                format!("/apis/{group}/"),
                "getAPIGroup",
                "Describes the API group: its versions and the preferred one.",
                kas_api::meta::v1::API_GROUP.name,
            );
            services.insert(format!("apis/{group}"), items);
        }
    }
    if by_gv.keys().any(|(group, _)| group.is_empty()) {
        let items = discovery(
            "/api/".to_owned(),
            "getAPIVersions",
            "Lists the versions of the core API.",
            kas_api::meta::v1::API_VERSIONS.name,
        );
        services.insert("api".to_owned(), items);
    }
    let items = discovery(
        "/apis/".to_owned(),
        "getAPIVersions",
        "Lists the API groups and their versions.",
        kas_api::meta::v1::API_GROUP_LIST.name,
    );
    services.insert("apis".to_owned(), items);
    services
}

/// Whether every resource of `resources` publishes its own definitions: custom resources,
/// whose groups upstream describes without discovery operations.
fn all_published<'a>(
    mut resources: impl Iterator<Item = &'a ResourceDescriptor>,
    published: &[Published],
) -> bool {
    resources.all(|d| published.iter().any(|p| p.describes(d)))
}

/// Every message the documents can name, and the kinds each is registered as: the
/// descriptors' own, and upstream's registrations (kas-api's scheme) in the group versions
/// this role knows.
fn catalog(resources: &[&ResourceDescriptor]) -> Catalog {
    use kas_api::meta::v1 as meta;
    let mut group_versions: Vec<(&'static str, &'static str)> =
        vec![("", "v1"), ("meta.k8s.io", "v1")];
    let mut messages: Vec<&'static Message> = vec![
        &meta::STATUS,
        &meta::DELETE_OPTIONS,
        &meta::WATCH_EVENT,
        &meta::API_VERSIONS,
        &meta::API_GROUP_LIST,
        &meta::API_GROUP,
        &meta::API_RESOURCE_LIST,
    ];
    let mut catalog = Catalog::default();
    for d in resources {
        group_versions.push((d.group, d.version));
        let kinds = [(d.schema, d.kind), (d.list_schema, d.list_kind)];
        for (message, kind) in kinds {
            if let Some(m) = message {
                let (group, version) = (d.group, d.version);
                catalog.register(
                    m,
                    Gvk {
                        group,
                        version,
                        kind,
                    },
                );
            }
        }
        for k in d.subresources.iter().filter_map(|s| s.kind.as_ref()) {
            group_versions.push((k.group, k.version));
            messages.push(k.schema);
        }
    }
    for m in messages {
        catalog.add(m);
        for &(group, version) in &group_versions {
            let kind = m.short_name();
            let registered = kas_api::kind(group, version, kind);
            if registered.is_some_and(|r| std::ptr::eq(r, m)) {
                catalog.register(
                    m,
                    Gvk {
                        group,
                        version,
                        kind,
                    },
                );
            }
        }
    }
    catalog
}

#[cfg(test)]
mod tests;
