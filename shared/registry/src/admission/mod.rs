//! Admission, after upstream's `k8s.io/apiserver/pkg/admission`: plugins that see a write
//! after it is decoded and defaulted and before the store prepares and validates it
//! (upstream's mutating phase, which runs in the handlers ahead of `rest.BeforeCreate`),
//! and a delete before the store reads the object.
//!
//! The store calls its chain on create and delete; mutating plugins (`Mutate`) change the
//! object a create writes (and, synchronously, an update). Validating plugins
//! (`Validate`, upstream's `ValidationInterface`) see the object the write will store,
//! after the strategy's validation, on create, update and subresource writes: an update of
//! a resource that one of them handles reads the object, computes and validates the new
//! state, and writes it on the condition that the object did not change meanwhile (and
//! runs again when it did), because validation may do I/O and the storage's
//! compare-and-swap callback cannot. Checks (`Admit`) run on create and delete only:
//! `NamespaceLifecycle` refuses nothing on update that the store would not refuse first.

pub mod namespace_lifecycle;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::rest::options::WriteOptions;
use crate::{ResourceDescriptor, Result};

pub use namespace_lifecycle::NamespaceLifecycle;

/// Upstream `admission.Operation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
}

/// Upstream `admission.Attributes`, as far as the plugins here read them.
pub struct Attributes<'a> {
    pub operation: Operation,
    pub descriptor: &'static ResourceDescriptor,
    pub namespace: &'a str,
    /// The object's name; empty on a create that generates one.
    pub name: &'a str,
    /// The object being created, or an update's new state.
    pub object: Option<&'a Value>,
    /// An update's stored object.
    pub old_object: Option<&'a Value>,
    /// The subresource written (`status`, `ephemeralcontainers`); empty for the resource.
    pub subresource: &'a str,
    /// `dryRun=All`: nothing the plugin keeps elsewhere may change.
    pub dry_run: bool,
    /// Where a plugin's warnings go (upstream's `warning.AddWarning`).
    pub warnings: Option<&'a crate::rest::options::Warnings>,
    /// The requesting user, when the write has one (upstream's `GetUserInfo`).
    pub user: Option<&'a kas_auth::UserInfo>,
    /// The request's audit event, for plugins' annotations.
    pub audit: Option<&'a crate::rest::options::AuditAnnotations>,
}

impl<'a> Attributes<'a> {
    /// A create or delete as the checks see it: no old object, no subresource.
    pub fn new(
        operation: Operation,
        descriptor: &'static ResourceDescriptor,
        namespace: &'a str,
        name: &'a str,
        object: Option<&'a Value>,
    ) -> Attributes<'a> {
        Attributes {
            operation,
            descriptor,
            namespace,
            name,
            object,
            old_object: None,
            subresource: "",
            dry_run: false,
            warnings: None,
            user: None,
            audit: None,
        }
    }
}

impl Attributes<'_> {
    /// What a Forbidden answer names (upstream `extractResourceName`): the name, else the
    /// object's `generateName`, else "Unknown".
    pub fn resource_name(&self) -> &str {
        if !self.name.is_empty() {
            return self.name;
        }
        let generate = self
            .object
            .and_then(|o| o.pointer("/metadata/generateName"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if generate.is_empty() {
            "Unknown"
        } else {
            generate
        }
    }
}

/// Upstream `admission.MutationInterface`: may refuse the request with a `Status`.
pub trait Admit: Send + Sync {
    fn admit<'a>(&'a self, attributes: &'a Attributes<'a>) -> BoxFuture<'a, Result<()>>;
}

/// Upstream's mutating plugins that change the object a create writes (their `Admit`
/// sets fields of the object: a pod's default tolerations, its priority). They run after
/// the checking plugins, in order, and may refuse the request too.
pub trait Mutate: Send + Sync {
    /// `name` is the object's name, else its `generateName` (what a Forbidden names).
    fn mutate<'a>(
        &'a self,
        descriptor: &'static ResourceDescriptor,
        name: &'a str,
        object: &'a mut Value,
    ) -> BoxFuture<'a, Result<()>>;

    /// The plugin on an update of the main resource, with the stored object (upstream's
    /// plugins that also handle `admission.Update`: what they set on create stays). It
    /// runs inside the update's compare-and-swap loop, so it is synchronous and may run
    /// more than once.
    fn mutate_update(
        &self,
        _descriptor: &'static ResourceDescriptor,
        _new: &mut Value,
        _old: &Value,
    ) -> Result<()> {
        Ok(())
    }

    /// The plugin on a create with the write's attributes (namespace, user, dry run,
    /// warnings; `attributes.object` is `None`: the object is `object`). By default,
    /// [`mutate`](Self::mutate) with the object's name, else its `generateName`.
    fn mutate_with<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
        object: &'a mut Value,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let name = match crate::meta::name(object) {
                "" => crate::meta::str_field(object, "generateName").to_owned(),
                name => name.to_owned(),
            };
            self.mutate(attributes.descriptor, &name, object).await
        })
    }

    /// The plugin on an update with the write's attributes (`attributes.old_object` the
    /// stored object, `attributes.object` `None`: the new state is `new`; a subresource's
    /// update names it), synchronous as [`mutate_update`](Self::mutate_update), which it
    /// calls by default for the main resource.
    fn mutate_update_with(&self, attributes: &Attributes<'_>, new: &mut Value) -> Result<()> {
        match attributes.old_object {
            Some(old) if attributes.subresource.is_empty() => {
                self.mutate_update(attributes.descriptor, new, old)
            }
            _ => Ok(()),
        }
    }
}

