//! OpenAPI: `/openapi/v2` (a Swagger 2.0 document with paths and definitions) and
//! `/openapi/v3` (the index) with `/openapi/v3/apis/<g>/<v>`, shaped as upstream's
//! generated ones so that `kubectl explain flunders` works once the aggregator merged them:
//! each kind's definition carries `x-kubernetes-group-version-kind`.

use serde_json::{Map, Value, json};

use super::api::{GroupVersion, RESOURCES, Resource};

const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";

/// The Swagger 2.0 document.
pub fn v2(gv: &GroupVersion) -> Value {
    json!({
        "swagger": "2.0",
        "info": {"title": "kas-test-apiserver", "version": gv.version},
        "paths": paths(gv, false),
        "definitions": definitions(gv),
    })
}

/// The OpenAPI 3.0 document of the group-version.
pub fn v3(gv: &GroupVersion) -> Value {
    let mut schemas = Value::Object(definitions(gv));
    rewrite_refs(&mut schemas);
    json!({
        "openapi": "3.0.0",
        "info": {"title": "kas-test-apiserver", "version": gv.version},
        "paths": paths(gv, true),
        "components": {"schemas": schemas},
    })
}

/// The path of the group-version in the v3 index (and under `/openapi/v3/`).
pub fn v3_path(gv: &GroupVersion) -> String {
    format!("apis/{}/{}", gv.group, gv.version)
}

/// The v3 index, naming the group-version's document with its hash.
pub fn v3_index(gv: &GroupVersion, hash: &str) -> Value {
    let path = v3_path(gv);
    json!({"paths": {path.clone(): {"serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}")}}})
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/definitions/{name}")})
}

fn gvk_extension(gv: &GroupVersion, kind: &str) -> Value {
    json!([{"group": gv.group, "kind": kind, "version": gv.version}])
}

fn type_meta(properties: &mut Map<String, Value>) {
    properties.insert(
        "apiVersion".into(),
        string("APIVersion defines the versioned schema of this representation of an object."),
    );
    properties.insert(
        "kind".into(),
        string("Kind is a string value representing the REST resource this object represents."),
    );
}

fn kind_definition(gv: &GroupVersion, r: &Resource) -> Value {
    let mut properties = Map::new();
    type_meta(&mut properties);
    properties.insert("metadata".into(), reference(&format!("{META}.ObjectMeta")));
    if r.namespaced {
        properties.insert(
            "spec".into(),
            reference(&gv.definition(&format!("{}Spec", r.kind))),
        );
        properties.insert(
            "status".into(),
            reference(&gv.definition(&format!("{}Status", r.kind))),
        );
    } else {
        properties.insert(
            "disallowedFlunders".into(),
            json!({"type": "array", "items": {"type": "string", "default": ""},
                   "description": "Names of flunders that may not refer to this fischer."}),
        );
    }
    json!({
        "description": format!("{} is a test kind of kas-test-apiserver.", r.kind),
        "type": "object",
        "properties": properties,
        "x-kubernetes-group-version-kind": gvk_extension(gv, r.kind),
    })
}

fn list_definition(gv: &GroupVersion, r: &Resource) -> Value {
    let mut properties = Map::new();
    type_meta(&mut properties);
    properties.insert(
        "items".into(),
        json!({"type": "array", "items": reference(&gv.definition(r.kind))}),
    );
    properties.insert("metadata".into(), reference(&format!("{META}.ListMeta")));
    let kind = format!("{}List", r.kind);
    json!({
        "description": format!("{kind} is a list of {}.", r.kind),
        "type": "object",
        "required": ["items"],
        "properties": properties,
        "x-kubernetes-group-version-kind": gvk_extension(gv, &kind),
    })
}

