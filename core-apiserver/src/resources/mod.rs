//! The built-in resources core-apiserver serves.

pub mod admissionregistration;
pub mod apps;
pub mod authentication;
pub mod authorization;
pub mod autoscaling;
pub mod batch;
pub mod bindings;
pub mod certificates;
pub mod componentstatuses;
pub mod configmaps;
pub mod discovery;
pub mod endpoints;
pub mod events;
pub mod flowcontrol;
pub mod leases;
pub mod limitranges;
pub mod namespaces;
pub mod networking;
pub mod node;
pub mod nodes;
pub mod persistentvolumeclaims;
pub mod persistentvolumes;
pub mod pods;
pub mod podtemplates;
pub mod policy;
pub mod rbac;
pub mod replicationcontrollers;
pub mod resourcequotas;
pub mod scheduling;
pub mod secrets;
pub mod serviceaccounts;
pub mod services;
pub mod storage;

use std::sync::Arc;
use std::time::Duration;

use kas_registry::store::Store;
use kas_registry::{ResourceDescriptor, Strategy, Verb};
use kas_storage::Storage;

/// How a store reads: from the resource, its strategy and whether upstream gives it a
/// watch cache by default (all but events), a watch cache (which keeps each object's
/// attributes, `kas_registry::store::get_attrs`, and indexes by the strategy's
/// `index_field`) or etcd itself, as `--watch-cache` and `--watch-cache-sizes` say.
pub type StorageFor<'a> =
    dyn FnMut(&'static ResourceDescriptor, &Arc<dyn Strategy>, bool) -> Arc<dyn Storage> + 'a;

/// What the resources take from the command line.
#[derive(Clone, Debug)]
pub struct ResourceOptions {
    /// `--event-ttl`: how long an event lives after its last write.
    pub event_ttl: Duration,
    /// `--feature-gates`.
    pub features: kas_registry::features::FeatureGates,
    /// `--service-cluster-ip-range`: one CIDR, or two of different families.
    pub service_cluster_ip_range: Vec<String>,
    /// `--service-node-port-range`.
    pub service_node_port_range: String,
    /// The admission plugins that run, in order (`AdmissionOptions::enabled`).
    pub admission_plugins: Vec<String>,
    /// The kubelet client flags the connect subresources use.
    pub kubelet: crate::connect::KubeletOptions,
    /// What the authentication and authorization reviews consult.
    pub reviewers: Reviewers,
    /// What `serviceaccounts/token` signs with; none without a signing key.
    pub service_account_token: Option<Arc<serviceaccounts::token::TokenConfig>>,
    /// The service-account issuer's OIDC discovery documents, when served.
    pub openid_metadata: Option<Arc<kas_auth::authentication::serviceaccount::OpenIdMetadata>>,
    /// The service-account flags (TokenReviews verify tokens with their keys).
    pub service_accounts: kas_server::options::ServiceAccountOptions,
    /// Whether watch caches index by their strategies' `index_field` (off only to measure
    /// what the index saves).
    pub watch_cache_index: bool,
    /// How often the identity Lease is renewed and expired ones collected.
    pub identity_lease: crate::identity::Periods,
    /// `--delete-collection-workers` (an etcd flag, set from the role's etcd options).
    pub delete_collection_workers: usize,
    /// `--etcd-count-metric-poll-period` (likewise): how often each stored resource's
    /// objects are counted for `apiserver_storage_objects`.
    pub count_metric_poll_period: Duration,
}

/// What the review APIs consult (upstream's authentication and authorization
/// `RESTStorageProvider`s): the server's authenticator and `--api-audiences` for
/// TokenReviews, its authorizer for the access reviews, RBAC's rule resolver for
/// SelfSubjectRulesReviews. Unset, TokenReviews are answered unreviewed and the
/// authorization reviews are not served (404), as upstream without them.
#[derive(Clone, Default)]
pub struct Reviewers {
    pub authenticator: Option<kas_auth::authentication::DynAuthenticator>,
    pub api_audiences: Vec<String>,
    pub authorizer: Option<kas_auth::authorization::DynAuthorizer>,
    pub rule_resolver: Option<kas_auth::authorization::DynRuleResolver>,
}

/// Which of them are set (they are trait objects).
impl std::fmt::Debug for Reviewers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reviewers")
            .field("authenticator", &self.authenticator.is_some())
            .field("api_audiences", &self.api_audiences)
            .field("authorizer", &self.authorizer.is_some())
            .field("rule_resolver", &self.rule_resolver.is_some())
            .finish()
    }
}

