use super::*;
use serde_json::json;

fn rendered(errs: &[Error]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

/// A v1 CRD as `kubectl apply` sends it, after defaulting.
fn crd() -> Value {
    let mut crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "kind": "CronTab", "shortNames": ["ct"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "cronSpec": {"type": "string", "maxLength": 64},
                        "replicas": {"type": "integer", "default": 1},
                    }, "x-kubernetes-validations": [
                        {"rule": "self.replicas >= 0 && self.cronSpec.size() > 0", "message": "bad"},
                    ]},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}},
                "subresources": {"status": {}},
                "additionalPrinterColumns": [{"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"}],
            }],
        },
    });
    set_defaults(&mut crd);
    crd
}

#[test]
fn a_valid_crd_passes() {
    let c = crd();
    assert_eq!(c["spec"]["names"]["singular"], "crontab");
    assert_eq!(c["status"]["storedVersions"], json!(["v1"]));
    assert!(
        validate_create(&c).is_empty(),
        "{:?}",
        rendered(&validate_create(&c))
    );
    assert!(validate_update(&c, &c).is_empty());
    assert!(warnings(&c).is_empty());
}

#[test]
fn single_version_errors_read_as_top_level() {
    let mut c = crd();
    c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] =
        json!({"properties": {}});
    assert_eq!(
        rendered(&validate_create(&c)),
        vec![
            "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"
        ]
    );
}

#[test]
fn name_group_and_stored_versions() {
    let mut c = crd();
    c["metadata"]["name"] = json!("crontab.stable.example.com");
    c["status"]["storedVersions"] = json!(["v0"]);
    c["status"]["acceptedNames"] = json!({"kind": "CronTab", "listKind": "CronTab"});
    assert_eq!(
        rendered(&validate_create(&c)),
        vec![
            r#"metadata.name: Invalid value: "crontab.stable.example.com": must be spec.names.plural+"."+spec.group"#,
            r#"status.acceptedNames.listKind: Invalid value: "CronTab": kind and listKind may not be the same"#,
            r#"status.storedVersions: Invalid value: []string{"v0"}: must have the storage version v1"#,
            r#"status.storedVersions[0]: Invalid value: "v0": missing from spec.versions; v0 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v0 and removes v0 from status.storedVersions"#,
        ]
    );
}

#[test]
fn preserve_unknown_fields_cannot_be_set() {
    let mut c = crd();
    c["spec"]["preserveUnknownFields"] = json!(true);
    assert_eq!(
        rendered(&validate_create(&c)),
        vec![
            "spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema",
            "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ]
    );
    // Persisted objects that already have it keep it.
    assert_eq!(
        rendered(&validate_update(&c, &c)),
        vec![
            "spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema"
        ]
    );
}

#[test]
fn protected_groups_need_approval() {
    let mut c = crd();
    c["spec"]["group"] = json!("stable.k8s.io");
    c["metadata"]["name"] = json!("crontabs.stable.k8s.io");
    assert_eq!(
        rendered(&validate_create(&c)),
        vec![
            r#"metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111"#
        ]
    );
    c["metadata"]["annotations"] =
        json!({"api-approved.kubernetes.io": "unapproved, experimental"});
    assert!(validate_create(&c).is_empty());
}

#[test]
fn status_update_checks_accepted_names() {
    let mut c = crd();
    c["status"]["acceptedNames"] = json!({"plural": "Cron Tabs"});
    let got = rendered(&validate_status_update(&c, &crd()));
    assert_eq!(got.len(), 1);
    assert!(got[0].starts_with(
        r#"status.acceptedNames.plural: Invalid value: "Cron Tabs": a DNS-1035 label"#
    ));
}

#[test]
fn malformed_input_never_panics() {
    for v in [
        json!(null),
        json!([]),
        json!({"spec": 1}),
        json!({"spec": {"versions": [1, null]}}),
        json!({"spec": {"versions": [{"schema": {"openAPIV3Schema": {"properties": [], "items": 3}}}]}}),
    ] {
        let mut d = v.clone();
        set_defaults(&mut d);
        let _ = validate_create(&v);
        let _ = validate_update(&v, &v);
    }
}
