//! A served version's `openAPIV3Schema` and what it does to custom resources: pruning,
//! defaulting and validation (kas-apiextensions' structural schema and CEL rules).

use kas_apimachinery::validation::field;
use serde_json::Value;

pub struct VersionSchema {
    raw: Value,
}

impl VersionSchema {
    pub fn new(schema: &Value) -> VersionSchema {
        VersionSchema {
            raw: schema.clone(),
        }
    }

    /// Drops the fields the schema does not declare; answers their paths.
    pub fn prune(&self, _obj: &mut Value) -> Vec<String> {
        let _ = &self.raw;
        Vec::new()
    }

    /// Applies the schema's defaults.
    pub fn default(&self, _obj: &mut Value) {}

    /// OpenAPI, list-type and CEL validation of `new` (an update's `old` for transition
    /// rules).
    pub fn validate(&self, _new: &Value, _old: Option<&Value>) -> Vec<field::Error> {
        Vec::new()
    }
}
