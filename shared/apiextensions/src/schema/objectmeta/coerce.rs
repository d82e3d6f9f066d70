//! Upstream `objectmeta.CoerceWithOptions` (`coerce.go`).

use kas_apimachinery::validation::field::{self, Path};
use serde_json::Value;

use super::{ObjectMetaOptions, get_object_meta};
use crate::schema::Structural;
use crate::schema::gofmt::bad_value;

/// Upstream `CoerceWithOptions`: in every embedded resource (and the root with
/// `is_resource_root`), `apiVersion` and `kind` must be strings and `metadata` is
/// decoded and written back as an `ObjectMeta` (see [`get_object_meta`]). With
/// `drop_invalid_fields`, values of the wrong type are dropped instead. Returns the
/// unknown metadata fields' paths (sorted) with `return_unknown_field_paths`; `Err` is the
/// first error.
pub fn coerce(
    fld_path: &Path,
    obj: &mut Value,
    s: &Structural,
    is_resource_root: bool,
    opts: ObjectMetaOptions,
) -> Result<Vec<String>, field::Error> {
    let mut unknown = Vec::new();
    if is_resource_root && !s.extensions.x_embedded_resource {
        let mut root = s.clone();
        root.extensions.x_embedded_resource = true;
        coerce_value(fld_path, obj, &root, opts, &mut unknown)?;
    } else {
        coerce_value(fld_path, obj, s, opts, &mut unknown)?;
    }
    unknown.sort();
    Ok(unknown)
}

fn coerce_value(
    pth: &Path,
    x: &mut Value,
    s: &Structural,
    opts: ObjectMetaOptions,
    unknown: &mut Vec<String>,
) -> Result<(), field::Error> {
    match x {
        Value::Object(map) => {
            if s.extensions.x_embedded_resource {
                for k in ["apiVersion", "kind"] {
                    match map.get(k) {
                        Some(Value::String(_)) | None => {}
                        Some(_) if opts.drop_malformed_fields => {
                            map.remove(k);
                        }
                        Some(v) => {
                            return Err(field::invalid(
                                &pth.child(k),
                                bad_value(v),
                                "must be a string",
                            ));
                        }
                    }
                }
                let original = map.get("metadata").cloned();
                match get_object_meta(map, pth, opts) {
                    Ok((_, paths)) => unknown.extend(paths),
                    // With dropping, metadata that is no object passes through.
                    Err(_) if opts.drop_malformed_fields => {}
                    Err(e) => {
                        let v = original.unwrap_or(Value::Null);
                        return Err(field::invalid(&pth.child("metadata"), bad_value(&v), &e));
                    }
                }
            }
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                let (sub, child) = match s.properties.get(&k) {
                    Some(prop) => (Some(prop), pth.child(&k)),
                    None => match &s.additional_properties {
                        Some(ap) => (ap.structural.as_deref(), pth.key(&k)),
                        None => continue,
                    },
                };
                if let (Some(sub), Some(v)) = (sub, map.get_mut(&k)) {
                    coerce_value(&child, v, sub, opts, unknown)?;
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = s.items.as_deref() {
                for (i, v) in items.iter_mut().enumerate() {
                    coerce_value(&pth.index(i), v, item, opts, unknown)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}
