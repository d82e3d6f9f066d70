//! `events.k8s.io` (`k8s.io/api/events`).

pub mod v1;
