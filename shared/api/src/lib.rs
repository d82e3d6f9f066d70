//! kas-api: upstream's API types at API level 1.33 (`k8s.io/api` and the meta/v1 types of
//! `k8s.io/apimachinery`) described as data, in kas-apimachinery's schema model. Each Go
//! struct is one [`Message`] static; each field carries its JSON name, protobuf number,
//! [`Kind`], `omitempty`, Go pointer, `patchStrategy`/`patchMergeKey` and `+listType`, as
//! upstream's struct tags and markers say. The protobuf codec, unknown-field detection,
//! OpenAPI documents and strategic merge patch all read these tables, so they must match
//! upstream's `generated.proto` and `types.go` exactly: the tag numbers are the wire format.
//!
//! Data only. Must depend on nothing but kas-apimachinery: no tokio, no hyper, no I/O.
//!
//! Modules follow upstream's packages: [`meta::v1`], [`meta::v1beta1`], [`core::v1`], [`autoscaling::v1`],
//! [`coordination::v1`], [`events::v1`]. Fields are listed in Go struct order, which is
//! the order Go writes JSON in; top-level types start with `kind` and `apiVersion` (tag 0,
//! JSON only: in protobuf they travel in the envelope).

pub use kas_apimachinery::schema::{Field, Kind, ListType, Message};

/// An `XxxList` message: the TypeMeta fields, `metadata` (a ListMeta) and `items`.
macro_rules! list {
    ($name:literal, $item:path, $what:literal) => {
        $crate::Message {
            name: $name,
            description: concat!("A list of ", $what, "."),
            fields: &[
                $crate::meta::v1::KIND,
                $crate::meta::v1::API_VERSION,
                $crate::meta::v1::LIST_METADATA,
                $crate::Field::new(
                    "items",
                    2,
                    $crate::Kind::Array(&$crate::Kind::Message(&$item)),
                )
                .always()
                .describe(concat!("The ", $what, ".")),
            ],
            required: &["items"],
            atomic: false,
        }
    };
}

pub mod autoscaling;
pub mod coordination;
pub mod core;
pub mod events;
pub mod meta;

mod registry;

pub use registry::{all, kind};

#[cfg(test)]
mod tests;
