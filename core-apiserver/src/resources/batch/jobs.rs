//! batch/v1 Job, after upstream's `pkg/registry/batch/job` (strategy, status strategy,
//! `generateSelector`, `JobToSelectableFields`), `SetDefaults_Job`, `ValidateJob`,
//! `ValidateJobUpdate`, `ValidateJobUpdateStatus`, `WarningsForJobSpec` and `printJob`.

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
    let template_labels = spec
        .get("template")
        .and_then(|t| t.pointer("/metadata/labels"))
        .filter(|l| l.is_object())
        .cloned();
    if let Some(labels) = template_labels {
        let meta = object_at(map, "metadata");
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
fn validate_has_label(
    template: &Value,
    path: &Path,
    key: &str,
    expected: &str,
) -> Vec<field::Error> {
    let labels = template.pointer("/metadata/labels");
    let path = path.child("labels").key(key);
    match labels.and_then(|l| l.get(key)) {
        None => vec![field::required(&path, &format!("must be '{expected}'"))],
        Some(v) if v.as_str() != Some(expected) => vec![field::invalid(
            &path,
            BadValue::Raw(go_string_map(labels)),
            &format!("must be '{expected}'"),
        )],
        Some(_) => Vec::new(),
    }
}

/// Upstream `validateGeneratedSelector`.
fn validate_generated_selector(obj: &Value, require_prefixed: bool) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if obj.pointer("/spec/manualSelector").and_then(Value::as_bool) == Some(true) {
        return errs;
    }
    let Some(selector) = obj.pointer("/spec/selector").filter(|s| !s.is_null()) else {
        return errs;
    };
    let uid = kas_registry::meta::str_field(obj, "uid");
    let name = kas_registry::meta::name(obj);
    if uid.is_empty() {
        errs.push(field::required(&Path::new("metadata").child("uid"), ""));
    }
    let null = Value::Null;
    let template = obj.pointer("/spec/template").unwrap_or(&null);
    let tpath = Path::new("spec").child("template").child("metadata");
    errs.extend(validate_has_label(
        template,
        &tpath,
        LEGACY_CONTROLLER_UID_LABEL,
        uid,
    ));
    errs.extend(validate_has_label(
        template,
        &tpath,
        LEGACY_JOB_NAME_LABEL,
        name,
    ));
    let mut expected = BTreeMap::new();
    if require_prefixed {
        errs.extend(validate_has_label(
            template,
            &tpath,
            CONTROLLER_UID_LABEL,
            uid,
        ));
        errs.extend(validate_has_label(template, &tpath, JOB_NAME_LABEL, name));
        expected.insert(CONTROLLER_UID_LABEL.to_owned(), uid.to_owned());
        expected.insert(JOB_NAME_LABEL.to_owned(), name.to_owned());
    }
    expected.insert(LEGACY_CONTROLLER_UID_LABEL.to_owned(), uid.to_owned());
    expected.insert(LEGACY_JOB_NAME_LABEL.to_owned(), name.to_owned());
    if let Ok(sel) = from_label_selector(selector)
        && !sel.matches(&expected)
    {
        errs.push(field::invalid(
            &Path::new("spec").child("selector"),
            go_label_selector(Some(selector)),
            "`selector` not auto-generated",
        ));
    }
    errs
}

fn opt_int(spec: &Value, key: &str) -> Option<i64> {
    spec.get(key).and_then(Value::as_i64)
}

fn opt_str<'a>(spec: &'a Value, key: &str) -> Option<&'a str> {
    spec.get(key).and_then(Value::as_str)
}

