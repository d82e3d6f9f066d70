//! Pruning of unknown fields, after upstream's `pkg/apiserver/schema/pruning` and the
//! unknown-field paths of `UnknownFieldPathOptions` (`options.go`), which strict and warn
//! `fieldValidation` report as `unknown field "spec.foo"`.

use serde_json::Value;

use super::Structural;

/// `apiVersion`, `kind` and `metadata`: kept in embedded resources and at the root.
fn is_meta_field(k: &str) -> bool {
    matches!(k, "apiVersion" | "kind" | "metadata")
}

/// Upstream `PruneWithOptions`: drops the fields of `obj` that `s` does not specify, but
/// TypeMeta and ObjectMeta of embedded resources and, with `is_resource_root`, of the
/// root (metadata itself is left to ObjectMeta coercion). With
/// `track_unknown_field_paths`, returns the paths of what was dropped, sorted, as
/// upstream writes them (`spec.foo`, `spec.list[0].bar`); otherwise an empty list.
pub fn prune(
    obj: &mut Value,
    s: &Structural,
    is_resource_root: bool,
    track_unknown_field_paths: bool,
) -> Vec<String> {
    let mut opts = Opts {
        track: track_unknown_field_paths,
        parent: Vec::new(),
        unknown: Vec::new(),
    };
    if is_resource_root && !s.extensions.x_embedded_resource {
        let mut root = s.clone();
        root.extensions.x_embedded_resource = true;
        prune_value(obj, Some(&root), &mut opts);
    } else {
        prune_value(obj, Some(s), &mut opts);
    }
    opts.unknown.sort();
    opts.unknown
}

/// Upstream `UnknownFieldPathOptions`.
struct Opts {
    track: bool,
    parent: Vec<String>,
    unknown: Vec<String>,
}

impl Opts {
    fn record_unknown_field(&mut self, field: &str) {
        if !self.track {
            return;
        }
        let l = self.parent.len();
        self.append_key(field);
        self.unknown.push(self.parent.concat());
        self.parent.truncate(l);
    }

    fn append_key(&mut self, key: &str) {
        if !self.track {
            return;
        }
        if !self.parent.is_empty() {
            self.parent.push(".".to_owned());
        }
        self.parent.push(key.to_owned());
    }

    fn append_index(&mut self, index: usize) {
        if !self.track {
            return;
        }
        self.parent.push(format!("[{index}]"));
    }
}

fn prune_value(x: &mut Value, s: Option<&Structural>, opts: &mut Opts) {
    if let Some(s) = s.filter(|s| s.extensions.x_preserve_unknown_fields) {
        skip_prune(x, s, opts);
        return;
    }
    let orig = opts.parent.len();
    match x {
        Value::Object(map) => {
            let Some(s) = s else {
                for k in map.keys() {
                    opts.record_unknown_field(k);
                }
                map.clear();
                return;
            };
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                if s.extensions.x_embedded_resource && is_meta_field(&k) {
                    continue;
                }
                let sub = match s.properties.get(&k) {
                    Some(prop) => Some(Some(prop)),
                    None => s
                        .additional_properties
                        .as_ref()
                        .map(|ap| ap.structural.as_deref()),
                };
                match sub {
                    Some(sub) => {
                        opts.append_key(&k);
                        if let Some(v) = map.get_mut(&k) {
                            prune_value(v, sub, opts);
                        }
                        opts.parent.truncate(orig);
                    }
                    None => {
                        if !is_meta_field(&k) || !opts.parent.is_empty() {
                            opts.record_unknown_field(&k);
                        }
                        map.remove(&k);
                    }
                }
            }
        }
        Value::Array(items) => {
            let item_schema = s.and_then(|s| s.items.as_deref());
            for (i, v) in items.iter_mut().enumerate() {
                opts.append_index(i);
                prune_value(v, item_schema, opts);
                opts.parent.truncate(orig);
            }
        }
        _ => {}
    }
}

/// Below `x-kubernetes-preserve-unknown-fields`: nothing unknown is dropped here, but
/// specified fields are pruned by their own schemas.
fn skip_prune(x: &mut Value, s: &Structural, opts: &mut Opts) {
    let orig = opts.parent.len();
    match x {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if s.extensions.x_embedded_resource && is_meta_field(k) {
                    continue;
                }
                let sub = match s.properties.get(k) {
                    Some(prop) => Some(Some(prop)),
                    None => s
                        .additional_properties
                        .as_ref()
                        .map(|ap| ap.structural.as_deref()),
                };
                if let Some(sub) = sub {
                    opts.append_key(k);
                    prune_value(v, sub, opts);
                    opts.parent.truncate(orig);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                opts.append_index(i);
                if let Some(item) = s.items.as_deref() {
                    skip_prune(v, item, opts);
                }
                opts.parent.truncate(orig);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
