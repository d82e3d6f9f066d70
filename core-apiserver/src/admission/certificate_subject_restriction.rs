//! Upstream's `CertificateSubjectRestriction` plugin
//! (`plugin/pkg/admission/certificates/subjectrestriction`): a CertificateSigningRequest
//! for the `kubernetes.io/kube-apiserver-client` signer may not ask for the
//! `system:masters` group, which would make its holder a cluster administrator.

use base64::Engine as _;
use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Attributes, Operation, Validate};
use serde_json::Value;

use crate::resources::certificates::pem::csr_organizations;

/// Upstream `KubeAPIServerClientSignerName`.
const KUBE_APISERVER_CLIENT: &str = "kubernetes.io/kube-apiserver-client";
const MASTERS: &str = "system:masters";

pub struct CertificateSubjectRestriction;

/// The refusal for `csr`, if any (upstream `Validate`).
fn refusal(csr: &Value) -> Option<String> {
    let signer = csr.pointer("/spec/signerName").and_then(Value::as_str)?;
    if signer != KUBE_APISERVER_CLIENT {
        return None;
    }
    let request = csr
        .pointer("/spec/request")
        .and_then(Value::as_str)
        .unwrap_or("");
    let pem = base64::engine::general_purpose::STANDARD
        .decode(request)
        .unwrap_or_default();
    match csr_organizations(&pem) {
        Err(e) => Some(format!("failed to parse CSR: {e}")),
        Ok(groups) if groups.iter().any(|g| g == MASTERS) => Some(format!(
            "use of {signer} signer with {MASTERS} group is not allowed"
        )),
        Ok(_) => None,
    }
}

impl Validate for CertificateSubjectRestriction {
    fn handles(
        &self,
        descriptor: &'static ResourceDescriptor,
        _namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool {
        (descriptor.group, descriptor.plural)
            == ("certificates.k8s.io", "certificatesigningrequests")
            && subresource.is_empty()
            && operation == Operation::Create
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            let Some(message) = attributes.object.and_then(refusal) else {
                return Ok(());
            };
            Err(Status::forbidden(
                "certificates.k8s.io",
                "certificatesigningrequests",
                attributes.resource_name(),
                &message,
            )
            .into())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `openssl req -new -subj "/O=system:masters/CN=mallory"` with a P-256 key.
    const MASTERS_CSR: &str = "-----BEGIN CERTIFICATE REQUEST-----
MIHmMIGNAgEAMCsxFzAVBgNVBAoMDnN5c3RlbTptYXN0ZXJzMRAwDgYDVQQDDAdt
YWxsb3J5MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE+QbyTMrNjxmbvzHa2nEg
/xhvMZ0/OZujajJysMqsO0Rh0r9E2Byy9Ek35U3KHRk3W0I1gqNM4g5jner1dB9b
jqAAMAoGCCqGSM49BAMCA0gAMEUCIQCB/h+dtUl66ZAHX+F4clnOAoycfX4ikH7a
htNVwgTNOAIgYwQ+fTcNhcMPcvySp/9eZhi51TgUaTECc2pzySc8q6U=
-----END CERTIFICATE REQUEST-----
";

    fn csr(signer: &str, pem: &str) -> Value {
        let request = base64::engine::general_purpose::STANDARD.encode(pem);
        json!({"spec": {"signerName": signer, "request": request}})
    }

    #[test]
    fn masters_may_not_ask_the_apiserver_client_signer() {
        assert_eq!(
            refusal(&csr(KUBE_APISERVER_CLIENT, MASTERS_CSR)).as_deref(),
            Some(
                "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
            )
        );
        assert_eq!(refusal(&csr("example.com/other", MASTERS_CSR)), None);
        assert_eq!(
            refusal(&csr(KUBE_APISERVER_CLIENT, "nonsense")).as_deref(),
            Some("failed to parse CSR: PEM block type must be CERTIFICATE REQUEST")
        );
    }
}
