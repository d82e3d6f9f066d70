use super::*;
use crate::status::StatusReason;

#[test]
fn path_rendering() {
    let root = Path::new("root");
    let cases = [
        (root.clone(), "root"),
        (root.index(42), "root[42]"),
        (root.child("first"), "root.first"),
        (root.key("key").child("second"), "root[key].second"),
        (root.index(42).child("third"), "root[42].third"),
        (
            root.key("mykey").child("some.dotted.name"),
            "root[mykey].some.dotted.name",
        ),
        (
            root.child("first").child("second").child("third"),
            "root.first.second.third",
        ),
        (
            root.index(42).child("first").child("second"),
            "root[42].first.second",
        ),
        (
            Path::new("metadata").child("labels").key("foo"),
            "metadata.labels[foo]",
        ),
        (
            Path::new("spec").child("containers").index(0).child("name"),
            "spec.containers[0].name",
        ),
    ];
    for (path, want) in cases {
        assert_eq!(path.to_string(), want);
    }
}

#[test]
fn nil_path_behaves_like_upstreams() {
    assert_eq!(Path::nil().to_string(), "<nil>");
    assert!(Path::nil().is_nil());
    assert_eq!(Path::nil().child("key").to_string(), "key");
    assert_eq!(Path::nil().index(0).to_string(), "[0]");
    assert_eq!(Path::nil().key("k").child("x").to_string(), "[k].x");
    assert_eq!(Path::new("").to_string(), "[]");
}

#[test]
fn error_messages() {
    let f = Path::new("metadata").child("name");
    assert_eq!(
        required(&f, "name or generateName is required").to_string(),
        "metadata.name: Required value: name or generateName is required"
    );
    assert_eq!(
        required(&f, "").to_string(),
        "metadata.name: Required value"
    );
    assert_eq!(
        invalid(&f, "x", "detail").to_string(),
        "metadata.name: Invalid value: \"x\": detail"
    );
    assert_eq!(
        invalid(&f, "a\"b", "").to_string(),
        "metadata.name: Invalid value: \"a\\\"b\""
    );
    assert_eq!(
        invalid(&Path::nil(), BadValue::Null, "").to_string(),
        "<nil>: Invalid value: \"null\""
    );
    assert_eq!(
        invalid(&f, 5i64, "must be positive").body(),
        "Invalid value: 5: must be positive"
    );
    assert_eq!(invalid(&f, true, "").body(), "Invalid value: true");
    assert_eq!(
        duplicate(&f, "x").to_string(),
        "metadata.name: Duplicate value: \"x\""
    );
    assert_eq!(not_found(&f, "x").body(), "Not found: \"x\"");
    assert_eq!(
        not_supported(&f, "x", &["a", "b"]).to_string(),
        "metadata.name: Unsupported value: \"x\": supported values: \"a\", \"b\""
    );
    assert_eq!(
        not_supported(&f, "x", &[]).body(),
        "Unsupported value: \"x\""
    );
    assert_eq!(
        forbidden(&f, "not allowed").to_string(),
        "metadata.name: Forbidden: not allowed"
    );
    assert_eq!(
        too_long(&f, 63).to_string(),
        "metadata.name: Too long: may not be more than 63 bytes"
    );
    assert_eq!(
        too_long(&f, 1).body(),
        "Too long: may not be more than 1 byte"
    );
    assert_eq!(too_long(&f, -1).body(), "Too long: value is too long");
    assert_eq!(
        too_many(&f, 5, 3).body(),
        "Too many: 5: must have at most 3 items"
    );
    assert_eq!(too_many(&f, -1, -1).body(), "Too many: has too many items");
    let err = std::io::Error::other("boom");
    assert_eq!(
        internal_error(&f, &err).to_string(),
        "metadata.name: Internal error: boom"
    );
    assert_eq!(
        type_invalid(&f, "x", "expected int").body(),
        "Invalid value: \"x\": expected int"
    );
}

#[test]
fn string_slices_render_like_go() {
    let p = Path::new("values");
    assert_eq!(
        invalid(&p, BadValue::Strings(None), "d").body(),
        "Invalid value: []string(nil): d"
    );
    assert_eq!(
        invalid(&p, BadValue::Strings(Some(vec![])), "d").body(),
        "Invalid value: []string{}: d"
    );
    assert_eq!(
        invalid(
            &p,
            BadValue::Strings(Some(vec!["bar".into(), "foo".into()])),
            "d"
        )
        .body(),
        "Invalid value: []string{\"bar\", \"foo\"}: d"
    );
}

#[test]
fn error_types() {
    assert_eq!(ErrorType::Invalid.as_str(), "FieldValueInvalid");
    assert_eq!(ErrorType::Required.as_str(), "FieldValueRequired");
    assert_eq!(ErrorType::Internal.as_str(), "InternalError");
    assert_eq!(ErrorType::TypeInvalid.message(), "Invalid value");
}

#[test]
fn aggregates() {
    let p = Path::new("a");
    assert_eq!(aggregate_message(&[]), None);
    assert_eq!(
        aggregate_message(&[required(&p, "")]).as_deref(),
        Some("a: Required value")
    );
    let errs = [required(&p, ""), forbidden(&p, "x"), required(&p, "")];
    assert_eq!(
        aggregate_message(&errs).as_deref(),
        Some("[a: Required value, a: Forbidden: x]")
    );
}

#[test]
fn status_from_errors() {
    let errs = [
        required(
            &Path::new("metadata").child("name"),
            "name or generateName is required",
        ),
        invalid(&Path::new("metadata").child("labels"), "-x", "bad"),
    ];
    let st = to_status("", "ConfigMap", "", &errs);
    assert_eq!(st.code, 422);
    assert_eq!(st.reason, Some(StatusReason::Invalid));
    assert_eq!(
        st.message.as_deref(),
        Some(
            "ConfigMap \"\" is invalid: [metadata.name: Required value: name or generateName is required, metadata.labels: Invalid value: \"-x\": bad]"
        )
    );
    let causes = &st.details.as_ref().unwrap().causes;
    assert_eq!(causes.len(), 2);
    assert_eq!(causes[0].reason.as_deref(), Some("FieldValueRequired"));
    assert_eq!(
        causes[0].message.as_deref(),
        Some("Required value: name or generateName is required")
    );
    assert_eq!(causes[0].field.as_deref(), Some("metadata.name"));
    assert_eq!(
        causes[1].message.as_deref(),
        Some("Invalid value: \"-x\": bad")
    );

    let one = to_status("apps", "Deployment", "d", &errs[..1]);
    assert_eq!(
        one.message.as_deref(),
        Some(
            "Deployment.apps \"d\" is invalid: metadata.name: Required value: name or generateName is required"
        )
    );
}