/// Upstream `validateJobSpec`: what a Job's spec and a CronJob's job template share.
pub(crate) fn validate_job_spec_fields(spec: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for key in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
    ] {
        if let Some(v) = opt_int(spec, key) {
            errs.extend(validate_nonnegative_field(v, &path.child(key)));
        }
    }
    let parallelism = opt_int(spec, "parallelism");
    let completions = opt_int(spec, "completions");
    let per_index = opt_int(spec, "backoffLimitPerIndex");
    let max_failed = opt_int(spec, "maxFailedIndexes");
    if let Some(m) = max_failed {
        errs.extend(validate_nonnegative_field(
            m,
            &path.child("maxFailedIndexes"),
        ));
        if per_index.is_none() {
            errs.push(field::required(
                &path.child("backoffLimitPerIndex"),
                "when maxFailedIndexes is specified",
            ));
        }
    }
    if let Some(managed_by) = opt_str(spec, "managedBy") {
        errs.extend(validate_domain_prefixed_path(
            &path.child("managedBy"),
            managed_by,
        ));
        if managed_by.len() as i64 > MAX_MANAGED_BY_LENGTH {
            errs.push(field::too_long(
                &path.child("managedBy"),
                MAX_MANAGED_BY_LENGTH,
            ));
        }
    }
    let mode = opt_str(spec, "completionMode");
    if let Some(mode) = mode {
        if mode != "NonIndexed" && mode != "Indexed" {
            errs.push(field::not_supported(
                &path.child("completionMode"),
                mode,
                &["NonIndexed", "Indexed"],
            ));
        }
        if mode == "Indexed" {
            if completions.is_none() {
                errs.push(field::required(
                    &path.child("completions"),
                    "when completion mode is Indexed",
                ));
            }
            if let Some(p) = parallelism.filter(|&p| p > MAX_PARALLELISM_FOR_INDEXED_JOB) {
                errs.push(field::invalid(
                    &path.child("parallelism"),
                    p,
                    &format!(
                        "must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is Indexed"
                    ),
                ));
            }
            if let (Some(c), Some(m)) = (completions, max_failed)
                && m > c
            {
                errs.push(field::invalid(
                    &path.child("maxFailedIndexes"),
                    m,
                    "must be less than or equal to completions",
                ));
            }
            if let Some(m) = max_failed.filter(|&m| m > MAX_FAILED_INDEXES_FOR_INDEXED_JOB) {
                errs.push(field::invalid(
                    &path.child("maxFailedIndexes"),
                    m,
                    &format!("must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}"),
                ));
            }
            if completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT) && per_index.is_some() {
                if max_failed.is_none() {
                    errs.push(field::required(
                        &path.child("maxFailedIndexes"),
                        &format!(
                            "must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"
                        ),
                    ));
                }
                if let Some(p) = parallelism.filter(|&p| p > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS)
                {
                    errs.push(field::invalid(
                        &path.child("parallelism"),
                        p,
                        &format!(
                            "must be less than or equal to {PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
                        ),
                    ));
                }
                if let Some(m) =
                    max_failed.filter(|&m| m > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS)
                {
                    errs.push(field::invalid(
                        &path.child("maxFailedIndexes"),
                        m,
                        &format!(
                            "must be less than or equal to {MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
                        ),
                    ));
                }
            }
        }
    }
    let indexed = mode == Some("Indexed");
    if mode.is_none() || mode == Some("NonIndexed") {
        if let Some(b) = per_index {
            errs.push(field::invalid(
                &path.child("backoffLimitPerIndex"),
                b,
                "requires indexed completion mode",
            ));
        }
        if let Some(m) = max_failed {
            errs.push(field::invalid(
                &path.child("maxFailedIndexes"),
                m,
                "requires indexed completion mode",
            ));
        }
    }
    let failure_policy = spec.get("podFailurePolicy").filter(|p| !p.is_null());
    if let Some(policy) = failure_policy {
        errs.extend(validate_pod_failure_policy(
            spec,
            policy,
            &path.child("podFailurePolicy"),
        ));
    }
    if let Some(policy) = spec.get("successPolicy").filter(|p| !p.is_null()) {
        let spath = path.child("successPolicy");
        if !indexed {
            errs.push(field::invalid(
                &spath,
                BadValue::Raw(go_success_policy(policy)),
                "requires indexed completion mode",
            ));
        } else {
            errs.extend(validate_success_policy(completions, policy, &spath));
        }
    }
    if let Some(policy) = opt_str(spec, "podReplacementPolicy") {
        let ppath = path.child("podReplacementPolicy");
        if failure_policy.is_some() {
            if policy != "Failed" {
                errs.push(field::not_supported(&ppath, policy, &["Failed"]));
            }
        } else if policy != "Failed" && policy != "TerminatingOrFailed" {
            errs.push(field::not_supported(
                &ppath,
                policy,
                &["Failed", "TerminatingOrFailed"],
            ));
        }
    }
    let null = Value::Null;
    let template = spec.get("template").unwrap_or(&null);
    errs.extend(validate_pod_template_spec(
        template,
        &path.child("template"),
    ));
    let restart_path = path.child("template").child("spec").child("restartPolicy");
    let restart = template
        .pointer("/spec/restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or("");
    if restart == "Always" || restart.is_empty() {
        errs.push(field::required(
            &restart_path,
            "valid values: \"OnFailure\", \"Never\"",
        ));
    } else if restart != "OnFailure" && restart != "Never" {
        errs.push(field::not_supported(
            &restart_path,
            restart,
            &["OnFailure", "Never"],
        ));
    } else if failure_policy.is_some() && restart != "Never" {
        errs.push(field::invalid(
            &restart_path,
            restart,
            "only \"Never\" is supported when podFailurePolicy is specified",
        ));
    }
    errs
}

/// apimachinery `IsDomainPrefixedPath`: `<DNS subdomain>/<path>`.
fn validate_domain_prefixed_path(path: &Path, value: &str) -> Vec<field::Error> {
    let Some((host, rest)) = value.split_once('/') else {
        return vec![field::invalid(
            path,
            value,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )];
    };
    let mut errs: Vec<field::Error> = kas_apimachinery::validation::is_dns1123_subdomain(host)
        .iter()
        .map(|m| field::invalid(path, host, m))
        .collect();
    let path_ok = rest
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:".contains(&b));
    if !path_ok {
        errs.push(field::invalid(
            path,
            rest,
            "Invalid path: regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+'",
        ));
    }
    errs
}

const ACTIONS: &[&str] = &["Count", "FailIndex", "FailJob", "Ignore"];