/// Upstream's `DefaultServiceIPCIDR`, when `--service-cluster-ip-range` is not given.
pub const DEFAULT_SERVICE_IP_CIDR: &str = "10.0.0.0/24";
/// Upstream's `DefaultServiceNodePortRange`.
pub const DEFAULT_SERVICE_NODE_PORT_RANGE: &str = "30000-32767";

impl Default for ResourceOptions {
    fn default() -> Self {
        ResourceOptions {
            event_ttl: events::DEFAULT_EVENT_TTL,
            features: Default::default(),
            service_cluster_ip_range: vec![DEFAULT_SERVICE_IP_CIDR.to_owned()],
            service_node_port_range: DEFAULT_SERVICE_NODE_PORT_RANGE.to_owned(),
            admission_plugins: crate::admission::AdmissionOptions::default().enabled(),
            kubelet: Default::default(),
            reviewers: Reviewers::default(),
            service_account_token: None,
            openid_metadata: None,
            service_accounts: Default::default(),
            watch_cache_index: true,
            identity_lease: crate::identity::Periods::default(),
            delete_collection_workers: 1,
            count_metric_poll_period: Duration::ZERO,
        }
    }
}

/// Whether a resource is read through a watch cache or straight from etcd.
#[derive(Clone, Copy)]
pub enum Reads {
    Cached,
    /// Upstream's `DefaultWatchCacheSizes` gives both event resources no watch cache:
    /// events are written far more than watched, and caching them costs memory.
    Etcd,
    /// A resource that is not stored: its own storage, built over etcd (component
    /// statuses, probed on each read).
    Own(fn(&Arc<dyn Storage>) -> Arc<dyn Storage>),
}

/// Builds a resource's write hooks over the etcd store (a Service's allocators).
pub type HooksFor =
    Box<dyn FnOnce(&Arc<dyn Storage>) -> Result<Arc<dyn kas_registry::hooks::WriteHooks>, String>>;

/// What a resource file gives the role: its descriptor, its strategy (built from the
/// command line's options), how it is read, and the hooks around its writes.
pub struct Install {
    pub descriptor: &'static ResourceDescriptor,
    pub strategy: Arc<dyn Strategy>,
    pub reads: Reads,
    pub hooks: Option<HooksFor>,
}

impl Install {
    /// A resource whose strategy needs no options, read through a watch cache.
    pub fn cached(
        descriptor: &'static ResourceDescriptor,
        strategy: impl Strategy + 'static,
    ) -> Install {
        Install {
            descriptor,
            strategy: Arc::new(strategy),
            reads: Reads::Cached,
            hooks: None,
        }
    }
}

