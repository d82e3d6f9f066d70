//! CEL `x-kubernetes-validations` for custom resources, after upstream's
//! `pkg/apiserver/schema/cel` (compilation.go, validation.go, values.go) over the raw
//! `openAPIV3Schema` JSON of a CRD version: [`Validator`] evaluates rules on create and
//! update, [`compile_errors`] is what CRD validation reports about them.
//!
//! CEL crate: cel-rust's `cel` 0.15 (maintained; ANTLR grammar shared with cel-go, so
//! positions and most syntax errors read alike; macros, optional types, strings v2, custom
//! overloads and opaque types). Rejected: `cel-interpreter` (its unmaintained
//! predecessor), `cel-cxx` (cel-cpp over FFI, needs a C++/Bazel build), ledger forks such
//! as `cala-cel-interpreter` (minimal). No Rust CEL has cel-go's type checker or cost
//! estimator: `check/`, `literals.rs` and `cost.rs` add what CRD validation needs, and
//! `depth.rs` keeps cel-go's recursion limit (cel-rust recurses on the thread's stack).
//!
//! Not covered: the type checker's rare unknowns (`google.protobuf.*` names other than
//! `Duration` and `Timestamp`, and message literals of them, are accepted untyped), and
//! cel-go's cap of 100 reported issues; exact runtime costs (the per-call limit
//! and per-request budget are enforced on the cost model with the data's sizes, which
//! counts every loop iteration, where cel-go's tracker stops at a loop's short circuit);
//! the typed zero of `sum()` on an empty list a rule computes (int 0; lists as decoded
//! have theirs, `value/typed_empty.rs`); `string()` of a timestamp keeps no offset
//! (cel-rust's standard `string` overload formats in UTC, and an environment cannot
//! replace a standard overload); the Go-panic corners of set and map lists
//! (`value/set_list.rs`, `value/map_list.rs`); the authz library (its functions are
//! declared to the checker, but CRD rules have no authorizer to call them on).

mod check;
mod compile;
mod comprehensions;
mod cost;
mod crd;
pub(crate) mod depth;
mod environment;
pub(crate) mod escaping;
mod eval;
mod field_path;
mod format;
mod ip;
mod library;
mod literals;
mod maplist;
mod node;
mod program;
mod quantity;
mod rule;
mod semver;
mod url;
mod validator;
mod value;

pub use crd::{
    STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT, compile_errors,
    compile_errors_with,
};
pub use escaping::{escape, unescape};
pub use validator::Validator;

/// One issue of cel-go's checker or of its AST validators (`check.rs`, `literals.rs`):
/// where (expression id) and what.
pub(crate) struct Issue {
    pub id: u64,
    pub message: String,
}

#[cfg(test)]
mod tests;