/// Upstream `validatePodFailurePolicy` and its rules' checks.
fn validate_pod_failure_policy(spec: &Value, policy: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let rules_path = path.child("rules");
    let rules = policy.get("rules").and_then(Value::as_array);
    let rules = rules.map_or(&[][..], Vec::as_slice);
    if rules.len() as i64 > MAX_POD_FAILURE_POLICY_RULES {
        errs.push(field::too_many(
            &rules_path,
            rules.len() as i64,
            MAX_POD_FAILURE_POLICY_RULES,
        ));
    }
    let mut names = BTreeSet::new();
    for key in ["/template/spec/containers", "/template/spec/initContainers"] {
        for c in spec
            .pointer(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            names.insert(
                c.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            );
        }
    }
    let per_index = is_set(spec, "/backoffLimitPerIndex");
    for (i, rule) in rules.iter().enumerate() {
        let rule_path = rules_path.index(i);
        let action_path = rule_path.child("action");
        let action = opt_str(rule, "action").unwrap_or("");
        if action.is_empty() {
            errs.push(field::required(
                &action_path,
                "valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]",
            ));
        } else if action == "FailIndex" {
            if !per_index {
                errs.push(field::invalid(
                    &action_path,
                    action,
                    "requires the backoffLimitPerIndex to be set",
                ));
            }
        } else if !ACTIONS.contains(&action) {
            errs.push(field::not_supported(&action_path, action, ACTIONS));
        }
        let on_exit = rule.get("onExitCodes").filter(|v| !v.is_null());
        let on_conditions = rule
            .get("onPodConditions")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty());
        if let Some(req) = on_exit {
            errs.extend(validate_on_exit_codes(
                req,
                &rule_path.child("onExitCodes"),
                &names,
            ));
        }
        if let Some(patterns) = on_conditions {
            errs.extend(validate_on_pod_conditions(
                patterns,
                &rule_path.child("onPodConditions"),
            ));
        }
        if on_exit.is_some() && on_conditions.is_some() {
            errs.push(field::invalid(
                &rule_path,
                BadValue::Omit,
                "specifying both OnExitCodes and OnPodConditions is not supported",
            ));
        }
        if on_exit.is_none() && on_conditions.is_none() {
            errs.push(field::invalid(
                &rule_path,
                BadValue::Omit,
                "specifying one of OnExitCodes and OnPodConditions is required",
            ));
        }
    }
    errs
}

fn validate_on_pod_conditions(patterns: &[Value], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if patterns.len() as i64 > MAX_ON_POD_CONDITIONS_PATTERNS {
        errs.push(field::too_many(
            path,
            patterns.len() as i64,
            MAX_ON_POD_CONDITIONS_PATTERNS,
        ));
    }
    for (j, pattern) in patterns.iter().enumerate() {
        let pattern_path = path.index(j);
        let type_ = opt_str(pattern, "type").unwrap_or("");
        for msg in is_qualified_name(type_) {
            errs.push(field::invalid(&pattern_path.child("type"), type_, &msg));
        }
        let status = opt_str(pattern, "status").unwrap_or("");
        let status_path = pattern_path.child("status");
        if status.is_empty() {
            errs.push(field::required(
                &status_path,
                "valid values: [\"False\" \"True\" \"Unknown\"]",
            ));
        } else if !["False", "True", "Unknown"].contains(&status) {
            errs.push(field::not_supported(
                &status_path,
                status,
                &["False", "True", "Unknown"],
            ));
        }
    }
    errs
}

/// A `[]int32` as Go's `%#v` prints it.
fn go_int32s(v: Option<&Value>) -> BadValue {
    match v.and_then(Value::as_array) {
        None => BadValue::Raw("[]int32(nil)".to_owned()),
        Some(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|i| i.as_i64().unwrap_or(0).to_string())
                .collect();
            BadValue::Raw(format!("[]int32{{{}}}", items.join(", ")))
        }
    }
}

fn validate_on_exit_codes(req: &Value, path: &Path, names: &BTreeSet<String>) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let operator = opt_str(req, "operator").unwrap_or("");
    let op_path = path.child("operator");
    if operator.is_empty() {
        errs.push(field::required(
            &op_path,
            "valid values: [\"In\" \"NotIn\"]",
        ));
    } else if operator != "In" && operator != "NotIn" {
        errs.push(field::not_supported(&op_path, operator, &["In", "NotIn"]));
    }
    if let Some(name) = opt_str(req, "containerName")
        && !names.contains(name)
    {
        errs.push(field::invalid(
            &path.child("containerName"),
            name,
            "must be one of the container or initContainer names in the pod template",
        ));
    }
    let values_path = path.child("values");
    let raw = req.get("values");
    let values: Vec<i64> = raw
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| v.as_i64().unwrap_or(0))
        .collect();
    if values.is_empty() {
        errs.push(field::invalid(
            &values_path,
            go_int32s(raw),
            "at least one value is required",
        ));
    } else if values.len() as i64 > MAX_ON_EXIT_CODES_VALUES {
        errs.push(field::too_many(
            &values_path,
            values.len() as i64,
            MAX_ON_EXIT_CODES_VALUES,
        ));
    }
    let mut ordered = true;
    let mut seen = BTreeSet::new();
    for (j, &v) in values.iter().enumerate() {
        let value_path = values_path.index(j);
        if operator == "In" && v == 0 {
            errs.push(field::invalid(
                &value_path,
                v,
                "must not be 0 for the In operator",
            ));
        }
        if !seen.insert(v) {
            errs.push(field::duplicate(&value_path, v));
        }
        if j > 0 && values[j - 1] > v {
            ordered = false;
        }
    }
    if !ordered {
        errs.push(field::invalid(
            &values_path,
            go_int32s(raw),
            "must be ordered",
        ));
    }
    errs
}

