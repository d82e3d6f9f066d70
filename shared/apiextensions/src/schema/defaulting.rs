//! Defaulting, after upstream's `pkg/apiserver/schema/defaulting` (`algorithm.go`,
//! `prunenulls.go`). The order is upstream's: nulls that cannot be defaulted are pruned
//! first, then defaults fill what is absent or a non-nullable null.

mod prune;

use serde_json::Value;

use super::Structural;

pub use prune::prune_defaults;

/// Upstream `isNonNullableNull`.
fn is_non_nullable_null(x: Option<&Value>, s: Option<&Structural>) -> bool {
    x.is_some_and(Value::is_null) && s.is_some_and(|s| !s.generic.nullable)
}

/// Upstream `Default`: applies the defaults of `s` to `x`, into properties, into
/// `additionalProperties` values and into array items. A property that is absent, or a
/// null the schema does not allow, takes its default; a non-nullable null value of a map
/// or list takes the default of its schema (or stays null when there is none).
pub fn default(x: &mut Value, s: &Structural) {
    match x {
        Value::Object(map) => {
            for (k, prop) in &s.properties {
                let Some(def) = &prop.generic.default else {
                    continue;
                };
                let cur = map.get(k);
                if cur.is_none() || is_non_nullable_null(cur, Some(prop)) {
                    map.insert(k.clone(), def.clone());
                }
            }
            let additional = s
                .additional_properties
                .as_ref()
                .map(|ap| ap.structural.as_deref());
            for (k, v) in map.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    default(v, prop);
                } else if let Some(ap) = additional {
                    if is_non_nullable_null(Some(v), ap) {
                        *v = ap
                            .and_then(|ap| ap.generic.default.clone())
                            .unwrap_or(Value::Null);
                    }
                    if let Some(ap) = ap {
                        default(v, ap);
                    }
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = s.items.as_deref() else {
                return;
            };
            for v in items.iter_mut() {
                if is_non_nullable_null(Some(v), Some(item_schema)) {
                    *v = item_schema.generic.default.clone().unwrap_or(Value::Null);
                }
                default(v, item_schema);
            }
        }
        _ => {}
    }
}

/// Upstream `PruneNonNullableNullsWithoutDefaults`: drops the object fields whose value is
/// a null their schema neither allows nor defaults (a null a default will replace is left
/// for [`default`]). Array items are never dropped.
pub fn prune_non_nullable_nulls_without_defaults(x: &mut Value, s: Option<&Structural>) {
    match x {
        Value::Object(map) => {
            map.retain(|k, v| {
                let schema = s.and_then(|s| s.field(k));
                let drop = v.is_null()
                    && schema.is_some_and(|s| !s.generic.nullable && s.generic.default.is_none());
                if !drop {
                    prune_non_nullable_nulls_without_defaults(v, schema);
                }
                !drop
            });
        }
        Value::Array(items) => {
            let schema = s.and_then(|s| s.items.as_deref());
            for v in items.iter_mut() {
                prune_non_nullable_nulls_without_defaults(v, schema);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
