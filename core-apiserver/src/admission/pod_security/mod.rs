//! Upstream's `PodSecurity` admission plugin (`plugin/pkg/admission/security/podsecurity`
//! over `k8s.io/pod-security-admission`, 1.33) with upstream's default configuration:
//! enforce, audit and warn `privileged:latest`, no exemptions.
//!
//! The namespace labels `pod-security.kubernetes.io/{enforce,audit,warn}[-version]` choose
//! a level and version per mode. Namespaces: invalid labels are refused (422) on create and
//! on an update that changes them; an update that tightens the enforce level warns about
//! the namespace's existing pods that would violate it. Pods (and their non-status
//! subresources): the enforce level refuses (403) and the warn level adds a Warning.
//! Workloads with pod templates get the warn and audit levels only. The request's audit
//! event gets upstream's annotations: `pod-security.kubernetes.io/enforce-policy`,
//! `audit-violations` and `error`.

pub mod api;
pub mod baseline;
mod labeled;
mod namespace;
pub mod overlapping;
pub mod policy;
pub mod restricted;
#[cfg(test)]
mod tests;

use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::validation::field;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Attributes, Operation, Validate};
use kas_registry::store::Store;
use serde_json::Value;

use api::{Level, Policy};
use policy::{Aggregate, evaluate_pod};

/// Upstream `ignoredPodSubresources`: every other pod subresource is evaluated.
const IGNORED_POD_SUBRESOURCES: &[&str] = &[
    "exec",
    "attach",
    "binding",
    "eviction",
    "log",
    "portforward",
    "proxy",
    "status",
];

/// The plugin, reading namespaces and pods through their stores' watch caches.
pub struct PodSecurity {
    pub namespaces: Option<Store>,
    pub pods: Option<Store>,
    pub defaults: Policy,
    /// The namespaces whose labels may restrict an update (see `labeled`).
    labeled: std::sync::Arc<labeled::Labeled>,
}

impl PodSecurity {
    /// The plugin; with a namespaces store it follows their labels (a task on the
    /// current runtime).
    pub fn new(namespaces: Option<Store>, pods: Option<Store>) -> PodSecurity {
        let labeled = std::sync::Arc::new(labeled::Labeled::default());
        if let Some(store) = &namespaces {
            labeled.follow(store.clone());
        }
        PodSecurity {
            namespaces,
            pods,
            defaults: Policy::DEFAULT,
            labeled,
        }
    }
}

/// Upstream `defaultPodSpecResources` besides pods: where each keeps its pod template.
fn template_pointer(group: &str, plural: &str) -> Option<&'static str> {
    Some(match (group, plural) {
        ("", "podtemplates") => "/template",
        ("", "replicationcontrollers")
        | ("apps", "replicasets" | "deployments" | "statefulsets" | "daemonsets")
        | ("batch", "jobs") => "/spec/template",
        ("batch", "cronjobs") => "/spec/jobTemplate/spec/template",
        _ => return None,
    })
}

impl Validate for PodSecurity {
    fn handles(
        &self,
        descriptor: &'static ResourceDescriptor,
        namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool {
        if !matches!(operation, Operation::Create | Operation::Update) {
            return false;
        }
        let looked_at = match (descriptor.group, descriptor.plural) {
            ("", "pods") => !IGNORED_POD_SUBRESOURCES.contains(&subresource),
            ("", "namespaces") => return subresource.is_empty(),
            (group, plural) => subresource.is_empty() && template_pointer(group, plural).is_some(),
        };
        // Upstream's default configuration allows everything in a namespace without
        // labels: an update there keeps the store's fast path (a create is checked anyway).
        looked_at && (operation == Operation::Create || self.labeled.may_restrict(namespace))
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            let Some(object) = attributes.object else {
                return Ok(());
            };
            match (attributes.descriptor.group, attributes.descriptor.plural) {
                ("", "namespaces") => self.validate_namespace(attributes, object).await,
                ("", "pods") => self.validate_pod(attributes, object).await,
                _ => self.validate_controller(attributes, object).await,
            }
        })
    }
}

fn labels(object: &Value) -> Option<&Value> {
    object.pointer("/metadata/labels")
}

