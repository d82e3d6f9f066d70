//! `ResourceDescriptor`: everything about a resource that is data. Discovery, routing and
//! the handlers read it; nothing probes a store to find out what it can do.

use kas_apimachinery::schema::Message;

/// Upstream's verbs, as discovery lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verb {
    Create,
    Delete,
    DeleteCollection,
    Get,
    List,
    Patch,
    Update,
    Watch,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Patch => "patch",
            Verb::Update => "update",
            Verb::Watch => "watch",
        }
    }

    /// A custom resource's verbs, in the order upstream's CRD discovery controller lists
    /// them.
    pub const CUSTOM_RESOURCE: &'static [Verb] = &[
        Verb::Delete,
        Verb::DeleteCollection,
        Verb::Get,
        Verb::List,
        Verb::Patch,
        Verb::Create,
        Verb::Update,
        Verb::Watch,
    ];

    /// The full set a plain read-write resource has.
    pub const ALL: &'static [Verb] = &[
        Verb::Create,
        Verb::Delete,
        Verb::DeleteCollection,
        Verb::Get,
        Verb::List,
        Verb::Patch,
        Verb::Update,
        Verb::Watch,
    ];
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Namespaced,
    Cluster,
}

/// A subresource: one entry that routing, legacy and aggregated discovery, and the OpenAPI
/// documents all read, so adding one to a resource touches nothing else.
#[derive(Clone, Copy, Debug)]
pub struct Subresource {
    /// The path segment after the object's name (`status`, `scale`, `finalize`).
    pub name: &'static str,
    /// The verbs its routes serve, as discovery lists them.
    pub verbs: &'static [Verb],
    /// The kind it reads and writes when that is not the parent's (`Scale`).
    pub kind: Option<SubresourceKind>,
    /// What serves it.
    pub handler: SubresourceHandler,
}

/// The group, version and kind of a subresource that has its own (upstream's
/// `GroupVersionKindProvider`), with its schema.
#[derive(Clone, Copy, Debug)]
pub struct SubresourceKind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub schema: &'static Message,
}

/// The generic subresources the store and the handlers serve.
#[derive(Clone, Copy, Debug)]
pub enum SubresourceHandler {
    /// `.status`: get, update, patch and apply of the object, of which only `.status` is
    /// written (upstream's `StatusREST`).
    Status,
    /// An autoscaling/v1 `Scale` view of the replica count (upstream's `ScaleREST`); the
    /// spec says where the count and the selector live.
    Scale(ScaleSpec),
    /// An update whose effect the strategy defines (`Strategy::subresource_update`): a
    /// namespace's `finalize`.
    StrategyUpdate,
    /// A create (POST) of the subresource's own kind whose effect on the object the
    /// strategy defines (`Strategy::subresource_create`): a pod's `binding` and its
    /// `eviction`. The answer is a `Status` of success, as upstream's `BindingREST` and
    /// `EvictionREST` answer.
    StrategyCreate,
    /// Upstream's `rest.Connecter` subresources (`pods/log`, `pods/exec`, `pods/proxy`,
    /// ...): every request goes, with its raw options, to the connecter the role
    /// registered for the subresource, which answers it as it likes (a stream, a proxied
    /// answer).
    Connect(ConnectSpec),
}

/// The HTTP methods a connect subresource's routes take (upstream's `ConnectMethods`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectMethod {
    Get,
    Post,
    Put,
    Patch,
    Delete,
    Head,
    Options,
}

impl ConnectMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectMethod::Get => "GET",
            ConnectMethod::Post => "POST",
            ConnectMethod::Put => "PUT",
            ConnectMethod::Patch => "PATCH",
            ConnectMethod::Delete => "DELETE",
            ConnectMethod::Head => "HEAD",
            ConnectMethod::Options => "OPTIONS",
        }
    }

    /// Every method upstream's proxies take (`proxyMethods`).
    pub const PROXY: &'static [ConnectMethod] = &[
        ConnectMethod::Get,
        ConnectMethod::Post,
        ConnectMethod::Put,
        ConnectMethod::Patch,
        ConnectMethod::Delete,
        ConnectMethod::Head,
        ConnectMethod::Options,
    ];
}

/// What a connect subresource serves: its methods, whether it also takes a `/{path:*}`
/// suffix (upstream's `NewConnectOptions` with a subpath, the proxies), and the kind
/// discovery names (its options' kind, or the parent's for `pods/log`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectSpec {
    pub methods: &'static [ConnectMethod],
    pub subpath: bool,
    pub kind: &'static str,
}