fn meta_definitions(defs: &mut Map<String, Value>) {
    let labels = json!({"type": "object", "additionalProperties": {"type": "string", "default": ""},
        "description": "Map of string keys and values that can be used to organize and categorize objects."});
    let annotations = json!({"type": "object", "additionalProperties": {"type": "string", "default": ""},
        "description": "Annotations is an unstructured key value map stored with a resource."});
    defs.insert(format!("{META}.ObjectMeta"), json!({
        "description": "ObjectMeta is metadata that all persisted resources must have.",
        "type": "object",
        "properties": {
            "name": string("Name must be unique within a namespace."),
            "generateName": string("An optional prefix used by the server to generate a unique name."),
            "namespace": string("Namespace defines the space within which each name must be unique."),
            "uid": string("UID is the unique in time and space value for this object."),
            "resourceVersion": string("An opaque value that represents the internal version of this object."),
            "creationTimestamp": {"type": "string", "format": "date-time",
                "description": "CreationTimestamp is a timestamp representing the server time when this object was created."},
            "labels": labels,
            "annotations": annotations,
        },
    }));
    defs.insert(format!("{META}.ListMeta"), json!({
        "description": "ListMeta describes metadata that synthetic resources must have.",
        "type": "object",
        "properties": {
            "resourceVersion": string("String that identifies the server's internal version of this object."),
            "continue": string("continue may be set if the user set a limit on the number of items returned."),
        },
    }));
    defs.insert(format!("{META}.Status"), json!({
        "description": "Status is a return value for calls that don't return other objects.",
        "type": "object",
        "properties": {
            "apiVersion": string("APIVersion defines the versioned schema of this representation of an object."),
            "kind": string("Kind is a string value representing the REST resource this object represents."),
            "status": string("Status of the operation. One of: \"Success\" or \"Failure\"."),
            "message": string("A human-readable description of the status of this operation."),
            "reason": string("A machine-readable description of why this operation is in the \"Failure\" status."),
            "code": {"type": "integer", "format": "int32", "description": "Suggested HTTP return code for this status, 0 if not set."},
        },
        "x-kubernetes-group-version-kind": [{"group": "", "kind": "Status", "version": "v1"}],
    }));
}

/// Every definition, `$ref`s in Swagger 2.0's form.
fn definitions(gv: &GroupVersion) -> Map<String, Value> {
    let mut defs = Map::new();
    meta_definitions(&mut defs);
    for r in RESOURCES {
        defs.insert(gv.definition(r.kind), kind_definition(gv, r));
        defs.insert(
            gv.definition(&format!("{}List", r.kind)),
            list_definition(gv, r),
        );
        if r.namespaced {
            defs.insert(
                gv.definition(&format!("{}Spec", r.kind)),
                json!({"type": "object", "properties": {
                    "reference": string("A name of another flunder or fischer."),
                    "referenceType": string("The type of the reference: Flunder or Fischer."),
                }}),
            );
            defs.insert(
                gv.definition(&format!("{}Status", r.kind)),
                json!({"type": "object"}),
            );
        }
    }
    defs
}

/// The operations of one path: `(method, action, verb for the operation id, kind answered)`.
type Operation<'a> = (&'a str, &'a str, &'a str, String);

fn paths(gv: &GroupVersion, v3: bool) -> Value {
    let base = format!("/apis/{}/{}", gv.group, gv.version);
    let mut paths = Map::new();
    for r in RESOURCES {
        let scope = if r.namespaced { "Namespaced" } else { "" };
        let collection = match r.namespaced {
            true => format!("{base}/namespaces/{{namespace}}/{}", r.plural),
            false => format!("{base}/{}", r.plural),
        };
        let list = format!("{}List", r.kind);
        let ops: Vec<Operation> = vec![
            ("get", "list", "list", list.clone()),
            ("post", "post", "create", r.kind.to_owned()),
        ];
        paths.insert(collection.clone(), path_item(gv, r, scope, &ops, false, v3));
        let ops: Vec<Operation> = vec![
            ("get", "get", "read", r.kind.to_owned()),
            ("put", "put", "replace", r.kind.to_owned()),
            ("patch", "patch", "patch", r.kind.to_owned()),
            ("delete", "delete", "delete", "Status".to_owned()),
        ];
        paths.insert(
            format!("{collection}/{{name}}"),
            path_item(gv, r, scope, &ops, true, v3),
        );
        if r.namespaced {
            let ops: Vec<Operation> = vec![("get", "list", "list", list)];
            let all = format!("{base}/{}", r.plural);
            paths.insert(all, path_item(gv, r, "", &ops, false, v3));
        }
    }
    Value::Object(paths)
}

