//! `Store`: the one generic store every resource is served by, after upstream's
//! `registry/generic/registry.Store`. It speaks JSON values and the storage trait; the REST
//! handlers speak HTTP around it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::StreamExt;
use kas_apimachinery::Status;
use kas_apimachinery::schema::{Kind, Message};
use kas_storage::{
    Attrs, AttrsFunc, GetOptions, ListResult, Object, ObjectRef, Preconditions, Predicate, Storage,
    UpdateFn, WatchEvent, WatchOptions, WatchStream,
};
use serde_json::Value;

use crate::admission::{Attributes, Chain, Operation};
use crate::error::{Error, Result};
use crate::rest::object_meta;
use crate::rest::options::{ListOptions, WriteOptions};
use crate::strategy::Conversion;
use crate::{ResourceDescriptor, Strategy};
use delete_during_update::delete_instead;

mod apply;
mod delete;
pub use delete::Deleted;
mod delete_during_update;
mod field_manager;
mod follow;
pub mod gc;
mod graceful;
mod hooked;
pub mod informer;
pub mod scale;
mod subresource;
mod validated;

/// Upstream's `maxNameGenerationCreateAttempts`: tries of a create with a generated name.
const MAX_NAME_GENERATION_CREATE_ATTEMPTS: u32 = 8;

/// Upstream's `OptimisticLockErrorMsg`.
pub const OPTIMISTIC_LOCK_ERROR: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

#[derive(Clone)]
pub struct Store {
    pub descriptor: &'static ResourceDescriptor,
    pub strategy: Arc<dyn Strategy>,
    storage: Arc<dyn Storage>,
    attrs: AttrsFunc,
    admission: Chain,
    hooks: Option<Arc<dyn crate::hooks::WriteHooks>>,
    delete_guard: Option<Arc<dyn crate::hooks::DeleteGuard>>,
    /// How many deletes of a DeleteCollection run at once (`--delete-collection-workers`).
    delete_collection_workers: usize,
}

impl Store {
    /// Patch strategies and merge keys for strategic merge patch: the strategy's, else the
    /// kind's schema (a built-in type's Go markers); `None` makes strategic merge patch a
    /// 415, as upstream answers for custom resources.
    pub fn patch_schema(&self) -> Option<&dyn kas_apimachinery::patch::PatchSchema> {
        self.strategy.patch_schema().or_else(|| {
            self.descriptor
                .schema
                .map(|m| m as &dyn kas_apimachinery::patch::PatchSchema)
        })
    }
}

/// The resource's selectable attributes (upstream's `GetAttrs`): its labels and the fields
/// of `Strategy::field_set`. A watch cache under the store must be built with this.
pub fn get_attrs(strategy: &Arc<dyn Strategy>) -> AttrsFunc {
    let strategy = strategy.clone();
    Arc::new(move |obj: &Value| Attrs {
        labels: kas_storage::attrs::object_labels(obj),
        fields: strategy.field_set(obj).into(),
    })
}

/// A write's result: the stored object, or, with `dryRun`, what would have been stored
/// (also the answer of a resource that is never stored: `Strategy::creater`).
pub enum Written {
    Stored(ObjectRef),
    DryRun(Value),
}

impl Store {
    pub fn new(
        descriptor: &'static ResourceDescriptor,
        strategy: Arc<dyn Strategy>,
        storage: Arc<dyn Storage>,
    ) -> Store {
        Store {
            descriptor,
            attrs: get_attrs(&strategy),
            strategy,
            storage,
            admission: Chain::default(),
            hooks: None,
            delete_guard: None,
            delete_collection_workers: 1,
        }
    }

    /// The store with DeleteCollection deleting `workers` objects at once (at least one).
    pub fn with_delete_collection_workers(mut self, workers: usize) -> Store {
        self.delete_collection_workers = workers.max(1);
        self
    }

    /// The store with `hooks` around its creates, updates and deletes.
    pub fn with_hooks(mut self, hooks: Arc<dyn crate::hooks::WriteHooks>) -> Store {
        self.hooks = Some(hooks);
        self
    }

