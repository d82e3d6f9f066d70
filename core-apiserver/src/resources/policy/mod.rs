//! The policy group's resources.
pub mod poddisruptionbudgets;
