//! `CertificateApproval`: updates of `certificatesigningrequests/approval` need `approve`
//! on the request's signer.

use futures_util::future::BoxFuture;
use kas_auth::authorization::DynAuthorizer;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Attributes, Operation, Validate};

pub struct CertificateApproval {
    pub authorizer: DynAuthorizer,
}

impl Validate for CertificateApproval {
    fn handles(
        &self,
        descriptor: &'static ResourceDescriptor,
        _namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool {
        super::handles_update(descriptor, subresource, operation, "approval")
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        super::check_signer(&self.authorizer, attributes, "approve", "approve")
    }
}
