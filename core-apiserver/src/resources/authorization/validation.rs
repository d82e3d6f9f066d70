//! Upstream's `pkg/apis/authorization/validation`: the access reviews' specs, their
//! selectors (metav1's requirement checks with unknown operators allowed) and their
//! metadata, which must be empty. Values print as upstream's `field.Invalid` prints the
//! internal Go structs (`%#v`).

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::golang::time::{format_rfc3339, parse_rfc3339};
use kas_apimachinery::validation::field::{self, BadValue, ErrorList, Path};
use kas_apimachinery::validation::is_valid_label_value;
use kas_apimachinery::validation::meta::validate_label_name;
use kas_registry::strategy::FieldErrors;
use serde_json::{Map, Value};

use crate::podspec::validation::json::{arr, obj, str_of, strings};

/// Upstream's `ValidateSubjectAccessReview` (`local`: `ValidateLocalSubjectAccessReview`).
pub(crate) fn validate_subject_access_review(review: &Value, local: bool) -> ErrorList {
    let spec = review.get("spec").unwrap_or(&Value::Null);
    let mut errs = validate_spec(spec, true);
    let meta = review.get("metadata").and_then(Value::as_object);
    if local {
        if !meta_is_empty(meta, &["managedFields", "namespace"]) {
            let value = BadValue::Raw(go_object_meta(meta));
            let msg = "must be empty except for namespace";
            errs.push(field::invalid(&Path::new("metadata"), value, msg));
        }
        let namespace = meta.map_or("", |m| m_str(m, "namespace"));
        if let Some(ra) = obj(spec, "resourceAttributes")
            && str_of(ra, "namespace") != namespace
        {
            let path = Path::new("spec.resourceAttributes.namespace");
            errs.push(field::invalid(
                &path,
                str_of(ra, "namespace"),
                "must match metadata.namespace",
            ));
        }
        if let Some(nra) = obj(spec, "nonResourceAttributes") {
            let path = Path::new("spec.nonResourceAttributes");
            let value = BadValue::Raw(go_non_resource_attributes(nra));
            errs.push(field::invalid(
                &path,
                value,
                "disallowed on this kind of request",
            ));
        }
    } else if !meta_is_empty(meta, &["managedFields"]) {
        let value = BadValue::Raw(go_object_meta(meta));
        errs.push(field::invalid(
            &Path::new("metadata"),
            value,
            "must be empty",
        ));
    }
    errs
}

/// Upstream's `ValidateSelfSubjectAccessReview`.
pub(crate) fn validate_self_subject_access_review(review: &Value) -> ErrorList {
    let spec = review.get("spec").unwrap_or(&Value::Null);
    let mut errs = validate_spec(spec, false);
    let meta = review.get("metadata").and_then(Value::as_object);
    if !meta_is_empty(meta, &["managedFields"]) {
        let value = BadValue::Raw(go_object_meta(meta));
        errs.push(field::invalid(
            &Path::new("metadata"),
            value,
            "must be empty",
        ));
    }
    errs
}

/// Upstream's `ValidateSubjectAccessReviewSpec` (`with_subject`) and
/// `ValidateSelfSubjectAccessReviewSpec`.
fn validate_spec(spec: &Value, with_subject: bool) -> ErrorList {
    let path = Path::new("spec");
    let mut errs = ErrorList::new();
    let ra = obj(spec, "resourceAttributes");
    let nra = obj(spec, "nonResourceAttributes");
    match (ra, nra) {
        (Some(_), Some(nra)) => errs.push(field::invalid(
            &path.child("nonResourceAttributes"),
            BadValue::Raw(go_non_resource_attributes(nra)),
            "cannot be specified in combination with resourceAttributes",
        )),
        (None, None) => errs.push(field::invalid(
            &path.child("resourceAttributes"),
            BadValue::Null,
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )),
        _ => {}
    }
    if with_subject && str_of(spec, "user").is_empty() && arr(spec, "groups").is_empty() {
        errs.push(field::invalid(
            &path.child("user"),
            str_of(spec, "user"),
            "at least one of user or group must be specified",
        ));
    }
    if let Some(ra) = ra {
        let path = Path::new("spec.resourceAttributes");
        if let Some(sel) = obj(ra, "fieldSelector") {
            errs.extend(validate_selector(sel, &path.child("fieldSelector"), false));
        }
        if let Some(sel) = obj(ra, "labelSelector") {
            errs.extend(validate_selector(sel, &path.child("labelSelector"), true));
        }
    }
    errs
}

