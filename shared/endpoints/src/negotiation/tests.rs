use kas_apimachinery::StatusReason;

use super::*;

fn negotiate(accept: &str) -> Option<MediaTypeOptions> {
    negotiate_media_type_options(accept, &ResourceRestrictions::default())
}

fn accepted(accept: &str) -> Option<MediaType> {
    negotiate(accept).map(|o| o.accepted)
}

#[test]
fn parse_accept_like_goautoneg() {
    let c = parse_accept("text/html;q=0.5, application/json ;v=1 ; x = y , */*;q=0.1, bad, a/b/c");
    let names: Vec<String> = c
        .iter()
        .map(|c| format!("{}/{}", c.mime_type, c.sub_type))
        .collect();
    assert_eq!(names, ["application/json", "text/html", "*/*"]);
    assert_eq!(c[0].params.get("v").map(String::as_str), Some("1"));
    assert_eq!(c[0].params.get("x").map(String::as_str), Some("y"));
    assert_eq!(c[1].q, 0.5f32 as f64);
    // `*` alone is `*/*`; `application/` has no subtype and is dropped.
    let c = parse_accept("*, application/");
    assert_eq!(c.len(), 1);
    assert_eq!(
        (c[0].mime_type.as_str(), c[0].sub_type.as_str()),
        ("*", "*")
    );
}

#[test]
fn q_values_parse_like_go() {
    assert_eq!(parse_accept("a/b;q=0.25")[0].q, 0.25);
    // Not trimmed, so a space makes it a syntax error, which Go reads as 0.
    assert_eq!(parse_accept("a/b;q= 0.5")[0].q, 0.0);
    assert_eq!(parse_accept("a/b;q=x")[0].q, 0.0);
    // `a=b=c` and parameters without `=` are ignored.
    let c = parse_accept("a/b;k=v=w;flag;q=1");
    assert!(c[0].params.is_empty());
}

#[test]
fn go_sort_quirks_are_kept() {
    // goautoneg's comparator: higher q first, then specific before wildcard.
    let c = parse_accept("*/*, application/yaml;q=0.9, application/json");
    let order: Vec<&str> = c.iter().map(|c| c.sub_type.as_str()).collect();
    assert_eq!(order, ["json", "yaml", "*"]);
    // The comparator puts a specific type before a wildcard even with a lower q.
    assert_eq!(
        accepted("*/*;q=0.9, application/yaml;q=0.1"),
        Some(MediaType::Yaml)
    );
    // q=0 clauses are not dropped: upstream serves JSON to `application/json;q=0`.
    assert_eq!(accepted("application/json;q=0"), Some(MediaType::Json));
}

#[test]
fn empty_header_and_wildcards_pick_json() {
    assert_eq!(accepted(""), Some(MediaType::Json));
    assert_eq!(accepted("*/*"), Some(MediaType::Json));
    assert_eq!(accepted("application/*"), Some(MediaType::Json));
    assert_eq!(accepted("application/yaml"), Some(MediaType::Yaml));
    assert_eq!(
        accepted("application/yaml, application/json"),
        Some(MediaType::Yaml)
    );
    assert_eq!(
        accepted("application/yaml;q=0.5, application/json"),
        Some(MediaType::Json)
    );
    assert_eq!(accepted("text/plain"), None);
    // Matching is case-sensitive, as upstream's.
    assert_eq!(accepted("Application/JSON"), None);
}

#[test]
fn protobuf_is_served_where_the_endpoint_has_it() {
    assert_eq!(
        accepted("application/vnd.kubernetes.protobuf"),
        Some(MediaType::Protobuf)
    );
    assert_eq!(
        accepted("application/vnd.kubernetes.protobuf, application/json"),
        Some(MediaType::Protobuf)
    );
    // Custom resources: only JSON and YAML are standard serializers.
    let crd = ResourceRestrictions {
        standard_media_types: Some(vec![MediaType::Json, MediaType::Yaml]),
        ..ResourceRestrictions::default()
    };
    let o = negotiate_media_type_options("application/vnd.kubernetes.protobuf,*/*", &crd).unwrap();
    assert_eq!(o.accepted, MediaType::Json);
    let err = negotiate_output_media_type(
        Some("application/vnd.kubernetes.protobuf"),
        None,
        None,
        &crd,
    )
    .unwrap_err();
    assert_eq!(err.code, 406);
    assert_eq!(err.reason, Some(StatusReason::NotAcceptable));
    assert_eq!(
        err.message.as_deref(),
        Some(
            "only the following media types are accepted: application/json, \
             application/yaml, application/vnd.kubernetes.protobuf"
        )
    );
}

