//! The apps/v1 workloads, after upstream's `pkg/registry/apps` and
//! `pkg/apis/apps/validation`: each resource a descriptor and a strategy over the shared
//! pod template (`crate::podspec`).

pub mod common;
pub mod controllerrevisions;
pub mod daemonsets;
pub mod deployments;
pub mod replicasets;
pub mod statefulsets;
