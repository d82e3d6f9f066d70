//! Upstream `ValidateJob`, `ValidateJobUpdate` and `ValidateJobStatus`
//! (`pkg/apis/batch/validation`), and the Job warnings.

use super::*;

pub(super) fn validate_has_label(
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
pub(super) fn validate_generated_selector(
    obj: &Value,
    require_prefixed: bool,
) -> Vec<field::Error> {
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

pub(super) fn opt_int(spec: &Value, key: &str) -> Option<i64> {
    spec.get(key).and_then(Value::as_i64)
}

pub(super) fn opt_str<'a>(spec: &'a Value, key: &str) -> Option<&'a str> {
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
pub(super) fn validate_domain_prefixed_path(path: &Path, value: &str) -> Vec<field::Error> {
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

pub(super) const ACTIONS: &[&str] = &["Count", "FailIndex", "FailJob", "Ignore"];

/// Upstream `validatePodFailurePolicy` and its rules' checks.
pub(super) fn validate_pod_failure_policy(
    spec: &Value,
    policy: &Value,
    path: &Path,
) -> Vec<field::Error> {
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

pub(super) fn validate_on_pod_conditions(patterns: &[Value], path: &Path) -> Vec<field::Error> {
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
pub(super) fn go_int32s(v: Option<&Value>) -> BadValue {
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

pub(super) fn validate_on_exit_codes(
    req: &Value,
    path: &Path,
    names: &BTreeSet<String>,
) -> Vec<field::Error> {
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
pub(super) fn go_success_policy(policy: &Value) -> String {
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

pub(super) fn validate_success_policy(
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
pub(super) fn atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

pub(super) fn parse_index_interval(interval: &str, completions: i64) -> Result<(i64, i64), String> {
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
pub(super) fn validate_indexes_format(indexes: &str, completions: i64) -> Result<i64, String> {
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
pub(super) fn validate_job_spec(spec: &Value, path: &Path) -> Vec<field::Error> {
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
pub(super) fn validate_job(obj: &Value, require_prefixed: bool) -> FieldErrors {
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
