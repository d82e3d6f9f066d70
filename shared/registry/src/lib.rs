//! kas-registry: resources served from storage, after upstream's `pkg/registry/generic` and
//! `pkg/endpoints/handlers`. A resource is a `ResourceDescriptor` (data: names, scope,
//! verbs, subresources, columns) plus a `Strategy` (code: prepare, validate, canonicalize,
//! field sets); one generic `Store` and one set of REST handlers serve every resource,
//! built-in or custom. The OpenAPI documents (`/openapi/v2`, `/openapi/v3`) are generated
//! from the same descriptors and the schema messages they name.
//!
//! Depends on the storage trait, never on an implementation (etcd, the watch cache).

pub mod admission;
pub mod aggregated_discovery;
pub mod descriptor;
pub mod discovery;
pub mod error;
pub mod features;
pub mod meta;
pub mod openapi;
pub mod rest;
pub mod store;
pub mod strategy;
pub mod validation;

pub use descriptor::{
    ResourceDescriptor, ScaleSelector, ScaleSpec, Scope, Subresource, TableColumn, Verb,
};
pub use error::{Error, Result};
pub use strategy::Strategy;
