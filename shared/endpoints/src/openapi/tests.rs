use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use super::*;
use kas_registry::descriptor::{Scope, Verb};
use kas_registry::strategy::OpenApiDialect;

const fn descriptor(
    group: &'static str,
    (kind, list_kind, plural): (&'static str, &'static str, &'static str),
    scope: Scope,
    (schema, list_schema): (&'static Message, &'static Message),
) -> ResourceDescriptor {
    ResourceDescriptor {
        group,
        version: "v1",
        kind,
        list_kind,
        plural,
        singular: plural,
        short_names: &[],
        categories: &[],
        scope,
        verbs: Verb::ALL,
        subresources: &[],
        table_columns: &[],
        table_name_and_age: true,
        storage_resource: plural,
        schema: Some(schema),
        list_schema: Some(list_schema),
    }
}

static CONFIG_MAPS: ResourceDescriptor = descriptor(
    "",
    ("ConfigMap", "ConfigMapList", "configmaps"),
    Scope::Namespaced,
    (
        &kas_api::core::v1::CONFIG_MAP,
        &kas_api::core::v1::CONFIG_MAP_LIST,
    ),
);
static NAMESPACES: ResourceDescriptor = descriptor(
    "",
    ("Namespace", "NamespaceList", "namespaces"),
    Scope::Cluster,
    (
        &kas_api::core::v1::NAMESPACE,
        &kas_api::core::v1::NAMESPACE_LIST,
    ),
);
static LEASES: ResourceDescriptor = descriptor(
    "coordination.k8s.io",
    ("Lease", "LeaseList", "leases"),
    Scope::Namespaced,
    (
        &kas_api::coordination::v1::LEASE,
        &kas_api::coordination::v1::LEASE_LIST,
    ),
);

fn openapi() -> OpenApi {
    OpenApi::new(vec![
        CONFIG_MAPS.clone(),
        NAMESPACES.clone(),
        LEASES.clone(),
    ])
}

fn get(api: &OpenApi, uri: &str, headers: &[(header::HeaderName, &str)]) -> Response {
    let mut req = Request::get(uri);
    for (k, v) in headers {
        req = req.header(k, *v);
    }
    let resp = api
        .serve(&req.body(crate::body::empty()).unwrap())
        .expect("an OpenAPI path");
    let (parts, body) = resp.into_parts();
    let bytes = futures_util::FutureExt::now_or_never(body.collect())
        .expect("a body in memory")
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    Response { parts, bytes }
}

struct Response {
    parts: http::response::Parts,
    bytes: Bytes,
}

impl Response {
    fn header(&self, name: header::HeaderName) -> Option<&str> {
        self.parts.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).expect("JSON")
    }
}

/// What cli-runtime's `supportsQueryParamV3` does: the PATCH operation of the kind must
/// take `fieldValidation` in the query.
fn supports_field_validation(doc: &Value, gvk: Value) -> bool {
    let paths = doc["paths"].as_object().unwrap();
    let patch = paths
        .values()
        .filter_map(|p| p.get("patch"))
        .find(|op| op["x-kubernetes-group-version-kind"] == gvk)
        .expect("a PATCH operation for the kind");
    patch["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
}

#[test]
fn v3_index_lists_every_document_with_its_hash() {
    let api = openapi();
    let root = get(&api, "/openapi/v3", &[]);
    assert_eq!(root.parts.status, StatusCode::OK);
    assert_eq!(
        root.header(header::CONTENT_TYPE),
        Some("text/plain; charset=utf-8")
    );
    assert!(root.header(header::ETAG).is_none());
    let paths = root.json()["paths"].clone();
    let keys: Vec<_> = paths.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        [
            "api",
            "api/v1",
            "apis",
            "apis/coordination.k8s.io",
            "apis/coordination.k8s.io/v1"
        ]
    );
    let url = paths["api/v1"]["serverRelativeURL"].as_str().unwrap();
    let etag = &api.v3().docs["api/v1"].etag;
    assert_eq!(url, format!("/openapi/v3/api/v1?hash={etag}"));
    assert_eq!(etag.len(), 128);
}