impl Subresource {
    /// `status`: get, patch, update.
    pub const STATUS: Subresource = Subresource {
        name: "status",
        verbs: &[Verb::Get, Verb::Patch, Verb::Update],
        kind: None,
        handler: SubresourceHandler::Status,
    };

    /// A namespace's `finalize`: update only.
    pub const FINALIZE: Subresource = Subresource {
        name: "finalize",
        verbs: &[Verb::Update],
        kind: None,
        handler: SubresourceHandler::StrategyUpdate,
    };

    /// `scale`: get, patch, update of an autoscaling/v1 Scale.
    pub const fn scale(spec: ScaleSpec) -> Subresource {
        Subresource {
            name: "scale",
            verbs: &[Verb::Get, Verb::Patch, Verb::Update],
            kind: Some(SubresourceKind {
                group: "autoscaling",
                version: "v1",
                kind: "Scale",
                schema: &kas_api::autoscaling::v1::SCALE,
            }),
            handler: SubresourceHandler::Scale(spec),
        }
    }

    /// A connect subresource (`pods/exec`, `pods/log`): its verbs as discovery lists them.
    pub const fn connect(name: &'static str, verbs: &'static [Verb], spec: ConnectSpec) -> Self {
        Subresource {
            name,
            verbs,
            kind: None,
            handler: SubresourceHandler::Connect(spec),
        }
    }

    /// A `proxy` subresource (pods, services, nodes) whose options are of kind `kind`:
    /// every proxy method, on `proxy` and `proxy/{path:*}`.
    pub const fn proxy(kind: &'static str) -> Self {
        Subresource::connect(
            "proxy",
            &[
                Verb::Create,
                Verb::Delete,
                Verb::Get,
                Verb::Patch,
                Verb::Update,
            ],
            ConnectSpec {
                methods: ConnectMethod::PROXY,
                subpath: true,
                kind,
            },
        )
    }

    pub fn allows(&self, verb: Verb) -> bool {
        self.verbs.contains(&verb)
    }
}

/// Where an object keeps what its `/scale` subresource shows, after upstream's
/// `CustomResourceSubresourceScale`: JSON paths such as `.spec.replicas`, for built-in
/// workloads and custom resources alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleSpec {
    /// An integer; the one field a write of the Scale changes.
    pub spec_replicas: &'static str,
    pub status_replicas: &'static str,
    /// Where `status.selector` comes from; `None` leaves it empty.
    pub label_selector: Option<ScaleSelector>,
}

/// The source of a Scale's `status.selector`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleSelector {
    /// A string already in selector syntax, shown as it is (a CRD's `labelSelectorPath`).
    String(&'static str),
    /// A `metav1.LabelSelector`, shown in its string form, as upstream's deployments,
    /// replica sets and stateful sets show their `.spec.selector`.
    LabelSelector(&'static str),
    /// A `map[string]string` of labels, shown as the selector of that set, as upstream's
    /// replication controllers show their `.spec.selector`.
    Set(&'static str),
}

/// A column of the Table view (`kubectl get`), after upstream's TableColumnDefinition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableColumn {
    pub name: &'static str,
    /// OpenAPI type: string, integer, date, ...
    pub type_: &'static str,
    pub format: &'static str,
    pub description: &'static str,
    /// 0 is shown by default; higher only with `-o wide`.
    pub priority: i32,
}

/// Everything about a resource that is data.
#[derive(Clone, Debug)]
pub struct ResourceDescriptor {
    /// "" for the legacy core group.
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub list_kind: &'static str,
    /// The resource name in URLs, e.g. "configmaps".
    pub plural: &'static str,
    pub singular: &'static str,
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
    pub scope: Scope,
    pub verbs: &'static [Verb],
    /// Its subresources; see [`Subresource`].
    pub subresources: &'static [Subresource],
    /// Columns after the Name column (or, without `table_name_and_age`, the whole row).
    pub table_columns: &'static [TableColumn],
    /// Name first and Age last around `table_columns`, as upstream prints most
    /// resources; false when the resource's printer lays out every column (events).
    pub table_name_and_age: bool,
    /// The etcd key segment, usually the plural (`/registry/<this>/<ns>/<name>`).
    pub storage_resource: &'static str,
    /// The kind's shape and its list's (protobuf, unknown fields, OpenAPI); `None` only
    /// for test descriptors.
    pub schema: Option<&'static Message>,
    pub list_schema: Option<&'static Message>,
}

impl ResourceDescriptor {
    pub fn namespaced(&self) -> bool {
        self.scope == Scope::Namespaced
    }

    pub fn api_version(&self) -> String {
        api_version(self.group, self.version)
    }

    /// The `apiVersion` of [`ResourceDescriptor::storage_version`].
    pub fn storage_api_version(&self) -> String {
        let (group, version, _) = self.storage_version();
        api_version(group, version)
    }

    pub fn allows(&self, verb: Verb) -> bool {
        self.verbs.contains(&verb)
    }

    /// The subresource named `name`, if the resource has it.
    pub fn subresource(&self, name: &str) -> Option<&'static Subresource> {
        self.subresources.iter().find(|s| s.name == name)
    }

    /// The group, version and kind its objects are stored as: its own, except for
    /// upstream's cohabitating resources, which are stored as the first of their
    /// cohabitants. Discovery's `storageVersionHash` names it, and Invalid errors name its
    /// group and kind, as upstream's name the internal object's.
    pub fn storage_version(&self) -> (&'static str, &'static str, &'static str) {
        COHABITATING
            .iter()
            .find(|(served, _)| *served == (self.group, self.storage_resource))
            .map_or((self.group, self.version, self.kind), |(_, stored)| *stored)
    }
}

