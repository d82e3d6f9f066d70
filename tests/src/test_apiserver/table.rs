//! `meta.k8s.io/v1` Tables, as upstream's default table convertor writes them for a
//! resource without printer columns: `Name` and `Created At`.

use serde_json::{Value, json};

/// Whether `accept` asks for a Table before plain JSON (kubectl get does).
pub fn wanted(accept: &str) -> bool {
    for clause in accept.split(',') {
        let mut parts = clause.split(';').map(str::trim);
        let media = parts.next().unwrap_or("");
        let params: Vec<&str> = parts.collect();
        let has = |p: &str| params.iter().any(|q| q.replace(' ', "") == p);
        if media == "application/json" && has("as=Table") {
            if has("g=meta.k8s.io") && (has("v=v1") || has("v=v1beta1")) {
                return true;
            }
            continue;
        }
        return false;
    }
    false
}

/// The Table of `objects`; `include` is the `includeObject` parameter (Metadata when
/// unset, Object, None).
pub fn table(objects: &[Value], resource_version: &str, include: Option<&str>) -> Value {
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let meta = &o["metadata"];
            let mut row = json!({"cells": [meta["name"], meta["creationTimestamp"]]});
            match include {
                Some("None") => {}
                Some("Object") => row["object"] = o.clone(),
                _ => {
                    row["object"] = json!({
                        "kind": "PartialObjectMetadata",
                        "apiVersion": "meta.k8s.io/v1",
                        "metadata": meta,
                    })
                }
            }
            row
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": [
            {"name": "Name", "type": "string", "format": "name", "priority": 0,
             "description": "Name must be unique within a namespace."},
            {"name": "Created At", "type": "date", "format": "", "priority": 0,
             "description": "CreationTimestamp is a timestamp representing the server time when this object was created."},
        ],
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectls_accept_header_asks_for_a_table() {
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert!(wanted(kubectl));
        assert!(!wanted("application/json"));
        assert!(!wanted(
            "application/json, application/json;as=Table;v=v1;g=meta.k8s.io"
        ));
    }
}
