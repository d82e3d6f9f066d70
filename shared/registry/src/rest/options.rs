//! The options of the REST verbs as the store takes them, after upstream's
//! `metainternalversion.ListOptions` and metav1's `CreateOptions`, `UpdateOptions`,
//! `PatchOptions` and `DeleteOptions`. Parsing them from a request's query, and their
//! validation with upstream's messages, is kas-endpoints' (`handlers::options`).

pub use kas_storage::ResourceVersionMatch;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListOptions {
    pub label_selector: String,
    pub field_selector: String,
    pub watch: bool,
    pub allow_watch_bookmarks: bool,
    pub resource_version: Option<String>,
    pub resource_version_match: Option<ResourceVersionMatch>,
    pub timeout_seconds: Option<i64>,
    pub limit: Option<i64>,
    pub continue_token: Option<String>,
    pub send_initial_events: Option<bool>,
}

/// `fieldValidation`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    pub dry_run: bool,
    pub field_manager: Option<String>,
    pub field_validation: FieldValidation,
    /// Who writes, for `metadata.managedFields`: `fieldManager`, else the User-Agent's
    /// prefix (see `managed_fields::manager`).
    pub manager: String,
    /// `force` (PatchOptions): an apply takes conflicting fields from their managers.
    pub force: Option<bool>,
    /// Set by the apply handler: the write is a server-side apply, whose managed fields
    /// the apply itself computed, and which creates a missing object.
    pub applying: bool,
    /// `gracePeriodSeconds` (DeleteOptions): how long a graceful deletion waits; `None`
    /// leaves it to the strategy.
    pub grace_period_seconds: Option<i64>,
    /// `propagationPolicy` (DeleteOptions): how the garbage collector treats the
    /// dependents of a deleted object; `None` leaves it to the object's finalizers and the
    /// strategy's default.
    pub propagation_policy: Option<DeletionPropagation>,
    /// `orphanDependents` (DeleteOptions), deprecated for `propagationPolicy`, which it
    /// overrides when set.
    pub orphan_dependents: Option<bool>,
    /// The strategy's warnings for the object written (`WarningsOnCreate`/`OnUpdate`),
    /// which the handler sends as `Warning` headers.
    pub warnings: Warnings,
    /// The authenticated user who writes (upstream's user on the request context).
    pub user: Option<kas_auth::UserInfo>,
    /// The request's audit event, which admission annotates.
    pub audit: AuditAnnotations,
}

/// The request's audit event (upstream's audit context on the request context), to which
/// admission plugins add annotations (`audit.AddAuditAnnotation`); nothing without one.
#[derive(Clone, Debug, Default)]
pub struct AuditAnnotations(pub Option<std::sync::Arc<kas_audit::AuditContext>>);

impl AuditAnnotations {
    /// Upstream's `AddAuditAnnotation`.
    pub fn add(&self, key: &str, value: &str) {
        if let Some(ctx) = &self.0 {
            ctx.add_annotation(key, value);
        }
    }

    /// Upstream's `AddAnnotationWithLevel`: kept only when the request is audited at
    /// `level` or above.
    pub fn add_with_level(&self, key: &str, value: &str, level: kas_audit::Level) {
        if let Some(ctx) = &self.0
            && ctx.level() >= level
        {
            ctx.add_annotation(key, value);
        }
    }

    /// The request's level (None without an event).
    pub fn level(&self) -> kas_audit::Level {
        self.0
            .as_ref()
            .map_or(kas_audit::Level::None, |c| c.level())
    }
}

/// Options compare by what the client sent; the event is the request's own.
impl PartialEq for AuditAnnotations {
    fn eq(&self, _: &AuditAnnotations) -> bool {
        true
    }
}

impl Eq for AuditAnnotations {}

/// Upstream's `metav1.DeletionPropagation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeletionPropagation {
    /// The dependents are orphaned (the `orphan` finalizer).
    Orphan,
    /// The object is deleted at once and the garbage collector deletes its dependents.
    Background,
    /// The object stays until the garbage collector deleted its blocking dependents (the
    /// `foregroundDeletion` finalizer).
    Foreground,
}

impl DeletionPropagation {
    /// The policy a `propagationPolicy` value names.
    pub fn parse(value: &str) -> Option<DeletionPropagation> {
        match value {
            "Orphan" => Some(DeletionPropagation::Orphan),
            "Background" => Some(DeletionPropagation::Background),
            "Foreground" => Some(DeletionPropagation::Foreground),
            _ => None,
        }
    }
}

/// Upstream's request-scoped warning recorder (`warning.AddWarning` on the context), for
/// what the strategy says of the object a write stores. A write's compare-and-swap loop
/// may run the strategy more than once; each run replaces the last one's warnings. What
/// mutating admission says comes first and stays (upstream's recorder keeps one of each
/// text).
#[derive(Clone, Debug, Default)]
pub struct Warnings(std::sync::Arc<std::sync::Mutex<(Vec<String>, Vec<String>)>>);

impl Warnings {
    /// Replaces the recorded warnings (not mutating admission's).
    pub fn set(&self, warnings: Vec<String>) {
        if let Ok(mut w) = self.0.lock() {
            w.1 = warnings;
        }
    }

    /// Adds one after the strategy's (an admission plugin's).
    pub fn add(&self, warning: String) {
        if let Ok(mut w) = self.0.lock() {
            w.1.push(warning);
        }
    }

    /// Adds one of mutating admission, before the strategy's, once per text.
    pub fn add_mutating(&self, warning: String) {
        if let Ok(mut w) = self.0.lock()
            && !w.0.contains(&warning)
        {
            w.0.push(warning);
        }
    }

    /// The recorded warnings.
    pub fn take(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|mut w| {
                let (mut first, rest) = std::mem::take(&mut *w);
                first.extend(rest);
                first
            })
            .unwrap_or_default()
    }
}

/// Options compare by what the client sent; the recorder is the write's own.
impl PartialEq for Warnings {
    fn eq(&self, _: &Warnings) -> bool {
        true
    }
}

impl Eq for Warnings {}

impl ListOptions {
    /// Whether this watch is a streaming list that ends its initial events with a bookmark
    /// (upstream's `isListWatchRequest`).
    pub fn is_list_watch(&self) -> bool {
        self.send_initial_events == Some(true) && self.allow_watch_bookmarks
    }
}
