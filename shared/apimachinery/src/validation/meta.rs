//! Object-metadata validation, after upstream's `k8s.io/apimachinery/pkg/api/validation`
//! (`generic.go`, `objectmeta.go`) and `pkg/apis/meta/v1/validation` (labels).

use std::collections::BTreeMap;

use super::field::{self, ErrorList, Path};
use super::{is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, is_qualified_name};
use super::{is_valid_label_value, path::is_valid_path_segment_name};

/// Upstream `IsNegativeErrorMsg`.
pub const IS_NEGATIVE_ERROR_MSG: &str = "must be greater than or equal to 0";

/// Upstream `TotalAnnotationSizeLimitB`: 256 KiB over all keys and values.
pub const TOTAL_ANNOTATION_SIZE_LIMIT_B: usize = 256 * (1 << 10);

/// Upstream `ValidateNameFunc`: the reasons `name` is invalid; `prefix` is true when it is
/// a `generateName`, which may end in `-`.
pub type ValidateNameFn = fn(name: &str, prefix: bool) -> Vec<String>;

/// Upstream `maskTrailingDash`. Upstream drops two characters, not one, before appending
/// `a`; that is kept, as it decides which messages a `generateName` gets.
fn mask_trailing_dash(name: &str) -> std::borrow::Cow<'_, str> {
    if name.len() > 1 && name.ends_with('-') {
        let mut masked = name[..name.len() - 2].to_owned();
        masked.push('a');
        masked.into()
    } else {
        name.into()
    }
}

/// Upstream `NameIsDNSSubdomain`: most resources' names.
pub fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    let name = if prefix {
        mask_trailing_dash(name)
    } else {
        name.into()
    };
    is_dns1123_subdomain(&name)
}

/// Upstream `NameIsDNSLabel`: namespaces and other names that become DNS labels.
pub fn name_is_dns_label(name: &str, prefix: bool) -> Vec<String> {
    let name = if prefix {
        mask_trailing_dash(name)
    } else {
        name.into()
    };
    is_dns1123_label(&name)
}

/// Upstream `NameIsDNS1035Label`: services.
pub fn name_is_dns1035_label(name: &str, prefix: bool) -> Vec<String> {
    let name = if prefix {
        mask_trailing_dash(name)
    } else {
        name.into()
    };
    is_dns1035_label(&name)
}

/// Upstream `ValidateNamespaceName`.
pub fn validate_namespace_name(name: &str, prefix: bool) -> Vec<String> {
    name_is_dns_label(name, prefix)
}

/// Upstream `path.ValidatePathSegmentName`, for resources whose names need only be path
/// segments (upstream's `IsValidPathSegmentName` ignores `prefix`).
pub fn validate_path_segment_name(name: &str, _prefix: bool) -> Vec<String> {
    is_valid_path_segment_name(name)
}

/// The name, generateName and namespace checks of upstream's `ValidateObjectMetaAccessor`,
/// in upstream's order.
pub fn validate_object_name(
    name: &str,
    generate_name: &str,
    namespace: &str,
    requires_namespace: bool,
    name_fn: ValidateNameFn,
    fld_path: &Path,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if !generate_name.is_empty() {
        let p = fld_path.child("generateName");
        for msg in name_fn(generate_name, true) {
            errs.push(field::invalid(&p, generate_name, &msg));
        }
    }
    let p = fld_path.child("name");
    if name.is_empty() {
        errs.push(field::required(&p, "name or generateName is required"));
    } else {
        for msg in name_fn(name, false) {
            errs.push(field::invalid(&p, name, &msg));
        }
    }
    let p = fld_path.child("namespace");
    if requires_namespace {
        if namespace.is_empty() {
            errs.push(field::required(&p, ""));
        } else {
            for msg in validate_namespace_name(namespace, false) {
                errs.push(field::invalid(&p, namespace, &msg));
            }
        }
    } else if !namespace.is_empty() {
        errs.push(field::forbidden(&p, "not allowed on this type"));
    }
    errs
}

/// Upstream `ValidateNonnegativeField`.
pub fn validate_nonnegative_field(value: i64, fld_path: &Path) -> ErrorList {
    if value < 0 {
        vec![field::invalid(fld_path, value, IS_NEGATIVE_ERROR_MSG)]
    } else {
        Vec::new()
    }
}

/// Upstream metav1 `ValidateLabelName`: one error per message, the path not keyed.
pub fn validate_label_name(label_name: &str, fld_path: &Path) -> ErrorList {
    is_qualified_name(label_name)
        .into_iter()
        .map(|msg| field::invalid(fld_path, label_name, &msg))
        .collect()
}

/// Upstream metav1 `ValidateLabels`. Upstream walks a Go map (random order); this walks
/// keys in sorted order, so the message order is stable.
pub fn validate_labels(labels: &BTreeMap<String, String>, fld_path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for (k, v) in labels {
        errs.extend(validate_label_name(k, fld_path));
        for msg in is_valid_label_value(v) {
            errs.push(field::invalid(fld_path, v.as_str(), &msg));
        }
    }
    errs
}