/// Every resource the role serves, in registration order: adding one is its file under
/// `resources/` and one line here.
const RESOURCES: &[fn(&ResourceOptions) -> Install] = &[
    configmaps::install,
    endpoints::install,
    secrets::install,
    serviceaccounts::install,
    namespaces::install,
    nodes::install,
    leases::install,
    limitranges::install,
    persistentvolumes::install,
    persistentvolumeclaims::install,
    resourcequotas::install,
    services::install,
    podtemplates::install,
    pods::install,
    bindings::install,
    replicationcontrollers::install,
    componentstatuses::install,
    events::install,
    events::v1::install,
    apps::statefulsets::install,
    apps::daemonsets::install,
    apps::controllerrevisions::install,
    apps::deployments::install,
    apps::replicasets::install,
    // batch
    batch::jobs::install,
    batch::cronjobs::install,
    // networking.k8s.io
    networking::ingresses::install,
    networking::ingressclasses::install,
    networking::networkpolicies::install,
    networking::ipaddresses::install,
    networking::servicecidrs::install,
    // policy
    policy::poddisruptionbudgets::install,
    // node.k8s.io
    node::runtimeclasses::install,
    // discovery.k8s.io
    discovery::endpointslices::install,
    // scheduling.k8s.io
    scheduling::priorityclasses::install,
    // rbac.authorization.k8s.io
    rbac::roles::install,
    rbac::clusterroles::install,
    rbac::rolebindings::install,
    rbac::clusterrolebindings::install,
    // storage.k8s.io
    storage::storageclasses::install,
    storage::volumeattachments::install,
    storage::csinodes::install,
    storage::csidrivers::install,
    storage::csistoragecapacities::install,
    // admissionregistration.k8s.io
    admissionregistration::validatingwebhookconfigurations::install,
    admissionregistration::mutatingwebhookconfigurations::install,
    admissionregistration::validatingadmissionpolicies::install,
    admissionregistration::validatingadmissionpolicybindings::install,
    // flowcontrol.apiserver.k8s.io
    flowcontrol::flowschemas::install,
    flowcontrol::prioritylevelconfigurations::install,
    // certificates.k8s.io
    certificates::install,
    // autoscaling
    autoscaling::install,
    autoscaling::v1::install,
    // authentication.k8s.io
    authentication::tokenreviews::install,
    authentication::selfsubjectreviews::install,
    // authorization.k8s.io
    authorization::subjectaccessreviews::install,
    authorization::selfsubjectaccessreviews::install,
    authorization::localsubjectaccessreviews::install,
    authorization::selfsubjectrulesreviews::install,
];

/// What core writes under each resource's key: its storage version, in
/// `--storage-media-type`, as kube-apiserver's storage factory writes them; and what it
/// reads there is defaulted by the strategy of the version stored, as upstream's codec
/// defaults what it decodes.
pub fn stored_kinds(
    opts: &ResourceOptions,
    media_type: kas_storage_etcd::MediaType,
) -> Vec<kas_storage_etcd::Registration> {
    let mut kinds: Vec<kas_storage_etcd::Registration> = Vec::new();
    for install in RESOURCES {
        let Install {
            descriptor: d,
            strategy,
            ..
        } = install(opts);
        let (group, version, kind) = d.storage_version();
        let defaults: Option<kas_storage_etcd::Defaulter> = ((d.group, d.version, d.kind)
            == (group, version, kind))
            .then(|| Arc::new(move |obj: &mut serde_json::Value| strategy.default(obj)) as _);
        match kinds
            .iter_mut()
            .find(|k| k.storage_resource == d.storage_resource)
        {
            Some(known) => known.defaults = known.defaults.take().or(defaults),
            None => kinds.push(kas_storage_etcd::Registration {
                storage_resource: d.storage_resource,
                kind: kas_storage_etcd::StoredKind {
                    group,
                    version,
                    kind,
                    resource: d.plural,
                    media_type,
                },
                defaults,
            }),
        }
    }
    // The node port allocator's bitmap (`services::alloc::portallocator`).
    kinds.push(kas_storage_etcd::Registration {
        storage_resource: services::alloc::portallocator::KEY.trim_start_matches('/'),
        kind: kas_storage_etcd::StoredKind {
            group: "",
            version: "v1",
            kind: "RangeAllocation",
            resource: "servicenodeportallocations",
            media_type,
        },
        defaults: None,
    });
    kinds
}

