//! Upstream's `MutatingAdmissionWebhook` and `ValidatingAdmissionWebhook` for custom
//! resources: the webhook configurations core-apiserver stores, followed from the same
//! etcd (read only, as the namespaces are), and kas-admission-webhook's plugins over each
//! CRD's stores, so a webhook whose rules name a custom resource is called for its writes
//! as upstream's APIExtensionsServer calls it.

use std::sync::Arc;

use kas_admission_webhook::source::Source;
use kas_admission_webhook::{MutatingAdmissionWebhook, ValidatingAdmissionWebhook, Webhooks};
use kas_registry::admission::{Admit, Mutate, Validate};
use kas_registry::store::Store;
use kas_registry::{ResourceDescriptor, Scope, Verb};

use crate::namespaces::ReadOnly;

/// One configuration kind as core stores it (`/registry/<plural>/<name>`).
const fn configurations(
    kind: &'static str,
    list_kind: &'static str,
    plural: &'static str,
    schema: &'static kas_apimachinery::schema::Message,
) -> ResourceDescriptor {
    ResourceDescriptor {
        group: "admissionregistration.k8s.io",
        version: "v1",
        kind,
        list_kind,
        plural,
        singular: "",
        short_names: &[],
        categories: &[],
        scope: Scope::Cluster,
        verbs: &[Verb::Get, Verb::List, Verb::Watch],
        subresources: &[],
        table_columns: &[],
        table_name_and_age: true,
        storage_resource: plural,
        schema: Some(schema),
        list_schema: None,
    }
}

static MUTATING: ResourceDescriptor = configurations(
    "MutatingWebhookConfiguration",
    "MutatingWebhookConfigurationList",
    "mutatingwebhookconfigurations",
    &kas_api::admissionregistration::v1::MUTATING_WEBHOOK_CONFIGURATION,
);
static VALIDATING: ResourceDescriptor = configurations(
    "ValidatingWebhookConfiguration",
    "ValidatingWebhookConfigurationList",
    "validatingwebhookconfigurations",
    &kas_api::admissionregistration::v1::VALIDATING_WEBHOOK_CONFIGURATION,
);

/// The configurations of both kinds, followed for as long as the process runs, and the
/// namespaces store `namespaceSelector`s read.
#[derive(Clone)]
pub struct Sources {
    mutating: Arc<Source>,
    validating: Arc<Source>,
    namespaces: Store,
}

/// The plugins of one CRD: the checks (deletes), the mutator and the validator.
pub struct Plugins {
    pub checks: Vec<Arc<dyn Admit>>,
    pub mutator: Arc<dyn Mutate>,
    pub validator: Arc<dyn Validate>,
}

impl Sources {
    /// Follows both kinds in `etcd` (call within the runtime).
    pub fn start(etcd: &Arc<dyn kas_storage::Storage>, namespaces: Store) -> Sources {
        let follow = |descriptor: &'static ResourceDescriptor| {
            let source = Arc::new(Source::default());
            source.follow(Store::new(descriptor, Arc::new(ReadOnly), etcd.clone()));
            source
        };
        Sources {
            mutating: follow(&MUTATING),
            validating: follow(&VALIDATING),
            namespaces,
        }
    }

    /// The plugins over a CRD's `stores` (its served versions; a deleted object is read
    /// from its own, a patched one defaulted by its strategy).
    pub fn plugins(&self, stores: &[Store]) -> Plugins {
        let mut all = stores.to_vec();
        all.push(self.namespaces.clone());
        let mutating = Arc::new(MutatingAdmissionWebhook(Webhooks::with_source(
            self.mutating.clone(),
            &all,
        )));
        let validating = Arc::new(ValidatingAdmissionWebhook(Webhooks::with_source(
            self.validating.clone(),
            &all,
        )));
        Plugins {
            checks: vec![mutating.clone(), validating.clone()],
            mutator: mutating,
            validator: validating,
        }
    }
}