/// Upstream `ValidateAnnotations`: keys are qualified names compared in lower case, and
/// keys plus values may total at most 256 KiB.
pub fn validate_annotations(annotations: &BTreeMap<String, String>, fld_path: &Path) -> ErrorList {
    let mut errs = ErrorList::new();
    for k in annotations.keys() {
        for msg in is_qualified_name(&k.to_lowercase()) {
            errs.push(field::invalid(fld_path, k.as_str(), &msg));
        }
    }
    let total: usize = annotations.iter().map(|(k, v)| k.len() + v.len()).sum();
    if total > TOTAL_ANNOTATION_SIZE_LIMIT_B {
        errs.push(field::too_long(
            fld_path,
            TOTAL_ANNOTATION_SIZE_LIMIT_B as i64,
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(errs: &ErrorList) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn generate_name_masks_trailing_dash() {
        assert!(name_is_dns_subdomain("foo-", true).is_empty());
        assert!(!name_is_dns_subdomain("foo-", false).is_empty());
        // Upstream drops two characters: "a-" masks to "a", "-" alone is left as is.
        assert!(name_is_dns_subdomain("a-", true).is_empty());
        assert!(!name_is_dns_subdomain("-", true).is_empty());
        assert!(name_is_dns_label("foo-", true).is_empty());
        assert!(name_is_dns1035_label("foo-", true).is_empty());
        assert!(!name_is_dns1035_label("1foo-", true).is_empty());
    }

    #[test]
    fn object_name_messages() {
        let meta = Path::new("metadata");
        let errs = validate_object_name("", "", "", false, name_is_dns_subdomain, &meta);
        assert_eq!(
            messages(&errs),
            vec!["metadata.name: Required value: name or generateName is required"]
        );

        let errs = validate_object_name("Foo", "", "ns", true, name_is_dns_subdomain, &meta);
        assert_eq!(
            messages(&errs),
            vec![
                "metadata.name: Invalid value: \"Foo\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ]
        );

        let errs = validate_object_name("a", "", "", true, name_is_dns_subdomain, &meta);
        assert_eq!(messages(&errs), vec!["metadata.namespace: Required value"]);

        let errs = validate_object_name("a", "", "ns", false, name_is_dns_subdomain, &meta);
        assert_eq!(
            messages(&errs),
            vec!["metadata.namespace: Forbidden: not allowed on this type"]
        );

        let errs = validate_object_name("a", "", "a.b", true, name_is_dns_subdomain, &meta);
        assert_eq!(
            messages(&errs),
            vec!["metadata.namespace: Invalid value: \"a.b\": must not contain dots"]
        );

        let errs = validate_object_name("", "Gen-", "", false, name_is_dns_subdomain, &meta);
        assert_eq!(errs.len(), 2);
        assert!(errs[0].to_string().starts_with(
            "metadata.generateName: Invalid value: \"Gen-\": a lowercase RFC 1123 subdomain"
        ));
        assert_eq!(errs[1].field, "metadata.name");
    }

    #[test]
    fn labels_and_annotations() {
        let p = Path::new("metadata").child("labels");
        let mut labels = BTreeMap::new();
        labels.insert("good".to_owned(), "ok".to_owned());
        assert!(validate_labels(&labels, &p).is_empty());
        labels.insert("a/b/c".to_owned(), "-bad".to_owned());
        let errs = validate_labels(&labels, &p);
        assert_eq!(errs.len(), 2);
        assert!(errs[0].to_string().starts_with(
            "metadata.labels: Invalid value: \"a/b/c\": a qualified name must consist"
        ));
        assert!(errs[1].to_string().starts_with(
            "metadata.labels: Invalid value: \"-bad\": a valid label must be an empty string"
        ));

        let p = Path::new("metadata").child("annotations");
        let mut ann = BTreeMap::new();
        ann.insert("Example.com/UPPER".to_owned(), "v".to_owned());
        assert!(validate_annotations(&ann, &p).is_empty());
        ann.insert("x".to_owned(), "v".repeat(TOTAL_ANNOTATION_SIZE_LIMIT_B));
        assert_eq!(
            messages(&validate_annotations(&ann, &p)),
            vec!["metadata.annotations: Too long: may not be more than 262144 bytes"]
        );
    }

    #[test]
    fn nonnegative() {
        let p = Path::new("metadata").child("generation");
        assert!(validate_nonnegative_field(0, &p).is_empty());
        assert_eq!(
            messages(&validate_nonnegative_field(-1, &p)),
            vec!["metadata.generation: Invalid value: -1: must be greater than or equal to 0"]
        );
        assert_eq!(
            validate_path_segment_name("a/b", false),
            vec!["may not contain '/'"]
        );
    }
}
