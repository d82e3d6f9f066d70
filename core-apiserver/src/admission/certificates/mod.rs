//! Upstream's `CertificateApproval` and `CertificateSigning` plugins
//! (`plugin/pkg/admission/certificates/{approval,signing}`): approving a
//! CertificateSigningRequest, or writing its certificate or conditions through `status`,
//! needs the `approve` or `sign` verb on the synthetic `signers` resource named by the
//! request's signer (or its `<domain>/*`), as the authorizer decides.

pub mod approval;
pub mod signing;

use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_auth::UserInfo;
use kas_auth::authorization::{Attributes as AuthzAttributes, Decision, DynAuthorizer};
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Attributes, Operation};
use serde_json::Value;

const GROUP: &str = "certificates.k8s.io";
const RESOURCE: &str = "certificatesigningrequests";

/// Upstream's `IsAuthorizedForSignerName`: `verb` on signer `signer_name`, else on its
/// domain's wildcard (`kubernetes.io/*`); an authorizer error is a refusal.
pub async fn is_authorized_for_signer_name(
    authorizer: &DynAuthorizer,
    user: &UserInfo,
    verb: &str,
    signer_name: &str,
) -> bool {
    let domain = signer_name.split('/').next().unwrap_or_default();
    for name in [signer_name.to_owned(), format!("{domain}/*")] {
        let attrs = AuthzAttributes {
            user: user.clone(),
            verb: verb.to_owned(),
            is_resource_request: true,
            api_group: GROUP.to_owned(),
            api_version: "*".to_owned(),
            resource: "signers".to_owned(),
            name,
            ..AuthzAttributes::default()
        };
        if matches!(authorizer.authorize(&attrs).await, Ok((Decision::Allow, _))) {
            return true;
        }
    }
    false
}

/// Whether a plugin on `subresource` updates of CSRs looks at this write.
fn handles_update(
    descriptor: &'static ResourceDescriptor,
    subresource: &str,
    operation: Operation,
    wanted: &str,
) -> bool {
    (descriptor.group, descriptor.plural) == (GROUP, RESOURCE)
        && subresource == wanted
        && operation == Operation::Update
}

/// Refuses unless the writer may `verb` the old object's signer (upstream checks the old
/// one, in case the write also tries to change the signer), with upstream's message.
fn check_signer<'a>(
    authorizer: &'a DynAuthorizer,
    attributes: &'a Attributes<'a>,
    verb: &'static str,
    action: &'static str,
) -> BoxFuture<'a, kas_registry::Result<()>> {
    Box::pin(async move {
        let signer = attributes
            .old_object
            .and_then(|o| o.pointer("/spec/signerName"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let anonymous = UserInfo::default();
        let user = attributes.user.unwrap_or(&anonymous);
        if is_authorized_for_signer_name(authorizer, user, verb, signer).await {
            return Ok(());
        }
        let message = format!(
            "user not permitted to {action} requests with signerName {}",
            kas_apimachinery::golang::strconv::quote(signer)
        );
        Err(Status::forbidden(GROUP, RESOURCE, attributes.resource_name(), &message).into())
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use kas_auth::authorization::{Authorizer, Decision};
    use kas_registry::admission::Validate;
    use serde_json::json;

    use super::*;

    /// Allows `verb` on the signers named, for user "alice" only.
    struct Grants(Vec<(&'static str, &'static str)>);

    impl Authorizer for Grants {
        fn authorize<'a>(
            &'a self,
            attrs: &'a AuthzAttributes,
        ) -> BoxFuture<'a, kas_auth::Result<(Decision, String)>> {
            let allowed = attrs.user.name == "alice"
                && (
                    attrs.api_group.as_str(),
                    attrs.resource.as_str(),
                    attrs.api_version.as_str(),
                ) == (GROUP, "signers", "*")
                && self
                    .0
                    .iter()
                    .any(|(verb, name)| attrs.verb == *verb && attrs.name == *name);
            let decision = if allowed {
                Decision::Allow
            } else {
                Decision::NoOpinion
            };
            Box::pin(async move { Ok((decision, String::new())) })
        }
    }

    fn csr(signer: &str, certificate: Option<&str>) -> Value {
        let mut csr = json!({"metadata": {"name": "req"}, "spec": {"signerName": signer}});
        if let Some(cert) = certificate {
            csr["status"] = json!({"certificate": cert});
        }
        csr
    }

    fn descriptor() -> &'static ResourceDescriptor {
        &crate::resources::certificates::DESCRIPTOR
    }

    async fn run(
        plugin: &dyn Validate,
        subresource: &str,
        user: &str,
        new: &Value,
        old: &Value,
    ) -> kas_registry::Result<()> {
        let user = UserInfo {
            name: user.to_owned(),
            ..UserInfo::default()
        };
        let mut attributes = Attributes::new(Operation::Update, descriptor(), "", "req", Some(new));
        attributes.old_object = Some(old);
        attributes.subresource = subresource;
        attributes.user = Some(&user);
        assert!(plugin.handles(descriptor(), "", subresource, Operation::Update));
        plugin.validate(&attributes).await
    }

    fn grants(g: Vec<(&'static str, &'static str)>) -> DynAuthorizer {
        Arc::new(Grants(g))
    }

    #[tokio::test]
    async fn approval_needs_approve_on_the_signer_or_its_domain() {
        let old = csr("example.com/my-signer", None);
        let exact = approval::CertificateApproval {
            authorizer: grants(vec![("approve", "example.com/my-signer")]),
        };
        run(&exact, "approval", "alice", &old, &old).await.unwrap();
        let wildcard = approval::CertificateApproval {
            authorizer: grants(vec![("approve", "example.com/*")]),
        };
        run(&wildcard, "approval", "alice", &old, &old)
            .await
            .unwrap();
        let err = run(&exact, "approval", "bob", &old, &old)
            .await
            .unwrap_err();
        let status = err.to_status();
        assert_eq!(status.code, 403);
        assert_eq!(
            status.message.as_deref().unwrap_or_default(),
            r#"certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted to approve requests with signerName "example.com/my-signer""#
        );
        // The old object's signer counts, not the one the write asks for.
        let new = csr("other.io/x", None);
        run(&exact, "approval", "alice", &new, &old).await.unwrap();
        assert!(!exact.handles(descriptor(), "", "status", Operation::Update));
        assert!(!exact.handles(descriptor(), "", "approval", Operation::Create));
    }

    #[tokio::test]
    async fn signing_is_checked_only_when_the_certificate_or_conditions_change() {
        let plugin = signing::CertificateSigning {
            authorizer: grants(vec![("sign", "example.com/*")]),
        };
        let old = csr("example.com/s", None);
        run(&plugin, "status", "bob", &old, &old).await.unwrap();
        let issued = csr("example.com/s", Some("Y2VydA=="));
        run(&plugin, "status", "alice", &issued, &old)
            .await
            .unwrap();
        let err = run(&plugin, "status", "bob", &issued, &old)
            .await
            .unwrap_err();
        let status = err.to_status();
        assert_eq!(
            status.message.as_deref().unwrap_or_default(),
            r#"certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not permitted to sign requests with signerName "example.com/s""#
        );
        let mut conditions = old.clone();
        conditions["status"] = json!({"conditions": [{"type": "Failed", "status": "True"}]});
        assert!(
            run(&plugin, "status", "bob", &conditions, &old)
                .await
                .is_err()
        );
        let mut empty = old.clone();
        empty["status"] = json!({"conditions": []});
        run(&plugin, "status", "bob", &empty, &old).await.unwrap();
    }
}
