//! batch/v1 CronJob, after upstream's `pkg/registry/batch/cronjob` (strategy and status
//! strategy), `SetDefaults_CronJob`, `ValidateCronJobCreate`, `ValidateCronJobUpdate` and
//! `printCronJob`.

use kas_api::batch::v1::{CRON_JOB_SPEC, CRON_JOB_STATUS, JOB_SPEC};
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_nonnegative_field};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Value, json};

use super::cron::{load_location, parse_standard};
use super::jobs::{
    default_job_spec_template, job_spec_warnings, semantic, validate_job_spec_fields,
};
use crate::podspec::container_cells;
use crate::resources::apps::common::{
    causes, format_label_selector, go_label_selector, int, keep_status_and_bump_generation,
    name_warnings, reset_status_and_generation,
};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "batch",
    version: "v1",
    kind: "CronJob",
    list_kind: "CronJobList",
    plural: "cronjobs",
    singular: "cronjob",
    short_names: &["cj"],
    categories: &["all"],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Schedule",
            type_: "string",
            format: "",
            description: CRON_JOB_SPEC.doc("schedule"),
            priority: 0,
        },
        TableColumn {
            name: "Timezone",
            type_: "string",
            format: "",
            description: CRON_JOB_SPEC.doc("timeZone"),
            priority: 0,
        },
        TableColumn {
            name: "Suspend",
            type_: "boolean",
            format: "",
            description: CRON_JOB_SPEC.doc("suspend"),
            priority: 0,
        },
        TableColumn {
            name: "Active",
            type_: "integer",
            format: "",
            description: CRON_JOB_STATUS.doc("active"),
            priority: 0,
        },
        TableColumn {
            name: "Last Schedule",
            type_: "string",
            format: "",
            description: CRON_JOB_STATUS.doc("lastScheduleTime"),
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
    storage_resource: "cronjobs",
    schema: Some(&kas_api::batch::v1::CRON_JOB),
    list_schema: Some(&kas_api::batch::v1::CRON_JOB_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream's `validTimeZoneCharacters`: `^[A-Za-z\.\-_0-9+]{1,14}$`.
fn valid_time_zone_part(part: &str) -> bool {
    (1..=14).contains(&part.len())
        && part
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-+".contains(&b))
}

/// Upstream `validateTimeZone`.
fn validate_time_zone(tz: Option<&str>, path: &Path) -> Vec<field::Error> {
    let Some(tz) = tz else {
        return Vec::new();
    };
    if tz.is_empty() {
        return vec![field::invalid(
            path,
            tz,
            "timeZone must be nil or non-empty string",
        )];
    }
    let bad_part = tz
        .split('/')
        .any(|p| p == "." || p == ".." || p.starts_with('-') || !valid_time_zone_part(p));
    if bad_part {
        return vec![field::invalid(path, tz, &format!("unknown time zone {tz}"))];
    }
    let mut errs = Vec::new();
    if tz.eq_ignore_ascii_case("Local") {
        errs.push(field::invalid(
            path,
            tz,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
    if let Err(e) = load_location(tz) {
        errs.push(field::invalid(path, tz, &e));
    }
    errs
}

/// Upstream `validateScheduleFormat`.
fn validate_schedule(
    schedule: &str,
    allow_tz: bool,
    time_zone: Option<&str>,
    path: &Path,
) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if let Err(e) = parse_standard(schedule) {
        errs.push(field::invalid(path, schedule, &e));
    }
    if allow_tz && schedule.contains("TZ") && time_zone.is_some() {
        errs.push(field::invalid(
            path,
            schedule,
            "cannot use both timeZone field and TZ or CRON_TZ in schedule",
        ));
    } else if !allow_tz && schedule.contains("TZ") {
        errs.push(field::invalid(
            path,
            schedule,
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ));
    }
    errs
}

/// Upstream `validateCronJobSpec`; `old` is the stored object on update.
fn validate_spec(obj: &Value, old: Option<&Value>) -> Vec<field::Error> {
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let path = Path::new("spec");
    let mut errs = Vec::new();
    let schedule = spec.get("schedule").and_then(Value::as_str).unwrap_or("");
    let time_zone = spec.get("timeZone").and_then(Value::as_str);
    let old_spec = old.and_then(|o| o.get("spec"));
    if schedule.is_empty() {
        errs.push(field::required(&path.child("schedule"), ""));
    } else {
        let allow_tz = old_spec
            .and_then(|s| s.get("schedule"))
            .and_then(Value::as_str)
            .is_some_and(|s| s.contains("TZ"));
        errs.extend(validate_schedule(
            schedule,
            allow_tz,
            time_zone,
            &path.child("schedule"),
        ));
    }
    if let Some(d) = spec.get("startingDeadlineSeconds").and_then(Value::as_i64) {
        errs.extend(validate_nonnegative_field(
            d,
            &path.child("startingDeadlineSeconds"),
        ));
    }
    let old_tz = old_spec
        .and_then(|s| s.get("timeZone"))
        .and_then(Value::as_str);
    if old_spec.is_none() || old_tz != time_zone {
        errs.extend(validate_time_zone(time_zone, &path.child("timeZone")));
    }
    let policy_path = path.child("concurrencyPolicy");
    match spec
        .get("concurrencyPolicy")
        .and_then(Value::as_str)
        .unwrap_or("")
    {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errs.push(field::required(&policy_path, "")),
        other => errs.push(field::not_supported(
            &policy_path,
            other,
            &["Allow", "Forbid", "Replace"],
        )),
    }
    // ValidateJobTemplateSpec: the job's spec, whose selector is always generated.
    let template_path = path.child("jobTemplate").child("spec");
    let job_spec = spec.pointer("/jobTemplate/spec").unwrap_or(&null);
    errs.extend(validate_job_spec_fields(job_spec, &template_path));
    if let Some(sel) = job_spec.get("selector").filter(|s| !s.is_null()) {
        errs.push(field::invalid(
            &template_path.child("selector"),
            go_label_selector(Some(sel)),
            "`selector` will be auto-generated",
        ));
    }
    if job_spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        errs.push(field::not_supported(
            &template_path.child("manualSelector"),
            true,
            &["nil", "false"],
        ));
    }
    for key in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        if let Some(v) = spec.get(key).and_then(Value::as_i64) {
            errs.extend(validate_nonnegative_field(v, &path.child(key)));
        }
    }
    errs
}

/// `printBoolPtr`.
fn print_bool_ptr(v: Option<&Value>) -> &'static str {
    match v.and_then(Value::as_bool) {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    }
}

impl kas_registry::Strategy for Strategy {
    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    /// `SetDefaults_CronJob` and the job template's pod template defaults.
    fn default(&self, obj: &mut Value) {
        let Some(map) = obj.as_object_mut() else {
            return;
        };
        let spec = map.entry("spec").or_insert_with(|| json!({}));
        if !spec.is_object() {
            *spec = json!({});
        }
        let Some(spec) = spec.as_object_mut() else {
            return;
        };
        let empty = |v: Option<&Value>| v.is_none_or(Value::is_null);
        if spec
            .get("concurrencyPolicy")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            spec.insert("concurrencyPolicy".into(), json!("Allow"));
        }
        if empty(spec.get("suspend")) {
            spec.insert("suspend".into(), json!(false));
        }
        if empty(spec.get("successfulJobsHistoryLimit")) {
            spec.insert("successfulJobsHistoryLimit".into(), json!(3));
        }
        if empty(spec.get("failedJobsHistoryLimit")) {
            spec.insert("failedJobsHistoryLimit".into(), json!(1));
        }
        let job_template = spec.entry("jobTemplate").or_insert_with(|| json!({}));
        if !job_template.is_object() {
            *job_template = json!({});
        }
        if let Some(jt) = job_template.as_object_mut() {
            let job_spec = jt.entry("spec").or_insert_with(|| json!({}));
            if !job_spec.is_object() {
                *job_spec = json!({});
            }
            if let Some(js) = job_spec.as_object_mut() {
                default_job_spec_template(js);
            }
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        reset_status_and_generation(obj);
    }

    /// The status stays; a changed spec is a new generation.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = new.get("spec").and_then(semantic) != old.get("spec").and_then(semantic);
        keep_status_and_bump_generation(new, old, changed);
    }

    /// `ValidateCronJobCreate`.
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        let mut spec_errs = validate_spec(obj, None);
        let name = kas_registry::meta::name(obj);
        if name.len() > 52 {
            spec_errs.push(field::invalid(
                &Path::new("metadata").child("name"),
                name,
                "must be no more than 52 characters",
            ));
        }
        errs.extend(causes(spec_errs));
        errs
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        let mut warnings = name_warnings(obj);
        warnings.extend(job_spec_warnings(
            obj.pointer("/spec/jobTemplate/spec"),
            "spec.jobTemplate.spec",
        ));
        warnings
    }

    /// `ValidateCronJobUpdate` (no name length limit, so old CronJobs stay updatable).
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validate_spec(new, Some(old))));
        errs
    }

    /// Upstream's status strategy validates nothing.
    fn validate_status_update(&self, _new: &Value, _old: &Value) -> FieldErrors {
        Vec::new()
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        let mut warnings = Vec::new();
        if int(new, "/metadata/generation") != int(old, "/metadata/generation") {
            warnings.extend(job_spec_warnings(
                new.pointer("/spec/jobTemplate/spec"),
                "spec.jobTemplate.spec",
            ));
        }
        let schedule = new.pointer("/spec/schedule").and_then(Value::as_str);
        if schedule.is_some_and(|s| s.contains("TZ")) {
            warnings.push("cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details".to_owned());
        }
        warnings
    }

    /// `printCronJob`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let (names, images) = container_cells(obj.pointer("/spec/jobTemplate/spec/template/spec"));
        let active = obj
            .pointer("/status/active")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let last = match obj
            .pointer("/status/lastScheduleTime")
            .and_then(Value::as_str)
        {
            Some(t) => age(t),
            None => "<none>".to_owned(),
        };
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(
                obj.pointer("/spec/schedule")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ),
            json!(
                obj.pointer("/spec/timeZone")
                    .and_then(Value::as_str)
                    .unwrap_or("<none>")
            ),
            json!(print_bool_ptr(obj.pointer("/spec/suspend"))),
            json!(active),
            json!(last),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
            json!(names),
            json!(images),
            json!(format_label_selector(
                obj.pointer("/spec/jobTemplate/spec/selector")
            )),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn cj() -> Value {
        let mut cj = json!({"metadata": {"name": "hello", "namespace": "ns"},
            "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"metadata": {"name": "hello"},
                "spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                    "containers": [{"name": "hello", "image": "busybox"}]}}}}}});
        Strategy.default(&mut cj);
        Strategy.prepare_for_create(&mut cj);
        cj
    }

    #[test]
    fn defaults() {
        let cj = cj();
        let spec = &cj["spec"];
        assert_eq!(spec["concurrencyPolicy"], "Allow");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["successfulJobsHistoryLimit"], 3);
        assert_eq!(spec["failedJobsHistoryLimit"], 1);
        // The job template gets its pod template's defaults, not SetDefaults_Job's.
        assert!(spec["jobTemplate"]["spec"].get("completions").is_none());
        assert_eq!(
            spec["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"],
            "ClusterFirst"
        );
        assert_eq!(cj["metadata"]["generation"], 1);
        let errs = Strategy.validate(&cj);
        assert!(errs.is_empty(), "{:?}", messages(&errs));
    }

    #[test]
    fn spec_messages() {
        let mut bad = cj();
        bad["metadata"]["name"] = json!("a".repeat(53));
        bad["spec"]["schedule"] = json!("x");
        bad["spec"]["concurrencyPolicy"] = json!("Sometimes");
        bad["spec"]["timeZone"] = json!("Mars/Olympus");
        bad["spec"]["failedJobsHistoryLimit"] = json!(-1);
        bad["spec"]["jobTemplate"]["spec"]["selector"] = json!({"matchLabels": {"a": "b"}});
        bad["spec"]["jobTemplate"]["spec"]["manualSelector"] = json!(true);
        assert_eq!(
            messages(&Strategy.validate(&bad)),
            [
                "spec.schedule: Invalid value: \"x\": expected exactly 5 fields, found 1: [x]",
                "spec.timeZone: Invalid value: \"Mars/Olympus\": unknown time zone Mars/Olympus",
                "spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"",
                "spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"a\":\"b\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated",
                "spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: \"nil\", \"false\"",
                "spec.failedJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
                &format!(
                    "metadata.name: Invalid value: \"{}\": must be no more than 52 characters",
                    "a".repeat(53)
                ),
            ]
        );
        let mut tz = cj();
        tz["spec"]["schedule"] = json!("TZ=UTC 0 * * * *");
        tz["spec"]["timeZone"] = json!("");
        tz["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
        assert_eq!(
            messages(&Strategy.validate(&tz)),
            [
                "spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
                "spec.timeZone: Invalid value: \"\": timeZone must be nil or non-empty string",
                "spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"",
            ]
        );
        let mut local = cj();
        local["spec"]["timeZone"] = json!("Local");
        assert_eq!(
            messages(&Strategy.validate(&local)),
            [
                "spec.timeZone: Invalid value: \"Local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
            ]
        );
    }

    #[test]
    fn updates() {
        let old = cj();
        let mut new = old.clone();
        new["spec"]["suspend"] = json!(true);
        new["status"] = json!({"active": [{"name": "x"}]});
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(new["status"], json!({}));
        assert!(Strategy.validate_update(&new, &old).is_empty());
        // Long names stay updatable; the schedule is checked again.
        let mut long = old.clone();
        long["metadata"]["name"] = json!("a".repeat(53));
        let mut long_new = long.clone();
        long_new["spec"]["schedule"] = json!("61 * * * *");
        assert_eq!(
            messages(&Strategy.validate_update(&long_new, &long)),
            [
                "spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61"
            ]
        );
        assert!(Strategy.validate_status_update(&long_new, &long).is_empty());
    }

    #[test]
    fn printer_cells() {
        let mut cj = cj();
        cj["status"] = json!({"active": [{"name": "a"}, {"name": "b"}]});
        let cells = Strategy.table_cells(&cj);
        assert_eq!(cells.len(), DESCRIPTOR.table_columns.len());
        assert_eq!(
            cells[..6],
            [
                json!("hello"),
                json!("*/1 * * * *"),
                json!("<none>"),
                json!("False"),
                json!(2),
                json!("<none>")
            ]
        );
        assert_eq!(
            cells[7..],
            [json!("hello"), json!("busybox"), json!("<none>")]
        );
    }
}
