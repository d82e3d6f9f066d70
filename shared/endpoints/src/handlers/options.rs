//! Query parameters of the REST verbs, parsed and validated once per request as upstream's
//! parameter codec and `ValidateListOptions`, `ValidateCreateOptions`, ... do, with
//! upstream's messages, into the option types the store takes.

use kas_apimachinery::golang::strconv::{self, quote};
use kas_apimachinery::validation::field;
use kas_apimachinery::{Status, StatusCause};
use kas_registry::features::FeatureGates;
use kas_registry::rest::options::{
    DeletionPropagation, FieldValidation, ListOptions, ResourceVersionMatch, WriteOptions,
};
use kas_registry::{Error, Result};

use crate::responsewriters::table::IncludeObject;
use crate::url::Query;

fn bad_request(message: String) -> Error {
    Status::bad_request(&message).into()
}

fn parse_bool(key: &str, v: &str) -> Result<bool> {
    strconv::parse_bool(v).map_err(|e| bad_parameter(key, e))
}

fn parse_i64(key: &str, v: &str) -> Result<i64> {
    strconv::parse_int(v, 10, 64).map_err(|e| bad_parameter(key, e))
}

fn bad_parameter(key: &str, e: strconv::NumError) -> Error {
    bad_request(format!(
        "failed to parse query parameter {}: {e}",
        quote(key)
    ))
}

/// The validation error upstream returns for bad list options.
fn invalid(causes: Vec<StatusCause>) -> Error {
    Status::invalid("meta.k8s.io", "ListOptions", "", causes).into()
}

fn forbidden(field: &str, message: &str) -> StatusCause {
    StatusCause {
        reason: Some("FieldValueForbidden".to_owned()),
        message: Some(format!("Forbidden: {message}")),
        field: Some(field.to_owned()),
    }
}

/// Upstream's `field.NotSupported` on `resourceVersionMatch`.
fn not_supported(value: &str, supported: &[&str]) -> StatusCause {
    let supported: Vec<String> = supported.iter().map(|v| quote(v)).collect();
    StatusCause {
        reason: Some("FieldValueNotSupported".to_owned()),
        message: Some(format!(
            "Unsupported value: {}: supported values: {}",
            quote(value),
            supported.join(", ")
        )),
        field: Some("resourceVersionMatch".to_owned()),
    }
}

