//! Upstream's `rbac/bootstrap-roles` post-start hook (`PolicyData.EnsureRBACPolicy`):
//! every default object created when missing and reconciled when it exists, through the
//! role's stores.
//!
//! Several replicas may run it at once: every write is conditional (a create fails when
//! the object exists, an update carries the resourceVersion it read, a delete the uid),
//! and an object whose write lost a race is reconciled again from a fresh read. A round
//! with failures is retried every second for 30 seconds, as upstream's `wait.Poll`; then
//! the start fails, as upstream's hook failing stops kube-apiserver.

use std::time::Duration;

use futures_util::StreamExt;
use kas_registry::rest::options::WriteOptions;
use kas_registry::store::Store;
use kas_storage::Preconditions;
use serde_json::Value;

use super::PolicyData;
use super::reconcile::{self, Operation};
use crate::resources::rbac::GROUP_NAME;

/// How often one object is reconciled again after losing a race.
const ATTEMPTS: usize = 5;
/// How many objects are reconciled at once.
const CONCURRENCY: usize = 32;
const POLL_INTERVAL: Duration = Duration::from_secs(1);
const POLL_TIMEOUT: Duration = Duration::from_secs(30);

/// What one write or read answered: the status code and message.
#[derive(Debug)]
struct Failure {
    code: u16,
    message: String,
}

impl From<kas_registry::Error> for Failure {
    fn from(e: kas_registry::Error) -> Self {
        let status = e.to_status();
        Failure {
            code: status.code,
            message: status.message.unwrap_or_default(),
        }
    }
}

fn opts() -> WriteOptions {
    WriteOptions {
        manager: "kube-apiserver".to_owned(),
        ..Default::default()
    }
}

/// The four stores the policy is written through.
struct Stores {
    cluster_roles: Store,
    cluster_role_bindings: Store,
    roles: Store,
    role_bindings: Store,
}

impl Stores {
    fn find(stores: &[Store]) -> Option<Self> {
        let find = |plural| crate::admission::store(stores, GROUP_NAME, plural);
        Some(Stores {
            cluster_roles: find("clusterroles")?,
            cluster_role_bindings: find("clusterrolebindings")?,
            roles: find("roles")?,
            role_bindings: find("rolebindings")?,
        })
    }
}