pub fn stores(
    opts: &ResourceOptions,
    etcd: &Arc<dyn Storage>,
    cache_for: &mut StorageFor<'_>,
) -> Result<Vec<Store>, String> {
    RESOURCES
        .iter()
        .map(|install| {
            let Install {
                descriptor,
                strategy,
                reads,
                hooks,
            } = install(opts);
            let storage = match reads {
                Reads::Cached => cache_for(descriptor, &strategy, true),
                Reads::Etcd => cache_for(descriptor, &strategy, false),
                Reads::Own(build) => build(etcd),
            };
            if !matches!(reads, Reads::Own(_)) && descriptor.verbs.contains(&Verb::List) {
                kas_storage_etcd::metrics::observe_count_forever(
                    (descriptor.group, descriptor.plural),
                    etcd.clone(),
                    descriptor.storage_resource,
                    opts.count_metric_poll_period,
                );
            }
            let store = Store::new(descriptor, strategy, storage)
                .with_delete_collection_workers(opts.delete_collection_workers);
            Ok(match hooks {
                Some(hooks) => store.with_hooks(hooks(etcd)?),
                None => store,
            })
        })
        .collect()
}

/// What strategy tests compare: each cause as `<field>: <message>`.
#[cfg(test)]
pub(crate) fn messages(errs: &kas_registry::strategy::FieldErrors) -> Vec<String> {
    errs.iter()
        .map(|c| {
            format!(
                "{}: {}",
                c.field.as_deref().unwrap_or(""),
                c.message.as_deref().unwrap_or("")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::{Scope, Verb};

    /// Every descriptor says what upstream's types say of its kind: the plural, the scope,
    /// the list kind and the schemas come from the generated registry, so a typo in a new
    /// resource file fails here rather than on a client.
    #[test]
    fn descriptors_agree_with_the_generated_kinds() {
        let opts = ResourceOptions::default();
        for install in RESOURCES {
            let d = install(&opts).descriptor;
            let entry = kas_api::KINDS
                .iter()
                .find(|k| (k.group, k.version, k.kind) == (d.group, d.version, d.kind))
                .unwrap_or_else(|| {
                    panic!("{}/{} {} is no generated kind", d.group, d.version, d.kind)
                });
            assert_eq!(d.plural, entry.plural, "{}", d.kind);
            let scope = match d.scope {
                Scope::Namespaced => "Namespace",
                Scope::Cluster => "Cluster",
            };
            assert_eq!(scope, entry.scope, "{}", d.kind);
            let schema = d.schema.expect("a built-in kind has a schema");
            assert!(std::ptr::eq(schema, entry.message), "{}", d.kind);
            if d.list_schema.is_none() && !d.allows(Verb::List) {
                // Created only (upstream's `bindings`): Go has no list type for it.
                continue;
            }
            let list = kas_api::kind(d.group, d.version, d.list_kind).expect("list kind");
            assert!(
                d.list_schema.is_some_and(|l| std::ptr::eq(l, list)),
                "{}",
                d.kind
            );
        }
    }

    /// Discovery lists a descriptor's verbs in its order, and upstream's installer sorts
    /// a built-in resource's.
    #[test]
    fn built_in_verbs_are_sorted() {
        let opts = ResourceOptions::default();
        for install in RESOURCES {
            let d = install(&opts).descriptor;
            let subresources = d.subresources.iter().map(|s| s.verbs);
            for verbs in std::iter::once(d.verbs).chain(subresources) {
                assert!(verbs.is_sorted(), "{}: {verbs:?}", d.kind);
            }
        }
    }

    /// A watch cache reads the indexed field from each object's selectable fields, so it
    /// must be one; only pods have one, as upstream's only trigger is pods'.
    #[test]
    fn index_fields_are_selectable_and_only_pods_have_one() {
        let opts = ResourceOptions::default();
        let mut indexed = Vec::new();
        for install in RESOURCES {
            let Install {
                descriptor,
                strategy,
                ..
            } = install(&opts);
            let Some(field) = strategy.index_field() else {
                continue;
            };
            let fields = strategy.field_set(&serde_json::json!({}));
            assert!(fields.contains_key(field), "{}: {field}", descriptor.kind);
            indexed.push((descriptor.plural, field));
        }
        assert_eq!(indexed, [("pods", "spec.nodeName")]);
    }
}