/// Upstream's `validateFieldSelectorAttributes` and `validateLabelSelectorAttributes`.
fn validate_selector(sel: &Value, path: &Path, label: bool) -> ErrorList {
    let mut errs = ErrorList::new();
    let raw = str_of(sel, "rawSelector");
    let reqs = arr(sel, "requirements");
    if !raw.is_empty() && !reqs.is_empty() {
        let msg = "may not specified at the same time as requirements";
        errs.push(field::invalid(&path.child("rawSelector"), raw, msg));
    }
    if raw.is_empty() && reqs.is_empty() {
        let msg = format!("when {path} is specified, requirements or rawSelector is required");
        errs.push(field::required(&path.child("requirements"), &msg));
    }
    for (i, req) in reqs.iter().enumerate() {
        let p = path.child("requirements").index(i);
        if label {
            errs.extend(label_requirement(req, &p));
        } else {
            errs.extend(field_requirement(req, &p));
        }
    }
    errs
}

/// The operator checks metav1's two requirement validations share, with
/// `AllowUnknownOperatorInRequirement` (so an unknown operator passes).
fn operator_errors(req: &Value, path: &Path) -> ErrorList {
    let values = arr(req, "values");
    match str_of(req, "operator") {
        "In" | "NotIn" if values.is_empty() => {
            let msg = "must be specified when `operator` is 'In' or 'NotIn'";
            vec![field::required(&path.child("values"), msg)]
        }
        "Exists" | "DoesNotExist" if !values.is_empty() => {
            let msg = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'";
            vec![field::forbidden(&path.child("values"), msg)]
        }
        _ => Vec::new(),
    }
}

/// metav1 `ValidateLabelSelectorRequirement`: operator, key, and each value (invalid
/// label values are not allowed).
fn label_requirement(req: &Value, path: &Path) -> ErrorList {
    let mut errs = operator_errors(req, path);
    errs.extend(validate_label_name(str_of(req, "key"), &path.child("key")));
    for (i, value) in strings(req, "values").into_iter().enumerate() {
        for msg in is_valid_label_value(value) {
            errs.push(field::invalid(&path.child("values").index(i), value, &msg));
        }
    }
    errs
}

/// metav1 `ValidateFieldSelectorRequirement`: the key is required, then the operator.
fn field_requirement(req: &Value, path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    if str_of(req, "key").is_empty() {
        errs.push(field::required(&path.child("key"), "must be specified"));
    }
    errs.extend(operator_errors(req, path));
    errs
}

/// Whether `metav1.ObjectMeta` with the `ignored` fields cleared equals the empty one
/// (upstream's semantic equality: empty and nil maps and slices are the same).
fn meta_is_empty(meta: Option<&Map<String, Value>>, ignored: &[&str]) -> bool {
    meta.is_none_or(|m| {
        m.iter()
            .filter(|(k, _)| !ignored.contains(&k.as_str()))
            .all(|(_, v)| is_zero(v))
    })
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// The internal `authorization.NonResourceAttributes` as `%#v` prints it.
fn go_non_resource_attributes(nra: &Value) -> String {
    format!(
        "authorization.NonResourceAttributes{{Path:{}, Verb:{}}}",
        quote(str_of(nra, "path")),
        quote(str_of(nra, "verb"))
    )
}

/// `metav1.ObjectMeta` as `%#v` prints it. Upstream prints `managedFields`' `FieldsV1` as
/// a pointer address, which no one can reproduce; it is written as a nil pointer here.
fn go_object_meta(meta: Option<&Map<String, Value>>) -> String {
    let empty = Map::new();
    let m = meta.unwrap_or(&empty);
    let s = |k: &str| quote(m_str(m, k));
    let generation = m.get("generation").and_then(Value::as_i64).unwrap_or(0);
    let grace = match m.get("deletionGracePeriodSeconds").and_then(Value::as_i64) {
        Some(n) => format!("(*int64)({n})"),
        None => "(*int64)(nil)".to_owned(),
    };
    let deletion = match m.get("deletionTimestamp").and_then(Value::as_str) {
        Some(t) => go_time(t),
        None => "<nil>".to_owned(),
    };
    format!(
        "v1.ObjectMeta{{Name:{}, GenerateName:{}, Namespace:{}, SelfLink:{}, UID:{}, \
         ResourceVersion:{}, Generation:{generation}, CreationTimestamp:{}, \
         DeletionTimestamp:{deletion}, DeletionGracePeriodSeconds:{grace}, Labels:{}, \
         Annotations:{}, OwnerReferences:{}, Finalizers:{}, ManagedFields:{}}}",
        s("name"),
        s("generateName"),
        s("namespace"),
        s("selfLink"),
        s("uid"),
        s("resourceVersion"),
        go_time(m_str(m, "creationTimestamp")),
        crate::resources::apps::common::go_string_map(m.get("labels")),
        crate::resources::apps::common::go_string_map(m.get("annotations")),
        go_owner_references(m.get("ownerReferences")),
        crate::resources::apps::common::go_strings(m.get("finalizers")),
        go_managed_fields(m.get("managedFields")),
    )
}

fn m_str<'a>(m: &'a Map<String, Value>, key: &str) -> &'a str {
    m.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A decoded `metav1.Time` as its `GoString` prints it: the zero time in UTC, others in
