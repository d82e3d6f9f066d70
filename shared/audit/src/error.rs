//! The crate's errors. `Display` is upstream's text, so that a refused `--audit-policy-file`
//! reads as kube-apiserver's.

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::runtime::serializer::DecodeError;
use kas_apimachinery::validation::field;

/// Why an audit policy could not be loaded (upstream's `LoadPolicyFromFile` and
/// `LoadPolicyFromBytes` errors).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("file path not specified")]
    FilePathNotSpecified,
    /// `message` is Go's `os.ReadFile` error text.
    #[error("failed to read file path {}: {message}", quote(path))]
    ReadFile { path: String, message: String },
    /// The document is no `Policy` (syntax, a value of the wrong type, a kind the scheme
    /// does not know).
    #[error("failed decoding: {0}")]
    Decoding(#[source] DecodeError),
    /// The group, version and kind decoded, as upstream's `GroupVersionKind.String()`
    /// writes them; 1.33 loads `audit.k8s.io/v1` only.
    #[error("unknown group version field {0} in policy")]
    UnknownGroupVersion(String),
    /// `ValidatePolicy`'s findings, written as upstream's aggregate.
    #[error("{}", field::aggregate_message(.0).unwrap_or_default())]
    Invalid(field::ErrorList),
    #[error("loaded illegal policy with 0 rules")]
    NoRules,
    /// A decoding, validation or rule-count error of the policy in `path`.
    #[error("{source}: from file {path}")]
    File {
        path: String,
        #[source]
        source: Box<Error>,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
