//! `x-kubernetes-list-type` `set` and `map` uniqueness, after upstream's
//! `pkg/apiserver/schema/listtype/validation.go`.

use kas_apimachinery::validation::field::{self, ErrorList, Path};
use serde_json::{Map, Value};

use super::Structural;
use super::gofmt::{bad_value, marshal};

/// Upstream `ValidateListSetsAndMaps`: duplicate items of `set` lists and duplicate keys
/// of `map` lists anywhere in the object `obj` (anything else has none). Keys of an object
/// are visited in sorted order (upstream's map order is random).
pub fn validate_list_sets_and_maps(fld_path: &Path, s: &Structural, obj: &Value) -> ErrorList {
    match obj {
        Value::Object(map) => validate_object(fld_path, s, map),
        _ => ErrorList::new(),
    }
}

fn validate_object(fld_path: &Path, s: &Structural, obj: &Map<String, Value>) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut keys: Vec<&String> = obj.keys().collect();
    keys.sort();
    if let Some(ap) = s
        .additional_properties
        .as_ref()
        .and_then(|ap| ap.structural.as_deref())
    {
        for k in &keys {
            errs.extend(validate_value(&fld_path.key(k), ap, &obj[k.as_str()]));
        }
    }
    for k in &keys {
        if let Some(sub) = s.properties.get(k.as_str()) {
            errs.extend(validate_value(&fld_path.child(k), sub, &obj[k.as_str()]));
        }
    }
    errs
}

fn validate_value(fld_path: &Path, s: &Structural, obj: &Value) -> ErrorList {
    match obj {
        Value::Array(items) => validate_array(fld_path, s, items),
        Value::Object(map) => validate_object(fld_path, s, map),
        _ => ErrorList::new(),
    }
}

fn validate_array(fld_path: &Path, s: &Structural, obj: &[Value]) -> ErrorList {
    let mut errs = ErrorList::new();
    match s.extensions.x_list_type.as_deref() {
        Some("set") => {
            let keys: Vec<Key<'_>> = obj.iter().map(Key::Value).collect();
            for i in non_unique(&keys) {
                errs.push(field::duplicate(&fld_path.index(i), bad_value(&obj[i])));
            }
        }
        Some("map") => errs.extend(validate_list_map(fld_path, s, obj)),
        _ => {}
    }
    if let Some(items) = s.items.as_deref() {
        for (i, x) in obj.iter().enumerate() {
            errs.extend(validate_value(&fld_path.index(i), items, x));
        }
    }
    errs
}

/// An item compared for uniqueness: a value, or upstream's `unspecifiedKeyValue{}` (a
/// missing key, unequal to any value, null included).
#[derive(Clone, Debug)]
enum Key<'a> {
    Value(&'a Value),
    Unspecified,
}

impl Key<'_> {
    /// Scalars compare as Go's interface values (an int64 1 is not a float64 1), objects
    /// and arrays by their JSON.
    fn identity(&self) -> (u8, String) {
        match self {
            Key::Unspecified => (0, String::new()),
            Key::Value(v @ (Value::Object(_) | Value::Array(_))) => (1, marshal(v)),
            Key::Value(Value::Number(n)) if n.is_f64() => (2, marshal(&Value::Number(n.clone()))),
            Key::Value(v) => (3, v.to_string()),
        }
    }
}

