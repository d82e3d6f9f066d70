//! admissionregistration.k8s.io/v1 MutatingWebhookConfiguration, after upstream's
//! `pkg/registry/admissionregistration/mutatingwebhookconfiguration` and
//! `printValidatingWebhook` (columns `Webhooks`, `Age`).

use kas_registry::{ResourceDescriptor, Scope, Verb};

use super::webhook::{WEBHOOKS_COLUMN, WebhookConfigurationStrategy};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "MutatingWebhookConfiguration",
    list_kind: "MutatingWebhookConfigurationList",
    plural: "mutatingwebhookconfigurations",
    singular: "mutatingwebhookconfiguration",
    short_names: &[],
    categories: &["api-extensions"],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[WEBHOOKS_COLUMN],
    table_name_and_age: true,
    storage_resource: "mutatingwebhookconfigurations",
    schema: Some(&kas_api::admissionregistration::v1::MUTATING_WEBHOOK_CONFIGURATION),
    list_schema: Some(&kas_api::admissionregistration::v1::MUTATING_WEBHOOK_CONFIGURATION_LIST),
};

/// The strategy (upstream's, shared with the validating configurations).
pub const STRATEGY: WebhookConfigurationStrategy = WebhookConfigurationStrategy { mutating: true };

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, STRATEGY)
}
