//! The OpenAPI 3.0 documents: one per upstream web service (a group version's resources,
//! or one discovery document) at `/openapi/v3/<api/v1 | apis/group/version | ...>`, and
//! the root index at `/openapi/v3` pointing at each with the hash of its bytes.

use serde_json::{Map, Value, json};

use crate::openapi::definitions::{Catalog, Dialect, collect_references};
use crate::openapi::parameters::Param;
use crate::openapi::routes::{Operation, PathItem};

pub fn document(items: &[PathItem], catalog: &Catalog, version: &str) -> Value {
    let paths: Map<String, Value> = items
        .iter()
        .map(|i| (i.path.clone(), i.to_json(parameter, operation)))
        .collect();
    let paths = Value::Object(paths);
    let mut roots = Vec::new();
    collect_references(&paths, Dialect::V3, &mut roots);
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": version},
        "paths": paths,
        "components": {
            "schemas": catalog.definitions(roots, Dialect::V3),
            "securitySchemes": super::v2::security_scheme(),
        },
    })
}

/// The document of a group version of custom resources, as upstream's CRD builder and
/// its merge write it: the builder's info, and no security schemes.
pub fn crd_document(items: &[PathItem], catalog: &Catalog) -> Value {
    let mut doc = document(items, catalog, "");
    doc["info"] = json!({"title": "Kubernetes CRD Swagger", "version": "v0.1.0"});
    if let Some(components) = doc["components"].as_object_mut() {
        components.remove("securitySchemes");
    }
    doc
}

/// `/openapi/v3`: each document's path, with its hash so that clients can cache it for
/// good (upstream's `serverRelativeURL`).
pub fn root<'a>(documents: impl Iterator<Item = (&'a str, &'a str)>) -> Value {
    let paths: Map<String, Value> = documents
        .map(|(key, etag)| {
            let url = format!("/openapi/v3/{key}?hash={etag}");
            (key.to_owned(), json!({ "serverRelativeURL": url }))
        })
        .collect();
    json!({ "paths": paths })
}

fn parameter(p: &Param) -> Value {
    let mut v = json!({
        "name": p.name,
        "in": p.location.as_str(),
        "description": p.description,
        "schema": {"type": p.type_, "uniqueItems": true},
    });
    if p.required {
        v["required"] = json!(true);
    }
    v
}

/// The same schema under each media type.
fn content(types: &[&str], schema: &str) -> Value {
    let by_type: Map<String, Value> = types
        .iter()
        .map(|t| {
            (
                (*t).to_owned(),
                json!({"schema": Dialect::V3.ref_schema(schema)}),
            )
        })
        .collect();
    Value::Object(by_type)
}

fn operation(op: &Operation) -> Value {
    let responses: Map<String, Value> = op
        .responses
        .iter()
        .map(|r| {
            let mut v = json!({"description": r.description});
            if let Some(schema) = r.schema {
                v["content"] = content(op.produces, schema);
            }
            (r.code.to_string(), v)
        })
        .collect();
    let mut v = json!({
        "description": op.description,
        "operationId": op.id,
        "tags": [op.tag],
        "responses": responses,
    });
    if !op.params.is_empty() {
        v["parameters"] = op.params.iter().map(parameter).collect();
    }
    if let Some(body) = &op.body {
        let mut b = json!({ "content": content(op.consumes, body.schema) });
        if body.required {
            b["required"] = json!(true);
        }
        v["requestBody"] = b;
    }
    if let Some(action) = op.action {
        v["x-kubernetes-action"] = json!(action);
    }
    if let Some(gvk) = op.gvk {
        v["x-kubernetes-group-version-kind"] =
            json!({"group": gvk.group, "kind": gvk.kind, "version": gvk.version});
    }
    v
}
