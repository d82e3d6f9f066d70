//! Flags, one clap `XxxOptions` per concern, named like upstream's. Each has `validate()`
//! (all problems at once) and `apply_to(&mut Config)`.

mod authentication;
mod authorization;
mod common;
mod duration;
mod etcd;
mod logging;
mod server_run;
mod serving;

pub use authentication::AuthenticationOptions;
pub use authorization::AuthorizationOptions;
pub use common::CommonOptions;
pub use duration::GoDuration;
pub use etcd::EtcdOptions;
pub use logging::{LoggingFormat, LoggingOptions, TracingConfiguration, TracingOptions};
pub use server_run::ServerRunOptions;
pub use serving::SecureServingOptions;
