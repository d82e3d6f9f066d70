//! The syntax `resource.ParseQuantity` accepts, checked where Go would parse a Quantity:
//! decoding one from JSON or from protobuf. The one home of quantities is
//! [`crate::resource`].

pub use crate::resource::{ERR_FORMAT_WRONG, ERR_NUMERIC, ERR_SUFFIX, check};
