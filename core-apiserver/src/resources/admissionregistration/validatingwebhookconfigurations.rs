//! admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration, after upstream's
//! `pkg/registry/admissionregistration/validatingwebhookconfiguration` and
//! `printValidatingWebhook` (columns `Webhooks`, `Age`).

use kas_registry::{ResourceDescriptor, Scope, Verb};

use super::webhook::{WEBHOOKS_COLUMN, WebhookConfigurationStrategy};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "ValidatingWebhookConfiguration",
    list_kind: "ValidatingWebhookConfigurationList",
    plural: "validatingwebhookconfigurations",
    singular: "validatingwebhookconfiguration",
    short_names: &[],
    categories: &["api-extensions"],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[WEBHOOKS_COLUMN],
    table_name_and_age: true,
    storage_resource: "validatingwebhookconfigurations",
    schema: Some(&kas_api::admissionregistration::v1::VALIDATING_WEBHOOK_CONFIGURATION),
    list_schema: Some(&kas_api::admissionregistration::v1::VALIDATING_WEBHOOK_CONFIGURATION_LIST),
};

/// The strategy (upstream's, shared with the mutating configurations).
pub const STRATEGY: WebhookConfigurationStrategy = WebhookConfigurationStrategy { mutating: false };

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, STRATEGY)
}
