//! Upstream `PruneDefaults` (`defaulting/prune.go` with `surroundingobject.go`): each
//! default is placed where it applies in an otherwise empty object, which is coerced and
//! pruned as a resource would be, and read back.

use kas_apimachinery::validation::field::Path;
use serde_json::{Map, Value};

use crate::schema::{ObjectMetaOptions, Structural, coerce_object_meta, prune};

/// A step from the root to a default: an object field (`*` for `additionalProperties`)
/// or an array item.
#[derive(Clone, Debug)]
enum Step {
    Child(String),
    Index,
}

/// Upstream `PruneDefaults`: prunes every default of `s` by the schema (and ObjectMeta),
/// as upstream's handler does before serving a CRD version. `Err` is upstream's
/// `failed to prune default value: ...`.
pub fn prune_defaults(s: &mut Structural) -> Result<(), String> {
    let root = s.clone();
    prune_node(s, &root, &mut Vec::new())
}

fn prune_node(s: &mut Structural, root: &Structural, steps: &mut Vec<Step>) -> Result<(), String> {
    if let Some(def) = s.generic.default.take() {
        let obj = surround(def, steps)?;
        s.generic.default = prune_in(obj, root, steps)?;
    }
    if let Some(ap) = s
        .additional_properties
        .as_mut()
        .and_then(|ap| ap.structural.as_deref_mut())
    {
        steps.push(Step::Child("*".to_owned()));
        prune_node(ap, root, steps)?;
        steps.pop();
    }
    if let Some(items) = s.items.as_deref_mut() {
        steps.push(Step::Index);
        prune_node(items, root, steps)?;
        steps.pop();
    }
    for (k, prop) in s.properties.iter_mut() {
        steps.push(Step::Child(k.clone()));
        prune_node(prop, root, steps)?;
        steps.pop();
    }
    Ok(())
}

/// The surrounding object of `x` at `steps` (upstream's `SurroundingObjectFunc`).
fn surround(x: Value, steps: &[Step]) -> Result<Value, String> {
    let mut v = x;
    for step in steps.iter().rev() {
        v = match step {
            Step::Child(k) => {
                let mut m = Map::new();
                m.insert(k.clone(), v);
                Value::Object(m)
            }
            Step::Index => Value::Array(vec![v]),
        };
    }
    if v.is_object() {
        Ok(v)
    } else {
        Err(
            "failed to prune default value: object root default value must be of object type"
                .to_owned(),
        )
    }
}

fn prune_in(mut obj: Value, root: &Structural, steps: &[Step]) -> Result<Option<Value>, String> {
    let opts = ObjectMetaOptions {
        drop_malformed_fields: true,
        return_unknown_field_paths: false,
    };
    coerce_object_meta(&Path::nil(), &mut obj, root, true, opts)
        .map_err(|e| format!("failed to prune default value: {e}"))?;
    prune(&mut obj, root, true, false);
    let mut cur = obj;
    for step in steps {
        cur = match (step, cur) {
            (Step::Child(k), Value::Object(mut m)) => match m.remove(k) {
                Some(v) => v,
                None => return Ok(None),
            },
            (Step::Index, Value::Array(mut items)) if !items.is_empty() => items.swap_remove(0),
            (Step::Index, Value::Array(_)) => return Ok(None),
            (Step::Child(k), _) => {
                return Err(format!(
                    "failed to prune default value: .{k} must be of object type"
                ));
            }
            (Step::Index, _) => {
                return Err("failed to prune default value: [] must be of array type".to_owned());
            }
        };
    }
    Ok(Some(cur))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn defaults_lose_unknown_fields_where_they_apply() {
        let mut s = Structural::new(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "default": {"a": 1, "b": 2},
                "properties": {
                    "a": {"type": "integer"},
                    "list": {"type": "array", "items": {"type": "object", "default": {"x": 1, "y": 2},
                        "properties": {"x": {"type": "integer"}}}},
                    "map": {"type": "object", "additionalProperties": {"type": "object",
                        "default": {"k": 1}, "properties": {}}},
                    "embedded": {"type": "object", "x-kubernetes-embedded-resource": true,
                        "x-kubernetes-preserve-unknown-fields": true,
                        "default": {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n", "bad": 1}, "z": 1}},
                }},
            "metadata": {"type": "object", "default": {"name": "x", "unknown": 1}},
        }}));
        prune_defaults(&mut s).expect("prunes");
        let spec = &s.properties["spec"];
        assert_eq!(spec.generic.default, Some(json!({"a": 1})));
        let item = spec.properties["list"].items.as_deref().expect("items");
        assert_eq!(item.generic.default, Some(json!({"x": 1})));
        let value = spec.properties["map"]
            .additional_properties
            .as_ref()
            .and_then(|a| a.structural.as_deref());
        assert_eq!(
            value.and_then(|v| v.generic.default.clone()),
            Some(json!({}))
        );
        assert_eq!(
            spec.properties["embedded"].generic.default,
            Some(json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "z": 1}))
        );
        assert_eq!(
            s.properties["metadata"].generic.default,
            Some(json!({"name": "x"}))
        );
    }

    #[test]
    fn a_root_default_must_be_an_object() {
        let mut s = Structural::new(&json!({"type": "string", "default": "x"}));
        assert_eq!(
            prune_defaults(&mut s),
            Err(
                "failed to prune default value: object root default value must be of object type"
                    .to_owned()
            )
        );
    }
}
