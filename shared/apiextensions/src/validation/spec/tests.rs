use super::*;
use serde_json::json;

fn check(spec: Value) -> Vec<String> {
    let crd = json!({ "spec": spec });
    let s = super::super::internal::spec(&crd);
    validate_spec(&s, &Options::create(), &Path::new("spec"))
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn names() -> Value {
    json!({"plural": "foos", "singular": "foo", "kind": "Foo", "listKind": "FooList"})
}

fn schema() -> Value {
    json!({"openAPIV3Schema": {"type": "object"}})
}

#[test]
fn valid_spec() {
    let got = check(
        json!({"group": "example.com", "scope": "Namespaced", "names": names(),
        "versions": [{"name": "v1", "served": true, "storage": true, "schema": schema()}],
        "conversion": {"strategy": "None"}}),
    );
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn group_scope_and_names() {
    let got = check(
        json!({"group": "com", "scope": "Global", "names": {"kind": "Foo"},
        "versions": [{"name": "v1", "served": true, "storage": true, "schema": schema()}]}),
    );
    assert_eq!(
        got,
        vec![
            r#"spec.group: Invalid value: "com": should be a domain with at least one dot"#,
            r#"spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced""#,
            "spec.names.plural: Required value",
            "spec.names.singular: Required value",
            "spec.names.listKind: Required value",
        ]
    );
    let got = check(json!({"group": "Example.com", "names": names(),
        "versions": [{"name": "v1", "served": true, "storage": true, "schema": schema()}]}));
    assert_eq!(got.len(), 2);
    assert!(got[0].starts_with(
        r#"spec.group: Invalid value: "Example.com": a lowercase RFC 1123 subdomain"#
    ));
    assert_eq!(got[1], "spec.scope: Required value");
}

#[test]
fn versions() {
    let got = check(
        json!({"group": "example.com", "scope": "Cluster", "names": names(),
        "versions": [
            {"name": "V1", "served": true, "storage": false, "schema": schema()},
            {"name": "V1", "served": true, "storage": false},
        ]}),
    );
    let dns = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    let versions = r#"[]apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:"V1", Served:true, Storage:false, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(0xc000000000), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}, apiextensions.CustomResourceDefinitionVersion{Name:"V1", Served:true, Storage:false, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}}"#;
    assert_eq!(
        got,
        vec![
            "spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required"
                .to_owned(),
            format!(r#"spec.versions[0].name: Invalid value: "V1": {dns}"#),
            format!(r#"spec.versions[1].name: Invalid value: "V1": {dns}"#),
            format!("spec.versions: Invalid value: {versions}: must contain unique version names"),
            format!(
                "spec.versions: Invalid value: {versions}: must have exactly one version marked as storage version"
            ),
            format!(r#"spec.version: Invalid value: "V1": {dns}"#),
        ]
    );
}

#[test]
fn per_version_schemas_keep_their_paths() {
    let got = check(
        json!({"group": "example.com", "scope": "Cluster", "names": names(),
        "versions": [
            {"name": "v1", "served": true, "storage": true, "schema": schema()},
            {"name": "v2", "served": true, "storage": false,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"a": {}}}}},
        ]}),
    );
    assert_eq!(
        got,
        vec![
            "spec.versions[1].schema.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields"
        ]
    );
}

#[test]
fn defaults_need_pruning() {
    let got = check(
        json!({"group": "example.com", "scope": "Cluster", "names": names(),
        "preserveUnknownFields": true,
        "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
            "type": "object", "properties": {"a": {"type": "string", "default": "x"}}}}}],
        "conversion": {"strategy": "Webhook"}}),
    );
    assert_eq!(
        got,
        vec![
            "spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema",
            r#"spec.conversion.strategy: Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true"#,
            "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
            "spec.conversion.conversionReviewVersions: Required value",
        ]
    );
}

#[test]
fn top_level_selectable_fields() {
    let got = check(
        json!({"group": "example.com", "scope": "Cluster", "names": names(),
        "versions": [{"name": "v1", "served": true, "storage": true, "schema": schema(),
            "selectableFields": [{"jsonPath": ".spec"}]}]}),
    );
    assert_eq!(
        got,
        vec![
            r#"spec.selectableFields[0].jsonPath: Invalid value: ".spec": is an invalid path: does not refer to a valid field"#
        ]
    );
}

#[test]
fn no_versions() {
    let got = check(json!({"group": "example.com", "scope": "Cluster", "names": names()}));
    assert_eq!(
        got,
        vec![
            "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion(nil): must have exactly one version marked as storage version"
        ]
    );
    let got = check(
        json!({"group": "example.com", "scope": "Cluster", "names": names(), "versions": []}),
    );
    assert_eq!(
        got,
        vec![
            "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{}: must have exactly one version marked as storage version"
        ]
    );
}