#[test]
fn v3_group_version_document_drives_kubectl() {
    let api = openapi();
    let doc = get(
        &api,
        "/openapi/v3/api/v1",
        &[(header::ACCEPT, "application/json")],
    );
    assert_eq!(doc.parts.status, StatusCode::OK);
    assert_eq!(doc.header(header::CONTENT_TYPE), Some("application/json"));
    assert_eq!(
        doc.header(header::ETAG),
        Some(format!("\"{}\"", api.v3().docs["api/v1"].etag).as_str())
    );
    assert_eq!(doc.header(header::CACHE_CONTROL), Some("no-cache, private"));
    let doc = doc.json();
    assert_eq!(doc["openapi"], "3.0.0");
    let cm = json!({"group": "", "kind": "ConfigMap", "version": "v1"});
    assert!(supports_field_validation(&doc, cm.clone()));
    assert!(supports_field_validation(
        &doc,
        json!({"group": "", "kind": "Namespace", "version": "v1"})
    ));
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["io.k8s.api.core.v1.ConfigMap"]["x-kubernetes-group-version-kind"],
        json!([cm])
    );
    // Only what this group version's paths reach.
    assert!(schemas.get("io.k8s.api.coordination.v1.Lease").is_none());
    assert!(
        schemas
            .get("io.k8s.apimachinery.pkg.apis.meta.v1.Patch")
            .is_some()
    );
    let delete_options = &schemas["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"];
    let gvks = delete_options["x-kubernetes-group-version-kind"]
        .as_array()
        .unwrap();
    assert!(gvks.contains(
        &json!({"group": "coordination.k8s.io", "kind": "DeleteOptions", "version": "v1"})
    ));
    assert!(
        gvks.contains(&json!({"group": "meta.k8s.io", "kind": "DeleteOptions", "version": "v1"}))
    );
    let patch = &doc["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"];
    assert_eq!(patch["operationId"], "patchCoreV1NamespacedConfigMap");
    assert_eq!(patch["requestBody"]["required"], true);
    assert!(
        patch["requestBody"]["content"]
            .get("application/strategic-merge-patch+json")
            .is_some()
    );
    let lease = get(&api, "/openapi/v3/apis/coordination.k8s.io/v1", &[]).json();
    let get_lease =
        &lease["paths"]["/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"]["get"];
    assert_eq!(
        get_lease["operationId"],
        "readCoordinationV1NamespacedLease"
    );
    assert_eq!(get_lease["tags"], json!(["coordination_v1"]));
}

#[test]
fn v3_hash_makes_documents_immutable_or_redirects() {
    let api = openapi();
    let etag = api.v3().docs["api/v1"].etag.clone();
    let fresh = get(&api, &format!("/openapi/v3/api/v1?hash={etag}"), &[]);
    assert_eq!(fresh.parts.status, StatusCode::OK);
    assert_eq!(
        fresh.header(header::CACHE_CONTROL),
        Some("public, immutable")
    );
    assert!(fresh.header(header::EXPIRES).unwrap().ends_with(" UTC"));

    let stale = get(&api, "/openapi/v3/api/v1?hash=0123", &[]);
    assert_eq!(stale.parts.status, StatusCode::MOVED_PERMANENTLY);
    assert_eq!(
        stale.header(header::LOCATION),
        Some(format!("/openapi/v3/api/v1?hash={etag}").as_str())
    );
    assert!(stale.bytes.is_empty());

    let quoted = format!("\"{etag}\"");
    let cached = get(
        &api,
        "/openapi/v3/api/v1",
        &[(header::IF_NONE_MATCH, &quoted)],
    );
    assert_eq!(cached.parts.status, StatusCode::NOT_MODIFIED);
    assert!(cached.header(header::CONTENT_TYPE).is_none());
    assert!(cached.header(header::LAST_MODIFIED).is_none());
    assert_eq!(cached.header(header::ETAG), Some(quoted.as_str()));

    let since = fresh.header(header::LAST_MODIFIED).unwrap().to_owned();
    let unchanged = get(
        &api,
        "/openapi/v3/api/v1",
        &[(header::IF_MODIFIED_SINCE, &since)],
    );
    assert_eq!(unchanged.parts.status, StatusCode::NOT_MODIFIED);

    let missing = get(&api, "/openapi/v3/apis/apps/v1", &[]);
    assert_eq!(missing.parts.status, StatusCode::NOT_FOUND);
    assert!(missing.bytes.is_empty());
    let protobuf_only = get(
        &api,
        "/openapi/v3/api/v1",
        &[(
            header::ACCEPT,
            "application/com.github.proto-openapi.spec.v3@v1.0+protobuf",
        )],
    );
    assert_eq!(protobuf_only.parts.status, StatusCode::NOT_ACCEPTABLE);
}