#[test]
fn table_and_partial_metadata_conversions() {
    let o = negotiate("application/json;as=Table;v=v1;g=meta.k8s.io").unwrap();
    assert_eq!(
        o.convert,
        Some(GroupVersionKind {
            group: "meta.k8s.io".into(),
            version: "v1".into(),
            kind: "Table".into()
        })
    );
    assert!(negotiate("application/yaml;as=Table;v=v1beta1;g=meta.k8s.io").is_some());
    // Table is not served as protobuf; the next clause wins.
    let o = negotiate(
        "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json",
    )
    .unwrap();
    assert_eq!((o.accepted, o.convert), (MediaType::Json, None));
    let o = negotiate("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io");
    assert_eq!(
        o.unwrap().convert.unwrap().kind,
        "PartialObjectMetadataList"
    );
    // Unknown kinds and groups, and endpoints without a table convertor, are refused.
    assert!(negotiate("application/json;as=Foo;v=v1;g=meta.k8s.io").is_none());
    assert!(negotiate("application/json;as=Table;v=v1;g=apps").is_none());
    let no_tables = ResourceRestrictions {
        table_convertor: false,
        ..ResourceRestrictions::default()
    };
    assert!(
        negotiate_media_type_options("application/json;as=Table;v=v1;g=meta.k8s.io", &no_tables)
            .is_none()
    );
    // The default restrictions allow no conversion at all.
    assert!(
        negotiate_media_type_options(
            "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
            &DefaultEndpointRestrictions
        )
        .is_none()
    );
}

#[test]
fn standard_media_types_restrict_untransformed_output() {
    let crd = ResourceRestrictions {
        standard_media_types: Some(vec![MediaType::Json]),
        ..ResourceRestrictions::default()
    };
    assert!(negotiate_media_type_options("application/yaml", &crd).is_none());
    assert!(
        negotiate_media_type_options("application/yaml;as=Table;g=meta.k8s.io;v=v1", &crd)
            .is_some()
    );
}

#[test]
fn parameters_stream_sv_pretty_unrecognized() {
    let o = negotiate("application/json;stream=watch;pretty=1;export=1;foo=bar;sv=v1").unwrap();
    assert_eq!(o.stream, "watch");
    assert!(o.pretty && o.export);
    assert_eq!(o.use_server_version, "v1");
    assert_eq!(o.unrecognized, ["foo"]);
    assert!(negotiate("application/json;stream=other").is_none());
    assert!(negotiate("application/json;sv=v2").is_none());
    // YAML has no stream serializer.
    assert!(negotiate("application/yaml;stream=watch").is_none());
    assert!(!negotiate("application/json;pretty=true").unwrap().pretty);
}

#[test]
fn pretty_from_query_and_user_agent() {
    assert!(is_pretty_print(Some("pretty=true"), None));
    assert!(is_pretty_print(Some("a=b&pretty=1"), Some("kubectl")));
    assert!(!is_pretty_print(Some("pretty=false"), Some("curl/8.0")));
    assert!(!is_pretty_print(Some("pretty=yes"), Some("curl/8.0")));
    // An empty value falls through to the user agent.
    assert!(is_pretty_print(Some("pretty="), Some("curl/8.0")));
    assert!(is_pretty_print(None, Some("Wget/1.21")));
    assert!(is_pretty_print(None, Some("Mozilla/5.0 (X11)")));
    assert!(!is_pretty_print(None, Some("Mozilla/4.0")));
    assert!(!is_pretty_print(None, Some("kubectl/v1.33.0")));
}

