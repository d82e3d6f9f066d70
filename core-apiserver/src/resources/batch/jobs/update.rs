//! Upstream `ValidateJobUpdate` and `ValidateJobStatusUpdate` (`pkg/apis/batch/validation`):
//! what a Job's update may change, and its status rules.

use super::*;

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

pub(super) fn semantic_at(obj: &Value, pointer: &str) -> Option<Value> {
    obj.pointer(pointer).and_then(semantic)
}

/// `ValidateImmutableField` of a value whose Go rendering is `value`.
pub(super) fn immutable(
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

pub(super) fn int_or_null(v: Option<&Value>) -> BadValue {
    v.and_then(Value::as_i64)
        .map_or(BadValue::Null, BadValue::Int)
}

pub(super) fn str_or_null(v: Option<&Value>) -> BadValue {
    v.and_then(Value::as_str)
        .map_or(BadValue::Null, BadValue::from)
}

/// Upstream `validatePodTemplateUpdate`: the template is immutable, except for the
/// scheduling directives of a suspended job that never started.
pub(super) fn validate_template_update(
    new: &Value,
    old: &Value,
    allow_scheduling: bool,
) -> Vec<field::Error> {
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
pub(super) fn validate_job_spec_update(
    new: &Value,
    old: &Value,
    allow_scheduling: bool,
) -> Vec<field::Error> {
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

pub(super) fn condition_true(obj: &Value, type_: &str) -> bool {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| opt_str(c, "type") == Some(type_) && opt_str(c, "status") == Some("True"))
}

/// The checks of upstream `validateJobStatus` that hold whatever the options.
pub(super) fn validate_job_status(obj: &Value) -> Vec<field::Error> {
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
    // Upstream's checks that SuccessCriteriaMet is only set on Indexed Jobs with a
    // success policy run only with `AllowForSuccessCriteriaMetInExtendedScope` off, which
    // 1.33's status strategy never is (JobManagedBy and JobPodReplacementPolicy are on):
    // its Job controller sets the condition before Complete on every Job.
    let met = condition_true(obj, "SuccessCriteriaMet");
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
    if success_policy && !met && condition_true(obj, "Complete") {
        errs.push(field::invalid(
            &cpath,
            BadValue::Omit,
            "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
        ));
    }
    errs
}
