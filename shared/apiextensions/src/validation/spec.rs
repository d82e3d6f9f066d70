//! `spec`, after upstream's `validateCustomResourceDefinitionSpec`.

use kas_apimachinery::validation::field::{self, Error, Path};
use kas_apimachinery::validation::{is_dns1035_label, is_dns1123_subdomain};
use serde_json::Value;

use super::Options;
use super::conversion::{validate_conversion, validate_enum};
use super::gostruct::go_versions;
use super::internal::{Spec, Version, top_schema};
use super::names::{required_spec_names, validate_names};
use super::openapi::{self, has_kubernetes_extensions, schema_has};
use super::util::{obj, semantic_eq};
use super::versions::{
    validate_columns, validate_selectable_fields_of, validate_subresources, validate_version,
};

fn validate_group(group: &str, path: &Path) -> Vec<Error> {
    if group.is_empty() {
        return vec![field::required(path, "")];
    }
    let msgs = is_dns1123_subdomain(group);
    if !msgs.is_empty() {
        return vec![field::invalid(path, group, &msgs.join(","))];
    }
    if group.split('.').count() < 2 {
        return vec![field::invalid(
            path,
            group,
            "should be a domain with at least one dot",
        )];
    }
    Vec::new()
}

fn schema_of<'a>(v: &Version<'a>) -> Option<&'a Value> {
    v.schema.and_then(|s| obj(s, "openAPIV3Schema"))
}

/// The schema presence rules (`requireOpenAPISchema` and pruning's need for schemas).
fn validate_schema_presence(spec: &Spec<'_>, opts: &Options, path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    if top_schema(spec).is_some() {
        return errs;
    }
    for (i, v) in spec.versions.iter().enumerate() {
        let p = path
            .child("versions")
            .index(i)
            .child("schema")
            .child("openAPIV3Schema");
        if schema_of(v).is_some() {
            continue;
        }
        if opts.require_openapi_schema {
            errs.push(field::required(&p, "schemas are required"));
        } else if !spec.preserve_unknown_fields && v.served {
            errs.push(field::required(
                &p,
                "because otherwise all fields are pruned",
            ));
        }
    }
    errs
}

/// Upstream's "identical non-nil per-version value" checks.
fn all_identical<'a>(
    versions: &[Version<'a>],
    get: impl Fn(&Version<'a>) -> Option<Value>,
) -> bool {
    let Some(first) = versions.first().map(&get) else {
        return false;
    };
    versions
        .iter()
        .all(|v| get(v).is_some_and(|x| semantic_eq(Some(&x), first.as_ref())))
}

fn validate_per_version_exclusivity(spec: &Spec<'_>, path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    let vs = &spec.versions;
    if spec.validation.is_some() && vs.iter().any(|v| v.schema.is_some()) {
        errs.push(field::forbidden(
            &path.child("validation"),
            "top-level and per-version schemas are mutually exclusive",
        ));
    }
    if spec.subresources.is_some() && vs.iter().any(|v| v.subresources.is_some()) {
        errs.push(field::forbidden(
            &path.child("subresources"),
            "top-level and per-version subresources are mutually exclusive",
        ));
    }
    let has_columns = |v: &Version<'_>| v.columns.is_some_and(|c| !c.is_empty());
    if spec.columns.is_some_and(|c| !c.is_empty()) && vs.iter().any(has_columns) {
        errs.push(field::forbidden(
            &path.child("additionalPrinterColumns"),
            "top-level and per-version additionalPrinterColumns are mutually exclusive",
        ));
    }
    let vp = path.child("versions");
    let identical = [
        (
            all_identical(vs, |v| v.schema.cloned()),
            "per-version schemas may not all be set to identical values (top-level validation should be used instead)",
        ),
        (
            all_identical(vs, |v| v.subresources.cloned()),
            "per-version subresources may not all be set to identical values (top-level subresources should be used instead)",
        ),
        (
            all_identical(vs, |v| {
                v.columns
                    .filter(|c| !c.is_empty())
                    .map(|c| Value::Array(c.to_vec()))
            }),
            "per-version additionalPrinterColumns may not all be set to identical values (top-level additionalPrinterColumns should be used instead)",
        ),
    ];
    for (hit, msg) in identical {
        if hit {
            errs.push(field::invalid(&vp, go_versions(spec), msg));
        }
    }
    errs
}

fn status_enabled(sub: Option<&Value>) -> bool {
    sub.and_then(|s| obj(s, "status")).is_some()
}

/// Upstream `getSubresourcesForVersion`.
fn subresources_for<'a>(spec: &Spec<'a>, version: &Version<'a>) -> Option<&'a Value> {
    if !spec.versions.iter().any(|v| v.subresources.is_some()) {
        return spec.subresources;
    }
    version.subresources
}

fn validate_versions(spec: &Spec<'_>, opts: &Options, path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    for (i, v) in spec.versions.iter().enumerate() {
        let vp = path.child("versions").index(i);
        let msgs = is_dns1035_label(v.name);
        if !msgs.is_empty() {
            errs.push(field::invalid(&vp.child("name"), v.name, &msgs.join(",")));
        }
        let status = status_enabled(subresources_for(spec, v));
        errs.extend(validate_version(v, &vp, status, opts));
    }
    errs
}