/// Creates or reconciles every object of `policy`; a no-op when the role does not serve
/// rbac.authorization.k8s.io.
pub async fn ensure_rbac_policy(stores: &[Store], policy: &PolicyData) -> Result<(), String> {
    let Some(stores) = Stores::find(stores) else {
        return Ok(());
    };
    let deadline = tokio::time::Instant::now() + POLL_TIMEOUT;
    loop {
        let failures = reconcile_round(&stores, policy).await;
        if failures.is_empty() {
            return Ok(());
        }
        for failure in &failures {
            tracing::warn!(error = %failure, "reconciling the bootstrap RBAC policy");
        }
        if tokio::time::Instant::now() + POLL_INTERVAL > deadline {
            return Err(format!(
                "unable to initialize roles: {}",
                failures.join("; ")
            ));
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// One pass over the policy; the failures, each naming its object.
async fn reconcile_round(stores: &Stores, policy: &PolicyData) -> Vec<String> {
    // Make sure etcd answers before reconciling.
    let list = kas_registry::rest::options::ListOptions::default();
    if let Err(e) = stores
        .cluster_roles
        .list("", &list, Default::default())
        .await
    {
        return vec![format!(
            "unable to initialize clusterroles: {}",
            Failure::from(e).message
        )];
    }
    if let Err(e) = prime_aggregated_cluster_roles(&stores.cluster_roles, policy).await {
        return vec![format!(
            "unable to prime aggregated clusterroles: {}",
            e.message
        )];
    }
    if let Err(e) = prime_split_bindings(&stores.cluster_role_bindings, policy).await {
        return vec![format!(
            "unable to prime split ClusterRoleBindings: {}",
            e.message
        )];
    }
    let roles = policy
        .cluster_roles
        .iter()
        .map(|r| (&stores.cluster_roles, "clusterrole", r))
        .chain(policy.roles.iter().map(|r| (&stores.roles, "role", r)));
    let mut failures = reconcile_each(roles, false).await;
    let bindings = policy
        .cluster_role_bindings
        .iter()
        .map(|b| (&stores.cluster_role_bindings, "clusterrolebinding", b))
        .chain(
            policy
                .role_bindings
                .iter()
                .map(|b| (&stores.role_bindings, "rolebinding", b)),
        );
    failures.extend(reconcile_each(bindings, true).await);
    failures
}

/// Reconciles each (store, kind, expected object), a few at once: roles, or bindings when
/// `bindings`; the failures.
async fn reconcile_each<'a>(
    objects: impl Iterator<Item = (&'a Store, &'static str, &'a Value)>,
    bindings: bool,
) -> Vec<String> {
    futures_util::stream::iter(objects)
        .map(|(store, kind, expected)| async move {
            let result = if bindings {
                reconcile_binding(store, expected).await
            } else {
                reconcile_role(store, expected).await
            };
            result.err().map(|e| describe(kind, expected, &e))
        })
        .buffer_unordered(CONCURRENCY)
        .filter_map(|f| async move { f })
        .collect()
        .await
}

/// Upstream's log line for an object that failed to reconcile.
fn describe(kind: &str, obj: &Value, failure: &Failure) -> String {
    let (ns, name) = (
        kas_registry::meta::namespace(obj),
        kas_registry::meta::name(obj),
    );
    let at = if ns.is_empty() {
        String::new()
    } else {
        format!(" in {ns}")
    };
    format!(
        "unable to reconcile {kind}.{GROUP_NAME}/{name}{at}: {}",
        failure.message
    )
}

/// The stored object: from the watch cache on a first attempt (`fresh` false), which the
/// start waited to be ready, else from etcd, after a write lost a race to a newer state.
async fn get(
    store: &Store,
    namespace: &str,
    name: &str,
    fresh: bool,
) -> Result<Option<Value>, Failure> {
    let resource_version = (!fresh).then(|| "0".to_owned());
    match store
        .get_if_exists(namespace, name, resource_version)
        .await?
    {
        Some(o) => Ok(Some(o.value().map_err(kas_registry::Error::from)?)),
        None => Ok(None),
    }
}

/// Whether a write lost a race that a fresh read resolves: the object appeared (409
/// AlreadyExists), changed (409 Conflict) or went away (404) since it was read.
fn lost_race(failure: &Failure) -> bool {
    matches!(failure.code, 404 | 409)
}

/// Runs `attempt` again (reading afresh: its argument is whether to) while it loses
/// races, a few times at most.
async fn retry_lost_races<F, Fut>(mut attempt: F) -> Result<(), Failure>
where
    F: FnMut(bool) -> Fut,
    Fut: std::future::Future<Output = Result<(), Failure>>,
{
    let mut last = None;
    for i in 0..ATTEMPTS {
        match attempt(i > 0).await {
            Err(f) if lost_race(&f) => last = Some(f),
            done => return done,
        }
    }
    Err(last.unwrap_or(Failure {
        code: 500,
        message: "no attempt made".to_owned(),
    }))
}

/// Upstream `ReconcileRoleOptions.Run` for one ClusterRole or Role.
async fn reconcile_role(store: &Store, expected: &Value) -> Result<(), Failure> {
    retry_lost_races(|fresh| reconcile_role_once(store, expected, fresh)).await
}

async fn reconcile_role_once(store: &Store, expected: &Value, fresh: bool) -> Result<(), Failure> {
    let (ns, name) = (
        kas_registry::meta::namespace(expected),
        kas_registry::meta::name(expected),
    );
    let result = match get(store, ns, name, fresh).await? {
        None => reconcile::role_to_create(expected),
        Some(existing) => reconcile::compute_reconciled_role(&existing, expected),
    };
    if result.protected {
        if result.operation != Operation::None {
            let missing = Value::Array(result.missing_rules.clone());
            tracing::warn!(role = %name, namespace = %ns, %missing,
                "skipped reconcile-protected role with missing permissions");
        }
        return Ok(());
    }
    let written = match result.operation {
        Operation::None => return Ok(()),
        Operation::Create => store.create(ns, result.role, &opts()).await.map(|_| ()),
        _ => store
            .update(ns, name, result.role, &opts())
            .await
            .map(|_| ()),
    };
    written.map_err(Failure::from)?;
    tracing::info!(role = %name, namespace = %ns, operation = ?result.operation,
        missing = result.missing_rules.len(), "reconciled bootstrap role");
    Ok(())
}

/// Upstream `ReconcileRoleBindingOptions.Run` for one ClusterRoleBinding or RoleBinding.
async fn reconcile_binding(store: &Store, expected: &Value) -> Result<(), Failure> {
    retry_lost_races(|fresh| reconcile_binding_once(store, expected, fresh)).await
}

async fn reconcile_binding_once(
    store: &Store,
    expected: &Value,
    fresh: bool,
) -> Result<(), Failure> {
    let (ns, name) = (
        kas_registry::meta::namespace(expected),
        kas_registry::meta::name(expected),
    );
    let existing = get(store, ns, name, fresh).await?;
    let result = match &existing {
        None => reconcile::binding_to_create(expected),
        Some(existing) => reconcile::compute_reconciled_binding(existing, expected),
    };
    if result.protected {
        if result.operation != Operation::None {
            let missing = Value::Array(result.missing_subjects.clone());
            tracing::warn!(binding = %name, namespace = %ns, %missing,
                "skipped reconcile-protected binding with missing subjects");
        }
        return Ok(());
    }
    match (result.operation, &existing) {
        (Operation::None, _) => return Ok(()),
        (Operation::Recreate, Some(existing)) => recreate(store, existing, result.binding).await?,
        (Operation::Update, _) => {
            store.update(ns, name, result.binding, &opts()).await?;
        }
        _ => {
            store.create(ns, result.binding, &opts()).await?;
        }
    }
    tracing::info!(binding = %name, namespace = %ns, operation = ?result.operation,
        "reconciled bootstrap binding");
    Ok(())
}

/// A binding whose `roleRef` differs: deleted (only the one read, by uid), then created.
async fn recreate(store: &Store, existing: &Value, expected: Value) -> Result<(), Failure> {
    let (ns, name) = (
        kas_registry::meta::namespace(existing),
        kas_registry::meta::name(existing),
    );
    let uid = kas_registry::meta::str_field(existing, "uid");
    let pre = Preconditions {
        uid: (!uid.is_empty()).then(|| uid.to_owned()),
        resource_version: None,
    };
    match store.delete(ns, name, &pre, &opts()).await {
        Ok(_) => {}
        Err(e) if e.to_status().code == 404 => {}
        Err(e) => return Err(e.into()),
    }
    store
        .create(ns, expected, &opts())
        .await
        .map(|_| ())
        .map_err(Failure::from)
}

/// Upstream `primeAggregatedClusterRoles`: a pre-aggregation `admin`, `edit` or `view`
/// (without an aggregation rule) is copied to the role its rules now aggregate from,
/// unless that exists.
async fn prime_aggregated_cluster_roles(store: &Store, policy: &PolicyData) -> Result<(), Failure> {
    for (old, new) in policy.cluster_roles_to_aggregate {
        if get(store, "", new, true).await?.is_some() {
            continue;
        }
        let Some(mut existing) = get(store, "", old, true).await? else {
            continue;
        };
        if existing
            .get("aggregationRule")
            .is_some_and(|r| !r.is_null())
        {
            // Already migrated: no custom rules to carry over (upstream stops here).
            return Ok(());
        }
        tracing::info!(from = %old, to = %new, "migrating clusterrole");
        let meta = kas_registry::meta::metadata_mut(&mut existing);
        meta.insert("name".into(), Value::from(*new));
        for field in [
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "managedFields",
        ] {
            meta.remove(field);
        }
        match store.create("", existing, &opts()).await {
            Err(e) if e.to_status().code != 409 => return Err(e.into()),
            _ => {}
        }
    }
    Ok(())
}

/// Upstream `primeSplitClusterRoleBindings`: when a binding split off an older one does not
/// exist yet, it is created with the older one's subjects, labels and annotations.
async fn prime_split_bindings(store: &Store, policy: &PolicyData) -> Result<(), Failure> {
    for (source, template) in &policy.cluster_role_bindings_to_split {
        let Some(existing) = get(store, "", source, true).await? else {
            continue;
        };
        let target = kas_registry::meta::name(template);
        if get(store, "", target, true).await?.is_some() {
            continue;
        }
        tracing::info!(from = %source, to = %target, "copying subjects, labels, and annotations");
        let mut binding = template.clone();
        match existing.get("subjects") {
            Some(subjects) => binding["subjects"] = subjects.clone(),
            None => {
                if let Some(obj) = binding.as_object_mut() {
                    obj.remove("subjects");
                }
            }
        }
        let meta = kas_registry::meta::metadata_mut(&mut binding);
        for key in ["labels", "annotations"] {
            match existing.pointer(&format!("/metadata/{key}")) {
                Some(v) => meta.insert(key.to_owned(), v.clone()),
                None => meta.remove(key),
            };
        }
        match store.create("", binding, &opts()).await {
            Err(e) if e.to_status().code != 409 => return Err(e.into()),
            _ => {}
        }
    }
    Ok(())
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}