    /// The store with `guard` checking deletions through subresources (evictions).
    pub fn with_delete_guard(mut self, guard: Arc<dyn crate::hooks::DeleteGuard>) -> Store {
        self.delete_guard = Some(guard);
        self
    }

    /// The admission plugins creates and deletes pass (see [`crate::admission`]).
    pub fn with_admission(mut self, admission: Chain) -> Store {
        self.admission = admission;
        self
    }

    /// The attributes predicates on this store select on.
    pub fn attrs(&self) -> AttrsFunc {
        self.attrs.clone()
    }

    /// `/<resource>/<namespace>/<name>` or `/<resource>/<name>`, upstream's key layout.
    pub fn key(&self, namespace: &str, name: &str) -> String {
        if self.descriptor.namespaced() {
            format!("/{}/{namespace}/{name}", self.descriptor.storage_resource)
        } else {
            format!("/{}/{name}", self.descriptor.storage_resource)
        }
    }

    /// The key under which a list or watch looks: every namespace when `namespace` is "".
    pub fn prefix(&self, namespace: &str) -> String {
        if self.descriptor.namespaced() && !namespace.is_empty() {
            format!("/{}/{namespace}", self.descriptor.storage_resource)
        } else {
            format!("/{}", self.descriptor.storage_resource)
        }
    }

    /// Maps a storage failure to the client's `Status`, once.
    pub fn storage_error(&self, err: kas_storage::Error, name: &str) -> Error {
        let d = self.descriptor;
        let status = match err {
            kas_storage::Error::NotFound { .. } => Status::not_found(d.group, d.plural, name),
            kas_storage::Error::KeyExists { .. } => Status::already_exists(d.group, d.plural, name),
            kas_storage::Error::ResourceVersionConflicts { message, .. } => {
                Status::conflict(d.group, d.plural, name, &message)
            }
            kas_storage::Error::Expired {
                message,
                continue_token,
                ..
            } => {
                let mut status = Status::resource_expired(&message);
                status.metadata.continue_token = continue_token;
                status
            }
            kas_storage::Error::TooLargeResourceVersion {
                requested,
                current,
                retry_after_seconds,
            } => Status::timeout(
                &format!("Too large resource version: {requested}, current: {current}"),
                retry_after_seconds as i32,
            ),
            kas_storage::Error::BadRequest(message) => Status::bad_request(&message),
            kas_storage::Error::RequestTooLarge { message } => Status::from_plain_error(message),
            kas_storage::Error::Callback(inner) => match inner.downcast::<Error>() {
                Ok(api) => return *api,
                Err(other) => Status::internal_error(&other.to_string()),
            },
            other => {
                tracing::error!(error = %other, resource = d.plural, "storage failed");
                Status::internal_error(&other.to_string())
            }
        };
        status.into()
    }

    /// Upstream names the internal object's kind, which for a resource stored as
    /// another's is the stored one (`Event "x" is invalid` through events.k8s.io too).
    fn invalid(&self, obj: &Value, causes: crate::strategy::FieldErrors) -> Error {
        let (group, _, kind) = self.descriptor.storage_version();
        // An unstructured object (a custom resource) is named by the kind it carries,
        // which its validation may have refused (`kind: ... must be Widget`).
        let carried = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        let kind = match carried {
            carried if self.descriptor.schema.is_none() && !carried.is_empty() => carried,
            _ => kind,
        };
        Status::invalid(group, kind, crate::meta::name(obj), causes).into()
    }

    /// The stored form of an object the client sent.
    fn to_stored(&self, obj: Value) -> Value {
        match self.strategy.conversion() {
            Some(c) => c.to_stored(obj),
            None => obj,
        }
    }

    /// The served form of a stored object; most resources are served as stored, and
    /// their bytes are handed out untouched.
    fn served(&self, obj: ObjectRef) -> Result<ObjectRef> {
        match self.strategy.conversion() {
            Some(c) => served_object(c, self.descriptor.schema, &obj)
                .map_err(|e| self.storage_error(e, "")),
            None => Ok(obj),
        }
    }

