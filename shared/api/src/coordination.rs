//! `coordination.k8s.io` (`k8s.io/api/coordination`).

pub mod v1;
