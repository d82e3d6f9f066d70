//! Names, metadata, status and stored versions, after upstream's
//! `ValidateCustomResourceDefinitionNames`, `ValidateCustomResourceDefinitionStatus`,
//! `ValidateCustomResourceDefinitionStoredVersions` and the name rule of
//! `ValidateCustomResourceDefinition`.

use std::collections::BTreeMap;

use kas_apimachinery::validation::field::{self, BadValue, Error, Path};
use kas_apimachinery::validation::is_dns1035_label;
use kas_apimachinery::validation::meta::{
    name_is_dns_subdomain, validate_annotations, validate_labels,
};
use serde_json::Value;

use super::internal::Version;
use super::util::{arr, map_of, obj, str_of};

fn dns1035(path: &Path, value: &str, prefix: &str, errs: &mut Vec<Error>) {
    let lower = value.to_lowercase();
    let checked = if prefix.is_empty() { value } else { &lower };
    let msgs = is_dns1035_label(checked);
    if !value.is_empty() && !msgs.is_empty() {
        errs.push(field::invalid(
            path,
            value,
            &format!("{prefix}{}", msgs.join(",")),
        ));
    }
}

/// Upstream `ValidateCustomResourceDefinitionNames` over a v1 `names` object.
pub fn validate_names(names: &Value, path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    const MIXED: &str = "may have mixed case, but should otherwise match: ";
    dns1035(
        &path.child("plural"),
        str_of(names, "plural"),
        "",
        &mut errs,
    );
    dns1035(
        &path.child("singular"),
        str_of(names, "singular"),
        "",
        &mut errs,
    );
    dns1035(&path.child("kind"), str_of(names, "kind"), MIXED, &mut errs);
    let list_kind = str_of(names, "listKind");
    dns1035(&path.child("listKind"), list_kind, MIXED, &mut errs);
    for (i, short) in arr(names, "shortNames").iter().enumerate() {
        let short = short.as_str().unwrap_or("");
        let msgs = is_dns1035_label(short);
        if !msgs.is_empty() {
            let p = path.child("shortNames").index(i);
            errs.push(field::invalid(&p, short, &msgs.join(",")));
        }
    }
    let kind = str_of(names, "kind");
    if !kind.is_empty() && kind == list_kind {
        errs.push(field::invalid(
            &path.child("listKind"),
            list_kind,
            "kind and listKind may not be the same",
        ));
    }
    for (i, category) in arr(names, "categories").iter().enumerate() {
        let category = category.as_str().unwrap_or("");
        let msgs = is_dns1035_label(category);
        if !msgs.is_empty() {
            let p = path.child("categories").index(i);
            errs.push(field::invalid(&p, category, &msgs.join(",")));
        }
    }
    errs
}

/// The names that spec requires beyond the shared rules (status may leave them empty).
pub fn required_spec_names(names: &Value, path: &Path) -> Vec<Error> {
    ["plural", "singular", "kind", "listKind"]
        .into_iter()
        .filter(|k| str_of(names, k).is_empty())
        .map(|k| field::required(&path.child(k), ""))
        .collect()
}

/// Upstream `ValidateCustomResourceDefinitionStatus`.
pub fn validate_status(crd: &Value) -> Vec<Error> {
    let accepted = obj(crd, "status")
        .and_then(|s| obj(s, "acceptedNames"))
        .unwrap_or(&Value::Null);
    validate_names(accepted, &Path::new("status").child("acceptedNames"))
}

/// Upstream `ValidateCustomResourceDefinitionStoredVersions`.
pub fn validate_stored_versions(crd: &Value, versions: &[Version<'_>]) -> Vec<Error> {
    let path = Path::new("status").child("storedVersions");
    let status = obj(crd, "status").unwrap_or(&Value::Null);
    let stored: Vec<&str> = arr(status, "storedVersions")
        .iter()
        .map(|v| v.as_str().unwrap_or(""))
        .collect();
    let bad_value = || {
        if status.get("storedVersions").is_some_and(Value::is_array) {
            BadValue::Strings(Some(stored.iter().map(|s| (*s).to_owned()).collect()))
        } else {
            BadValue::Strings(None)
        }
    };
    if stored.is_empty() {
        return vec![field::invalid(
            &path,
            bad_value(),
            "must have at least one stored version",
        )];
    }
    let mut errs = Vec::new();
    // Upstream keeps the last index of each name.
    let mut remaining: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, v) in stored.iter().enumerate() {
        remaining.insert(v, i);
    }
    for v in versions {
        let found = remaining.contains_key(v.name);
        if v.storage && !found {
            let msg = format!("must have the storage version {}", v.name);
            errs.push(field::invalid(&path, bad_value(), &msg));
        }
        remaining.remove(v.name);
    }
    // Upstream walks a Go map here; index order keeps the output stable.
    let mut left: Vec<(usize, &str)> = remaining.into_iter().map(|(v, i)| (i, v)).collect();
    left.sort();
    for (i, v) in left {
        let msg = format!(
            "missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"
        );
        errs.push(field::invalid(&path.index(i), v, &msg));
    }
    errs
}

