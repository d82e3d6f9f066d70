//! Calling the webhooks that match a request, after upstream's `generic.Webhook.
//! ShouldCallHook` and the mutating and validating dispatchers: mutating webhooks one
//! after the other, each patch applied before the next is asked (and those with
//! `reinvocationPolicy: IfNeeded` asked once more when a later one changed the object),
//! validating webhooks all at once.

use kas_storage::latency::{self, Layer};
use std::collections::BTreeMap;

use futures_util::future::join_all;
use kas_apimachinery::Status;
use kas_apimachinery::golang::net::url_error;
use kas_apimachinery::golang::strconv::quote;
use serde_json::Value;

use super::errors::{CallError, dry_run_unsupported, to_status_err};
use super::matchconditions::{Outcome, evaluate};
use super::review::{self, with_type};
use super::rules::{Target, hook_matches};
use super::source::Hook;
use super::{Request, Webhooks};

/// The labels of the request's namespace, read once per request.
type NamespaceLabels = Option<Result<BTreeMap<String, String>, Status>>;

impl Request<'_> {
    fn target(&self) -> Target<'_> {
        Target {
            operation: self.operation,
            group: self.descriptor.group,
            version: self.descriptor.version,
            resource: self.descriptor.plural,
            subresource: self.subresource,
            namespace: self.namespace,
        }
    }

    fn is_namespace(&self) -> bool {
        self.descriptor.group.is_empty() && self.descriptor.plural == "namespaces"
    }
}

/// Whether any of `hooks` has a rule for `request` (no selector looked at).
pub fn any_rule_matches(hooks: &[std::sync::Arc<Hook>], request: &Request<'_>) -> bool {
    let target = request.target();
    hooks.iter().any(|h| hook_matches(h, &target))
}

fn labels_of(object: &Value) -> BTreeMap<String, String> {
    kas_registry::meta::labels(object)
}

impl Webhooks {
    /// Upstream `Matcher.GetNamespaceLabels`: a namespace's own create or update is
    /// selected by the labels it is given; anything else by its namespace's stored ones.
    async fn namespace_labels(
        &self,
        request: &Request<'_>,
        object: Option<&Value>,
    ) -> Result<BTreeMap<String, String>, Status> {
        if request.is_namespace()
            && request.subresource.is_empty()
            && matches!(request.operation, "CREATE" | "UPDATE")
        {
            return Ok(object.map(labels_of).unwrap_or_default());
        }
        let Some(namespaces) = &self.namespaces else {
            return Ok(BTreeMap::new());
        };
        // The cache first, then storage (upstream's lister, then a live GET for a
        // namespace the lister does not know yet).
        let cached = namespaces.get_if_exists("", request.namespace, Some("0".into()));
        let found = match cached.await {
            Ok(Some(found)) => found,
            Ok(None) => namespaces
                .get("", request.namespace, None)
                .await
                .map_err(|e| e.to_status())?,
            Err(e) => return Err(e.to_status()),
        };
        let namespace = found
            .value()
            .map_err(|e| Status::internal_error(&e.to_string()))?;
        Ok(labels_of(&namespace))
    }

    /// Upstream `ShouldCallHook`: the rules, then the namespace and object selectors,
    /// whose errors count only for a webhook whose rules match, then `matchConditions`.
    async fn should_call(
        &self,
        hook: &Hook,
        request: &Request<'_>,
        object: Option<&Value>,
        labels: &mut NamespaceLabels,
    ) -> Result<bool, Status> {
        if !hook_matches(hook, &request.target()) {
            return Ok(false);
        }
        if !request.namespace.is_empty() || request.is_namespace() {
            let selector = hook
                .namespace_selector
                .as_ref()
                .map_err(|e| Status::internal_error(e))?;
            if !selector.is_empty() {
                if labels.is_none() {
                    *labels = Some(self.namespace_labels(request, object).await);
                }
                match labels {
                    Some(Ok(found)) if selector.matches(found) => {}
                    Some(Err(status)) => return Err(status.clone()),
                    _ => return Ok(false),
                }
            }
        }
        let selector = hook
            .object_selector
            .as_ref()
            .map_err(|e| Status::internal_error(e))?;
        if !selector.is_empty() {
            let selected = |o: Option<&Value>| o.is_some_and(|o| selector.matches(&labels_of(o)));
            if !selected(object) && !selected(request.old_object) {
                return Ok(false);
            }
        }
        if hook.match_conditions.is_empty() {
            return Ok(true);
        }
        let variables = review::condition_request(request);
        let conditions = &hook.match_conditions;
        match evaluate(conditions, object, request.old_object, &variables) {
            Outcome::Match => Ok(true),
            Outcome::NoMatch(_) => Ok(false),
            Outcome::Error(_) if hook.ignore_failures => Ok(false),
            Outcome::Error(e) => {
                let d = request.descriptor;
                Err(Status::forbidden(d.group, d.plural, request.name, &e))
            }
        }
    }