/// `group/version`, or the bare version of the core group.
fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// Upstream's `AddCohabitatingResources` that kas serves, the resources a group serves
/// in several versions from one storage version, and those upstream 1.33 stores in a
/// version it no longer serves (the storage factory's beta versions of IPAddress and
/// ServiceCIDR, apiextensions' v1beta1 CRDs): (group, storage resource) and the group,
/// version and kind it is stored as.
type Cohabitant = (
    (&'static str, &'static str),
    (&'static str, &'static str, &'static str),
);
const COHABITATING: &[Cohabitant] = &[
    (("events.k8s.io", "events"), ("", "v1", "Event")),
    (
        ("autoscaling", "horizontalpodautoscalers"),
        ("autoscaling", "v2", "HorizontalPodAutoscaler"),
    ),
    (
        ("networking.k8s.io", "ipaddresses"),
        ("networking.k8s.io", "v1beta1", "IPAddress"),
    ),
    (
        ("networking.k8s.io", "servicecidrs"),
        ("networking.k8s.io", "v1beta1", "ServiceCIDR"),
    ),
    (
        (
            "apiextensions.k8s.io",
            "apiextensions.k8s.io/customresourcedefinitions",
        ),
        (
            "apiextensions.k8s.io",
            "v1beta1",
            "CustomResourceDefinition",
        ),
    ),
];

/// Descriptors unit tests share, here and in kas-endpoints (feature `testing`).
#[cfg(any(test, feature = "testing"))]
pub mod fixtures {
    use super::*;

    const fn namespaced(
        group: &'static str,
        (kind, list_kind, plural, singular): (
            &'static str,
            &'static str,
            &'static str,
            &'static str,
        ),
        short_names: &'static [&'static str],
        (schema, list_schema): (&'static Message, &'static Message),
    ) -> ResourceDescriptor {
        ResourceDescriptor {
            group,
            version: "v1",
            kind,
            list_kind,
            plural,
            singular,
            short_names,
            categories: &[],
            scope: Scope::Namespaced,
            verbs: Verb::ALL,
            subresources: &[],
            table_columns: &[],
            table_name_and_age: true,
            storage_resource: plural,
            schema: Some(schema),
            list_schema: Some(list_schema),
        }
    }

    pub const CONFIG_MAP: ResourceDescriptor = namespaced(
        "",
        ("ConfigMap", "ConfigMapList", "configmaps", "configmap"),
        &["cm"],
        (
            &kas_api::core::v1::CONFIG_MAP,
            &kas_api::core::v1::CONFIG_MAP_LIST,
        ),
    );

    pub const LEASE: ResourceDescriptor = namespaced(
        "coordination.k8s.io",
        ("Lease", "LeaseList", "leases", "lease"),
        &[],
        (
            &kas_api::coordination::v1::LEASE,
            &kas_api::coordination::v1::LEASE_LIST,
        ),
    );
}