/// Upstream `validateListSet`: the index of the second appearance of each repeated item.
fn non_unique(items: &[Key<'_>]) -> Vec<usize> {
    if items.len() <= 1 {
        return Vec::new();
    }
    let mut seen: std::collections::HashMap<(u8, String), usize> = Default::default();
    let mut out = Vec::new();
    for (i, x) in items.iter().enumerate() {
        let times = seen.entry(x.identity()).or_insert(0);
        *times += 1;
        if *times == 2 {
            out.push(i);
        }
    }
    out
}

fn validate_list_map(fld_path: &Path, s: &Structural, obj: &[Value]) -> ErrorList {
    for (i, x) in obj.iter().enumerate() {
        if !x.is_null() && !x.is_object() {
            return vec![field::invalid(
                &fld_path.index(i),
                bad_value(x),
                "must be an object for an array of list-type map",
            )];
        }
    }
    if obj.len() <= 1 {
        return ErrorList::new();
    }
    let key_fields = &s.extensions.x_list_map_keys;
    if let [key_field] = key_fields.as_slice() {
        let keys: Vec<Key<'_>> = obj
            .iter()
            .map(|x| x.get(key_field).map_or(Key::Unspecified, Key::Value))
            .collect();
        return non_unique(&keys)
            .into_iter()
            .map(|i| {
                let mut shown = Map::new();
                if let Key::Value(v) = &keys[i] {
                    shown.insert(key_field.clone(), (*v).clone());
                }
                field::duplicate(&fld_path.index(i), bad_value(&Value::Object(shown)))
            })
            .collect();
    }
    let keys: Vec<Value> = obj
        .iter()
        .map(|x| {
            let mut key = Map::new();
            for f in key_fields {
                if let Some(k) = x.get(f) {
                    key.insert(f.clone(), k.clone());
                }
            }
            Value::Object(key)
        })
        .collect();
    let compared: Vec<Key<'_>> = keys.iter().map(Key::Value).collect();
    non_unique(&compared)
        .into_iter()
        .map(|i| field::duplicate(&fld_path.index(i), bad_value(&keys[i])))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn errors(schema: Value, obj: Value) -> Vec<String> {
        validate_list_sets_and_maps(&Path::new("root"), &Structural::new(&schema), &obj)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn sets_report_each_repeated_item_once() {
        let schema = json!({"properties": {"field": {"x-kubernetes-list-type": "set",
            "items": {}}}});
        assert_eq!(
            errors(
                schema.clone(),
                json!({"field": ["a", "b", "a", "a", 1, 1.0, {"x": 1}, {"x": 1.0}]})
            ),
            [
                r#"root.field[2]: Duplicate value: "a""#,
                r#"root.field[7]: Duplicate value: map[string]interface {}{"x":1}"#,
            ]
        );
        assert!(errors(schema, json!({"field": [null, 1, "1", true]})).is_empty());
    }

    #[test]
    fn maps_with_one_key() {
        let schema = json!({"properties": {"field": {"x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["k"], "items": {"type": "object"}}}});
        assert_eq!(
            errors(
                schema.clone(),
                json!({"field": [{"k": "a"}, {"k": "a", "v": 1}, {}, null, {"k": 1}]})
            ),
            [
                r#"root.field[1]: Duplicate value: map[string]interface {}{"k":"a"}"#,
                r#"root.field[3]: Duplicate value: map[string]interface {}{}"#,
            ]
        );
        assert_eq!(
            errors(schema, json!({"field": [{"k": "a"}, "x"]})),
            [
                r#"root.field[1]: Invalid value: "x": must be an object for an array of list-type map"#
            ]
        );
    }

    #[test]
    fn maps_with_two_keys_nested_in_items_and_additional_properties() {
        let list = json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a", "b"],
            "items": {"type": "object"}});
        let schema = json!({"properties": {
            "m": {"additionalProperties": list.clone()},
            "l": {"items": {"properties": {"inner": list}}},
        }});
        assert_eq!(
            errors(
                schema,
                json!({"m": {"x": [{"a": 1, "b": 2}, {"a": 1, "b": 2, "c": 3}, {"a": 1}]},
                       "l": [{"inner": [{"b": 1}, {"b": 1}]}]})
            ),
            [
                r#"root.l[0].inner[1]: Duplicate value: map[string]interface {}{"b":1}"#,
                r#"root.m[x][1]: Duplicate value: map[string]interface {}{"a":1, "b":2}"#,
            ]
        );
    }
}