/// A `batch.SuccessPolicy` as Go's `%#v` prints it, with its rules' pointers elided.
fn go_success_policy(policy: &Value) -> String {
    let rules = match policy.get("rules").and_then(Value::as_array) {
        None => "[]batch.SuccessPolicyRule(nil)".to_owned(),
        Some(rules) => {
            let items: Vec<&str> = rules
                .iter()
                .map(|_| "batch.SuccessPolicyRule{...}")
                .collect();
            format!("[]batch.SuccessPolicyRule{{{}}}", items.join(", "))
        }
    };
    format!("batch.SuccessPolicy{{Rules:{rules}}}")
}

fn validate_success_policy(
    completions: Option<i64>,
    policy: &Value,
    path: &Path,
) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let rules_path = path.child("rules");
    let rules = policy.get("rules").and_then(Value::as_array);
    let rules = rules.map_or(&[][..], Vec::as_slice);
    if rules.is_empty() {
        errs.push(field::required(
            &rules_path,
            "at least one rules must be specified when the successPolicy is specified",
        ));
    }
    if rules.len() as i64 > MAX_SUCCESS_POLICY_RULES {
        errs.push(field::too_many(
            &rules_path,
            rules.len() as i64,
            MAX_SUCCESS_POLICY_RULES,
        ));
    }
    // Upstream dereferences completions here; without them (already refused) it would
    // fail, so these checks are left out.
    let Some(completions) = completions else {
        return errs;
    };
    for (i, rule) in rules.iter().enumerate() {
        let rule_path = rules_path.index(i);
        let count = rule.get("succeededCount").and_then(Value::as_i64);
        let indexes = rule.get("succeededIndexes").and_then(Value::as_str);
        if count.is_none() && indexes.is_none() {
            errs.push(field::required(
                &rule_path,
                "at least one of succeededCount or succeededIndexes must be specified",
            ));
        }
        let mut total = 0;
        if let Some(indexes) = indexes {
            let ipath = rule_path.child("succeededIndexes");
            if indexes.len() as i64 > MAX_SUCCEEDED_INDEXES_LENGTH {
                errs.push(field::too_long(&ipath, MAX_SUCCEEDED_INDEXES_LENGTH));
            }
            match validate_indexes_format(indexes, completions) {
                Ok(t) => total = t,
                Err(e) => errs.push(field::invalid(
                    &ipath,
                    indexes,
                    &format!("error parsing succeededIndexes: {e}"),
                )),
            }
        }
        if let Some(count) = count {
            let cpath = rule_path.child("succeededCount");
            errs.extend(validate_nonnegative_field(count, &cpath));
            if count > completions {
                errs.push(field::invalid(
                    &cpath,
                    count,
                    &format!("must be less than or equal to {completions} (the number of specified completions)"),
                ));
            }
            if indexes.is_some() && count > total {
                errs.push(field::invalid(
                    &cpath,
                    count,
                    &format!("must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)"),
                ));
            }
        }
    }
    errs
}

/// Go's `strconv.Atoi` for index intervals (a sign is allowed, as Go allows it).
fn atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_index_interval(interval: &str, completions: i64) -> Result<(i64, i64), String> {
    let limits: Vec<&str> = interval.split('-').collect();
    if limits.len() > 2 {
        return Err(format!(
            "the fragment {} violates the requirement that an index interval can have at most two parts separated by '-'",
            kas_apimachinery::golang::strconv::quote(interval)
        ));
    }
    let parse = |s: &str| -> Result<i64, String> {
        let q = kas_apimachinery::golang::strconv::quote(s);
        let x =
            atoi(s).ok_or_else(|| format!("cannot convert string to integer for index: {q}"))?;
        if x >= completions {
            return Err(format!("too large index: {q}"));
        }
        Ok(x)
    };
    let x = parse(limits[0])?;
    if limits.len() > 1 {
        let y = parse(limits[1])?;
        if x >= y {
            return Err(format!("non-increasing order, previous: {x}, current: {y}"));
        }
        return Ok((x, y));
    }
    Ok((x, x))
}

/// Upstream `validateIndexesFormat`: the number of indexes, or why they do not parse.
fn validate_indexes_format(indexes: &str, completions: i64) -> Result<i64, String> {
    if indexes.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total = 0;
    for interval in indexes.split(',') {
        let (x, y) = parse_index_interval(interval, completions)?;
        if let Some(l) = last
            && l >= x
        {
            return Err(format!("non-increasing order, previous: {l}, current: {x}"));
        }
        total += y - x + 1;
        last = Some(y);
    }
    Ok(total)
}

