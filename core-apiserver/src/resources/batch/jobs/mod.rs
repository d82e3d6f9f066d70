//! batch/v1 Job, after upstream's `pkg/registry/batch/job` (strategy, status strategy,
//! `generateSelector`, `JobToSelectableFields`), `SetDefaults_Job`, `ValidateJob`,
//! `ValidateJobUpdate`, `ValidateJobUpdateStatus`, `WarningsForJobSpec` and `printJob`.

#[cfg(test)]
mod tests;
mod update;
mod validation;

pub(crate) use update::semantic;
use update::*;
use validation::*;
pub(crate) use validation::{job_spec_warnings, validate_job_spec_fields};

use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

use kas_api::batch::v1::{JOB_SPEC, JOB_STATUS};
use kas_apimachinery::duration::human_duration;
use kas_apimachinery::golang::time::{Time, parse_rfc3339};
use kas_apimachinery::labels::from_label_selector;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_nonnegative_field};
use kas_apimachinery::validation::{is_dns1123_label, is_qualified_name};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Map, Value, json};

use crate::podspec::container_cells;
use crate::podspec::validation::validate_pod_template_spec;
use crate::resources::apps::common::{
    causes, format_label_selector, go_label_selector, go_string_map, int, is_set,
    keep_status_and_bump_generation, name_warnings, reset_status_and_generation, string_map,
    validate_label_selector,
};

/// Upstream's `batch.LegacyJobNameLabel`, `JobNameLabel`, `LegacyControllerUidLabel` and
/// `ControllerUidLabel`.
pub const LEGACY_JOB_NAME_LABEL: &str = "job-name";
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
pub const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";

const MAX_PARALLELISM_FOR_INDEXED_JOB: i64 = 100_000;
const MAX_FAILED_INDEXES_FOR_INDEXED_JOB: i64 = 100_000;
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
const PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS: i64 = 10_000;
const MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS: i64 = 10_000;
const MAX_POD_FAILURE_POLICY_RULES: i64 = 20;
const MAX_ON_EXIT_CODES_VALUES: i64 = 255;
const MAX_ON_POD_CONDITIONS_PATTERNS: i64 = 20;
const MAX_MANAGED_BY_LENGTH: i64 = 63;
const MAX_SUCCEEDED_INDEXES_LENGTH: i64 = 64 * 1024;
const MAX_SUCCESS_POLICY_RULES: i64 = 20;
/// `WarningsForJobSpec`'s soft limit of parallelism.
const PARALLELISM_SOFT_LIMIT_FOR_UNLIMITED_COMPLETIONS: i64 = 10_000;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "batch",
    version: "v1",
    kind: "Job",
    list_kind: "JobList",
    plural: "jobs",
    singular: "job",
    short_names: &[],
    categories: &["all"],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Status",
            type_: "string",
            format: "",
            description: "Status of the job.",
            priority: 0,
        },
        TableColumn {
            name: "Completions",
            type_: "string",
            format: "",
            description: JOB_STATUS.doc("succeeded"),
            priority: 0,
        },
        TableColumn {
            name: "Duration",
            type_: "string",
            format: "",
            description: "Time required to complete the job.",
            priority: 0,
        },
        AGE_COLUMN,
        crate::podspec::CONTAINERS_COLUMN,
        crate::podspec::IMAGES_COLUMN,
        TableColumn {
            name: "Selector",
            type_: "string",
            format: "",
            description: JOB_SPEC.doc("selector"),
            priority: 1,
        },
    ],
    table_name_and_age: false,
    storage_resource: "jobs",
    schema: Some(&kas_api::batch::v1::JOB),
    list_schema: Some(&kas_api::batch::v1::JOB_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// The object at `key` of `map`, inserted empty when missing or null (a Go value field).
fn object_at<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let v = map.entry(key).or_insert_with(|| json!({}));
    if !v.is_object() {
        *v = json!({});
    }
    match v {
        Value::Object(m) => m,
        _ => unreachable!("just made an object"),
    }
}

fn unset(map: &Map<String, Value>, key: &str) -> bool {
    map.get(key).is_none_or(Value::is_null)
}