#[test]
fn output_pretty_only_for_json() {
    let r = ResourceRestrictions::default();
    let o = negotiate_output_media_type(None, Some("pretty=1"), None, &r).unwrap();
    assert!(o.pretty);
    let o =
        negotiate_output_media_type(Some("application/yaml"), Some("pretty=1"), None, &r).unwrap();
    assert!(!o.pretty);
    let o =
        negotiate_output_media_type(Some("application/json"), None, Some("curl/8"), &r).unwrap();
    assert!(o.pretty);
}

#[test]
fn watch_streams() {
    let r = ResourceRestrictions::default();
    let o = negotiate_output_media_type_stream(Some("application/json;stream=watch"), &r).unwrap();
    assert_eq!((o.accepted, o.stream.as_str()), (MediaType::Json, "watch"));
    assert_eq!(
        negotiate_output_media_type_stream(None, &r)
            .unwrap()
            .accepted,
        MediaType::Json
    );
    let err = negotiate_output_media_type_stream(Some("application/yaml"), &r).unwrap_err();
    assert_eq!(err.code, 406);
    assert_eq!(
        err.message.as_deref(),
        Some(
            "only the following media types are accepted: application/json;stream=watch, \
             application/vnd.kubernetes.protobuf;stream=watch"
        )
    );
}

#[test]
fn input_content_types() {
    assert_eq!(negotiate_input_media_type(None, false), Ok(MediaType::Json));
    assert_eq!(
        negotiate_input_media_type(Some(""), false),
        Ok(MediaType::Json)
    );
    assert_eq!(
        negotiate_input_media_type(Some("Application/JSON; charset=utf-8"), false),
        Ok(MediaType::Json)
    );
    assert_eq!(
        negotiate_input_media_type(Some("application/yaml"), false),
        Ok(MediaType::Yaml)
    );
    let err = negotiate_input_media_type(Some("text/plain"), false).unwrap_err();
    assert_eq!(err.code, 415);
    assert_eq!(err.reason, Some(StatusReason::UnsupportedMediaType));
    assert_eq!(
        err.message.as_deref(),
        Some(
            "the body of the request was in an unknown format - accepted media types \
             include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        )
    );
    let err = negotiate_input_media_type(Some("text/plain"), true).unwrap_err();
    assert!(err.message.unwrap().ends_with(
        "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
    ));
    // Malformed parameters fail Go's mime.ParseMediaType.
    for bad in [
        "application/json; charset",
        "application/json; a=1; a=2",
        "application/",
        "application/json/x",
        "application/vnd.kubernetes.protobuf2",
    ] {
        assert!(
            negotiate_input_media_type(Some(bad), false).is_err(),
            "{bad}"
        );
    }
    assert_eq!(
        negotiate_input_media_type(Some("application/json;"), false),
        Ok(MediaType::Json)
    );
    assert_eq!(
        negotiate_input_media_type(Some("application/json; charset=\"utf-8\""), false),
        Ok(MediaType::Json)
    );
}

#[test]
fn patch_types() {
    let ok = |ct: &str| negotiate_patch_type(Some(ct), BUILTIN_PATCH_TYPES);
    assert_eq!(ok("application/json-patch+json"), Ok(PatchType::Json));
    assert_eq!(
        ok("application/merge-patch+json; charset=utf-8"),
        Ok(PatchType::Merge)
    );
    assert_eq!(
        ok("application/strategic-merge-patch+json"),
        Ok(PatchType::StrategicMerge)
    );
    assert_eq!(ok("application/apply-patch+yaml"), Ok(PatchType::ApplyYaml));
    // No trimming or case folding, and CBOR apply is gated off.
    assert!(ok("application/merge-patch+json ;x=y").is_err());
    assert!(ok("Application/merge-patch+json").is_err());
    assert!(ok("application/apply-patch+cbor").is_err());
    let err = negotiate_patch_type(None, CUSTOM_RESOURCE_PATCH_TYPES).unwrap_err();
    assert_eq!(err.code, 415);
    assert_eq!(
        err.message.as_deref(),
        Some(
            "the body of the request was in an unknown format - accepted media types \
             include: application/json-patch+json, application/merge-patch+json, \
             application/apply-patch+yaml"
        )
    );
    assert!(
        negotiate_patch_type(
            Some("application/strategic-merge-patch+json"),
            CUSTOM_RESOURCE_PATCH_TYPES
        )
        .is_err()
    );
}
