//! Exact-JSON tests for every `Status` constructor, against what upstream writes.

use super::*;

fn json(s: &Status) -> String {
    String::from_utf8(s.to_json()).unwrap()
}

const HEAD: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","#;

fn expect(s: Status, rest: &str) {
    assert_eq!(json(&s), format!("{HEAD}{rest}"));
}

#[test]
fn not_found_path_matches_upstream_bytes() {
    assert_eq!(
        json(&Status::not_found_path()),
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}"#
    );
}

#[test]
fn failure() {
    expect(
        Status::failure(418, StatusReason::BadRequest, "teapot"),
        r#""message":"teapot","reason":"BadRequest","code":418}"#,
    );
    // Upstream's fields are omitempty: no message, unknown reason and zero code vanish.
    assert_eq!(
        json(&Status::failure(0, StatusReason::Unknown, "")),
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure"}"#
    );
}

#[test]
fn not_found() {
    expect(
        Status::not_found("", "pods", "foo"),
        r#""message":"pods \"foo\" not found","reason":"NotFound","details":{"name":"foo","kind":"pods"},"code":404}"#,
    );
    expect(
        Status::not_found("apps", "deployments", "web"),
        r#""message":"deployments.apps \"web\" not found","reason":"NotFound","details":{"name":"web","group":"apps","kind":"deployments"},"code":404}"#,
    );
}

#[test]
fn already_exists_and_generate_name_conflict() {
    expect(
        Status::already_exists("", "namespaces", "default"),
        r#""message":"namespaces \"default\" already exists","reason":"AlreadyExists","details":{"name":"default","kind":"namespaces"},"code":409}"#,
    );
    expect(
        Status::generate_name_conflict("apps", "deployments", "web-x", 1),
        r#""message":"deployments.apps \"web-x\" already exists, the server was not able to generate a unique name for the object","reason":"AlreadyExists","details":{"name":"web-x","group":"apps","kind":"deployments","retryAfterSeconds":1},"code":409}"#,
    );
}

#[test]
fn unauthorized() {
    expect(
        Status::unauthorized("Unauthorized"),
        r#""message":"Unauthorized","reason":"Unauthorized","code":401}"#,
    );
    expect(
        Status::unauthorized(""),
        r#""message":"not authorized","reason":"Unauthorized","code":401}"#,
    );
}

#[test]
fn forbidden() {
    expect(
        Status::forbidden("", "pods", "foo", "User \"bob\" cannot get resource"),
        r#""message":"pods \"foo\" is forbidden: User \"bob\" cannot get resource","reason":"Forbidden","details":{"name":"foo","kind":"pods"},"code":403}"#,
    );
    expect(
        Status::forbidden("apps", "deployments", "", "no"),
        r#""message":"deployments.apps is forbidden: no","reason":"Forbidden","details":{"group":"apps","kind":"deployments"},"code":403}"#,
    );
    expect(
        Status::forbidden(
            "",
            "",
            "",
            "User \"system:anonymous\" cannot get path \"/foo\"",
        ),
        r#""message":"forbidden: User \"system:anonymous\" cannot get path \"/foo\"","reason":"Forbidden","details":{},"code":403}"#,
    );
}

#[test]
fn conflict_and_apply_conflict() {
    expect(
        Status::conflict(
            "",
            "configmaps",
            "cm",
            "the object has been modified; please apply your changes to the latest version and try again",
        ),
        r#""message":"Operation cannot be fulfilled on configmaps \"cm\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"cm","kind":"configmaps"},"code":409}"#,
    );
    let cause = StatusCause {
        reason: Some("FieldManagerConflict".into()),
        message: Some("conflict with \"kubectl\"".into()),
        field: Some(".data.a".into()),
    };
    expect(
        Status::apply_conflict(vec![cause], "Apply failed with 1 conflict"),
        r#""message":"Apply failed with 1 conflict","reason":"Conflict","details":{"causes":[{"reason":"FieldManagerConflict","message":"conflict with \"kubectl\"","field":".data.a"}]},"code":409}"#,
    );
}

#[test]
fn gone_and_expired() {
    expect(
        Status::gone("too old"),
        r#""message":"too old","reason":"Gone","code":410}"#,
    );
    expect(
        Status::resource_expired("too old resource version: 1 (20)"),
        r#""message":"too old resource version: 1 (20)","reason":"Expired","code":410}"#,
    );
}