    /// The mutating webhooks on `object` (`None` on a delete).
    pub async fn admit(
        &self,
        request: &Request<'_>,
        mut object: Option<&mut Value>,
    ) -> Result<(), Status> {
        let hooks = self.source.hooks();
        let mut labels = None;
        let mut previously_invoked: Vec<usize> = Vec::new();
        let mut reinvoke: Vec<usize> = Vec::new();
        for (i, hook) in hooks.iter().enumerate() {
            let current = object.as_deref();
            if !self
                .should_call(hook, request, current, &mut labels)
                .await?
            {
                continue;
            }
            let changed = self
                .call_mutating(hook, request, object.as_deref_mut(), (0, i))
                .await?;
            if changed {
                reinvoke.append(&mut previously_invoked);
            }
            if hook.reinvoke_if_needed {
                previously_invoked.push(i);
            }
        }
        // Upstream's second round: the webhooks that asked for it and saw an object a
        // later webhook changed are asked once more.
        reinvoke.sort_unstable();
        for i in reinvoke {
            let hook = &hooks[i];
            let current = object.as_deref();
            if !self
                .should_call(hook, request, current, &mut labels)
                .await?
            {
                continue;
            }
            self.call_mutating(hook, request, object.as_deref_mut(), (1, i))
                .await?;
        }
        Ok(())
    }

    /// One mutating webhook: its answer's warnings recorded, its refusal or (unless
    /// ignored) its failure the request's error, its patch applied. Whether the object
    /// changed.
    async fn call_mutating(
        &self,
        hook: &Hook,
        request: &Request<'_>,
        object: Option<&mut Value>,
        (round, index): (usize, usize),
    ) -> Result<bool, Status> {
        let annotator = crate::audit::Annotator::new(request.audit, hook, round, index);
        let mut changed = false;
        let result = self
            .mutate_once(hook, request, object, &annotator, &mut changed)
            .await;
        annotator.mutation(changed);
        result
    }

    async fn mutate_once(
        &self,
        hook: &Hook,
        request: &Request<'_>,
        object: Option<&mut Value>,
        annotator: &crate::audit::Annotator<'_>,
        changed: &mut bool,
    ) -> Result<bool, Status> {
        let answer = match call(hook, request, object.as_deref(), true).await {
            Ok(answer) => answer,
            Err(CallError::Calling { .. }) if hook.ignore_failures => {
                annotator.failed_open();
                return Ok(false);
            }
            Err(e) => return Err(e.into_status()),
        };
        annotator.webhook_annotations(&answer.audit_annotations);
        if let Some(warnings) = request.warnings {
            for w in &answer.warnings {
                warnings.add_mutating(w.clone());
            }
        }
        if !answer.allowed {
            return Err(to_status_err(&hook.name, answer.result.as_ref()));
        }
        match self.apply_patch(hook, request, &answer, object) {
            Ok(patched) => {
                *changed = patched;
                if !answer.patch.is_empty() {
                    annotator.patch(&answer.patch);
                }
                Ok(patched)
            }
            Err(CallError::Calling { .. }) if hook.ignore_failures => {
                annotator.failed_open();
                Ok(false)
            }
            Err(e) => Err(e.into_status()),
        }
    }

