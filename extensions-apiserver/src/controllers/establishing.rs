//! Upstream's `EstablishingController`: a CRD whose names are accepted becomes
//! Established. Upstream waits 5 s first when several servers run, so that all of them
//! serve the names; here a replica serves a CRD as soon as its names are accepted, within
//! the time its CRD watch takes, so the condition is set at once.

use serde_json::Value;

use crate::crd::conditions::{self, Condition};

/// The CRD marked Established, when its names are accepted and it is not yet.
pub fn sync(crd: &Value) -> Option<Value> {
    if !conditions::is_true(crd, conditions::NAMES_ACCEPTED)
        || conditions::is_true(crd, conditions::ESTABLISHED)
    {
        return None;
    }
    let invalid_ca = crd
        .pointer("/spec/conversion/webhook/clientConfig/caBundle")
        .and_then(Value::as_str)
        .is_some_and(|ca| !ca.is_empty() && !valid_ca_bundle(ca));
    let already = conditions::find(crd, conditions::ESTABLISHED)
        .and_then(|c| c.get("reason"))
        .and_then(Value::as_str)
        == Some("InvalidCABundle");
    if invalid_ca && already {
        return None;
    }
    let mut updated = crd.clone();
    let condition = if invalid_ca {
        Condition::new(
            conditions::ESTABLISHED,
            "False",
            "InvalidCABundle",
            "The conversion webhook CABundle is invalid",
        )
    } else {
        Condition::new(
            conditions::ESTABLISHED,
            "True",
            "InitialNamesAccepted",
            "the initial names have been accepted",
        )
    };
    conditions::set(&mut updated, condition);
    Some(updated)
}

/// Upstream's `ValidateCABundle`: base64 of PEM holding at least one certificate.
fn valid_ca_bundle(ca: &str) -> bool {
    use base64::Engine as _;
    let Ok(pem) = base64::engine::general_purpose::STANDARD.decode(ca) else {
        return false;
    };
    String::from_utf8_lossy(&pem).contains("-----BEGIN CERTIFICATE-----")
}
