//! Validation helpers that other layers need before any object exists.

/// Upstream `k8s.io/apimachinery/pkg/api/validation/path`.
pub mod path {
    /// Names that may not be path segments.
    pub const NAME_MAY_NOT_BE: [&str; 2] = [".", ".."];
    /// Strings a path-segment name may not contain.
    pub const NAME_MAY_NOT_CONTAIN: [&str; 2] = ["/", "%"];

    /// Upstream `IsValidPathSegmentName`: the reasons `name` cannot be a path segment, empty
    /// if it can.
    pub fn is_valid_path_segment_name(name: &str) -> Vec<String> {
        if let Some(bad) = NAME_MAY_NOT_BE.iter().find(|b| **b == name) {
            return vec![format!("may not be '{bad}'")];
        }
        NAME_MAY_NOT_CONTAIN
            .iter()
            .filter(|bad| name.contains(**bad))
            .map(|bad| format!("may not contain '{bad}'"))
            .collect()
    }

    #[cfg(test)]
    mod tests {
        use super::is_valid_path_segment_name as check;

        #[test]
        fn path_segment_names() {
            assert!(check("foo").is_empty());
            assert!(check("").is_empty());
            assert_eq!(check(".."), vec!["may not be '..'"]);
            assert_eq!(
                check("a/b%c"),
                vec!["may not contain '/'", "may not contain '%'"]
            );
        }
    }
}