/// the server's local zone (`metav1.Time` decodes to `Local`).
fn go_time(rfc3339: &str) -> String {
    let Some(t) = parse_rfc3339(rfc3339) else {
        return "time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)".to_owned();
    };
    let text = format_rfc3339(t);
    let num =
        |r: std::ops::Range<usize>| text.get(r).and_then(|x| x.parse::<i64>().ok()).unwrap_or(0);
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let month = MONTHS[usize::try_from(num(5..7) - 1).unwrap_or(0).min(11)];
    format!(
        "time.Date({}, time.{month}, {}, {}, {}, {}, {}, time.Local)",
        num(0..4),
        num(8..10),
        num(11..13),
        num(14..16),
        num(17..19),
        t.nanos
    )
}

fn go_owner_references(v: Option<&Value>) -> String {
    let Some(items) = v.and_then(Value::as_array) else {
        return "[]v1.OwnerReference(nil)".to_owned();
    };
    let refs: Vec<String> = items
        .iter()
        .map(|r| {
            let ptr_bool = |k: &str| match r.get(k).and_then(Value::as_bool) {
                Some(b) => format!("(*bool)({b})"),
                None => "(*bool)(nil)".to_owned(),
            };
            format!(
                "v1.OwnerReference{{APIVersion:{}, Kind:{}, Name:{}, UID:{}, Controller:{}, \
                 BlockOwnerDeletion:{}}}",
                quote(str_of(r, "apiVersion")),
                quote(str_of(r, "kind")),
                quote(str_of(r, "name")),
                quote(str_of(r, "uid")),
                ptr_bool("controller"),
                ptr_bool("blockOwnerDeletion")
            )
        })
        .collect();
    format!("[]v1.OwnerReference{{{}}}", refs.join(", "))
}

fn go_managed_fields(v: Option<&Value>) -> String {
    let Some(items) = v.and_then(Value::as_array) else {
        return "[]v1.ManagedFieldsEntry(nil)".to_owned();
    };
    let entries: Vec<String> = items
        .iter()
        .map(|e| {
            let time = match e.get("time").and_then(Value::as_str) {
                Some(t) => go_time(t),
                None => "<nil>".to_owned(),
            };
            format!(
                "v1.ManagedFieldsEntry{{Manager:{}, Operation:{}, APIVersion:{}, Time:{time}, \
                 FieldsType:{}, FieldsV1:(*v1.FieldsV1)(nil), Subresource:{}}}",
                quote(str_of(e, "manager")),
                quote(str_of(e, "operation")),
                quote(str_of(e, "apiVersion")),
                quote(str_of(e, "fieldsType")),
                quote(str_of(e, "subresource"))
            )
        })
        .collect();
    format!("[]v1.ManagedFieldsEntry{{{}}}", entries.join(", "))
}

