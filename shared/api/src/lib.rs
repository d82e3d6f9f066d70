//! kas-api: upstream's API types at API level 1.33 (`k8s.io/api`, the meta/v1 types of
//! `k8s.io/apimachinery`, and `k8s.io/kube-aggregator`'s apiregistration) described as
//! data, in kas-apimachinery's schema model. Each Go struct is one [`Message`] static;
//! each field carries its JSON name, protobuf number, [`Kind`], `omitempty`, Go pointer,
//! `patchStrategy`/`patchMergeKey`, `+listType` and description. The protobuf codec,
//! unknown-field detection, OpenAPI documents, field managers and strategic merge patch all
//! read these tables.
//!
//! The tables are **generated** (`src/generated/`, by `cargo run -p kas-api-gen`) from
//! k8s-pb (Kubernetes 1.33's `generated.proto`: numbers, order, markers) and k8s-openapi
//! (`v1_33`: JSON names, descriptions, required fields), with the generator's reviewed
//! overlay for Go's pointers and `omitempty`. Nothing here is typed by hand but the
//! registry of kinds ([`kind`]).
//!
//! Data only. Must depend on nothing but kas-apimachinery: no tokio, no hyper, no I/O.
//!
//! Modules follow upstream's packages: `meta::v1`, `core::v1`, `apps::v1`, ... Fields are
//! listed in Go struct order, which is the order Go writes JSON in; top-level types start
//! with `kind` and `apiVersion` (tag 0, JSON only: in protobuf they travel in the
//! envelope).

pub use kas_apimachinery::schema::{Field, Kind, ListType, Message};

#[rustfmt::skip]
mod generated;

pub use generated::kinds::{KINDS, KindEntry};
pub use generated::{
    admissionregistration, apiextensions, apiregistration, apps, authentication, authorization,
    autoscaling, batch, certificates, coordination, core, discovery, events, flowcontrol, meta,
    networking, node, policy, rbac, scheduling, storage,
};

mod registry;

pub use registry::{all, kind};

#[cfg(test)]
mod tests;
