//! The node.k8s.io group's resources.
pub mod runtimeclasses;