/// The errors as the Invalid answer's causes.
pub(crate) fn causes(errs: ErrorList) -> FieldErrors {
    kas_registry::strategy::causes(errs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(errs: &ErrorList) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn sar(spec: Value) -> Value {
        json!({"metadata": {"creationTimestamp": null}, "spec": spec})
    }

    #[test]
    fn spec_errors_match_upstream() {
        let errs = validate_subject_access_review(&sar(json!({})), false);
        assert_eq!(
            messages(&errs),
            vec![
                r#"spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified"#,
                r#"spec.user: Invalid value: "": at least one of user or group must be specified"#,
            ]
        );
        let both = json!({"resourceAttributes": {}, "user": "me",
            "nonResourceAttributes": {"path": "/p", "verb": "get"}});
        assert_eq!(
            messages(&validate_subject_access_review(&sar(both), false)),
            vec![
                r#"spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/p", Verb:"get"}: cannot be specified in combination with resourceAttributes"#
            ]
        );
        let groups_only = json!({"resourceAttributes": {}, "groups": ["g"]});
        assert!(validate_subject_access_review(&sar(groups_only), false).is_empty());
        // A self review has no subject to name.
        let own = json!({"metadata": {}, "spec": {"resourceAttributes": {"verb": "get"}}});
        assert!(validate_self_subject_access_review(&own).is_empty());
    }

    #[test]
    fn selector_errors_match_upstream() {
        let spec = |ra: Value| sar(json!({"user": "me", "resourceAttributes": ra}));
        let cases = [
            (
                json!({"fieldSelector": {"rawSelector": "foo", "requirements": [{}]}}),
                vec![
                    r#"spec.resourceAttributes.fieldSelector.rawSelector: Invalid value: "foo": may not specified at the same time as requirements"#,
                    "spec.resourceAttributes.fieldSelector.requirements[0].key: Required value: must be specified",
                ],
            ),
            (
                json!({"fieldSelector": {}}),
                vec![
                    "spec.resourceAttributes.fieldSelector.requirements: Required value: when spec.resourceAttributes.fieldSelector is specified, requirements or rawSelector is required",
                ],
            ),
            (
                json!({"fieldSelector": {"requirements": [{"key": "k", "operator": "In"}]}}),
                vec![
                    "spec.resourceAttributes.fieldSelector.requirements[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
                ],
            ),
            (
                json!({"labelSelector": {"requirements": [
                    {"key": "k", "operator": "Exists", "values": ["a"]},
                    {"key": "k", "operator": "Unknown"}]}}),
                vec![
                    "spec.resourceAttributes.labelSelector.requirements[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ],
            ),
            (
                json!({"labelSelector": {"requirements": [
                    {"key": "", "operator": "In", "values": ["-x"]}]}}),
                vec![
                    r#"spec.resourceAttributes.labelSelector.requirements[0].key: Invalid value: "": name part must be non-empty"#,
                    r#"spec.resourceAttributes.labelSelector.requirements[0].key: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"#,
                    r#"spec.resourceAttributes.labelSelector.requirements[0].values[0]: Invalid value: "-x": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#,
                ],
            ),
        ];
        for (ra, expected) in cases {
            let errs = validate_subject_access_review(&spec(ra.clone()), false);
            assert_eq!(messages(&errs), expected, "{ra}");
        }
    }

    #[test]
    fn local_reviews_check_the_namespace() {
        let review = json!({
            "metadata": {"namespace": "ns", "managedFields": [{"manager": "kubectl"}]},
            "spec": {"user": "me", "resourceAttributes": {"namespace": "other"}}
        });
        assert_eq!(
            messages(&validate_subject_access_review(&review, true)),
            vec![
                r#"spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace"#
            ]
        );
        let review = json!({
            "metadata": {"namespace": "ns"},
            "spec": {"user": "me", "nonResourceAttributes": {"path": "/", "verb": "get"}}
        });
        assert_eq!(
            messages(&validate_subject_access_review(&review, true)),
            vec![
                r#"spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/", Verb:"get"}: disallowed on this kind of request"#
            ]
        );
    }

    #[test]
    fn metadata_must_be_empty() {
        let review = json!({"metadata": {"name": "x", "labels": {}},
            "spec": {"user": "me", "resourceAttributes": {}}});
        assert_eq!(
            messages(&validate_subject_access_review(&review, false)),
            vec![
                r#"metadata: Invalid value: v1.ObjectMeta{Name:"x", GenerateName:"", Namespace:"", SelfLink:"", UID:"", ResourceVersion:"", Generation:0, CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC), DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil), Labels:map[string]string{}, Annotations:map[string]string(nil), OwnerReferences:[]v1.OwnerReference(nil), Finalizers:[]string(nil), ManagedFields:[]v1.ManagedFieldsEntry(nil)}: must be empty"#
            ]
        );
        let local = json!({"metadata": {"namespace": "ns", "creationTimestamp": null},
            "spec": {"user": "me", "resourceAttributes": {"namespace": "ns"}}});
        assert!(validate_subject_access_review(&local, true).is_empty());
        let named = json!({"metadata": {"namespace": "ns", "name": "n"},
            "spec": {"user": "me", "resourceAttributes": {"namespace": "ns"}}});
        let errs = messages(&validate_subject_access_review(&named, true));
        assert!(
            errs[0].ends_with("must be empty except for namespace"),
            "{errs:?}"
        );
        assert_eq!(
            go_time("2024-03-05T06:07:08Z"),
            "time.Date(2024, time.March, 5, 6, 7, 8, 0, time.Local)"
        );
    }
}
