//! The audit annotations webhooks leave on the request's event, as upstream's dispatchers
//! write them (`mutating/dispatcher.go`'s `webhookAnnotator`, and both dispatchers'
//! `auditAnnotations`): `<webhook>/<key>` for what a webhook's answer annotates;
//! `mutation.webhook.admission.k8s.io/round_<r>_index_<i>` for each mutating webhook
//! called, `patch.webhook.admission.k8s.io/...` with its patch at Request level and above,
//! `failed-open.mutation.webhook.admission.k8s.io/...` for one whose failure was ignored.

use std::collections::BTreeMap;

use kas_audit::Level;
use kas_registry::rest::options::AuditAnnotations;
use serde::Serialize;
use serde_json::Value;

use crate::source::Hook;

const PATCH_PREFIX: &str = "patch.webhook.admission.k8s.io/";
const MUTATION_PREFIX: &str = "mutation.webhook.admission.k8s.io/";
const FAILED_OPEN_PREFIX: &str = "failed-open.mutation.webhook.admission.k8s.io/";

/// One webhook call's annotations.
pub(crate) struct Annotator<'a> {
    audit: Option<&'a AuditAnnotations>,
    hook: &'a Hook,
    key: String,
}

impl<'a> Annotator<'a> {
    pub(crate) fn new(
        audit: Option<&'a AuditAnnotations>,
        hook: &'a Hook,
        round: usize,
        index: usize,
    ) -> Annotator<'a> {
        Annotator {
            audit,
            hook,
            key: format!("round_{round}_index_{index}"),
        }
    }

    /// The answer's `auditAnnotations`, each under the webhook's name.
    pub(crate) fn webhook_annotations(&self, annotations: &BTreeMap<String, String>) {
        let Some(audit) = self.audit else { return };
        for (k, v) in annotations {
            audit.add(&format!("{}/{k}", self.hook.name), v);
        }
    }

    /// Whether the call changed the object.
    pub(crate) fn mutation(&self, mutated: bool) {
        let Some(audit) = self.audit else { return };
        let value = go_json(&MutationAnnotation {
            configuration: &self.hook.configuration,
            webhook: &self.hook.name,
            mutated,
        });
        audit.add(&format!("{MUTATION_PREFIX}{}", self.key), &value);
    }

    /// The JSONPatch the webhook answered, at Request level and above.
    pub(crate) fn patch(&self, patch: &[u8]) {
        let Some(audit) = self.audit else { return };
        if audit.level() < Level::Request {
            return;
        }
        let Ok(patch) = serde_json::from_slice::<Value>(patch) else {
            return;
        };
        // The patch as Go marshals its decoded form: map keys sorted, as serde_json's are.
        let value = go_json(&PatchAnnotation {
            configuration: &self.hook.configuration,
            webhook: &self.hook.name,
            patch,
            patch_type: "JSONPatch",
        });
        audit.add_with_level(
            &format!("{PATCH_PREFIX}{}", self.key),
            &value,
            Level::Request,
        );
    }

    /// A call whose failure the webhook's policy ignored.
    pub(crate) fn failed_open(&self) {
        if let Some(audit) = self.audit {
            audit.add(
                &format!("{FAILED_OPEN_PREFIX}{}", self.key),
                &self.hook.name,
            );
        }
    }
}

/// Upstream's `MutationAuditAnnotation`.
#[derive(Serialize)]
struct MutationAnnotation<'a> {
    configuration: &'a str,
    webhook: &'a str,
    mutated: bool,
}

/// Upstream's `PatchAuditAnnotation`.
#[derive(Serialize)]
struct PatchAnnotation<'a> {
    configuration: &'a str,
    webhook: &'a str,
    patch: Value,
    #[serde(rename = "patchType")]
    patch_type: &'a str,
}

fn go_json(value: &impl Serialize) -> String {
    kas_apimachinery::golang::json::to_vec(value)
        .map(|v| String::from_utf8_lossy(&v).into_owned())
        .unwrap_or_default()
}
