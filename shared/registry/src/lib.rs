//! kas-registry: resources served from storage, after upstream's `pkg/registry/generic` and
//! `pkg/registry/rest`. A resource is a `ResourceDescriptor` (data: names, scope, verbs,
//! subresources, columns) plus a `Strategy` (code: prepare, validate, canonicalize, field
//! sets); one generic `Store` serves every resource, built-in or custom, from the storage
//! trait: create, get, list, watch, update, patch, apply and delete with upstream's
//! `BeforeCreate`/`BeforeUpdate` rules, admission and field managers.
//!
//! Depends on the storage trait, never on an implementation (etcd, the watch cache), and on
//! nothing of the HTTP side: requests, negotiation and answers are kas-endpoints'.

pub mod admission;
pub mod descriptor;
pub mod error;
pub mod features;
pub mod hooks;
pub mod meta;
pub mod rest;
pub mod store;
pub mod strategy;
pub mod validation;

pub use descriptor::{
    ConnectMethod, ConnectSpec, ResourceDescriptor, ScaleSelector, ScaleSpec, Scope, Subresource,
    SubresourceHandler, SubresourceKind, TableColumn, Verb,
};
pub use error::{Error, Result};
pub use strategy::Strategy;
