//! The scheduling group's resources (being written).
pub mod priorityclasses;
