//! Upstream's checks of file paths inside volumes and mounts.

use kas_apimachinery::validation::field::{self, Path};

/// Upstream `validatePathNoBacksteps`: no `..` element.
pub fn validate_path_no_backsteps(target: &str, path: &Path) -> Vec<field::Error> {
    if target.split('/').any(|part| part == "..") {
        return vec![field::invalid(path, target, "must not contain '..'")];
    }
    Vec::new()
}

/// Upstream `validateLocalDescendingPath`: relative, and no `..` element.
pub fn validate_local_descending_path(target: &str, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if target.starts_with('/') {
        errs.push(field::invalid(path, target, "must be a relative path"));
    }
    errs.extend(validate_path_no_backsteps(target, path));
    errs
}

/// Upstream `ValidateLocalNonReservedPath`: a local descending path not starting with `..`.
pub fn validate_local_non_reserved_path(target: &str, path: &Path) -> Vec<field::Error> {
    let mut errs = validate_local_descending_path(target, path);
    if target.starts_with("..") && !target.starts_with("../") {
        errs.push(field::invalid(path, target, "must not start with '..'"));
    }
    errs
}