#[test]
fn v2_is_json_or_protobuf_with_one_etag() {
    let api = openapi();
    let json_doc = get(&api, "/openapi/v2", &[]);
    assert_eq!(json_doc.parts.status, StatusCode::OK);
    assert_eq!(
        json_doc.header(header::CONTENT_TYPE),
        Some("application/json")
    );
    assert_eq!(json_doc.header(header::VARY), Some("Accept"));
    let etag = json_doc.header(header::ETAG).unwrap().to_owned();
    let doc = json_doc.json();
    assert_eq!(doc["swagger"], "2.0");
    assert_eq!(doc["info"]["version"], INFO_VERSION);
    let patch = &doc["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"];
    let params = patch["parameters"].as_array().unwrap();
    assert!(
        params
            .iter()
            .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
    );
    assert!(params.iter().any(|p| {
        p["$ref"]
            .as_str()
            .is_some_and(|r| r.starts_with("#/parameters/force-"))
    }));
    assert!(doc["parameters"].as_object().unwrap().len() > 10);
    assert!(
        doc["definitions"]
            .get("io.k8s.api.coordination.v1.Lease")
            .is_some()
    );

    let accept = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
    let proto = get(&api, "/openapi/v2", &[(header::ACCEPT, accept)]);
    assert_eq!(
        proto.header(header::CONTENT_TYPE),
        Some("application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
    );
    assert_eq!(proto.header(header::ETAG), Some(etag.as_str()));
    assert_eq!(&proto.bytes[..5], &[0x0a, 3, b'2', b'.', b'0']);

    let html = get(&api, "/openapi/v2", &[(header::ACCEPT, "text/html")]);
    assert_eq!(html.parts.status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(html.header(header::VARY), Some("Accept"));
    assert!(html.bytes.is_empty());
}

#[test]
fn documents_and_hashes_are_stable() {
    let (a, b) = (openapi(), openapi());
    // Nothing is built before it is asked for.
    assert!(a.v2.get().is_none() && a.v3.get().is_none());
    assert_eq!(a.v2().json.etag, b.v2().json.etag);
    assert_eq!(a.v2().json.bytes, b.v2().json.bytes);
    assert_eq!(a.v2().protobuf, b.v2().protobuf);
    assert_eq!(a.v3().root, b.v3().root);
    for (key, doc) in &a.v3().docs {
        assert_eq!(doc.etag, b.v3().docs[key].etag, "{key}");
    }
    // The hash is of the bytes served.
    assert_eq!(
        Document::new(a.v2().json.bytes.to_vec()).etag,
        a.v2().json.etag
    );
}

#[test]
fn other_paths_are_not_openapi() {
    let api = openapi();
    let req = Request::get("/openapi").body(crate::body::empty()).unwrap();
    assert!(api.serve(&req).is_none());
    let req = Request::get("/api/v1").body(crate::body::empty()).unwrap();
    assert!(api.serve(&req).is_none());
}

/// A resource that writes its own definitions, as a custom resource's strategy does.
struct Publishing;

impl kas_registry::strategy::Strategy for Publishing {
    fn validate(&self, _obj: &Value) -> kas_registry::strategy::FieldErrors {
        Vec::new()
    }

    fn validate_update(&self, _new: &Value, _old: &Value) -> kas_registry::strategy::FieldErrors {
        Vec::new()
    }

    fn openapi_definitions(
        &self,
        dialect: OpenApiDialect,
    ) -> Option<kas_registry::strategy::OpenApiDefinitions> {
        let kind = match dialect {
            OpenApiDialect::V2 => json!({"type": "object", "description": "v2"}),
            OpenApiDialect::V3 => json!({"type": "object", "description": "v3"}),
        };
        Some(kas_registry::strategy::OpenApiDefinitions {
            kind,
            list: json!({"type": "object", "properties": {"metadata": {
                "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}}}),
        })
    }
}

/// Leases stand in for a custom resource: their definitions are the strategy's, their
/// paths upstream's CRD builder's, and their group has no discovery operations; the
/// other resources' documents do not change.
#[test]
fn published_definitions_replace_the_messages() {
    let plain = openapi();
    let published = openapi().publishing([Published {
        resource: ("coordination.k8s.io", "v1", "leases"),
        kind: kas_api::coordination::v1::LEASE.name,
        list: kas_api::coordination::v1::LEASE_LIST.name,
        strategy: std::sync::Arc::new(Publishing),
    }]);
    let v2 = get(&published, "/openapi/v2", &[]).json();
    let defs = &v2["definitions"];
    assert_eq!(
        defs["io.k8s.api.coordination.v1.Lease"],
        json!({"type": "object", "description": "v2"})
    );
    assert!(defs.get("io.k8s.api.coordination.v1.LeaseSpec").is_none());
    assert!(
        defs.get("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")
            .is_some()
    );
    let paths = v2["paths"].as_object().unwrap();
    assert!(
        !paths
            .keys()
            .any(|p| p.starts_with("/apis/coordination.k8s.io/v1/watch"))
    );
    assert!(!paths.contains_key("/apis/coordination.k8s.io/v1/"));
    assert!(!paths.contains_key("/apis/coordination.k8s.io/"));
    let get_lease =
        &paths["/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"]["get"];
    assert_eq!(get_lease["description"], "read the specified Lease");

    let root = get(&published, "/openapi/v3", &[]).json();
    assert!(root["paths"].get("apis/coordination.k8s.io").is_none());
    let v3 = get(&published, "/openapi/v3/apis/coordination.k8s.io/v1", &[]).json();
    assert_eq!(
        v3["components"]["schemas"]["io.k8s.api.coordination.v1.Lease"]["description"],
        "v3"
    );
    assert_eq!(
        v3["info"],
        json!({"title": "Kubernetes CRD Swagger", "version": "v0.1.0"})
    );
    assert!(v3["components"].get("securitySchemes").is_none());
    for doc in ["/openapi/v3/api/v1", "/openapi/v3/apis"] {
        assert_eq!(
            get(&published, doc, &[]).bytes,
            get(&plain, doc, &[]).bytes,
            "{doc}"
        );
    }
}