#[test]
fn invalid() {
    let required = StatusCause {
        reason: Some("FieldValueRequired".into()),
        message: Some("Required value".into()),
        field: Some("spec.containers".into()),
    };
    expect(
        Status::invalid("", "Pod", "p", vec![required.clone()]),
        r#""message":"Pod \"p\" is invalid: spec.containers: Required value","reason":"Invalid","details":{"name":"p","kind":"Pod","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.containers"}]},"code":422}"#,
    );
    let other = StatusCause {
        reason: Some("FieldValueInvalid".into()),
        message: Some("Invalid value: \"x\": bad".into()),
        field: Some("metadata.name".into()),
    };
    let s = Status::invalid(
        "apps",
        "Deployment",
        "d",
        vec![required.clone(), required.clone(), other],
    );
    assert_eq!(
        s.message.as_deref(),
        Some(
            "Deployment.apps \"d\" is invalid: [spec.containers: Required value, metadata.name: Invalid value: \"x\": bad]"
        )
    );
    assert_eq!(s.details.as_ref().map(|d| d.causes.len()), Some(3));
    expect(
        Status::invalid("", "Pod", "p", vec![]),
        r#""message":"Pod \"p\" is invalid","reason":"Invalid","details":{"name":"p","kind":"Pod"},"code":422}"#,
    );
}

#[test]
fn bad_request() {
    expect(
        Status::bad_request("the name of the object (a) does not match the name on the URL (b)"),
        r#""message":"the name of the object (a) does not match the name on the URL (b)","reason":"BadRequest","code":400}"#,
    );
}

#[test]
fn too_many_requests() {
    expect(
        Status::too_many_requests("too many requests, please try again later", 1),
        r#""message":"too many requests, please try again later","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}"#,
    );
    expect(
        Status::too_many_requests("slow down", 0),
        r#""message":"slow down","reason":"TooManyRequests","details":{},"code":429}"#,
    );
    expect(
        Status::too_many_requests_error("limit reached"),
        r#""message":"Too many requests: limit reached","reason":"TooManyRequests","code":429}"#,
    );
}

#[test]
fn service_unavailable() {
    expect(
        Status::service_unavailable("etcd is down"),
        r#""message":"etcd is down","reason":"ServiceUnavailable","code":503}"#,
    );
}

#[test]
fn method_not_supported() {
    expect(
        Status::method_not_supported("", "pods", "create"),
        r#""message":"create is not supported on resources of kind \"pods\"","reason":"MethodNotAllowed","details":{"kind":"pods"},"code":405}"#,
    );
    expect(
        Status::method_not_supported("apps", "deployments", "deletecollection"),
        r#""message":"deletecollection is not supported on resources of kind \"deployments.apps\"","reason":"MethodNotAllowed","details":{"group":"apps","kind":"deployments"},"code":405}"#,
    );
}

#[test]
fn server_timeout() {
    expect(
        Status::server_timeout("", "pods", "create", 2),
        r#""message":"The create operation against pods could not be completed at this time, please try again.","reason":"ServerTimeout","details":{"name":"create","kind":"pods","retryAfterSeconds":2},"code":500}"#,
    );
}

#[test]
fn timeout() {
    expect(
        Status::timeout(
            "request did not complete within requested timeout - context deadline exceeded",
            0,
        ),
        r#""message":"Timeout: request did not complete within requested timeout - context deadline exceeded","reason":"Timeout","details":{},"code":504}"#,
    );
    expect(
        Status::timeout("x", 3),
        r#""message":"Timeout: x","reason":"Timeout","details":{"retryAfterSeconds":3},"code":504}"#,
    );
}

#[test]
fn internal_error() {
    expect(
        Status::internal_error("boom"),
        r#""message":"Internal error occurred: boom","reason":"InternalError","details":{"causes":[{"message":"boom"}]},"code":500}"#,
    );
    expect(
        Status::internal_error(""),
        r#""message":"Internal error occurred: ","reason":"InternalError","details":{"causes":[{}]},"code":500}"#,
    );
}

#[test]
fn request_entity_too_large() {
    expect(
        Status::request_entity_too_large("limit is 3145728"),
        r#""message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}"#,
    );
}

#[test]
fn negotiation_errors() {
    expect(
        Status::not_acceptable(&[
            "application/json",
            "application/yaml",
            "application/vnd.kubernetes.protobuf",
        ]),
        r#""message":"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf","reason":"NotAcceptable","code":406}"#,
    );
    expect(
        Status::unsupported_media_type(&["application/json", "application/yaml"]),
        r#""message":"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml","reason":"UnsupportedMediaType","code":415}"#,
    );
}

#[test]
fn names_are_go_quoted_and_html_escaped() {
    expect(
        Status::not_found("", "pods", "a\"<b>&\n"),
        r#""message":"pods \"a\\\"\u003cb\u003e\u0026\\n\" not found","reason":"NotFound","details":{"name":"a\"\u003cb\u003e\u0026\n","kind":"pods"},"code":404}"#,
    );
}

#[test]
fn round_trips_through_serde() {
    let s = Status::too_many_requests("x", 5);
    let back: Status = serde_json::from_slice(&s.to_json()).unwrap();
    assert_eq!(back, s);
    let unknown: Status = serde_json::from_str(
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"SomethingNew","code":500}"#,
    )
    .unwrap();
    assert_eq!(unknown.reason, Some(StatusReason::Unknown));
    assert_eq!(unknown.to_string(), "");
    assert_eq!(Status::bad_request("nope").to_string(), "nope");
}