impl PodSecurity {
    /// Upstream `ValidateNamespace`.
    async fn validate_namespace(
        &self,
        attributes: &Attributes<'_>,
        object: &Value,
    ) -> kas_registry::Result<()> {
        let (new_policy, new_errors) = api::policy_to_evaluate(labels(object), self.defaults);
        let invalid = |errors: &[field::Error]| -> kas_registry::Error {
            field::to_status("", "Namespace", attributes.name, errors).into()
        };
        let Some(old) = attributes
            .old_object
            .filter(|_| attributes.operation == Operation::Update)
        else {
            return match new_errors.is_empty() {
                true => Ok(()),
                false => Err(invalid(&new_errors)),
            };
        };
        let (old_policy, old_errors) = api::policy_to_evaluate(labels(old), self.defaults);
        if !new_errors.is_empty() && (old_errors.is_empty() || new_errors != old_errors) {
            return Err(invalid(&new_errors));
        }
        let (new, old) = (new_policy.enforce, old_policy.enforce);
        if new == old
            || new.level == Level::Privileged
            || (new.version == old.version && new.level <= old.level)
        {
            return Ok(());
        }
        let warnings = self.evaluate_pods_in_namespace(attributes.name, new).await;
        if let Some(sink) = attributes.warnings {
            for warning in warnings {
                sink.add(warning);
            }
        }
        Ok(())
    }

    /// The labels of namespace `name`: from the watch cache, else (a namespace the cache
    /// has not seen yet) from storage, as upstream's namespace getter falls back to a live
    /// read.
    async fn namespace_labels(&self, name: &str) -> Result<Option<Value>, ()> {
        let Some(store) = &self.namespaces else {
            return Ok(None);
        };
        let found = match store.get("", name, Some("0".into())).await {
            Err(e) if e.to_status().code == 404 => store.get("", name, None).await,
            other => other,
        };
        let namespace = found.map_err(|_| ())?.value().map_err(|_| ())?;
        Ok(labels(&namespace).cloned())
    }

    /// Upstream `ValidatePod`.
    async fn validate_pod(
        &self,
        attributes: &Attributes<'_>,
        pod: &Value,
    ) -> kas_registry::Result<()> {
        let Ok(ns_labels) = self.namespace_labels(attributes.namespace).await else {
            let message = format!("failed to lookup namespace {}", quote(attributes.namespace));
            return Err(Status::internal_error(&message).into());
        };
        let (policy, errors) = api::policy_to_evaluate(ns_labels.as_ref(), self.defaults);
        if errors.is_empty() && policy.fully_privileged() {
            return Ok(());
        }
        if attributes.operation == Operation::Update
            && let Some(old) = attributes.old_object
            && !is_significant_pod_update(pod, old)
        {
            return Ok(());
        }
        let metadata = pod.get("metadata").unwrap_or(&Value::Null);
        let spec = pod.get("spec").unwrap_or(&Value::Null);
        self.evaluate(attributes, (policy, &errors), metadata, spec, true)
    }

    /// Upstream `ValidatePodController`: warnings only; a namespace that cannot be read
    /// lets the write through.
    async fn validate_controller(
        &self,
        attributes: &Attributes<'_>,
        object: &Value,
    ) -> kas_registry::Result<()> {
        let descriptor = attributes.descriptor;
        let Some(pointer) = template_pointer(descriptor.group, descriptor.plural) else {
            return Ok(());
        };
        let Ok(ns_labels) = self.namespace_labels(attributes.namespace).await else {
            return Ok(());
        };
        let (policy, errors) = api::policy_to_evaluate(ns_labels.as_ref(), self.defaults);
        if errors.is_empty()
            && policy.warn.level == Level::Privileged
            && policy.audit.level == Level::Privileged
        {
            return Ok(());
        }
        let template = match object.pointer(pointer) {
            Some(t) if !t.is_null() => t,
            // A replication controller's template is optional: nothing to evaluate.
            _ if descriptor.plural == "replicationcontrollers" => return Ok(()),
            _ => &Value::Null,
        };
        let metadata = template.get("metadata").unwrap_or(&Value::Null);
        let spec = template.get("spec").unwrap_or(&Value::Null);
        self.evaluate(attributes, (policy, &errors), metadata, spec, false)
    }

