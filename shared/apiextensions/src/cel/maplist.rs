//! Upstream `makeMapList` (`pkg/apiserver/schema/cel/maplist.go`): the old element of a
//! `x-kubernetes-list-type: map` list that has the same keys as a new element, the only
//! way list items correlate for `oldSelf`.

use serde_json::Value as Json;

use super::node::Node;

pub(crate) struct MapList<'a> {
    keys: Vec<&'a str>,
    old: &'a [Json],
}

impl<'a> MapList<'a> {
    /// Correlates only for map lists with keys; any other list correlates nothing.
    pub fn new(schema: Node<'a>, old: Option<&'a Json>) -> MapList<'a> {
        let keys = if schema.list_type() == "map" {
            schema.list_map_keys()
        } else {
            Vec::new()
        };
        let old = match old {
            Some(Json::Array(items)) if !keys.is_empty() => items.as_slice(),
            _ => &[],
        };
        MapList { keys, old }
    }

    /// The first old element whose key fields, all scalars, equal `new`'s.
    pub fn get(&self, new: &Json) -> Option<&'a Json> {
        let Json::Object(n) = new else {
            return None;
        };
        self.old.iter().find(|o| {
            o.as_object().is_some_and(|o| {
                self.keys.iter().all(|k| match (o.get(*k), n.get(*k)) {
                    (Some(a), Some(b)) => a == b && scalar(a),
                    _ => false,
                })
            })
        })
    }
}

fn scalar(v: &Json) -> bool {
    matches!(v, Json::Bool(_) | Json::Number(_) | Json::String(_))
}
