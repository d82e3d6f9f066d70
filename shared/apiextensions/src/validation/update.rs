//! Updates, after upstream's `ValidateCustomResourceDefinitionUpdate`: the options are
//! loosened where the old object already breaks a rule (so persisted data keeps working),
//! and some spec fields are immutable.

use kas_apimachinery::validation::field::{self, Error, Path};
use serde_json::Value;

use super::conversion::{has_invalid_ca_bundle, has_valid_review_version_or_empty};
use super::internal::{self, Spec, all_schemas, top_schema};
use super::listtype::validate_map_list_keys_map_set;
use super::openapi::{has_invalid_types, schema_has};
use super::spec::validate_spec;
use super::structural::{new_structural_error, validate_structural};
use super::util::{arr, obj, opt_str, str_of};
use super::{Options, approval, names, validate_preserve_unknown_fields};

/// Upstream `IsCRDConditionTrue(crd, Established)`.
fn established(crd: &Value) -> bool {
    let status = obj(crd, "status").unwrap_or(&Value::Null);
    arr(status, "conditions")
        .iter()
        .any(|c| str_of(c, "type") == "Established" && str_of(c, "status") == "True")
}

/// Upstream `allVersionsSpecifyOpenAPISchema`.
fn all_versions_specify_schema(spec: &Spec<'_>) -> bool {
    top_schema(spec).is_some()
        || spec
            .versions
            .iter()
            .all(|v| v.schema.and_then(|s| obj(s, "openAPIV3Schema")).is_some())
}

/// Upstream `schemaIsNonStructural`.
fn is_non_structural(s: &Value) -> bool {
    new_structural_error(s).is_some() || !validate_structural(&Path::nil(), s).is_empty()
}

/// Upstream `hasNonAtomicSetType`'s predicate.
fn non_atomic_set(s: &Value) -> bool {
    let Some(items) = obj(s, "items") else {
        return false;
    };
    if opt_str(s, "x-kubernetes-list-type") != Some("set") {
        return false;
    }
    match str_of(items, "type") {
        "array" => opt_str(items, "x-kubernetes-list-type").is_some_and(|t| t != "atomic"),
        "object" => opt_str(items, "x-kubernetes-map-type") != Some("atomic"),
        _ => false,
    }
}

/// Upstream `allowInvalidCABundle`.
fn allow_invalid_ca_bundle(old: &Value, old_spec: &Spec<'_>) -> bool {
    if !established(old) {
        return true;
    }
    has_invalid_ca_bundle(old_spec.conversion.as_ref()).unwrap_or(false)
}

/// The options of `ValidateCustomResourceDefinitionUpdate` given the old object.
fn update_options(old: &Value, old_spec: &Spec<'_>) -> Options {
    let schemas = all_schemas(old_spec);
    let any = |pred: &dyn Fn(&Value) -> bool| schemas.iter().any(|s| schema_has(s, pred));
    Options {
        allow_defaults: true,
        require_recognized_conversion_review_version: old_spec
            .conversion
            .as_ref()
            .is_none_or(|c| has_valid_review_version_or_empty(c.conversion_review_versions)),
        require_immutable_names: established(old),
        require_openapi_schema: all_versions_specify_schema(old_spec),
        require_valid_property_type: !schemas.iter().any(|s| has_invalid_types(s)),
        require_structural_schema: !schemas.iter().any(|s| is_non_structural(s)),
        // Upstream loosens this when the old schema has unpruned defaults; that needs
        // pruning (`crate::schema`), and default validation is not wired in yet.
        require_pruned_defaults: true,
        require_atomic_set_type: !any(&non_atomic_set),
        require_map_list_keys_map_set_validation: !any(&|s| {
            !validate_map_list_keys_map_set(s, &Path::new("")).is_empty()
        }),
        allow_invalid_ca_bundle: allow_invalid_ca_bundle(old, old_spec),
    }
}

fn immutable(new: &str, old: &str, path: &Path) -> Option<Error> {
    (new != old).then(|| field::invalid(path, new, "field is immutable"))
}

/// Upstream `validateCustomResourceDefinitionSpecUpdate`.
fn validate_spec_update(
    spec: &Spec<'_>,
    old: &Spec<'_>,
    opts: &Options,
    path: &Path,
) -> Vec<Error> {
    let mut errs = validate_spec(spec, opts, path);
    fn kind<'a>(s: &Spec<'a>) -> &'a str {
        str_of(s.names, "kind")
    }
    fn plural<'a>(s: &Spec<'a>) -> &'a str {
        str_of(s.names, "plural")
    }
    let np = path.child("names");
    if opts.require_immutable_names {
        errs.extend(immutable(spec.scope, old.scope, &path.child("scope")));
        errs.extend(immutable(kind(spec), kind(old), &np.child("kind")));
    }
    errs.extend(immutable(spec.group, old.group, &path.child("group")));
    errs.extend(immutable(plural(spec), plural(old), &np.child("plural")));
    errs
}

/// Upstream `ValidateCustomResourceDefinitionUpdate`, without the generic metadata update
/// rules of `ValidateObjectMetaUpdate` (which come first upstream; the caller prepends
/// them).
pub fn validate_update(new: &Value, old: &Value) -> Vec<Error> {
    let spec = internal::spec(new);
    let old_spec = internal::spec(old);
    let opts = update_options(old, &old_spec);
    let mut errs = validate_spec_update(&spec, &old_spec, &opts, &Path::new("spec"));
    errs.extend(names::validate_status(new));
    errs.extend(names::validate_stored_versions(new, &spec.versions));
    errs.extend(approval::validate_api_approval(new, Some(old), spec.group));
    errs.extend(validate_preserve_unknown_fields(new, Some(old)));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(group: &str, plural: &str, kind: &str, scope: &str, established: bool) -> Value {
        let status = if established { "True" } else { "False" };
        json!({
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {"group": group, "scope": scope,
                "names": {"plural": plural, "singular": "foo", "kind": kind, "listKind": format!("{kind}List")},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]},
            "status": {"storedVersions": ["v1"], "conditions": [{"type": "Established", "status": status}]},
        })
    }

    fn rendered(errs: &[Error]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn group_and_plural_are_immutable() {
        let old = crd("example.com", "foos", "Foo", "Namespaced", false);
        let new = crd("example.org", "bars", "Bar", "Cluster", false);
        assert_eq!(
            rendered(&validate_update(&new, &old)),
            vec![
                r#"spec.group: Invalid value: "example.org": field is immutable"#,
                r#"spec.names.plural: Invalid value: "bars": field is immutable"#,
            ]
        );
    }

    #[test]
    fn scope_and_kind_are_immutable_once_established() {
        let old = crd("example.com", "foos", "Foo", "Namespaced", true);
        let new = crd("example.com", "foos", "Bar", "Cluster", true);
        assert_eq!(
            rendered(&validate_update(&new, &old)),
            vec![
                r#"spec.scope: Invalid value: "Cluster": field is immutable"#,
                r#"spec.names.kind: Invalid value: "Bar": field is immutable"#,
            ]
        );
    }

    #[test]
    fn non_structural_old_schemas_loosen_the_rules() {
        let mut old = crd("example.com", "foos", "Foo", "Namespaced", false);
        old["spec"]["preserveUnknownFields"] = json!(true);
        old["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"] = json!({"a": {}});
        let new = old.clone();
        assert!(validate_update(&new, &old).is_empty());
        let fresh = crd("example.com", "foos", "Foo", "Namespaced", false);
        assert_eq!(
            rendered(&validate_update(&new, &fresh)),
            vec![
                "spec.validation.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields",
                "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
            ]
        );
    }
}
