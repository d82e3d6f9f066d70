//! `autoscaling` (`k8s.io/api/autoscaling`).

pub mod v1;