    fn served_value(&self, obj: Value) -> Value {
        match self.strategy.conversion() {
            Some(c) => go_encoded(c.to_served(obj), self.descriptor.schema),
            None => obj,
        }
    }

    /// A state about to be written, as upstream's Go types write it: no empty `omitempty`
    /// fields, and the zero values Go writes for the others (see `schema::go_encoded`).
    fn go_encoded(&self, obj: Value) -> Value {
        let schema = match self.strategy.conversion() {
            Some(c) => c.stored_schema(),
            None => self.descriptor.schema,
        };
        go_encoded(obj, schema)
    }

    /// Storage's `guaranteed_update`, under the resource's TTL when it has one.
    async fn guaranteed_update(
        &self,
        key: &str,
        ignore_not_found: bool,
        try_update: &UpdateFn<'_>,
    ) -> kas_storage::Result<ObjectRef> {
        let pre = Preconditions::default();
        let ttl = self.strategy.ttl_seconds();
        self.storage
            .guaranteed_update(key, &pre, ignore_not_found, try_update, None, ttl)
            .await
    }

    /// Create: type and namespace checks, system fields, defaulting, validation, write.
    /// With `dryRun` the object is prepared and validated but not stored.
    pub async fn create(
        &self,
        namespace: &str,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Written> {
        object_meta::check_type(&mut obj, self.descriptor)?;
        object_meta::ensure_namespace(&mut obj, self.descriptor, namespace)?;
        self.strategy.default(&mut obj);
        self.admission
            .admit(&Attributes::new(
                Operation::Create,
                self.descriptor,
                namespace,
                crate::meta::name(&obj),
                Some(&obj),
            ))
            .await?;
        let mut obj = self.to_stored(obj);
        // Upstream records the fields before admission: what the mutating plugins set is
        // nobody's.
        self.track_managed_fields(&mut obj, None, "", opts);
        self.admission
            .mutate_create(self.descriptor, namespace, &mut obj, opts)
            .await?;
        if let Some(creater) = self.strategy.creater() {
            return creater
                .create(namespace, obj, opts)
                .await
                .map(Written::DryRun);
        }
        let finish = match &self.hooks {
            Some(hooks) => Some(hooks.begin_create(&mut obj, opts.dry_run).await?),
            None => None,
        };
        let written = self.create_prepared(namespace, obj, opts).await;
        if let Some(finish) = finish {
            finish.finish(written.is_ok()).await;
        }
        written
    }

    /// The rest of a create, after admission, field managers and the begin hook.
    async fn create_prepared(
        &self,
        namespace: &str,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Written> {
        object_meta::before_create(&mut obj);
        self.strategy.prepare_for_create(&mut obj);
        self.strategy
            .prepare_for_create_by(&mut obj, opts.user.as_ref());
        let name = crate::meta::name(&obj).to_owned();
        if name.is_empty() {
            return Err(self.invalid(&obj, vec![required_name()]));
        }
        let errors = self.strategy.validate(&obj);
        if !errors.is_empty() {
            return Err(self.invalid(&obj, errors));
        }
        opts.warnings.set(self.strategy.warnings_on_create(&obj));
        self.strategy.canonicalize(&mut obj);
        let mut obj = self.go_encoded(obj);
        self.validate_admission(Operation::Create, namespace, "", &obj, None, opts)
            .await?;
        if opts.dry_run {
            return Ok(Written::DryRun(self.served_value(obj)));
        }
        crate::meta::strip_type_meta(&mut obj);
        let ttl = self.strategy.ttl_seconds();
        let generate = crate::meta::str_field(&obj, "generateName").to_owned();
        let mut name = name;
        let mut attempt = 1;
        let mut smaller = false;
        // Upstream's RetryGenerateName (GA in 1.32): a generated name that collides is
        // generated again.
        loop {
            match self
                .storage
                .create(&self.key(namespace, &name), obj.clone(), ttl)
                .await
            {
                Ok(created) => return Ok(Written::Stored(self.served(created)?)),
                Err(kas_storage::Error::KeyExists { .. })
                    if !generate.is_empty()
                        && name.starts_with(generate.as_str())
                        && attempt < MAX_NAME_GENERATION_CREATE_ATTEMPTS =>
                {
                    attempt += 1;
                    name = object_meta::generate_name(&generate);
                    crate::meta::metadata_mut(&mut obj)
                        .insert("name".into(), Value::String(name.clone()));
                }
                // Upstream's create handler: an object too large for etcd is written
                // once more without its managedFields.
                Err(kas_storage::Error::RequestTooLarge { .. }) if !smaller => {
                    smaller = true;
                    obj = field_manager::without_managed_fields(obj);
                }
                Err(e) => return Err(self.storage_error(e, &name)),
            }
        }
    }

    pub async fn get(
        &self,
        namespace: &str,
        name: &str,
        resource_version: Option<String>,
    ) -> Result<ObjectRef> {
        let stored = self.get_stored(namespace, name, resource_version).await?;
        self.served(stored)
    }

    /// [`get`](Self::get) with a missing object `None` rather than NotFound (upstream's
    /// callers that check `IsNotFound`: listers, admission plugins, lookups).
    pub async fn get_if_exists(
        &self,
        namespace: &str,
        name: &str,
        resource_version: Option<String>,
    ) -> Result<Option<ObjectRef>> {
        match self.get(namespace, name, resource_version).await {
            Ok(found) => Ok(Some(found)),
            Err(e) if e.to_status().code == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn get_stored(
        &self,
        namespace: &str,
        name: &str,
        resource_version: Option<String>,
    ) -> Result<ObjectRef> {
        let opts = GetOptions {
            resource_version,
            ignore_not_found: false,
        };
        match self.storage.get(&self.key(namespace, name), &opts).await {
            Ok(Some(obj)) => Ok(obj),
            Ok(None) => Err(self.storage_error(
                kas_storage::Error::NotFound {
                    key: name.to_owned(),
                },
                name,
            )),
            Err(e) => Err(self.storage_error(e, name)),
        }
    }

    pub async fn list(
        &self,
        namespace: &str,
        opts: &ListOptions,
        predicate: Predicate,
    ) -> Result<ListResult> {
        let storage_opts = kas_storage::ListOptions {
            resource_version: opts.resource_version.clone(),
            resource_version_match: opts.resource_version_match,
            limit: opts.limit,
            continue_token: opts.continue_token.clone(),
            predicate,
            recursive: true,
        };
        let mut result = self
            .storage
            .list(&self.prefix(namespace), &storage_opts)
            .await
            .map_err(|e| self.storage_error(e, ""))?;
        if self.strategy.conversion().is_some() {
            let items = std::mem::take(&mut result.items);
            result.items = items
                .into_iter()
                .map(|o| self.served(o))
                .collect::<Result<_>>()?;
        }
        Ok(result)
    }

    /// WATCH; `deadline` is when the server ends it, before which the watch cache sends
    /// a watch that allows bookmarks its last one.
    pub async fn watch(
        &self,
        namespace: &str,
        name: Option<&str>,
        opts: &ListOptions,
        predicate: Predicate,
        deadline: tokio::time::Instant,
    ) -> Result<WatchStream> {
        let (key, recursive) = match name {
            Some(name) => (self.key(namespace, name), false),
            None => (self.prefix(namespace), true),
        };
        let storage_opts = WatchOptions {
            resource_version: opts.resource_version.clone(),
            recursive,
            predicate,
            progress_notify: opts.allow_watch_bookmarks,
            send_initial_events: opts.send_initial_events,
            deadline: Some(deadline),
            ..Default::default()
        };
        let events = self
            .storage
            .watch(&key, &storage_opts)
            .await
            .map_err(|e| self.storage_error(e, ""))?;
        if self.strategy.conversion().is_none() {
            return Ok(events);
        }
        let strategy = self.strategy.clone();
        let schema = self.descriptor.schema;
        Ok(Box::pin(events.map(
            move |event| match strategy.conversion() {
                Some(c) => served_event(c, schema, event),
                None => event,
            },
        )))
    }

    /// Update (PUT): the stored object is replaced by `obj` unless its resourceVersion is
    /// stale. Returns the new state and whether it was created.
    pub async fn update(
        &self,
        namespace: &str,
        name: &str,
        obj: Value,
        opts: &WriteOptions,
    ) -> Result<(Written, bool)> {
        let mut obj = obj;
        object_meta::check_type(&mut obj, self.descriptor)?;
        object_meta::ensure_namespace(&mut obj, self.descriptor, namespace)?;
        object_meta::check_name(&obj, name)?;
        self.strategy.default(&mut obj);
        let obj = self.to_stored(obj);
        if let Some(hooks) = &self.hooks {
            let sent = |_: &Value| -> Result<Value> { Ok(obj.clone()) };
            let written = self.update_hooked(hooks, namespace, name, &sent, opts);
            return Ok((written.await?, false));
        }
        let client_rv = crate::meta::str_field(&obj, "resourceVersion").to_owned();
        if self
            .admission
            .validates(self.descriptor, namespace, "", Operation::Update)
        {
            // Validating admission reads the stored object; upstream's plugins that do
            // handle resources that are never created by an update.
            let attempt = |current: &Value| -> Result<Option<Value>> {
                self.prepare_update(obj.clone(), Some(current), &client_rv, opts)
            };
            let written = self.rewrite_existing(namespace, name, "", &attempt, opts);
            return Ok((written.await?, false));
        }
        if opts.dry_run {
            let stored = self.get_stored(namespace, name, None).await?;
            let current = stored.value()?;
            let new = self
                .prepare_update(obj, Some(&current), &client_rv, opts)?
                .unwrap_or(current);
            let new = at_revision(new, stored.resource_version);
            return Ok((Written::DryRun(self.served_value(new)), false));
        }
        let created = AtomicBool::new(false);
        let try_update = |current: Option<&Value>| -> kas_storage::Result<Option<Value>> {
            created.store(current.is_none(), Ordering::Relaxed);
            let new = self
                .prepare_update(obj.clone(), current, &client_rv, opts)
                .map_err(|e| kas_storage::Error::Callback(Box::new(e)))?;
            delete_instead(self, current, new)
        };
        let key = self.key(namespace, name);
        let written = self
            .guaranteed_update_or_smaller(&key, self.strategy.allow_create_on_update(), &try_update)
            .await;
        let result = match self.deleted_instead(&key, name, written).await? {
            Ok(stored) => stored,
            Err(answer) => return Ok((Written::Stored(answer), false)),
        };
        let created = created.load(Ordering::Relaxed);
        Ok((Written::Stored(self.served(result)?), created))
    }

    /// Runs `attempt` on the stored object inside the compare-and-swap loop (or once, on a
    /// read, for a dry run); a missing object is NotFound. Answers in the served form.
    /// When validating admission handles the write (of `subresource`, empty for the
    /// resource), the new state is computed and validated outside the loop and written on
    /// the condition that the object is still the one it was computed from.
    async fn rewrite_existing(
        &self,
        namespace: &str,
        name: &str,
        subresource: &str,
        attempt: &(dyn Fn(&Value) -> Result<Option<Value>> + Send + Sync),
        opts: &WriteOptions,
    ) -> Result<Written> {
        let validated =
            self.admission
                .validates(self.descriptor, namespace, subresource, Operation::Update);
        if opts.dry_run || validated {
            return self
                .rewrite_validated(
                    namespace,
                    name,
                    subresource,
                    attempt,
                    opts,
                    validated::Shrink::WithoutManagedFields,
                )
                .await;
        }
        let try_update = |current: Option<&Value>| -> kas_storage::Result<Option<Value>> {
            let Some(current) = current else {
                return Err(kas_storage::Error::NotFound {
                    key: name.to_owned(),
                });
            };
            let new = attempt(current).map_err(|e| kas_storage::Error::Callback(Box::new(e)))?;
            delete_instead(self, Some(current), new)
        };
        let key = self.key(namespace, name);
        let written = self
            .guaranteed_update_or_smaller(&key, false, &try_update)
            .await;
        match self.deleted_instead(&key, name, written).await? {
            Ok(stored) => Ok(Written::Stored(self.served(stored)?)),
            Err(answer) => Ok(Written::Stored(answer)),
        }
    }

    /// PATCH: `apply` turns the current object into the new one inside the
    /// compare-and-swap loop, so a concurrent writer makes the patch apply again to the
    /// newer object instead of failing; a resourceVersion the patch itself sets is
    /// enforced.
    pub async fn patch(
        &self,
        namespace: &str,
        name: &str,
        apply: &(dyn Fn(&Value) -> Result<Value> + Send + Sync),
        opts: &WriteOptions,
    ) -> Result<Written> {
        self.patch_through(namespace, name, "", apply, opts).await
    }

    /// A patch of the object through `subresource` (`""` for the resource itself; `scale`,
    /// whose writes are the resource's update, as upstream's `ScaleREST`): admission and
    /// the writer's managed-fields entry name the subresource.
    pub(crate) async fn patch_through(
        &self,
        namespace: &str,
        name: &str,
        subresource: &str,
        apply: &(dyn Fn(&Value) -> Result<Value> + Send + Sync),
        opts: &WriteOptions,
    ) -> Result<Written> {
        let patched = |current: &Value| -> Result<Value> {
            // The client patches what it reads: the served form.
            let mut patched = match self.strategy.conversion() {
                Some(c) => apply(&c.to_served(current.clone()))?,
                None => apply(current)?,
            };
            object_meta::check_type(&mut patched, self.descriptor)?;
            // Upstream decodes the patched object into the internal version, which
            // defaults and converts it (a Secret's stringData joins data) before the field
            // manager and the update rules see it.
            self.strategy.default(&mut patched);
            Ok(self.to_stored(patched))
        };
        if let Some(hooks) = &self.hooks {
            return self
                .update_hooked(hooks, namespace, name, &patched, opts)
                .await;
        }
        let attempt = |current: &Value| -> Result<Option<Value>> {
            let patched = patched(current)?;
            let client_rv = crate::meta::str_field(&patched, "resourceVersion").to_owned();
            self.prepare_update_of(patched, Some(current), &client_rv, subresource, opts)
        };
        self.rewrite_existing(namespace, name, subresource, &attempt, opts)
            .await
    }

    /// The update rules applied to one candidate (upstream's `rest.BeforeUpdate` plus the
    /// store's optimistic-lock check). `None` means no change.
    fn prepare_update(
        &self,
        new: Value,
        current: Option<&Value>,
        client_rv: &str,
        opts: &WriteOptions,
    ) -> Result<Option<Value>> {
        self.prepare_update_of(new, current, client_rv, "", opts)
    }

    /// [`Store::prepare_update`] of a write through `subresource`.
    fn prepare_update_of(
        &self,
        mut new: Value,
        current: Option<&Value>,
        client_rv: &str,
        subresource: &str,
        opts: &WriteOptions,
    ) -> Result<Option<Value>> {
        if !opts.applying {
            self.track_managed_fields(&mut new, current, subresource, opts);
        }
        let Some(current) = current else {
            if !self.strategy.allow_create_on_update() && !opts.applying {
                return Err(Status::not_found(
                    self.descriptor.group,
                    self.descriptor.plural,
                    crate::meta::name(&new),
                )
                .into());
            }
            object_meta::before_create(&mut new);
            self.strategy.prepare_for_create(&mut new);
            self.strategy
                .prepare_for_create_by(&mut new, opts.user.as_ref());
            let errors = self.strategy.validate(&new);
            if !errors.is_empty() {
                return Err(self.invalid(&new, errors));
            }
            opts.warnings.set(self.strategy.warnings_on_create(&new));
            crate::meta::strip_type_meta(&mut new);
            return Ok(Some(self.go_encoded(new)));
        };
        let rv = self.update_resource_version(crate::meta::name(&new), client_rv, current)?;
        crate::meta::metadata_mut(&mut new).insert("resourceVersion".into(), Value::String(rv));
        // Upstream's handler runs mutating admission on updates after the field manager.
        self.admission
            .mutate_update(self.descriptor, &mut new, current, opts)?;
        object_meta::before_update(&mut new, current);
        self.strategy.prepare_for_update(&mut new, current);
        let errors = self.strategy.validate_update(&new, current);
        if !errors.is_empty() {
            return Err(self.invalid(&new, errors));
        }
        opts.warnings
            .set(self.strategy.warnings_on_update(&new, current));
        self.strategy.canonicalize(&mut new);
        if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("resourceVersion");
        }
        crate::meta::strip_type_meta(&mut new);
        Ok(Some(self.go_encoded(new)))
    }
}

fn required_name() -> kas_apimachinery::StatusCause {
    kas_apimachinery::StatusCause {
        reason: Some("FieldValueRequired".to_owned()),
        message: Some("Required value: name or generateName is required".to_owned()),
        field: Some("metadata.name".to_owned()),
    }
}

impl Store {
    /// Upstream `Store.Update`'s optimistic lock, checked before anything else looks at
    /// the update: the resourceVersion the new state carries. Without one from the client,
    /// a strategy that allows unconditional updates takes the stored one (so validation
    /// sees it set); any other is 422 naming the resource (upstream's `qualifiedKind` is
    /// the resource, its value the `uint64` zero printed as `%#v`). One that differs from
    /// the stored one is a conflict.
    pub(super) fn update_resource_version(
        &self,
        name: &str,
        client_rv: &str,
        current: &Value,
    ) -> Result<String> {
        let current_rv = crate::meta::str_field(current, "resourceVersion");
        if client_rv.is_empty() {
            if !self.strategy.allow_unconditional_update() {
                let cause = kas_apimachinery::StatusCause {
                    reason: Some("FieldValueInvalid".to_owned()),
                    message: Some("Invalid value: 0x0: must be specified for an update".into()),
                    field: Some("metadata.resourceVersion".to_owned()),
                };
                let d = self.descriptor;
                return Err(Status::invalid(d.group, d.plural, name, vec![cause]).into());
            }
            return Ok(current_rv.to_owned());
        }
        if client_rv != current_rv {
            let d = self.descriptor;
            return Err(Status::conflict(d.group, d.plural, name, OPTIMISTIC_LOCK_ERROR).into());
        }
        Ok(client_rv.to_owned())
    }
}

/// `value` as upstream's Go type `schema` writes it; untouched without a schema.
fn go_encoded(mut value: Value, schema: Option<&'static Message>) -> Value {
    if let Some(schema) = schema {
        kas_apimachinery::schema::go_encoded(&mut value, &Kind::Message(schema));
    }
    value
}

/// A stored object in its served form, with the same key and resourceVersion.
fn served_object(
    conversion: &dyn Conversion,
    schema: Option<&'static Message>,
    obj: &ObjectRef,
) -> kas_storage::Result<ObjectRef> {
    let served = go_encoded(conversion.to_served(obj.value()?), schema);
    Object::new(obj.key.clone(), obj.resource_version, served).map(Arc::new)
}

/// A watch event whose object is in its served form; one whose stored bytes do not decode
/// becomes an error event.
fn served_event(
    conversion: &dyn Conversion,
    schema: Option<&'static Message>,
    event: WatchEvent,
) -> WatchEvent {
    event.map_object(|obj| served_object(conversion, schema, &obj))
}

/// A dry-run update's answer carries the revision it was computed on, as upstream's
/// (the update is checked against that revision; nothing new was written).
pub(super) fn at_revision(mut value: Value, resource_version: u64) -> Value {
    crate::meta::metadata_mut(&mut value).insert(
        "resourceVersion".into(),
        Value::String(resource_version.to_string()),
    );
    value
}
