//! The core group, `""` (`k8s.io/api/core`).

pub mod v1;
