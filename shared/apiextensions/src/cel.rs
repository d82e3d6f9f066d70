//! CEL `x-kubernetes-validations` for custom resources, after upstream's
//! `pkg/apiserver/schema/cel` (compilation.go, validation.go, values) over the raw
//! `openAPIV3Schema` JSON of a CRD version.
//!
//! The CEL implementation is cel-rust's `cel` crate (0.15). Compared: `cel` (maintained,
//! ANTLR grammar shared with cel-go so parse errors read alike, macros `has`/`all`/
//! `exists`/`exists_one`/`map`/`filter`, optional types, strings extension, custom
//! overloads and opaque types); `cel-interpreter` (its unmaintained predecessor);
//! `cel-cxx` (cel-cpp through FFI: needs a C++/Bazel build, not pure Rust); ledger forks
//! (`cala-cel-interpreter`, minimal). None has cel-go's type checker or cost estimator,
//! so `check.rs` and `cost.rs` add the parts CRD validation needs.

mod check;
mod compile;
mod cost;
mod crd;
mod escaping;
mod eval;
mod field_path;
mod ip;
mod library;
mod maplist;
mod node;
mod quantity;
mod rule;
mod url;
mod validator;
mod value;

pub use crd::{STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT, compile_errors};
pub use escaping::{escape, unescape};
pub use validator::Validator;

#[cfg(test)]
mod tests;
