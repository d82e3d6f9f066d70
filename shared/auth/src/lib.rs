//! kas-auth: authentication and authorization policy, after upstream's
//! `k8s.io/apiserver/pkg/authentication` and `pkg/authorization`.
//!
//! Policy only: the tower layers that call these live in kas-filters. No hyper, no tokio
//! networking here.

pub mod authentication;
pub mod authorization;
pub mod error;
pub mod user;

pub use error::{Error, Result};
pub use user::UserInfo;
