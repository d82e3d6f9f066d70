//! The discovery group's resources (being written).
pub mod endpointslices;