/// Upstream `ValidateJobSpec`: the shared checks, then a required, valid selector that
/// matches the template's labels.
fn validate_job_spec(spec: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = validate_job_spec_fields(spec, path);
    let selector = spec.get("selector").filter(|s| !s.is_null());
    match selector {
        None => errs.push(field::required(&path.child("selector"), "")),
        Some(sel) => errs.extend(validate_label_selector(Some(sel), &path.child("selector"))),
    }
    if let Ok(sel) = from_label_selector(selector.unwrap_or(&Value::Null)) {
        let labels = spec
            .pointer("/template/metadata/labels")
            .filter(|l| !l.is_null());
        if !sel.matches(&string_map(labels)) {
            errs.push(field::invalid(
                &path.child("template").child("metadata").child("labels"),
                BadValue::Raw(go_string_map(labels)),
                "`selector` does not match template `labels`",
            ));
        }
    }
    errs
}

/// Upstream `ValidateJob`.
fn validate_job(obj: &Value, require_prefixed: bool) -> FieldErrors {
    let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let mut spec_errs = validate_generated_selector(obj, require_prefixed);
    spec_errs.extend(validate_job_spec(spec, &Path::new("spec")));
    if opt_str(spec, "completionMode") == Some("Indexed")
        && let Some(c) = opt_int(spec, "completions").filter(|&c| c > 0)
    {
        let name = kas_registry::meta::name(obj);
        let hostname = format!("{name}-{}", c - 1);
        if !is_dns1123_label(&hostname).is_empty() {
            spec_errs.push(field::invalid(
                &Path::new("metadata").child("name"),
                name,
                &format!("will not able to create pod with invalid DNS label: {hostname}"),
            ));
        }
    }
    errs.extend(causes(spec_errs));
    errs
}

