//! Validation ratcheting (`CRDValidationRatcheting`, GA and locked on in 1.33): upstream's
//! `RatchetingSchemaValidator` (`pkg/apiserver/validation/ratcheting.go`) over
//! k8s.io/apiserver's `common.CorrelatedObject`, which pairs each value of the new object
//! with its old value: an error in a value that did not change is not reported.

use serde_json::Value;

use super::spec::Spec;

/// Upstream `CorrelatedObject`: a new value, the old value it correlates with, and its
/// schema. Absent (`None`) where no old value correlates.
#[derive(Clone, Copy, Debug)]
pub(super) struct Corr<'a> {
    pub old: &'a Value,
    pub new: &'a Value,
    pub spec: &'a Spec,
}

impl<'a> Corr<'a> {
    /// Upstream `Key(field)`: both objects have the field and the schema describes it.
    pub(super) fn key(&self, field: &str) -> Option<Corr<'a>> {
        let old = self.old.as_object()?.get(field)?;
        let new = self.new.as_object()?.get(field)?;
        let spec = match self.spec.properties.get(field) {
            Some(p) => p,
            None => self.spec.additional_properties.as_ref()?.1.as_deref()?,
        };
        Some(Corr { old, new, spec })
    }

    /// Upstream `Index(i)`: only items of `map` lists correlate, by their keys.
    pub(super) fn index(&self, i: usize) -> Option<Corr<'a>> {
        let new = self.new.as_array()?.get(i)?;
        let old = self.correlate_old_item(new)?;
        Some(Corr {
            old,
            new,
            spec: self.spec.items.as_deref()?,
        })
    }

    fn correlate_old_item(&self, new: &Value) -> Option<&'a Value> {
        let old_list = self.old.as_array()?;
        if self.spec.x_list_type.as_deref() != Some("map") {
            return None;
        }
        let keys = &self.spec.x_list_map_keys;
        let key_of = |item: &Value| -> Option<Vec<Value>> {
            if keys.is_empty() {
                return None;
            }
            let obj = item.as_object()?;
            keys.iter().map(|k| obj.get(k).cloned()).collect()
        };
        let wanted = key_of(new)?;
        old_list
            .iter()
            .find(|o| key_of(o).as_ref() == Some(&wanted))
    }

    /// Upstream `CachedDeepEqual`: whether the value did not change, comparing map-list
    /// items by key and objects only through fields the schema describes.
    pub(super) fn deep_equal(&self) -> bool {
        match (self.old, self.new) {
            (Value::Null, Value::Null) => true,
            (Value::Null, _) | (_, Value::Null) => false,
            (Value::Array(old), Value::Array(new)) => {
                if old.len() != new.len() {
                    return false;
                }
                let map_list = self.spec.x_list_type.as_deref() == Some("map");
                for i in 0..new.len() {
                    match self.index(i) {
                        None if !map_list => return old == new,
                        None => return false,
                        Some(child) if !child.deep_equal() => return false,
                        Some(_) => {}
                    }
                }
                true
            }
            (Value::Object(old), Value::Object(new)) => {
                old.len() == new.len()
                    && new
                        .keys()
                        .all(|k| self.key(k).is_some_and(|child| child.deep_equal()))
            }
            (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => {
                false
            }
            (old, new) => old == new,
        }
    }
}