fn string_map(meta: &Value, key: &str) -> BTreeMap<String, String> {
    map_of(meta, key)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// Upstream's `nameValidationFn` of `ValidateCustomResourceDefinition`.
fn crd_name_messages(name: &str, prefix: bool, required: &str) -> Vec<String> {
    let mut msgs = name_is_dns_subdomain(name, prefix);
    if name != required {
        msgs.push(r#"must be spec.names.plural+"."+spec.group"#.to_owned());
    }
    msgs
}

/// Upstream `ValidateObjectMeta(&obj.ObjectMeta, false, nameValidationFn, "metadata")`:
/// generateName, name, namespace, labels and annotations.
pub fn validate_object_meta(crd: &Value, plural: &str, group: &str) -> Vec<Error> {
    let path = Path::new("metadata");
    let meta = obj(crd, "metadata").unwrap_or(&Value::Null);
    let required = format!("{plural}.{group}");
    let mut errs = Vec::new();
    let generate_name = str_of(meta, "generateName");
    if !generate_name.is_empty() {
        let p = path.child("generateName");
        for msg in crd_name_messages(generate_name, true, &required) {
            errs.push(field::invalid(&p, generate_name, &msg));
        }
    }
    let name = str_of(meta, "name");
    let p = path.child("name");
    if name.is_empty() {
        errs.push(field::required(&p, "name or generateName is required"));
    } else {
        for msg in crd_name_messages(name, false, &required) {
            errs.push(field::invalid(&p, name, &msg));
        }
    }
    if !str_of(meta, "namespace").is_empty() {
        errs.push(field::forbidden(
            &path.child("namespace"),
            "not allowed on this type",
        ));
    }
    let labels = string_map(meta, "labels");
    errs.extend(validate_labels(&labels, &path.child("labels")));
    let annotations = string_map(meta, "annotations");
    errs.extend(validate_annotations(
        &annotations,
        &path.child("annotations"),
    ));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rendered(errs: &[Error]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn names_rules() {
        let names = json!({"plural": "Foos", "singular": "foo", "kind": "9Foo", "listKind": "9Foo",
            "shortNames": ["f", "F"], "categories": ["all", "a b"]});
        let got = rendered(&validate_names(&names, &Path::new("spec").child("names")));
        let dns = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
        assert_eq!(
            got,
            vec![
                format!("spec.names.plural: Invalid value: \"Foos\": {dns}"),
                format!("spec.names.kind: Invalid value: \"9Foo\": may have mixed case, but should otherwise match: {dns}"),
                format!("spec.names.listKind: Invalid value: \"9Foo\": may have mixed case, but should otherwise match: {dns}"),
                format!("spec.names.shortNames[1]: Invalid value: \"F\": {dns}"),
                "spec.names.listKind: Invalid value: \"9Foo\": kind and listKind may not be the same".to_owned(),
                format!("spec.names.categories[1]: Invalid value: \"a b\": {dns}"),
            ]
        );
    }

    #[test]
    fn required_names() {
        let got = rendered(&required_spec_names(
            &json!({"kind": "K"}),
            &Path::new("spec").child("names"),
        ));
        assert_eq!(
            got,
            vec![
                "spec.names.plural: Required value",
                "spec.names.singular: Required value",
                "spec.names.listKind: Required value",
            ]
        );
    }

    #[test]
    fn name_must_be_plural_dot_group() {
        let crd = json!({"metadata": {"name": "foos.example.com"}});
        assert!(validate_object_meta(&crd, "foos", "example.com").is_empty());
        let got = rendered(&validate_object_meta(&crd, "bars", "example.com"));
        assert_eq!(
            got,
            vec![
                r#"metadata.name: Invalid value: "foos.example.com": must be spec.names.plural+"."+spec.group"#
            ]
        );
    }

    #[test]
    fn stored_versions() {
        let v = |name, storage| Version {
            name,
            served: true,
            storage,
            deprecated: false,
            deprecation_warning: None,
            schema: None,
            subresources: None,
            columns: None,
            selectable_fields: None,
        };
        let crd = json!({"status": {"storedVersions": []}});
        assert_eq!(
            rendered(&validate_stored_versions(&crd, &[v("v1", true)])),
            vec![
                "status.storedVersions: Invalid value: []string{}: must have at least one stored version"
            ]
        );
        let crd = json!({"status": {"storedVersions": ["v0", "v2"]}});
        assert_eq!(
            rendered(&validate_stored_versions(
                &crd,
                &[v("v1", true), v("v2", false)]
            )),
            vec![
                r#"status.storedVersions: Invalid value: []string{"v0", "v2"}: must have the storage version v1"#,
                r#"status.storedVersions[0]: Invalid value: "v0": missing from spec.versions; v0 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v0 and removes v0 from status.storedVersions"#,
            ]
        );
    }
}