/// A value with nulls, empty objects and empty arrays dropped, as `apiequality.Semantic`
/// compares nil and empty alike.
pub(crate) fn semantic(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::Object(m) => {
            let kept: Map<String, Value> = m
                .iter()
                .filter_map(|(k, v)| semantic(v).map(|v| (k.clone(), v)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        Value::Array(a) if a.is_empty() => None,
        Value::Array(a) => Some(Value::Array(
            a.iter().map(|v| semantic(v).unwrap_or(json!({}))).collect(),
        )),
        other => Some(other.clone()),
    }
}

fn semantic_at(obj: &Value, pointer: &str) -> Option<Value> {
    obj.pointer(pointer).and_then(semantic)
}

/// `ValidateImmutableField` of a value whose Go rendering is `value`.
fn immutable(
    new: &Value,
    old: &Value,
    pointer: &str,
    path: &Path,
    value: BadValue,
) -> Vec<field::Error> {
    if semantic_at(new, pointer) == semantic_at(old, pointer) {
        return Vec::new();
    }
    vec![field::invalid(path, value, "field is immutable")]
}

fn int_or_null(v: Option<&Value>) -> BadValue {
    v.and_then(Value::as_i64)
        .map_or(BadValue::Null, BadValue::Int)
}

fn str_or_null(v: Option<&Value>) -> BadValue {
    v.and_then(Value::as_str)
        .map_or(BadValue::Null, BadValue::from)
}

/// Upstream `validatePodTemplateUpdate`: the template is immutable, except for the
/// scheduling directives of a suspended job that never started.
fn validate_template_update(new: &Value, old: &Value, allow_scheduling: bool) -> Vec<field::Error> {
    let null = Value::Null;
    let template = new.pointer("/spec/template").unwrap_or(&null);
    let mut old_template = old
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    if allow_scheduling && let Some(o) = old_template.as_object_mut() {
        let new_spec = template.get("spec").cloned().unwrap_or(Value::Null);
        let ospec = object_at(o, "spec");
        let new_affinity = new_spec.get("affinity").filter(|a| !a.is_null());
        let node_affinity = new_affinity.and_then(|a| a.get("nodeAffinity")).cloned();
        match (
            new_affinity,
            ospec.get("affinity").filter(|a| !a.is_null()).is_some(),
        ) {
            (None, true) => {
                let aff = object_at(ospec, "affinity");
                aff.remove("nodeAffinity");
                if aff.values().all(Value::is_null) {
                    ospec.remove("affinity");
                }
            }
            (Some(_), false) => {
                let mut aff = Map::new();
                if let Some(n) = node_affinity {
                    aff.insert("nodeAffinity".into(), n);
                }
                ospec.insert("affinity".into(), Value::Object(aff));
            }
            (Some(_), true) => {
                let aff = object_at(ospec, "affinity");
                match node_affinity {
                    Some(n) => aff.insert("nodeAffinity".into(), n),
                    None => aff.remove("nodeAffinity"),
                };
            }
            (None, false) => {}
        }
        for key in ["nodeSelector", "tolerations", "schedulingGates"] {
            match new_spec.get(key) {
                Some(v) => ospec.insert(key.into(), v.clone()),
                None => ospec.remove(key),
            };
        }
        let new_meta = template.get("metadata").cloned().unwrap_or(Value::Null);
        let ometa = object_at(o, "metadata");
        for key in ["annotations", "labels"] {
            match new_meta.get(key) {
                Some(v) => ometa.insert(key.into(), v.clone()),
                None => ometa.remove(key),
            };
        }
    }
    if semantic(template) == semantic(&old_template) {
        return Vec::new();
    }
    vec![field::invalid(
        &Path::new("spec").child("template"),
        BadValue::Raw("core.PodTemplateSpec{...}".to_owned()),
        "field is immutable",
    )]
}

/// Upstream `ValidateJobSpecUpdate` (with `ElasticIndexedJob` on).
fn validate_job_spec_update(new: &Value, old: &Value, allow_scheduling: bool) -> Vec<field::Error> {
    let null = Value::Null;
    let spec = new.get("spec").unwrap_or(&null);
    let path = Path::new("spec");
    let mut errs = validate_job_spec(spec, &path);
    // validateCompletions: immutable, except for Indexed jobs scaled with parallelism.
    let cpath = path.child("completions");
    let completions = spec.get("completions");
    if opt_str(spec, "completionMode") == Some("Indexed") {
        let changed =
            semantic_at(new, "/spec/completions") != semantic_at(old, "/spec/completions");
        if changed
            && let Some(c) = completions.and_then(Value::as_i64)
            && Some(c) != opt_int(spec, "parallelism")
        {
            errs.push(field::invalid(
                &cpath,
                c,
                "can only be modified in tandem with spec.parallelism",
            ));
        }
    } else {
        errs.extend(immutable(
            new,
            old,
            "/spec/completions",
            &cpath,
            int_or_null(completions),
        ));
    }
    errs.extend(immutable(
        new,
        old,
        "/spec/selector",
        &path.child("selector"),
        go_label_selector(spec.get("selector")),
    ));
    errs.extend(validate_template_update(new, old, allow_scheduling));
    errs.extend(immutable(
        new,
        old,
        "/spec/completionMode",
        &path.child("completionMode"),
        str_or_null(spec.get("completionMode")),
    ));
    errs.extend(immutable(
        new,
        old,
        "/spec/podFailurePolicy",
        &path.child("podFailurePolicy"),
        BadValue::Raw("batch.PodFailurePolicy{...}".to_owned()),
    ));
    errs.extend(immutable(
        new,
        old,
        "/spec/backoffLimitPerIndex",
        &path.child("backoffLimitPerIndex"),
        int_or_null(spec.get("backoffLimitPerIndex")),
    ));
    errs.extend(immutable(
        new,
        old,
        "/spec/managedBy",
        &path.child("managedBy"),
        str_or_null(spec.get("managedBy")),
    ));
    let success = spec.get("successPolicy").filter(|p| !p.is_null());
    errs.extend(immutable(
        new,
        old,
        "/spec/successPolicy",
        &path.child("successPolicy"),
        success.map_or(BadValue::Null, |p| BadValue::Raw(go_success_policy(p))),
    ));
    errs
}

fn condition_true(obj: &Value, type_: &str) -> bool {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| opt_str(c, "type") == Some(type_) && opt_str(c, "status") == Some("True"))
}

/// The checks of upstream `validateJobStatus` that hold whatever the options.
fn validate_job_status(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("status");
    let mut errs = Vec::new();
    for key in ["active", "succeeded", "failed"] {
        errs.extend(validate_nonnegative_field(
            int(obj, &format!("/status/{key}")),
            &path.child(key),
        ));
    }
    for key in ["ready", "terminating"] {
        if let Some(v) = obj
            .pointer(&format!("/status/{key}"))
            .and_then(Value::as_i64)
        {
            errs.extend(validate_nonnegative_field(v, &path.child(key)));
        }
    }
    if let Some(uncounted) = obj
        .pointer("/status/uncountedTerminatedPods")
        .filter(|u| !u.is_null())
    {
        let upath = path.child("uncountedTerminatedPods");
        let mut seen = BTreeSet::new();
        for key in ["succeeded", "failed"] {
            for (i, uid) in uncounted
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let uid = uid.as_str().unwrap_or("");
                let p = upath.child(key).index(i);
                if uid.is_empty() {
                    errs.push(field::invalid(&p, uid, "must not be empty"));
                } else if !seen.insert(uid.to_owned()) {
                    errs.push(field::duplicate(&p, uid));
                }
            }
        }
    }
    let cpath = path.child("conditions");
    let indexed = obj.pointer("/spec/completionMode").and_then(Value::as_str) == Some("Indexed");
    let met = condition_true(obj, "SuccessCriteriaMet");
    if !indexed && met {
        errs.push(field::invalid(
            &cpath,
            BadValue::Omit,
            "cannot set SuccessCriteriaMet to NonIndexed Job",
        ));
    }
    if met && condition_true(obj, "Failed") {
        errs.push(field::invalid(
            &cpath,
            BadValue::Omit,
            "cannot set SuccessCriteriaMet=True and Failed=true conditions",
        ));
    }
    if met && condition_true(obj, "FailureTarget") {
        errs.push(field::invalid(
            &cpath,
            BadValue::Omit,
            "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
        ));
    }
    let success_policy = is_set(obj, "/spec/successPolicy");
    if !success_policy && met {
        errs.push(field::invalid(
            &cpath,
            BadValue::Omit,
            "cannot set SuccessCriteriaMet=True for Job without SuccessPolicy",
        ));
    }
    if success_policy && !met && condition_true(obj, "Complete") {
        errs.push(field::invalid(
            &cpath,
            BadValue::Omit,
            "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
        ));
    }
    errs
}