/// `GetOptions`: the `resourceVersion` a GET reads at; empty is unset.
pub fn get_options(query: Option<&str>) -> Option<String> {
    Query::parse(query.unwrap_or(""))
        .first("resourceVersion")
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// `TableOptions`: what each row of a Table answer carries of its object (`includeObject`,
/// metadata by default), validated as upstream's `ValidateTableOptions` when a Table is
/// asked for (`optionsForTransform`).
pub fn include_object(query: Option<&str>) -> Result<IncludeObject> {
    match Query::parse(query.unwrap_or("")).first("includeObject") {
        None | Some("" | "Metadata") => Ok(IncludeObject::Metadata),
        Some("None") => Ok(IncludeObject::None),
        Some("Object") => Ok(IncludeObject::Object),
        Some(other) => {
            let err = field::invalid(
                &field::Path::new("includeObject"),
                other,
                "must be 'Metadata', 'Object', 'None', or empty",
            );
            Err(bad_request(format!(
                "Unable to convert to Table as requested: {err}"
            )))
        }
    }
}

/// Parses and validates list and watch options (upstream's `ValidateListOptions`); `watch`
/// is true for the legacy `/watch/` paths as well as `?watch=true`.
pub fn list_options(
    query: Option<&str>,
    watch_path: bool,
    features: &FeatureGates,
) -> Result<ListOptions> {
    let q = Query::parse(query.unwrap_or(""));
    let mut o = ListOptions {
        label_selector: q.first("labelSelector").unwrap_or("").to_owned(),
        field_selector: q.first("fieldSelector").unwrap_or("").to_owned(),
        watch: watch_path,
        ..ListOptions::default()
    };
    if let Some(v) = q.first("watch") {
        o.watch |= parse_bool("watch", v)?;
    }
    if let Some(v) = q.first("allowWatchBookmarks") {
        o.allow_watch_bookmarks = parse_bool("allowWatchBookmarks", v)?;
    }
    o.resource_version = q
        .first("resourceVersion")
        .filter(|v| !v.is_empty())
        .map(str::to_owned);
    let resource_version_match = q.first("resourceVersionMatch").unwrap_or("");
    o.resource_version_match = match resource_version_match {
        "NotOlderThan" => Some(ResourceVersionMatch::NotOlderThan),
        "Exact" => Some(ResourceVersionMatch::Exact),
        _ => None,
    };
    if let Some(v) = q.first("timeoutSeconds") {
        o.timeout_seconds = Some(parse_i64("timeoutSeconds", v)?);
    }
    if let Some(v) = q.first("limit") {
        o.limit = Some(parse_i64("limit", v)?).filter(|l| *l > 0);
    }
    o.continue_token = q
        .first("continue")
        .filter(|v| !v.is_empty())
        .map(str::to_owned);
    if let Some(v) = q.first("sendInitialEvents") {
        o.send_initial_events = Some(parse_bool("sendInitialEvents", v)?);
    }
    let causes = if o.watch {
        watch_causes(&o, resource_version_match, features.watch_list)
    } else {
        list_causes(&o, resource_version_match)
    };
    if !causes.is_empty() {
        return Err(invalid(causes));
    }
    Ok(o)
}

/// Upstream's `ValidateListOptions` for a list; `rv_match` as the client sent it.
fn list_causes(o: &ListOptions, rv_match: &str) -> Vec<StatusCause> {
    let mut causes = Vec::new();
    let rv = o.resource_version.as_deref().unwrap_or("");
    if !rv_match.is_empty() {
        if rv.is_empty() {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if o.continue_token.is_some() {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if o.resource_version_match.is_none() {
            causes.push(not_supported(rv_match, &["Exact", "NotOlderThan", ""]));
        }
        if o.resource_version_match == Some(ResourceVersionMatch::Exact) && rv == "0" {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if o.send_initial_events.is_some() {
        causes.push(forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    causes
}

/// Upstream's `validateWatchOptions`: streaming lists (`sendInitialEvents`) need the
/// WatchList feature and `resourceVersionMatch=NotOlderThan`, and a match mode is for
/// them only. Upstream leaves `allowWatchBookmarks` to the client: without it the
/// initial events come with no bookmark at their end.
fn watch_causes(o: &ListOptions, rv_match: &str, watch_list: bool) -> Vec<StatusCause> {
    let mut causes = Vec::new();
    let not_older_than = o.resource_version_match == Some(ResourceVersionMatch::NotOlderThan);
    if o.send_initial_events.is_some() {
        if !not_older_than {
            causes.push(forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !watch_list {
            causes.push(forbidden(
                    "sendInitialEvents",
                    "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
                ));
        }
    }
    if !rv_match.is_empty() {
        if o.send_initial_events.is_none() {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if !not_older_than {
            causes.push(not_supported(rv_match, &["NotOlderThan"]));
        }
        if o.continue_token.is_some() {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
    }
    causes
}

/// `CreateOptions`, validated as upstream's `ValidateCreateOptions`.
pub fn create_options(query: Option<&str>) -> Result<WriteOptions> {
    write_options(
        &Query::parse(query.unwrap_or("")),
        "CreateOptions",
        Vec::new(),
    )
}

/// `UpdateOptions`, validated as upstream's `ValidateUpdateOptions`.
pub fn update_options(query: Option<&str>) -> Result<WriteOptions> {
    write_options(
        &Query::parse(query.unwrap_or("")),
        "UpdateOptions",
        Vec::new(),
    )
}

/// `PatchOptions`, validated as upstream's `ValidatePatchOptions`: `force` only with an
/// apply, which needs a `fieldManager`; then what create and update check.
pub fn patch_options(query: Option<&str>, applying: bool) -> Result<WriteOptions> {
    let q = Query::parse(query.unwrap_or(""));
    let mut first = Vec::new();
    if !applying && q.first("force").is_some() {
        first.push(field::forbidden(
            &field::Path::new("force"),
            "may not be specified for non-apply patch",
        ));
    }
    if applying && q.first("fieldManager").unwrap_or("").is_empty() {
        first.push(field::required(
            &field::Path::new("fieldManager"),
            "is required for apply patch",
        ));
    }
    let mut o = write_options(&q, "PatchOptions", first)?;
    if let Some(v) = q.first("force") {
        o.force = Some(parse_bool("force", v)?);
    }
    Ok(o)
}

/// `DeleteOptions` as upstream's delete handlers read them: from the body when it has one
/// (the query is then not read), else from the query; validated as
/// `ValidateDeleteOptions` (`propagationPolicy` with `orphanDependents`, its values, then
/// `dryRun`). Preconditions come from the body only.
pub fn delete_options(
    query: Option<&str>,
    body: Option<&serde_json::Value>,
) -> Result<(kas_storage::Preconditions, WriteOptions)> {
    let mut pre = kas_storage::Preconditions::default();
    let q = Query::parse(query.unwrap_or(""));
    let (grace_period_seconds, dry_run, policy, orphan_dependents) = match body {
        Some(v) => {
            if let Some(p) = v.get("preconditions") {
                let s = |k: &str| {
                    p.get(k)
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_owned)
                };
                pre.uid = s("uid");
                pre.resource_version = s("resourceVersion");
            }
            let dry_run: Vec<String> = v
                .get("dryRun")
                .and_then(serde_json::Value::as_array)
                .map(|d| {
                    d.iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            (
                v.get("gracePeriodSeconds")
                    .and_then(serde_json::Value::as_i64),
                dry_run,
                v.get("propagationPolicy")
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned),
                v.get("orphanDependents")
                    .and_then(serde_json::Value::as_bool),
            )
        }
        None => (
            q.first("gracePeriodSeconds")
                .map(parse_grace_period)
                .transpose()?,
            q.all("dryRun").map(str::to_owned).collect::<Vec<_>>(),
            q.first("propagationPolicy").map(str::to_owned),
            q.first("orphanDependents").map(query_bool),
        ),
    };
    let errors = validate_delete_options(policy.as_deref(), orphan_dependents, &dry_run);
    if !errors.is_empty() {
        let causes = errors.iter().map(field::Error::to_cause).collect();
        return Err(Status::invalid("meta.k8s.io", "DeleteOptions", "", causes).into());
    }
    let opts = WriteOptions {
        dry_run: !dry_run.is_empty(),
        grace_period_seconds,
        propagation_policy: policy.as_deref().and_then(DeletionPropagation::parse),
        orphan_dependents,
        ..WriteOptions::default()
    };
    Ok((pre, opts))
}

fn parse_grace_period(text: &str) -> Result<i64> {
    text.parse::<i64>().map_err(|_| {
        Status::bad_request(&format!(
            "failed to parse gracePeriodSeconds: strconv.ParseInt: parsing {}: invalid syntax",
            kas_apimachinery::golang::strconv::quote(text)
        ))
        .into()
    })
}

/// A `*bool` query parameter as upstream's `Convert_Slice_string_To_Pointer_bool` reads
/// it: only `0` and `false` (any case) are false; anything else, even empty, is true.
fn query_bool(value: &str) -> bool {
    !(value == "0" || value.eq_ignore_ascii_case("false"))
}

/// Upstream's `ValidateDeleteOptions`, in its order.
fn validate_delete_options(
    policy: Option<&str>,
    orphan_dependents: Option<bool>,
    dry_run: &[String],
) -> Vec<field::Error> {
    let path = field::Path::new("propagationPolicy");
    let mut errors = Vec::new();
    if let (Some(policy), Some(_)) = (policy, orphan_dependents) {
        errors.push(field::invalid(
            &path,
            policy,
            "orphanDependents and deletionPropagation cannot be both set",
        ));
    }
    if let Some(policy) = policy
        && DeletionPropagation::parse(policy).is_none()
    {
        errors.push(field::not_supported(
            &path,
            policy,
            &["Foreground", "Background", "Orphan", "nil"],
        ));
    }
    errors.extend(validate_dry_run(dry_run));
    errors
}

/// The options every write shares (`dryRun`, `fieldManager`, `fieldValidation`), with
/// upstream's checks in its order after the verb's own (`first`), all in one Invalid
/// naming `kind` (`CreateOptions`, ...).
fn write_options(q: &Query, kind: &str, first: Vec<field::Error>) -> Result<WriteOptions> {
    let dry_run: Vec<String> = q.all("dryRun").map(str::to_owned).collect();
    let field_manager = q.first("fieldManager").map(str::to_owned);
    let field_validation = q.first("fieldValidation").unwrap_or("");
    let mut errors = first;
    errors.extend(validate_field_manager(
        field_manager.as_deref().unwrap_or(""),
    ));
    errors.extend(validate_dry_run(&dry_run));
    let field_validation = match field_validation {
        "" | "Warn" => FieldValidation::Warn,
        "Ignore" => FieldValidation::Ignore,
        "Strict" => FieldValidation::Strict,
        other => {
            // Upstream's `ValidateFieldValidation`: the allowed values, sorted.
            errors.push(field::not_supported(
                &field::Path::new("fieldValidation"),
                other,
                &["", "Ignore", "Strict", "Warn"],
            ));
            FieldValidation::Warn
        }
    };
    if !errors.is_empty() {
        let causes = errors.iter().map(field::Error::to_cause).collect();
        return Err(Status::invalid("meta.k8s.io", kind, "", causes).into());
    }
    Ok(WriteOptions {
        dry_run: !dry_run.is_empty(),
        field_manager,
        field_validation,
        ..WriteOptions::default()
    })
}

/// Upstream's `ValidateDryRun`: every value `All`; the error shows the whole list as Go's
/// `%#v` of a `[]string`.
fn validate_dry_run(dry_run: &[String]) -> Vec<field::Error> {
    if dry_run.iter().all(|v| v == "All") {
        return Vec::new();
    }
    vec![field::not_supported(
        &field::Path::new("dryRun"),
        field::BadValue::Strings(Some(dry_run.to_vec())),
        &["All"],
    )]
}

/// Upstream's `ValidateFieldManager`: at most 128 bytes, printable characters only.
fn validate_field_manager(manager: &str) -> Vec<field::Error> {
    use kas_apimachinery::managed_fields::FIELD_MANAGER_MAX_LENGTH;
    let path = field::Path::new("fieldManager");
    let mut errs = Vec::new();
    if manager.len() > FIELD_MANAGER_MAX_LENGTH {
        errs.push(field::too_long(&path, FIELD_MANAGER_MAX_LENGTH as i64));
    }
    for (i, c) in manager.char_indices() {
        if !strconv::is_print(c) {
            // Go's %#U of an unprintable rune: U+ and at least four hex digits.
            let detail = format!("invalid character U+{:04X} (at position {i})", c as u32);
            errs.push(field::invalid(&path, manager, &detail));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The WatchList gate on, so the streaming-list rules are exercised.
    const ON: FeatureGates = FeatureGates {
        watch_list: true,
        ..FeatureGates::DEFAULTS
    };

    #[test]
    fn list_options_parse() {
        let o = list_options(
            Some("labelSelector=a%3Db&limit=10&continue=xyz&watch=0"),
            false,
            &ON,
        )
        .unwrap();
        assert_eq!(o.label_selector, "a=b");
        assert_eq!(o.limit, Some(10));
        assert_eq!(o.continue_token.as_deref(), Some("xyz"));
        assert!(!o.watch);
        assert!(list_options(Some("watch=1"), false, &ON).unwrap().watch);
        assert!(list_options(None, true, &ON).unwrap().watch);
        assert_eq!(
            list_options(Some("limit=0"), false, &ON).unwrap().limit,
            None
        );
    }

    #[test]
    fn list_options_errors_are_upstreams() {
        let e = list_options(Some("limit=abc"), false, &ON)
            .unwrap_err()
            .to_status();
        assert_eq!(e.code, 400);
        let e = list_options(Some("resourceVersionMatch=Exact"), false, &ON)
            .unwrap_err()
            .to_status();
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message.as_deref(),
            Some(
                "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
            )
        );
        let e = list_options(
            Some("resourceVersion=0&resourceVersionMatch=Exact"),
            false,
            &ON,
        )
        .unwrap_err()
        .to_status();
        assert!(e.message.unwrap().contains("\"exact\" is forbidden"));
        assert!(
            list_options(
                Some("resourceVersion=5&resourceVersionMatch=NotOlderThan"),
                false,
                &ON,
            )
            .is_ok()
        );
    }

    fn invalid_message(query: &str, watch: bool) -> String {
        let status = list_options(Some(query), watch, &ON)
            .unwrap_err()
            .to_status();
        assert_eq!(status.code, 422, "{query}");
        status.message.unwrap_or_default()
    }

    #[test]
    fn streaming_lists_need_the_watch_list_gate() {
        let query =
            "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";
        let status = list_options(Some(query), true, &FeatureGates::default())
            .unwrap_err()
            .to_status();
        assert_eq!(status.code, 422);
        assert_eq!(
            status.message.as_deref(),
            Some(
                "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: \
                 sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"
            )
        );
        assert!(list_options(Some(query), true, &ON).is_ok());
    }

    #[test]
    fn streaming_list_options_are_validated_as_upstream() {
        let prefix = "ListOptions.meta.k8s.io \"\" is invalid: ";
        let cases = [
            (
                "sendInitialEvents=true&allowWatchBookmarks=true",
                true,
                "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ),
            (
                "resourceVersionMatch=NotOlderThan",
                true,
                "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ),
            (
                "sendInitialEvents=true&resourceVersionMatch=Exact",
                true,
                "[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: \"Exact\": supported values: \"NotOlderThan\"]",
            ),
            (
                "sendInitialEvents=false&resourceVersionMatch=NotOlderThan&continue=abc",
                true,
                "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided",
            ),
            (
                "sendInitialEvents=true",
                false,
                "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
            ),
            (
                "resourceVersionMatch=Foo",
                false,
                "[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Unsupported value: \"Foo\": supported values: \"Exact\", \"NotOlderThan\", \"\"]",
            ),
        ];
        for (query, watch, want) in cases {
            assert_eq!(
                invalid_message(query, watch),
                format!("{prefix}{want}"),
                "{query}"
            );
        }
        let status = list_options(Some("sendInitialEvents=true"), true, &ON)
            .unwrap_err()
            .to_status();
        let cause = &status.details.unwrap().causes[0];
        assert_eq!(cause.reason.as_deref(), Some("FieldValueForbidden"));
        assert_eq!(cause.field.as_deref(), Some("resourceVersionMatch"));
    }

    #[test]
    fn streaming_lists_parse() {
        let q = "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan";
        let o = list_options(Some(q), true, &ON).unwrap();
        assert!(o.is_list_watch());
        assert_eq!(o.send_initial_events, Some(true));
        // Upstream does not require bookmarks: the initial events then have no end marker.
        let q = "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=5";
        let o = list_options(Some(q), true, &ON).unwrap();
        assert!(!o.is_list_watch());
        let q = "sendInitialEvents=false&resourceVersionMatch=NotOlderThan";
        assert!(list_options(Some(q), true, &ON).is_ok());
    }

    #[test]
    fn table_options_are_validated_as_upstream() {
        assert_eq!(include_object(None).unwrap(), IncludeObject::Metadata);
        assert_eq!(
            include_object(Some("includeObject=Object")).unwrap(),
            IncludeObject::Object
        );
        let err = include_object(Some("includeObject=All"))
            .unwrap_err()
            .to_status();
        assert_eq!(err.code, 400);
        assert_eq!(
            err.message.as_deref(),
            Some(
                "Unable to convert to Table as requested: includeObject: Invalid value: \"All\": must be 'Metadata', 'Object', 'None', or empty"
            )
        );
    }

    #[test]
    fn write_options_are_parsed() {
        let o = create_options(Some(
            "dryRun=All&fieldValidation=Strict&fieldManager=kubectl",
        ))
        .unwrap();
        assert!(o.dry_run);
        assert_eq!(o.field_validation, FieldValidation::Strict);
        assert_eq!(o.field_manager.as_deref(), Some("kubectl"));
        let dry = update_options(Some("dryRun=Some")).unwrap_err().to_status();
        assert_eq!(dry.code, 422);
        // The whole list, as Go's %#v of a []string.
        assert_eq!(
            dry.message.as_deref().unwrap_or(""),
            "UpdateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\""
        );
        let fv = create_options(Some("fieldValidation=Sometimes"))
            .unwrap_err()
            .to_status();
        assert_eq!(fv.code, 422);
        assert_eq!(
            fv.message.as_deref().unwrap_or(""),
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Sometimes\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
        );
        assert_eq!(
            fv.details.unwrap().causes[0].reason.as_deref(),
            Some("FieldValueNotSupported")
        );
    }

    #[test]
    fn every_option_error_is_reported_in_upstreams_order() {
        let long = "m".repeat(129);
        let s = create_options(Some(&format!(
            "fieldValidation=x&dryRun=All&dryRun=No&fieldManager={long}"
        )))
        .unwrap_err()
        .to_status();
        let fields: Vec<_> = s
            .details
            .unwrap()
            .causes
            .iter()
            .map(|c| c.field.clone().unwrap_or_default())
            .collect();
        assert_eq!(fields, ["fieldManager", "dryRun", "fieldValidation"]);
        let s = patch_options(Some("force=true&dryRun=x"), false)
            .unwrap_err()
            .to_status();
        assert_eq!(
            s.message.as_deref().unwrap_or(""),
            "PatchOptions.meta.k8s.io \"\" is invalid: [force: Forbidden: may not be specified for non-apply patch, dryRun: Unsupported value: []string{\"x\"}: supported values: \"All\"]"
        );
        let s = patch_options(None, true).unwrap_err().to_status();
        assert_eq!(
            s.message.as_deref().unwrap_or(""),
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
        );
        let o = patch_options(Some("force=true&fieldManager=me"), true).unwrap();
        assert_eq!(o.force, Some(true));
    }

    #[test]
    fn delete_options_come_from_the_body_when_it_has_one() {
        let body = serde_json::json!({"dryRun": ["All"], "preconditions": {"uid": "u"}});
        let (pre, o) = delete_options(Some("dryRun=Nope"), Some(&body)).unwrap();
        assert!(o.dry_run);
        assert_eq!(pre.uid.as_deref(), Some("u"));
        let (_, o) = delete_options(Some("dryRun=All&fieldValidation=x"), None).unwrap();
        assert!(o.dry_run);
        let s = delete_options(Some("dryRun=Some"), None)
            .unwrap_err()
            .to_status();
        assert_eq!(
            s.message.as_deref().unwrap_or(""),
            "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\""
        );
    }

    #[test]
    fn field_managers_are_short_and_printable() {
        let long = format!("fieldManager={}", "m".repeat(129));
        let s = patch_options(Some(&long), false).unwrap_err().to_status();
        assert_eq!(
            s.message.as_deref().unwrap_or(""),
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes"
        );
        let s = create_options(Some("fieldManager=a%09b"))
            .unwrap_err()
            .to_status();
        assert_eq!(
            s.message.as_deref().unwrap_or(""),
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Invalid value: \"a\\tb\": invalid character U+0009 (at position 1)"
        );
        let ok = format!("fieldManager={}", "m".repeat(128));
        assert!(create_options(Some(&ok)).is_ok());
    }
}