    /// The answer's JSONPatch applied to `object` (upstream decodes the result into the
    /// type again and defaults it: the resource's defaulting runs here).
    pub(super) fn apply_patch(
        &self,
        hook: &Hook,
        request: &Request<'_>,
        answer: &review::Response,
        object: Option<&mut Value>,
    ) -> Result<bool, CallError> {
        if answer.patch.is_empty() {
            return Ok(false);
        }
        let internal = |e: String| CallError::Status(Box::new(Status::internal_error(&e)));
        let operations: Vec<Value> =
            serde_json::from_slice(&answer.patch).map_err(|e| internal(e.to_string()))?;
        if operations.is_empty() {
            return Ok(false);
        }
        let Some(object) = object else {
            return Err(internal(format!(
                "admission webhook {} attempted to modify the object, which is not supported for this operation",
                quote(&hook.name)
            )));
        };
        if answer.patch_type != "JSONPatch" {
            return Err(CallError::calling(
                &hook.name,
                format!("unsupported patch type {}", quote(&answer.patch_type)),
            ));
        }
        let (group, version, kind) = request.kind;
        let typed = with_type(object, &api_version(group, version), kind);
        let mut patched = kas_apimachinery::patch::json_patch(&typed, &answer.patch)
            .map_err(|e| internal(e.to_string()))?;
        if let Some(map) = patched.as_object_mut() {
            for field in ["apiVersion", "kind"] {
                match object.get(field) {
                    Some(v) => {
                        map.insert(field.to_owned(), v.clone());
                    }
                    None => {
                        map.remove(field);
                    }
                }
            }
        }
        if request.subresource.is_empty()
            && let Some(store) = self.store_of(request.descriptor)
        {
            store.strategy.default(&mut patched);
        }
        let changed = patched != *object;
        *object = patched;
        Ok(changed)
    }

    /// The validating webhooks on the write's state.
    pub async fn validate(
        &self,
        request: &Request<'_>,
        object: Option<&Value>,
    ) -> Result<(), Status> {
        let hooks = self.source.hooks();
        let mut labels = None;
        let mut relevant = Vec::new();
        for hook in hooks.iter() {
            if self.should_call(hook, request, object, &mut labels).await? {
                relevant.push(hook);
            }
        }
        let calls = relevant
            .iter()
            .map(|hook| call(hook, request, object, false));
        let answers = join_all(calls).await;
        let mut first = None;
        for (hook, answer) in relevant.iter().zip(answers) {
            let error = match answer {
                Ok(answer) => {
                    crate::audit::Annotator::new(request.audit, hook, 0, 0)
                        .webhook_annotations(&answer.audit_annotations);
                    if let Some(warnings) = request.warnings {
                        for w in answer.warnings {
                            warnings.add(w);
                        }
                    }
                    if answer.allowed {
                        continue;
                    }
                    to_status_err(&hook.name, answer.result.as_ref())
                }
                Err(CallError::Calling { .. }) if hook.ignore_failures => continue,
                Err(e) => e.into_status(),
            };
            first.get_or_insert(error);
        }
        first.map_or(Ok(()), Err)
    }
}

fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// `url` with upstream's `timeout` parameter (the REST client's `Timeout`, whole seconds).
fn with_timeout(url: &str, seconds: u64) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}timeout={seconds}s")
}

/// Upstream `callHook` / `callAttrMutatingHook` up to the verified answer.
async fn call(
    hook: &Hook,
    request: &Request<'_>,
    object: Option<&Value>,
    mutating: bool,
) -> Result<review::Response, CallError> {
    let calling = |reason: String| CallError::calling(&hook.name, reason);
    if request.dry_run {
        match hook.side_effects.as_deref() {
            None => return Err(calling("Webhook SideEffects is nil".to_owned())),
            Some("None" | "NoneOnDryRun") => {}
            Some(_) => return Err(CallError::Status(Box::new(dry_run_unsupported(&hook.name)))),
        }
    }
    let version = review::review_version(&hook.admission_review_versions)
        .map_err(|e| calling(format!("could not create admission objects: {e}")))?;
    let client = hook
        .client
        .as_ref()
        .map_err(|e| calling(format!("could not get REST client: {e}")))?;
    let uid = uuid::Uuid::new_v4().to_string();
    let body = review::body(version, &uid, request, object);
    let body = serde_json::to_vec(&body).map_err(|e| calling(e.to_string()))?;
    let url = with_timeout(&hook.url, hook.timeout.as_secs());
    let failed = |e: String| calling(format!("failed to call webhook: {e}"));
    // Upstream times the call itself into the request's webhook latency trackers.
    let layer = if mutating {
        Layer::MutatingWebhook
    } else {
        Layer::ValidatingWebhook
    };
    let posted = tokio::time::timeout(hook.timeout, client.post_json(&url, body, None));
    let answer = match latency::track_future(layer, posted).await {
        Err(_) => return Err(failed(url_error("POST", &url, "context deadline exceeded"))),
        Ok(Err(e)) => return Err(failed(e.to_string())),
        Ok(Ok(answer)) => answer,
    };
    let decoded = kas_webhook::generic::read_answer(&answer).map_err(|e| failed(e.to_string()))?;
    review::verify(version, &uid, mutating, &decoded)
        .map_err(|e| calling(format!("received invalid webhook response: {e}")))
}