/// Upstream `WarningsForJobSpec` (without the pod template's warnings).
pub(crate) fn job_spec_warnings(spec: Option<&Value>, path: &str) -> Vec<String> {
    let Some(spec) = spec else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    if opt_str(spec, "completionMode") == Some("Indexed")
        && opt_int(spec, "completions").unwrap_or(0) > COMPLETIONS_SOFT_LIMIT
        && opt_int(spec, "parallelism").unwrap_or(0)
            > PARALLELISM_SOFT_LIMIT_FOR_UNLIMITED_COMPLETIONS
    {
        warnings.push(format!(
            "{path}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail"
        ));
    }
    warnings
}

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
    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    fn default(&self, obj: &mut Value) {
        default_job(obj);
    }

    /// The selector is generated unless manual, the status reset, generation 1.
    fn prepare_for_create(&self, obj: &mut Value) {
        if obj.pointer("/spec/manualSelector").and_then(Value::as_bool) != Some(true) {
            generate_selector(obj);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    const UID: &str = "0b4e2a39-7c1f-4d55-9c1e-3f7a3c2b1a00";

    fn job() -> Value {
        let mut job = json!({"metadata": {"name": "pi", "namespace": "ns", "uid": UID},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "pi", "image": "perl"}]}}}});
        Strategy.default(&mut job);
        Strategy.prepare_for_create(&mut job);
        job
    }

    #[test]
    fn defaults() {
        let mut j = json!({"spec": {"template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
        Strategy.default(&mut j);
        let spec = &j["spec"];
        assert_eq!(spec["completions"], 1);
        assert_eq!(spec["parallelism"], 1);
        assert_eq!(spec["backoffLimit"], 6);
        assert_eq!(spec["completionMode"], "NonIndexed");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["manualSelector"], false);
        assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
        assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");
        assert_eq!(j["metadata"]["labels"], json!({"a": "b"}));

        let mut k = json!({"spec": {"parallelism": 3, "backoffLimitPerIndex": 1,
            "podFailurePolicy": {"rules": [{"action": "Ignore",
                "onPodConditions": [{"type": "DisruptionTarget"}]}]}}});
        Strategy.default(&mut k);
        assert!(k["spec"].get("completions").is_none());
        assert_eq!(k["spec"]["parallelism"], 3);
        assert_eq!(k["spec"]["backoffLimit"], 2147483647);
        assert_eq!(k["spec"]["podReplacementPolicy"], "Failed");
        assert_eq!(
            k["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
            "True"
        );
    }

    #[test]
    fn selector_is_generated_from_the_uid() {
        let j = job();
        assert_eq!(
            j["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": UID}})
        );
        assert_eq!(
            j["spec"]["template"]["metadata"]["labels"],
            json!({"batch.kubernetes.io/controller-uid": UID, "batch.kubernetes.io/job-name": "pi",
                "controller-uid": UID, "job-name": "pi"})
        );
        assert_eq!(j["metadata"]["generation"], 1);
        assert_eq!(j["status"], json!({}));
        let errs = Strategy.validate(&j);
        assert!(errs.is_empty(), "{:?}", messages(&errs));

        // A conflicting label the user set stays, and validation refuses it.
        let mut bad = json!({"metadata": {"name": "pi", "namespace": "ns", "uid": UID},
            "spec": {"template": {"metadata": {"labels": {"job-name": "other"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl"}]}}}});
        Strategy.default(&mut bad);
        Strategy.prepare_for_create(&mut bad);
        let msgs = messages(&Strategy.validate(&bad));
        // The selector still selects the uid only, so it is no other's.
        assert_eq!(msgs.len(), 1, "{msgs:?}");
        assert!(
            msgs[0].starts_with(
                "spec.template.metadata.labels[job-name]: Invalid value: map[string]string{"
            ),
            "{msgs:?}"
        );
        assert!(
            msgs[0].ends_with("\"job-name\":\"other\"}: must be 'pi'"),
            "{msgs:?}"
        );

        // Manual selectors are the user's.
        let mut manual = json!({"metadata": {"name": "m", "namespace": "ns", "uid": UID},
            "spec": {"manualSelector": true, "template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "c", "image": "i"}]}}}});
        Strategy.default(&mut manual);
        Strategy.prepare_for_create(&mut manual);
        assert_eq!(
            messages(&Strategy.validate(&manual)),
            [
                "spec.selector: Required value",
                "spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match template `labels`",
            ]
        );
    }

    #[test]
    fn spec_messages() {
        let mut j = job();
        let spec = j["spec"].as_object_mut().unwrap();
        spec.insert("parallelism".into(), json!(-1));
        spec.insert("activeDeadlineSeconds".into(), json!(-2));
        spec.insert("ttlSecondsAfterFinished".into(), json!(-3));
        spec.insert("completionMode".into(), json!("Sometimes"));
        j["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
        assert_eq!(
            messages(&Strategy.validate(&j)),
            [
                "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
                "spec.activeDeadlineSeconds: Invalid value: -2: must be greater than or equal to 0",
                "spec.ttlSecondsAfterFinished: Invalid value: -3: must be greater than or equal to 0",
                "spec.completionMode: Unsupported value: \"Sometimes\": supported values: \"NonIndexed\", \"Indexed\"",
                "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"",
            ]
        );
        j["spec"]["completionMode"] = json!("NonIndexed");
        j["spec"]["parallelism"] = json!(1);
        j["spec"]["activeDeadlineSeconds"] = json!(1);
        j["spec"]["ttlSecondsAfterFinished"] = json!(1);
        j["spec"]["template"]["spec"]["restartPolicy"] = json!("Sometimes");
        j["spec"]["backoffLimitPerIndex"] = json!(1);
        assert_eq!(
            messages(&Strategy.validate(&j)),
            [
                "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
                "spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
                "spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"OnFailure\", \"Never\"",
            ]
        );
    }

    #[test]
    fn indexed_and_policies() {
        let mut j = job();
        j["metadata"]["name"] = json!("pi");
        j["spec"]["completionMode"] = json!("Indexed");
        j["spec"]["completions"] = json!(4);
        j["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure");
        j["spec"]["podFailurePolicy"] = json!({"rules": [
            {"action": "Explode", "onExitCodes": {"operator": "In", "values": [3, 0, 3]}},
            {"action": "FailJob"},
        ]});
        j["spec"]["podReplacementPolicy"] = json!("TerminatingOrFailed");
        j["spec"]["successPolicy"] =
            json!({"rules": [{"succeededIndexes": "0-2,1", "succeededCount": 5}]});
        assert_eq!(
            messages(&Strategy.validate(&j)),
            [
                "spec.podFailurePolicy.rules[0].action: Unsupported value: \"Explode\": supported values: \"Count\", \"FailIndex\", \"FailJob\", \"Ignore\"",
                "spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Invalid value: 0: must not be 0 for the In operator",
                "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3",
                "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{3, 0, 3}: must be ordered",
                "spec.podFailurePolicy.rules[1]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
                "spec.successPolicy.rules[0].succeededIndexes: Invalid value: \"0-2,1\": error parsing succeededIndexes: non-increasing order, previous: 2, current: 1",
                "spec.successPolicy.rules[0].succeededCount: Invalid value: 5: must be less than or equal to 4 (the number of specified completions)",
                "spec.successPolicy.rules[0].succeededCount: Invalid value: 5: must be less than or equal to 0 (the number of indexes in the specified succeededIndexes field)",
                "spec.podReplacementPolicy: Unsupported value: \"TerminatingOrFailed\": supported values: \"Failed\"",
                "spec.template.spec.restartPolicy: Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified",
            ]
        );
    }

    #[test]
    fn updates() {
        let old = job();
        let mut new = old.clone();
        new["spec"]["parallelism"] = json!(3);
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert!(Strategy.validate_update(&new, &old).is_empty());

        let mut bad = old.clone();
        bad["spec"]["completions"] = json!(2);
        bad["spec"]["template"]["spec"]["nodeSelector"] = json!({"disk": "ssd"});
        assert_eq!(
            messages(&Strategy.validate_update(&bad, &old)),
            [
                "spec.completions: Invalid value: 2: field is immutable",
                "spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable",
            ]
        );

        // A suspended job that never ran may move its pods.
        let mut suspended = old.clone();
        suspended["spec"]["suspend"] = json!(true);
        let mut moved = suspended.clone();
        moved["spec"]["template"]["spec"]["nodeSelector"] = json!({"disk": "ssd"});
        assert!(Strategy.validate_update(&moved, &suspended).is_empty());
        moved["spec"]["template"]["spec"]["hostname"] = json!("h");
        assert_eq!(
            messages(&Strategy.validate_update(&moved, &suspended)).len(),
            1
        );

        let mut status = old.clone();
        status["status"] = json!({"active": -1, "uncountedTerminatedPods": {"succeeded": ["a", ""], "failed": ["a"]}});
        assert_eq!(
            messages(&Strategy.validate_status_update(&status, &old)),
            [
                "status.active: Invalid value: -1: must be greater than or equal to 0",
                "status.uncountedTerminatedPods.succeeded[1]: Invalid value: \"\": must not be empty",
                "status.uncountedTerminatedPods.failed[0]: Duplicate value: \"a\"",
            ]
        );
    }

    #[test]
    fn printer_cells_and_fields() {
        let mut j = job();
        j["status"] = json!({"succeeded": 1, "startTime": "2024-01-01T00:00:00Z",
            "completionTime": "2024-01-01T00:01:30Z",
            "conditions": [{"type": "Complete", "status": "True"}]});
        let cells = Strategy.table_cells(&j);
        assert_eq!(cells.len(), DESCRIPTOR.table_columns.len());
        assert_eq!(
            cells[..4],
            [json!("pi"), json!("Complete"), json!("1/1"), json!("90s")]
        );
        assert_eq!(
            cells[5..],
            [
                json!("pi"),
                json!("perl"),
                json!(format!("batch.kubernetes.io/controller-uid={UID}"))
            ]
        );
        assert_eq!(Strategy.field_set(&j)["status.successful"], "1");

        let running = json!({"metadata": {"name": "r"}, "spec": {"parallelism": 3}});
        let cells = Strategy.table_cells(&running);
        assert_eq!(
            cells[1..4],
            [json!("Running"), json!("0/1 of 3"), json!("")]
        );
        assert_eq!(cells[7], "<none>");
    }
}