fn path_item(
    gv: &GroupVersion,
    r: &Resource,
    scope: &str,
    ops: &[Operation],
    named: bool,
    v3: bool,
) -> Value {
    let tag = format!(
        "{}{}",
        gv.group.split('.').next().unwrap_or(""),
        capitalize(&gv.version)
    );
    let mut item = Map::new();
    for (method, action, verb, answer) in ops {
        let schema = match answer.as_str() {
            "Status" => reference(&format!("{META}.Status")),
            kind => reference(&gv.definition(kind)),
        };
        let all = if scope.is_empty() && r.namespaced {
            "ForAllNamespaces"
        } else {
            ""
        };
        let mut op = json!({
            "description": format!("{verb} {}", r.kind),
            "operationId": format!("{verb}{}{scope}{}{all}", capitalize(&tag), r.kind),
            "tags": [tag],
            "responses": {"200": response(schema.clone(), v3), "401": {"description": "Unauthorized"}},
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": {"group": gv.group, "kind": r.kind, "version": gv.version},
        });
        if matches!(*method, "post" | "put" | "patch") {
            let body = reference(&gv.definition(r.kind));
            if v3 {
                op["requestBody"] = json!({"content": {"*/*": {"schema": body}}, "required": true});
            } else {
                op["parameters"] =
                    json!([{"name": "body", "in": "body", "required": true, "schema": body}]);
            }
        }
        item.insert((*method).to_owned(), op);
    }
    let mut params = Vec::new();
    if named {
        params.push(path_param("name", &format!("name of the {}", r.kind), v3));
    }
    if !scope.is_empty() {
        params.push(path_param("namespace", "object name and auth scope", v3));
    }
    if !params.is_empty() {
        item.insert("parameters".into(), Value::Array(params));
    }
    let mut item = Value::Object(item);
    if v3 {
        rewrite_refs(&mut item);
    }
    item
}

fn response(schema: Value, v3: bool) -> Value {
    if v3 {
        json!({"description": "OK", "content": {"application/json": {"schema": schema}}})
    } else {
        json!({"description": "OK", "schema": schema})
    }
}

fn path_param(name: &str, description: &str, v3: bool) -> Value {
    if v3 {
        json!({"name": name, "in": "path", "required": true, "description": description,
               "schema": {"type": "string", "uniqueItems": true}})
    } else {
        json!({"name": name, "in": "path", "required": true, "description": description,
               "type": "string", "uniqueItems": true})
    }
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `#/definitions/X` → `#/components/schemas/X`, everywhere in `value`.
fn rewrite_refs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if k == "$ref"
                    && let Some(s) = v.as_str()
                {
                    *v = json!(s.replace("#/definitions/", "#/components/schemas/"));
                } else {
                    rewrite_refs(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wardle() -> GroupVersion {
        GroupVersion::default()
    }

    /// Every `$ref` of `doc` names a definition of `doc`.
    fn refs_resolve(doc: &Value, prefix: &str, defs: &Value) {
        match doc {
            Value::Object(map) => {
                for (k, v) in map {
                    if k == "$ref" {
                        let name = v.as_str().unwrap().strip_prefix(prefix).unwrap();
                        assert!(defs.get(name).is_some(), "{name}");
                    } else {
                        refs_resolve(v, prefix, defs);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| refs_resolve(i, prefix, defs)),
            _ => {}
        }
    }

    #[test]
    fn kinds_carry_their_group_version_kind_and_refs_resolve() {
        let doc = v2(&wardle());
        let flunder = &doc["definitions"]["com.example.wardle.v1alpha1.Flunder"];
        assert_eq!(
            flunder["x-kubernetes-group-version-kind"][0],
            json!({"group": "wardle.example.com", "kind": "Flunder", "version": "v1alpha1"})
        );
        refs_resolve(&doc, "#/definitions/", &doc["definitions"]);
        let path = "/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders/{name}";
        assert_eq!(
            doc["paths"][path]["get"]["operationId"],
            "readWardleV1alpha1NamespacedFlunder"
        );
        let doc = v3(&wardle());
        refs_resolve(&doc, "#/components/schemas/", &doc["components"]["schemas"]);
        assert!(
            doc["paths"]["/apis/wardle.example.com/v1alpha1/fischers"]["post"]["requestBody"]
                .is_object()
        );
    }
}