/// Upstream `validateCustomResourceDefinitionSpec`.
pub fn validate_spec(spec: &Spec<'_>, opts: &Options, path: &Path) -> Vec<Error> {
    let mut opts = opts.clone();
    let mut errs = validate_group(spec.group, &path.child("group"));
    errs.extend(validate_enum(
        &path.child("scope"),
        spec.scope,
        &["Cluster", "Namespaced"],
        true,
    ));
    if !spec.preserve_unknown_fields {
        opts.require_structural_schema = true;
    }
    errs.extend(validate_schema_presence(spec, &opts, path));
    let has_defaults =
        |s: &Value| schema_has(s, &|n| n.get("default").is_some_and(|d| !d.is_null()));
    if opts.allow_defaults
        && super::internal::all_schemas(spec)
            .into_iter()
            .any(has_defaults)
    {
        opts.require_structural_schema = true;
        if spec.preserve_unknown_fields {
            errs.push(field::invalid(
                &path.child("preserveUnknownFields"),
                true,
                "must be false in order to use defaults in the schema",
            ));
        }
    }
    if super::internal::all_schemas(spec)
        .into_iter()
        .any(has_kubernetes_extensions)
    {
        opts.require_structural_schema = true;
    }
    errs.extend(validate_versions(spec, &opts, path));
    errs.extend(validate_per_version_exclusivity(spec, path));
    let vp = path.child("versions");
    if spec
        .versions
        .iter()
        .enumerate()
        .any(|(i, v)| spec.versions[..i].iter().any(|w| w.name == v.name))
    {
        errs.push(field::invalid(
            &vp,
            go_versions(spec),
            "must contain unique version names",
        ));
    }
    if spec.versions.iter().filter(|v| v.storage).count() != 1 {
        errs.push(field::invalid(
            &vp,
            go_versions(spec),
            "must have exactly one version marked as storage version",
        ));
    }
    errs.extend(validate_top_level_version(spec, path));
    errs.extend(required_spec_names(spec.names, &path.child("names")));
    errs.extend(validate_names(spec.names, &path.child("names")));
    let any_status = status_enabled(spec.subresources)
        || spec.versions.iter().any(|v| status_enabled(v.subresources));
    errs.extend(openapi::validate_validation(
        spec.validation,
        any_status,
        &opts,
        &path.child("validation"),
    ));
    errs.extend(validate_subresources(
        spec.subresources,
        &path.child("subresources"),
    ));
    errs.extend(validate_columns(
        spec.columns,
        &path.child("additionalPrinterColumns"),
    ));
    if let Some(fields) = spec.selectable_fields.filter(|f| !f.is_empty()) {
        errs.extend(validate_top_level_selectable_fields(spec, fields, path));
    }
    errs.extend(validate_conversion_strategy(spec, &opts, path));
    errs
}

fn validate_top_level_version(spec: &Spec<'_>, path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    if spec.version.is_empty() {
        return errs;
    }
    let p = path.child("version");
    let msgs = is_dns1035_label(spec.version);
    if !msgs.is_empty() {
        errs.push(field::invalid(&p, spec.version, &msgs.join(",")));
    }
    // `version` is copied from `versions[0]`, so the other check cannot fail from v1.
    errs
}

fn validate_top_level_selectable_fields(
    spec: &Spec<'_>,
    fields: &[Value],
    path: &Path,
) -> Vec<Error> {
    let p = path.child("selectableFields");
    let Some(validation) = spec.validation else {
        return vec![field::invalid(
            &p,
            "",
            "selectableFields may only be set when validations.schema is included",
        )];
    };
    // Upstream names this path `spec.schema.openAPIV3Schema`.
    let schema_path = path.child("schema.openAPIV3Schema");
    validate_selectable_fields_of(obj(validation, "openAPIV3Schema"), fields, &schema_path, &p)
}

fn validate_conversion_strategy(spec: &Spec<'_>, opts: &Options, path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    let cp = path.child("conversion");
    if let Some(c) = &spec.conversion
        && c.strategy != "None"
        && spec.preserve_unknown_fields
    {
        errs.push(field::invalid(
            &cp.child("strategy"),
            c.strategy,
            "must be None if spec.preserveUnknownFields is true",
        ));
    }
    errs.extend(validate_conversion(
        spec.conversion.as_ref(),
        opts.require_recognized_conversion_review_version,
        opts.allow_invalid_ca_bundle,
        &cp,
    ));
    errs
}

#[cfg(test)]
mod tests;
