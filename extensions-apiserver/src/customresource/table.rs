//! A custom resource's Table, after upstream's `tableconvertor`: the Name column, then the
//! version's `additionalPrinterColumns` (an Age column when it has none), each cell found
//! by its JSONPath and shaped by the column's type.

use kas_endpoints::responsewriters::table::{AGE_DESCRIPTION, NAME_COLUMN, age};
use kas_registry::TableColumn;
use serde_json::{Value, json};

use super::intern;
use super::jsonpath::JsonPath;

/// The column definitions of a CRD version (an entry of `spec.versions`).
pub fn columns(version: &Value) -> Vec<TableColumn> {
    let mut out = vec![NAME_COLUMN];
    out.extend(definitions(version).into_iter().map(|c| TableColumn {
        name: intern(&c.name),
        type_: intern(&c.type_),
        format: intern(&c.format),
        description: intern(&c.description),
        priority: c.priority,
    }));
    out
}

/// One printer column.
#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i32,
    /// `None` when the path is beyond the subset: its cells are empty.
    pub path: Option<JsonPath>,
}

/// Upstream's `serveDefaultColumnsIfEmpty` and the convertor's descriptions.
pub fn definitions(version: &Value) -> Vec<Column> {
    let listed = version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty());
    let Some(listed) = listed else {
        return vec![Column {
            name: "Age".into(),
            type_: "date".into(),
            format: String::new(),
            description: AGE_DESCRIPTION.into(),
            priority: 0,
            path: JsonPath::parse(".metadata.creationTimestamp"),
        }];
    };
    listed
        .iter()
        .map(|c| {
            let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let json_path = s("jsonPath");
            let description = match s("description") {
                d if d.is_empty() => {
                    format!("Custom resource definition column (in JSONPath format): {json_path}")
                }
                d => d,
            };
            Column {
                name: s("name"),
                type_: s("type"),
                format: s("format"),
                description,
                priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0) as i32,
                path: JsonPath::parse(&json_path),
            }
        })
        .collect()
}

/// The cells of one object: its name, then one per column.
pub fn cells(columns: &[Column], obj: &Value) -> Vec<Value> {
    let mut out = vec![json!(kas_registry::meta::name(obj))];
    for c in columns {
        let found = c.path.as_ref().and_then(|p| p.first(obj));
        out.push(match found {
            None => Value::Null,
            Some(v) => cell(&c.type_, v),
        });
    }
    out
}

/// Upstream's `cellForJSONValue`, and the printed text of string columns.
fn cell(type_: &str, v: &Value) -> Value {
    match (type_, v) {
        (_, Value::Null) => Value::Null,
        ("string", Value::String(s)) => json!(s),
        ("string", other) => json!(other.to_string()),
        ("integer", Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .map_or(Value::Null, |i| json!(i)),
        ("number", Value::Number(n)) => n.as_f64().map_or(Value::Null, |f| json!(f)),
        ("boolean", Value::Bool(b)) => json!(b),
        ("date", Value::String(s)) => match kas_apimachinery::golang::time::parse_rfc3339(s) {
            Some(_) => json!(age(s)),
            None => json!("<invalid>"),
        },
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_and_listed_columns() {
        let none = json!({"name": "v1"});
        let cols = definitions(&none);
        assert_eq!(cols.len(), 1);
        assert_eq!(
            (cols[0].name.as_str(), cols[0].type_.as_str()),
            ("Age", "date")
        );
        let v = json!({"name": "v1", "additionalPrinterColumns": [
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status", "priority": 1, "description": "ready?"},
            {"name": "Size", "type": "number", "jsonPath": ".spec.size"},
        ]});
        let cols = definitions(&v);
        assert_eq!(
            cols[0].description,
            "Custom resource definition column (in JSONPath format): .spec.replicas"
        );
        assert_eq!(cols[1].description, "ready?");
        let obj = json!({"metadata": {"name": "x"}, "spec": {"replicas": 2.0, "size": 3},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        assert_eq!(
            cells(&cols, &obj),
            vec![json!("x"), json!(2), json!("True"), json!(3.0)]
        );
        assert_eq!(columns(&v).len(), 4);
    }
}