/// The defaults a JobSpec gets wherever it is (`SetDefaults_PodFailurePolicyOnPodConditionsPattern`
/// and the pod template's), without `SetDefaults_Job`'s own.
pub(crate) fn default_job_spec_template(spec: &mut Map<String, Value>) {
    if let Some(rules) = spec
        .get_mut("podFailurePolicy")
        .and_then(|p| p.get_mut("rules"))
        .and_then(Value::as_array_mut)
    {
        for rule in rules {
            if let Some(patterns) = rule
                .get_mut("onPodConditions")
                .and_then(Value::as_array_mut)
            {
                for p in patterns.iter_mut().filter_map(Value::as_object_mut) {
                    if p.get("status")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .is_empty()
                    {
                        p.insert("status".into(), json!("True"));
                    }
                }
            }
        }
    }
    let template = spec.entry("template").or_insert_with(|| json!({}));
    if !template.is_object() {
        *template = json!({});
    }
    crate::podspec::defaults::default_pod_template_spec(template);
}

/// `SetDefaults_Job` (with `JobPodReplacementPolicy` on) and the template's defaults.
pub(crate) fn default_job(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let spec = object_at(map, "spec");
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
        spec.insert("parallelism".into(), json!(1));
    }
    if unset(spec, "parallelism") {
        spec.insert("parallelism".into(), json!(1));
    }
    if unset(spec, "backoffLimit") {
        let limit = if unset(spec, "backoffLimitPerIndex") {
            6
        } else {
            i64::from(i32::MAX)
        };
        spec.insert("backoffLimit".into(), json!(limit));
    }
    if unset(spec, "completionMode") {
        spec.insert("completionMode".into(), json!("NonIndexed"));
    }
    if unset(spec, "suspend") {
        spec.insert("suspend".into(), json!(false));
    }
    if unset(spec, "podReplacementPolicy") {
        let policy = if unset(spec, "podFailurePolicy") {
            "TerminatingOrFailed"
        } else {
            "Failed"
        };
        spec.insert("podReplacementPolicy".into(), json!(policy));
    }
    if unset(spec, "manualSelector") {
        spec.insert("manualSelector".into(), json!(false));
    }
    default_job_spec_template(spec);
    labels_from_template(map);
}

/// `SetDefaults_Job`'s labels: a job without labels takes its template's.
fn labels_from_template(job: &mut Map<String, Value>) {
    let template_labels = job
        .get("spec")
        .and_then(|s| s.pointer("/template/metadata/labels"))
        .filter(|l| l.is_object())
        .cloned();
    if let Some(labels) = template_labels {
        let meta = object_at(job, "metadata");
        let empty = meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        if empty {
            meta.insert("labels".into(), labels);
        }
    }
}

/// Upstream `generateSelector`: the template gets the job's name and uid as labels (unless
/// set already, which validation then checks) and the selector selects the uid.
pub(crate) fn generate_selector(obj: &mut Value) {
    let name = kas_registry::meta::name(obj).to_owned();
    let uid = kas_registry::meta::str_field(obj, "uid").to_owned();
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let template = object_at(spec, "template");
    let labels = object_at(object_at(template, "metadata"), "labels");
    for (key, value) in [
        (LEGACY_JOB_NAME_LABEL, &name),
        (JOB_NAME_LABEL, &name),
        (LEGACY_CONTROLLER_UID_LABEL, &uid),
        (CONTROLLER_UID_LABEL, &uid),
    ] {
        if !labels.contains_key(key) {
            labels.insert(key.into(), json!(value));
        }
    }
    let match_labels = object_at(object_at(spec, "selector"), "matchLabels");
    if !match_labels.contains_key(CONTROLLER_UID_LABEL) {
        match_labels.insert(CONTROLLER_UID_LABEL.into(), json!(uid));
    }
}

/// Upstream `ValidateHasLabel`.
/// Whether a job has the condition of `type_` and it is true (`hasJobCondition`).
fn has_condition(obj: &Value, type_: &str) -> bool {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| opt_str(c, "type") == Some(type_))
        .is_some_and(|c| opt_str(c, "status") == Some("True"))
}

fn timestamp(obj: &Value, pointer: &str) -> Option<Time> {
    obj.pointer(pointer)
        .and_then(Value::as_str)
        .and_then(parse_rfc3339)
}

