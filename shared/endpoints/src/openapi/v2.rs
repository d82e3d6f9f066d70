//! The Swagger 2.0 document served at `/openapi/v2`: every path of the role in one
//! document, with upstream's shared parameters (`#/parameters/<name>-<hash>`).

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::openapi::definitions::{Catalog, Dialect, collect_references};
use crate::openapi::parameters::Param;
use crate::openapi::routes::{Operation, PathItem};

/// Upstream's API servers all authenticate bearer tokens; the document says so.
pub fn security_scheme() -> Value {
    json!({
        "BearerToken": {
            "description": "Bearer Token authentication",
            "type": "apiKey",
            "name": "authorization",
            "in": "header",
        }
    })
}

pub fn document(items: &[PathItem], catalog: &Catalog, version: &str) -> Value {
    let paths: Map<String, Value> = items
        .iter()
        .map(|i| (i.path.clone(), i.to_json(parameter, operation)))
        .collect();
    let paths = Value::Object(paths);
    let mut roots = Vec::new();
    collect_references(&paths, Dialect::V2, &mut roots);
    let mut doc = json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": version},
        "paths": paths,
        "definitions": catalog.definitions(roots, Dialect::V2),
        "securityDefinitions": security_scheme(),
        "security": [{"BearerToken": []}],
    });
    share_parameters(&mut doc);
    doc
}

fn parameter(p: &Param) -> Value {
    let mut v = json!({
        "uniqueItems": true,
        "type": p.type_,
        "description": p.description,
        "name": p.name,
        "in": p.location.as_str(),
    });
    if p.required {
        v["required"] = json!(true);
    }
    v
}

fn operation(op: &Operation) -> Value {
    let mut params: Vec<Value> = op.params.iter().map(parameter).collect();
    if let Some(body) = &op.body {
        let mut b = json!({
            "name": "body",
            "in": "body",
            "schema": Dialect::V2.ref_schema(body.schema),
        });
        if body.required {
            b["required"] = json!(true);
        }
        params.push(b);
    }
    params.sort_by(|a, b| {
        let key = |v: &Value| {
            (
                v["name"].as_str().map(str::to_owned),
                v["in"].as_str().map(str::to_owned),
            )
        };
        key(a).cmp(&key(b))
    });
    let responses: Map<String, Value> = op
        .responses
        .iter()
        .map(|r| {
            let mut v = json!({"description": r.description});
            if let Some(schema) = r.schema {
                v["schema"] = Dialect::V2.ref_schema(schema);
            }
            (r.code.to_string(), v)
        })
        .collect();
    let mut v = json!({
        "description": op.description,
        "consumes": op.consumes,
        "produces": op.produces,
        "schemes": ["https"],
        "tags": [op.tag],
        "operationId": op.id,
        "responses": responses,
    });
    if !params.is_empty() {
        v["parameters"] = Value::Array(params);
    }
    if let Some(action) = op.action {
        v["x-kubernetes-action"] = json!(action);
    }
    if let Some(gvk) = op.gvk {
        v["x-kubernetes-group-version-kind"] =
            json!({"group": gvk.group, "version": gvk.version, "kind": gvk.kind});
    }
    v
}

const METHODS: &[&str] = &["get", "put", "post", "delete", "options", "head", "patch"];

/// Upstream keeps some parameters inline: `name` (its description names the kind),
/// `fieldValidation` and `dryRun` (kubectl looks them up inline to detect server-side
/// support), and bodies that are the kind itself.
fn shareable(p: &Value) -> bool {
    let name = p["name"].as_str().unwrap_or("");
    let location = p["in"].as_str().unwrap_or("");
    match (location, name) {
        ("query" | "path", "name") => false,
        ("query", "fieldValidation" | "dryRun") => false,
        ("body", _) => p["schema"]["$ref"]
            .as_str()
            .is_some_and(|r| r.starts_with("#/definitions/io.k8s.apimachinery")),
        _ => p.get("$ref").is_none(),
    }
}

