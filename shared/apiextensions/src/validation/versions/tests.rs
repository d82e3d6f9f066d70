use super::*;
use serde_json::json;

fn rendered(errs: &[Error]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

#[test]
fn deprecation_warnings() {
    let check = deprecation_warning_messages;
    assert!(check(false, None).is_empty());
    assert_eq!(
        check(false, Some("")),
        vec!["can only be set for deprecated versions"]
    );
    assert_eq!(
        check(false, Some("foo")),
        vec!["can only be set for deprecated versions"]
    );
    assert!(check(true, Some("Iñtërnâtiônàlizætiøn,💝🐹🌇⛔")).is_empty());
    assert!(check(true, Some(&"x".repeat(256))).is_empty());
    assert_eq!(
        check(true, Some(&"x".repeat(257))),
        vec!["must be <= 256 characters long"]
    );
    assert_eq!(check(true, Some("")), vec!["must not be an empty string"]);
    let non_printable =
        "must only contain printable UTF-8 characters; non-printable character found at index 12";
    assert_eq!(check(true, Some("Test message\nfoo")), vec![non_printable]);
    assert_eq!(
        check(true, Some("Test message\u{0008}")),
        vec![non_printable]
    );
    assert_eq!(
        check(true, Some("Test message\u{0000}")),
        vec![non_printable]
    );
}

#[test]
fn scale_paths() {
    let path = Path::new("spec").child("subresources");
    let sub = json!({"scale": {"specReplicasPath": "spec.replicas", "statusReplicasPath": ".spec.x",
        "labelSelectorPath": ".metadata.x"}});
    assert_eq!(
        rendered(&validate_subresources(Some(&sub), &path)),
        vec![
            r#"spec.subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path starting with ."#,
            r#"spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.x": should be a json path under .status"#,
            r#"spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.x": should be a json path under either .spec or .status"#,
        ]
    );
    assert_eq!(
        rendered(&validate_subresources(Some(&json!({"scale": {}})), &path)),
        vec![
            "spec.subresources.scale.specReplicasPath: Required value",
            "spec.subresources.scale.statusReplicasPath: Required value",
        ]
    );
    let ok = json!({"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}});
    assert!(validate_subresources(Some(&ok), &path).is_empty());
}

#[test]
fn columns() {
    let path = Path::new("spec")
        .child("versions")
        .index(0)
        .child("additionalPrinterColumns");
    let cols = [
        json!({"type": "date", "jsonPath": ".metadata.creationTimestamp"}),
        json!({"name": "n", "type": "bool", "format": "uuid", "jsonPath": "spec.x"}),
        json!({"name": "n"}),
    ];
    assert_eq!(
        rendered(&validate_columns(Some(&cols), &path)),
        vec![
            "spec.versions[0].additionalPrinterColumns[0].name: Required value",
            r#"spec.versions[0].additionalPrinterColumns[1].type: Invalid value: "bool": must be one of boolean,date,integer,number,string"#,
            r#"spec.versions[0].additionalPrinterColumns[1].format: Invalid value: "uuid": must be one of byte,date,date-time,double,float,int32,int64,password"#,
            r#"spec.versions[0].additionalPrinterColumns[1].JSONPath: Invalid value: "spec.x": must be a simple json path starting with ."#,
            "spec.versions[0].additionalPrinterColumns[2].type: Required value: must be one of boolean,date,integer,number,string",
            "spec.versions[0].additionalPrinterColumns[2].JSONPath: Required value",
        ]
    );
}

#[test]
fn selectable_fields() {
    let schema = json!({"type": "object", "properties": {
        "foo": {"type": "string"},
        "obj": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "metadata": {"type": "object"},
    }});
    let path = Path::new("spec")
        .child("versions")
        .index(0)
        .child("selectableFields");
    let sp = Path::new("spec")
        .child("versions")
        .index(0)
        .child("schema.openAPIV3Schema");
    let fields = [
        json!({"jsonPath": ".foo"}),
        json!({"jsonPath": ".xyz"}),
        json!({"jsonPath": ".obj"}),
        json!({"jsonPath": ".obj['n']"}),
        json!({"jsonPath": ".foo"}),
        json!({"jsonPath": ".metadata"}),
        json!({}),
    ];
    assert_eq!(
        rendered(&validate_selectable_fields_of(
            Some(&schema),
            &fields,
            &sp,
            &path
        )),
        vec![
            r#"spec.versions[0].selectableFields[1].jsonPath: Invalid value: ".xyz": is an invalid path: does not refer to a valid field"#,
            r#"spec.versions[0].selectableFields[2].jsonPath: Invalid value: ".obj": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."#,
            r#"spec.versions[0].selectableFields[3].jsonPath: Invalid value: ".obj['n']": is an invalid path: array notation is not allowed"#,
            r#"spec.versions[0].selectableFields[4].jsonPath: Duplicate value: ".foo""#,
            r#"spec.versions[0].selectableFields[5].jsonPath: Invalid value: ".metadata": must not point to fields in metadata"#,
            r#"spec.versions[0].selectableFields[5].jsonPath: Invalid value: ".metadata": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."#,
            "spec.versions[0].selectableFields[6].jsonPath: Required value",
        ]
    );
    let props: serde_json::Map<String, Value> = (0..9)
        .map(|i| (format!("f{i}"), json!({"type": "string"})))
        .collect();
    let schema = json!({"type": "object", "properties": props});
    let fields: Vec<Value> = (0..9)
        .map(|i| json!({"jsonPath": format!(".f{i}")}))
        .collect();
    assert_eq!(
        rendered(&validate_selectable_fields_of(
            Some(&schema),
            &fields,
            &sp,
            &path
        )),
        vec!["spec.versions[0].selectableFields: Too many: 9: must have at most 8 items"]
    );
}