    /// Upstream `EvaluatePod`: the enforce level refuses (when `enforce`), the warn level
    /// warns on a request that is let through.
    fn evaluate(
        &self,
        attributes: &Attributes<'_>,
        (policy, errors): (Policy, &[field::Error]),
        metadata: &Value,
        spec: &Value,
        enforce: bool,
    ) -> kas_registry::Result<()> {
        // Upstream's audit annotations, under `pod-security.kubernetes.io/`, added
        // whatever the decision.
        let annotate = |key: &str, value: &str| {
            if let Some(audit) = attributes.audit {
                audit.add(&format!("{AUDIT_ANNOTATION_PREFIX}{key}"), value);
            }
        };
        if let Some(err) = field::aggregate_strings(errors.iter().map(ToString::to_string)) {
            annotate("error", &format!("Failed to parse policy: {err}"));
        }
        let mut enforced = None;
        let mut audited = None;
        if enforce {
            annotate("enforce-policy", &policy.enforce.to_string());
            let result = Aggregate::of(evaluate_pod(policy.enforce, metadata, spec));
            if policy.audit == policy.enforce {
                audited = Some(result.clone());
            }
            if !result.allowed() {
                annotate_audit(&annotate, &policy, audited.take(), metadata, spec);
                let message = format!(
                    "violates PodSecurity {}: {}",
                    quote(&policy.enforce.to_string()),
                    result.detail()
                );
                let d = attributes.descriptor;
                return Err(Status::forbidden(d.group, d.plural, attributes.name, &message).into());
            }
            enforced = Some((policy.enforce, result));
        }
        annotate_audit(&annotate, &policy, audited, metadata, spec);
        let warn = match enforced {
            Some((lv, result)) if lv == policy.warn => result,
            _ => Aggregate::of(evaluate_pod(policy.warn, metadata, spec)),
        };
        if !warn.allowed()
            && let Some(sink) = attributes.warnings
        {
            sink.add(format!(
                "would violate PodSecurity {}: {}",
                quote(&policy.warn.to_string()),
                warn.detail()
            ));
        }
        Ok(())
    }
}

/// Upstream's audit annotations of PodSecurity (`podsecurityadmissionapi.AuditAnnotationPrefix`).
const AUDIT_ANNOTATION_PREFIX: &str = "pod-security.kubernetes.io/";

/// The `audit-violations` annotation when the audit level is violated (`result`: the
/// enforce level's evaluation when it is the same level).
fn annotate_audit(
    annotate: &dyn Fn(&str, &str),
    policy: &Policy,
    result: Option<Aggregate>,
    metadata: &Value,
    spec: &Value,
) {
    let result =
        result.unwrap_or_else(|| Aggregate::of(evaluate_pod(policy.audit, metadata, spec)));
    if !result.allowed() {
        annotate(
            "audit-violations",
            &format!(
                "would violate PodSecurity {}: {}",
                quote(&policy.audit.to_string()),
                result.detail()
            ),
        );
    }
}

/// Upstream `isSignificantPodUpdate`: only container images, the containers' seccomp
/// annotations and added or changed ephemeral containers matter (the rest of a pod's
/// spec that PodSecurity looks at cannot change).
pub fn is_significant_pod_update(pod: &Value, old: &Value) -> bool {
    let list = |p: &Value, key: &str| -> Vec<Value> {
        p.pointer(&format!("/spec/{key}"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let annotations = |p: &Value| {
        p.pointer("/metadata/annotations")
            .cloned()
            .unwrap_or(Value::Null)
    };
    let (new_annotations, old_annotations) = (annotations(pod), annotations(old));
    let significant = |c: &Value, o: &Value| {
        let image = |c: &Value| c.get("image").cloned();
        let key = format!(
            "container.seccomp.security.alpha.kubernetes.io/{}",
            policy::name(c)
        );
        image(c) != image(o) || new_annotations.get(&key) != old_annotations.get(&key)
    };
    for key in ["containers", "initContainers"] {
        let (new, old) = (list(pod, key), list(old, key));
        if new.len() != old.len() || new.iter().zip(&old).any(|(c, o)| significant(c, o)) {
            return true;
        }
    }
    let old_ephemeral = list(old, "ephemeralContainers");
    list(pod, "ephemeralContainers").iter().any(|c| {
        match old_ephemeral
            .iter()
            .find(|o| policy::name(o) == policy::name(c))
        {
            None => true,
            Some(o) => significant(c, o),
        }
    })
}
