//! One version and its per-version parts, after upstream's
//! `validateCustomResourceDefinitionVersion`, `validateDeprecationWarning`,
//! `ValidateCustomResourceDefinitionSubresources`, `ValidateCustomResourceColumnDefinition`
//! and `ValidateCustomResourceSelectableFields`.

use kas_apimachinery::golang::strconv::is_print;
use kas_apimachinery::validation::field::{self, Error, Path};
use serde_json::Value;

use super::Options;
use super::fieldpath::valid_field_path;
use super::internal::Version;
use super::openapi;
use super::structural::new_structural_error;
use super::util::{obj, opt_str, str_of};

/// Upstream `MaxSelectableFields`.
pub const MAX_SELECTABLE_FIELDS: usize = 8;

const COLUMN_TYPES: &str = "boolean,date,integer,number,string";
const COLUMN_FORMATS: &str = "byte,date,date-time,double,float,int32,int64,password";

/// Upstream `validateDeprecationWarning`.
fn deprecation_warning_messages(deprecated: bool, warning: Option<&str>) -> Vec<String> {
    let Some(w) = warning else {
        return Vec::new();
    };
    if !deprecated {
        return vec!["can only be set for deprecated versions".to_owned()];
    }
    let mut msgs = Vec::new();
    if w.len() > 256 {
        msgs.push("must be <= 256 characters long".to_owned());
    }
    if w.is_empty() {
        msgs.push("must not be an empty string".to_owned());
    }
    // Control characters are never printable, so the first test always decides.
    if let Some((i, _)) = w.char_indices().find(|(_, c)| !is_print(*c)) {
        msgs.push(format!(
            "must only contain printable UTF-8 characters; non-printable character found at index {i}"
        ));
    }
    msgs
}

/// Upstream `validateCustomResourceDefinitionVersion`.
pub fn validate_version(v: &Version<'_>, path: &Path, status: bool, opts: &Options) -> Vec<Error> {
    let mut errs = Vec::new();
    let dp = path.child("deprecationWarning");
    for msg in deprecation_warning_messages(v.deprecated, v.deprecation_warning) {
        let value = v.deprecation_warning.unwrap_or("");
        errs.push(field::invalid(&dp, value, &msg));
    }
    errs.extend(openapi::validate_validation(
        v.schema,
        status,
        opts,
        &path.child("schema"),
    ));
    errs.extend(validate_subresources(
        v.subresources,
        &path.child("subresources"),
    ));
    errs.extend(validate_columns(
        v.columns,
        &path.child("additionalPrinterColumns"),
    ));
    if let Some(fields) = v.selectable_fields.filter(|f| !f.is_empty()) {
        let p = path.child("selectableFields");
        match v.schema.and_then(|s| obj(s, "openAPIV3Schema")) {
            None => errs.push(field::invalid(
                &p,
                "",
                "selectableFields may only be set when version.schema.openAPIV3Schema is not included",
            )),
            Some(schema) => {
                let sp = path.child("schema.openAPIV3Schema");
                errs.extend(validate_selectable_fields_of(Some(schema), fields, &sp, &p));
            }
        }
    }
    errs
}

/// Upstream `validateSimpleJSONPath`.
fn validate_simple_json_path(s: &str, path: &Path) -> Vec<Error> {
    if s.is_empty() {
        return vec![field::invalid(path, s, "must not be empty")];
    }
    if !s.starts_with('.') {
        return vec![field::invalid(
            path,
            s,
            "must be a simple json path starting with .",
        )];
    }
    Vec::new()
}

fn validate_replicas_path(scale: &Value, key: &str, under: &str, path: &Path) -> Vec<Error> {
    let p = path.child(&format!("scale.{key}"));
    let value = str_of(scale, key);
    if value.is_empty() {
        return vec![field::required(&p, "")];
    }
    let errs = validate_simple_json_path(value, &p);
    if !errs.is_empty() {
        return errs;
    }
    if !value.starts_with(&format!(".{under}.")) {
        let msg = format!("should be a json path under .{under}");
        return vec![field::invalid(&p, value, &msg)];
    }
    Vec::new()
}