/// The parameter lists of a path: its own and each operation's.
fn parameter_lists(path: &mut Value) -> Vec<&mut Vec<Value>> {
    let Some(item) = path.as_object_mut() else {
        return Vec::new();
    };
    item.iter_mut()
        .filter(|(k, _)| k.as_str() == "parameters" || METHODS.contains(&k.as_str()))
        .filter_map(|(k, v)| {
            let list = if k == "parameters" {
                v
            } else {
                v.get_mut("parameters")?
            };
            list.as_array_mut()
        })
        .collect()
}

/// Upstream's parameter de-duplication: each shareable parameter moves to `parameters`
/// under `<name>-<hash of its JSON>` and every use becomes a reference.
fn share_parameters(doc: &mut Value) {
    let mut shared = Map::new();
    let mut names: std::collections::BTreeMap<String, String> = Default::default();
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for path in paths.values_mut() {
        for list in parameter_lists(path) {
            for p in list.iter_mut() {
                if !shareable(p) {
                    continue;
                }
                let key = serde_json::to_string(p).unwrap_or_default();
                let name = names
                    .entry(key.clone())
                    .or_insert_with(|| unique_name(p, &key, &shared))
                    .clone();
                shared.entry(name.clone()).or_insert_with(|| p.clone());
                *p = json!({ "$ref": format!("#/parameters/{name}") });
            }
        }
    }
    doc["parameters"] = Value::Object(shared);
}

fn unique_name(p: &Value, key: &str, taken: &Map<String, Value>) -> String {
    let base = p["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .unwrap_or("param");
    let mut name = format!("{base}-{}", hash(key));
    let mut i = 0;
    while taken.contains_key(&name) {
        i += 1;
        name = format!("{base}-{i}");
    }
    name
}

/// Upstream's suffix: the first 6 bytes of FNV-1 (64-bit) of the JSON, URL-safe base64.
fn hash(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        h ^= u64::from(b);
    }
    base64::engine::general_purpose::URL_SAFE.encode(&h.to_be_bytes()[..6])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_hash_is_eight_url_safe_characters() {
        // FNV-1 of the empty input is its offset basis.
        assert_eq!(
            hash(""),
            base64::engine::general_purpose::URL_SAFE.encode([0xcb, 0xf2, 0x9c, 0xe4, 0x84, 0x22])
        );
        assert_eq!(hash("{\"name\":\"pretty\"}").len(), 8);
    }

    #[test]
    fn field_validation_and_kind_bodies_stay_inline() {
        let mut doc = json!({"paths": {"/x": {
            "parameters": [{"name": "pretty", "in": "query", "type": "string"}],
            "patch": {"parameters": [
                {"name": "fieldValidation", "in": "query", "type": "string"},
                {"name": "body", "in": "body", "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}},
            ]},
            "put": {"parameters": [
                {"name": "body", "in": "body", "schema": {"$ref": "#/definitions/io.k8s.api.core.v1.ConfigMap"}},
                {"name": "pretty", "in": "query", "type": "string"},
            ]},
        }}});
        share_parameters(&mut doc);
        let x = &doc["paths"]["/x"];
        let pretty = x["parameters"][0]["$ref"].as_str().unwrap();
        assert!(pretty.starts_with("#/parameters/pretty-"));
        assert_eq!(
            x["put"]["parameters"][1]["$ref"], pretty,
            "one name per distinct parameter"
        );
        assert_eq!(x["patch"]["parameters"][0]["name"], "fieldValidation");
        assert!(
            x["patch"]["parameters"][1]["$ref"]
                .as_str()
                .unwrap()
                .starts_with("#/parameters/body-")
        );
        assert_eq!(x["put"]["parameters"][0]["name"], "body");
        assert_eq!(doc["parameters"].as_object().unwrap().len(), 2);
    }
}
