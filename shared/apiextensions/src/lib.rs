//! kas-apiextensions: the pure machinery of upstream's `k8s.io/apiextensions-apiserver`
//! over JSON values: CustomResourceDefinition defaulting and validation (`validation`,
//! upstream's `pkg/apis/apiextensions/validation`), the structural schema of a CRD version
//! and what it does to custom resources: pruning, defaulting, OpenAPI v3 validation
//! (`schema`, upstream's `pkg/apiserver/schema` and kube-openapi's validate), and CEL
//! `x-kubernetes-validations` (`cel`, upstream's `pkg/apiserver/schema/cel`).
//!
//! Must not depend on tokio, hyper or any I/O: pure functions with in-module tests.

pub mod cel;
pub mod schema;
pub mod validation;