/// Upstream `ValidateCustomResourceDefinitionSubresources`.
pub fn validate_subresources(sub: Option<&Value>, path: &Path) -> Vec<Error> {
    let Some(scale) = sub.and_then(|s| obj(s, "scale")) else {
        return Vec::new();
    };
    let mut errs = validate_replicas_path(scale, "specReplicasPath", "spec", path);
    errs.extend(validate_replicas_path(
        scale,
        "statusReplicasPath",
        "status",
        path,
    ));
    if let Some(selector) = opt_str(scale, "labelSelectorPath").filter(|s| !s.is_empty()) {
        let p = path.child("scale.labelSelectorPath");
        let path_errs = validate_simple_json_path(selector, &p);
        if !path_errs.is_empty() {
            errs.extend(path_errs);
        } else if !selector.starts_with(".spec.") && !selector.starts_with(".status.") {
            errs.push(field::invalid(
                &p,
                selector,
                "should be a json path under either .spec or .status",
            ));
        }
    }
    errs
}

/// Upstream `ValidateCustomResourceColumnDefinition` for each column.
pub fn validate_columns(columns: Option<&[Value]>, path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    for (i, col) in columns.unwrap_or(&[]).iter().enumerate() {
        let p = path.index(i);
        if str_of(col, "name").is_empty() {
            errs.push(field::required(&p.child("name"), ""));
        }
        let ty = str_of(col, "type");
        let type_msg = format!("must be one of {COLUMN_TYPES}");
        if ty.is_empty() {
            errs.push(field::required(&p.child("type"), &type_msg));
        } else if !COLUMN_TYPES.split(',').any(|t| t == ty) {
            errs.push(field::invalid(&p.child("type"), ty, &type_msg));
        }
        let format = str_of(col, "format");
        if !format.is_empty() && !COLUMN_FORMATS.split(',').any(|f| f == format) {
            let msg = format!("must be one of {COLUMN_FORMATS}");
            errs.push(field::invalid(&p.child("format"), format, &msg));
        }
        // The internal field is `JSONPath`, and upstream names the path after it.
        let jp = p.child("JSONPath");
        let json_path = str_of(col, "jsonPath");
        if json_path.is_empty() {
            errs.push(field::required(&jp, ""));
        } else {
            errs.extend(validate_simple_json_path(json_path, &jp));
        }
    }
    errs
}

/// The selectable-field checks given the (maybe absent) schema they point into; an
/// unconvertible schema is reported at `schema_path` as upstream does.
pub fn validate_selectable_fields_of(
    schema: Option<&Value>,
    fields: &[Value],
    schema_path: &Path,
    path: &Path,
) -> Vec<Error> {
    let mut errs = Vec::new();
    let schema = match schema.map(|s| (s, new_structural_error(s))) {
        Some((_, Some(e))) => {
            errs.push(field::invalid(schema_path, "", &e));
            None
        }
        Some((s, None)) => Some(s),
        None => None,
    };
    errs.extend(validate_selectable_fields(fields, schema, path));
    errs
}

/// Upstream `ValidateCustomResourceSelectableFields`.
fn validate_selectable_fields(fields: &[Value], schema: Option<&Value>, path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    let mut unique: Vec<String> = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let p = path.index(i).child("jsonPath");
        let json_path = str_of(f, "jsonPath");
        if json_path.is_empty() {
            errs.push(field::required(&p, ""));
            continue;
        }
        let found = match schema {
            Some(s) => valid_field_path(json_path, s, false),
            None => Err("does not refer to a valid field".to_owned()),
        };
        let (fp, found) = match found {
            Ok(x) => x,
            Err(e) => {
                errs.push(field::invalid(
                    &p,
                    json_path,
                    &format!("is an invalid path: {e}"),
                ));
                continue;
            }
        };
        let rendered = fp.to_string();
        let root = rendered.split(['.', '[']).next().unwrap_or("");
        if root == "metadata" {
            errs.push(field::invalid(
                &p,
                json_path,
                "must not point to fields in metadata",
            ));
        }
        if !matches!(str_of(found, "type"), "string" | "boolean" | "integer") {
            errs.push(field::invalid(
                &p,
                json_path,
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            ));
        }
        if unique.contains(&rendered) {
            errs.push(field::duplicate(&p, json_path));
        } else {
            unique.push(rendered);
        }
    }
    if unique.len() > MAX_SELECTABLE_FIELDS {
        let n = unique.len() as i64;
        errs.push(field::too_many(path, n, MAX_SELECTABLE_FIELDS as i64));
    }
    errs
}

#[cfg(test)]
mod tests;
