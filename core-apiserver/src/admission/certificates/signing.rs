//! `CertificateSigning`: updates of `certificatesigningrequests/status` that change the
//! certificate or the conditions need `sign` on the request's signer.

use futures_util::future::BoxFuture;
use kas_auth::authorization::DynAuthorizer;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Attributes, Operation, Validate};
use serde_json::Value;

pub struct CertificateSigning {
    pub authorizer: DynAuthorizer,
}

/// Whether the write changes `status.certificate` or `status.conditions` (upstream
/// compares both; absent and empty conditions are semantically equal).
fn changes_signing(new: Option<&Value>, old: Option<&Value>) -> bool {
    let field = |o: Option<&Value>, path: &str| o.and_then(|o| o.pointer(path)).cloned();
    let conditions = |o: Option<&Value>| match field(o, "/status/conditions") {
        Some(Value::Array(items)) if !items.is_empty() => Some(Value::Array(items)),
        _ => None,
    };
    field(new, "/status/certificate") != field(old, "/status/certificate")
        || conditions(new) != conditions(old)
}

impl Validate for CertificateSigning {
    fn handles(
        &self,
        descriptor: &'static ResourceDescriptor,
        _namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool {
        super::handles_update(descriptor, subresource, operation, "status")
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        if !changes_signing(attributes.object, attributes.old_object) {
            return Box::pin(async { Ok(()) });
        }
        super::check_signer(&self.authorizer, attributes, "sign", "sign")
    }
}