/// Upstream `admission.ValidationInterface`: sees the state a write will store, after the
/// strategy validated it, and may refuse it or record warnings. It must not change the
/// object.
pub trait Validate: Send + Sync {
    /// Whether the plugin looks at a write of `descriptor`'s `subresource` (empty for the
    /// resource itself) in `namespace`: a cheap, synchronous answer, so that updates no
    /// plugin looks at keep their single compare-and-swap.
    fn handles(
        &self,
        descriptor: &'static ResourceDescriptor,
        namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool;

    fn validate<'a>(&'a self, attributes: &'a Attributes<'a>) -> BoxFuture<'a, Result<()>>;
}

/// The plugins in order; the first refusal wins.
#[derive(Clone, Default)]
pub struct Chain {
    checks: Vec<Arc<dyn Admit>>,
    mutators: Vec<Arc<dyn Mutate>>,
    validators: Vec<Arc<dyn Validate>>,
}

impl Chain {
    pub fn new(plugins: Vec<Arc<dyn Admit>>) -> Chain {
        Chain {
            checks: plugins,
            mutators: Vec::new(),
            validators: Vec::new(),
        }
    }

    /// The chain with `validators` run after the strategy's validation.
    pub fn with_validators(mut self, validators: Vec<Arc<dyn Validate>>) -> Chain {
        self.validators = validators;
        self
    }

    /// The chain with `validator` before its validating plugins: a store's own check on the
    /// writing user (RBAC's escalation prevention), which upstream runs before admission.
    pub fn with_first_validator(mut self, validator: Arc<dyn Validate>) -> Chain {
        self.validators.insert(0, validator);
        self
    }

    /// Whether a validating plugin looks at this write.
    pub fn validates(
        &self,
        descriptor: &'static ResourceDescriptor,
        namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool {
        self.validators
            .iter()
            .any(|v| v.handles(descriptor, namespace, subresource, operation))
    }

    /// The validating plugins that handle this write, in order.
    pub async fn validate(&self, attributes: &Attributes<'_>) -> Result<()> {
        for plugin in &self.validators {
            if plugin.handles(
                attributes.descriptor,
                attributes.namespace,
                attributes.subresource,
                attributes.operation,
            ) {
                plugin.validate(attributes).await?;
            }
        }
        Ok(())
    }

    /// The chain with `mutators` after its plugins.
    pub fn with_mutators(mut self, mutators: Vec<Arc<dyn Mutate>>) -> Chain {
        self.mutators = mutators;
        self
    }

    pub async fn admit(&self, attributes: &Attributes<'_>) -> Result<()> {
        for plugin in &self.checks {
            plugin.admit(attributes).await?;
        }
        Ok(())
    }

    /// The mutating plugins on an update of the main resource (`opts` the write's).
    pub fn mutate_update(
        &self,
        descriptor: &'static ResourceDescriptor,
        new: &mut Value,
        old: &Value,
        opts: &WriteOptions,
    ) -> Result<()> {
        self.mutate_subresource_update(descriptor, "", new, old, opts)
    }

    /// The mutating plugins on an update of `subresource` (empty for the resource).
    pub fn mutate_subresource_update(
        &self,
        descriptor: &'static ResourceDescriptor,
        subresource: &str,
        new: &mut Value,
        old: &Value,
        opts: &WriteOptions,
    ) -> Result<()> {
        if self.mutators.is_empty() {
            return Ok(());
        }
        let name = crate::meta::name(old).to_owned();
        let namespace = crate::meta::str_field(old, "namespace").to_owned();
        let mut attributes = write_attributes(Operation::Update, descriptor, &namespace, opts);
        attributes.name = &name;
        attributes.old_object = Some(old);
        attributes.subresource = subresource;
        for plugin in &self.mutators {
            plugin.mutate_update_with(&attributes, new)?;
        }
        Ok(())
    }

    /// The mutating plugins on an object being created in `namespace` (`opts` the
    /// write's).
    pub async fn mutate_create(
        &self,
        descriptor: &'static ResourceDescriptor,
        namespace: &str,
        object: &mut Value,
        opts: &WriteOptions,
    ) -> Result<()> {
        if self.mutators.is_empty() {
            return Ok(());
        }
        let name = crate::meta::name(object).to_owned();
        let mut attributes = write_attributes(Operation::Create, descriptor, namespace, opts);
        attributes.name = &name;
        for plugin in &self.mutators {
            plugin.mutate_with(&attributes, object).await?;
        }
        Ok(())
    }
}

/// The attributes of a write by `opts` without its objects.
fn write_attributes<'a>(
    operation: Operation,
    descriptor: &'static ResourceDescriptor,
    namespace: &'a str,
    opts: &'a WriteOptions,
) -> Attributes<'a> {
    Attributes {
        dry_run: opts.dry_run,
        warnings: Some(&opts.warnings),
        user: opts.user.as_ref(),
        audit: Some(&opts.audit),
        ..Attributes::new(operation, descriptor, namespace, "", None)
    }
}