/// `printJob`'s Completions, Duration and Status cells.
fn job_cells(obj: &Value) -> (String, String, String) {
    let succeeded = int(obj, "/status/succeeded");
    let completions = match obj.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(c) => format!("{succeeded}/{c}"),
        None => match int(obj, "/spec/parallelism") {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let duration = match (
        timestamp(obj, "/status/startTime"),
        timestamp(obj, "/status/completionTime"),
    ) {
        (None, _) => String::new(),
        (Some(start), None) => {
            let now = Time::from_system_time(SystemTime::now());
            human_duration(now.seconds - start.seconds)
        }
        (Some(start), Some(end)) => human_duration(end.seconds - start.seconds),
    };
    let status = if has_condition(obj, "Complete") {
        "Complete"
    } else if has_condition(obj, "Failed") {
        "Failed"
    } else if is_set(obj, "/metadata/deletionTimestamp") {
        "Terminating"
    } else if has_condition(obj, "Suspended") {
        "Suspended"
    } else if has_condition(obj, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    (status.to_owned(), completions, duration)
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's `jobStrategy.DefaultGarbageCollectionPolicy`: batch/v1's pods are
    /// orphaned unless the delete asks otherwise (for back compatibility).
    fn default_garbage_collection_policy(
        &self,
    ) -> Option<kas_registry::strategy::GarbageCollectionPolicy> {
        Some(kas_registry::strategy::GarbageCollectionPolicy::OrphanDependents)
    }

    /// Upstream's job `REST.Delete` and `DeleteCollection` warning for that default.
    fn default_policy_warning(&self) -> Option<&'static str> {
        Some(
            "child pods are preserved by default when jobs are deleted; \
             set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning",
        )
    }

    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    fn default(&self, obj: &mut Value) {
        default_job(obj);
    }

    /// The selector is generated unless manual, the status reset, generation 1. A job
    /// still without labels then takes the template's, generated ones included: upstream
    /// defaults the job again as it decodes it from etcd, so every read (the create's
    /// answer first) shows them.
    fn prepare_for_create(&self, obj: &mut Value) {
        if obj.pointer("/spec/manualSelector").and_then(Value::as_bool) != Some(true) {
            generate_selector(obj);
        }
        if let Some(job) = obj.as_object_mut() {
            labels_from_template(job);
        }
        reset_status_and_generation(obj);
    }

    /// The status stays; a changed spec is a new generation.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = semantic_at(new, "/spec") != semantic_at(old, "/spec");
        keep_status_and_bump_generation(new, old, changed);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_job(obj, true)
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        let mut warnings = name_warnings(obj);
        warnings.extend(job_spec_warnings(obj.get("spec"), "spec"));
        warnings
    }

    /// `ValidateJob` then `ValidateJobUpdate`, with the options upstream derives from the
    /// old job (prefixed labels required when it had them; scheduling directives mutable
    /// while it is suspended and never started).
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let labels = old.pointer("/spec/template/metadata/labels");
        let require_prefixed = labels.and_then(|l| l.get(JOB_NAME_LABEL)).is_some()
            && labels.and_then(|l| l.get(CONTROLLER_UID_LABEL)).is_some();
        let allow_scheduling = old.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true)
            && !is_set(old, "/status/startTime");
        let mut errs = validate_job(new, require_prefixed);
        errs.extend(validate_object_meta_update(new, old));
        errs.extend(causes(validate_job_spec_update(new, old, allow_scheduling)));
        errs
    }

    /// `ValidateJobUpdateStatus`.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        let mut status_errs = validate_job_status(new);
        if condition_true(old, "SuccessCriteriaMet") && !condition_true(new, "SuccessCriteriaMet") {
            status_errs.push(field::invalid(
                &Path::new("status").child("conditions"),
                BadValue::Omit,
                "cannot disable the SuccessCriteriaMet=True condition",
            ));
        }
        errs.extend(causes(status_errs));
        errs
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        if int(new, "/metadata/generation") == int(old, "/metadata/generation") {
            return Vec::new();
        }
        job_spec_warnings(new.get("spec"), "spec")
    }

    /// Upstream `JobToSelectableFields`.
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        let mut set = kas_registry::meta::default_field_set(obj);
        set.insert(
            "status.successful".into(),
            int(obj, "/status/succeeded").to_string(),
        );
        set
    }

    /// `printJob`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let (status, completions, duration) = job_cells(obj);
        let (names, images) = container_cells(obj.pointer("/spec/template/spec"));
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(status),
            json!(completions),
            json!(duration),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
            json!(names),
            json!(images),
            json!(format_label_selector(obj.pointer("/spec/selector"))),
        ]
    }
}
