//! Flags, one clap `XxxOptions` per concern, named like upstream's. Each has `validate()`
//! (all problems at once) and `apply_to(&mut Config)`. The etcd flags are not here: they
//! come with kas-storage-etcd, and a role hands their health check to its `Config`.

mod audit;
mod authentication;
mod authorization;
mod common;
mod duration;
mod logging;
mod oidc;
mod oidc_reload;
mod server_run;
mod service_account;
mod serving;
mod webhook;

pub use audit::{Audit, AuditOptions};
pub use authentication::AuthenticationOptions;
pub use authorization::AuthorizationOptions;
pub use common::CommonOptions;
pub use duration::GoDuration;
pub use logging::{LoggingFormat, LoggingOptions, TracingConfiguration, TracingOptions};
pub use oidc::OidcOptions;
pub use server_run::ServerRunOptions;
pub use service_account::{GoDurationFlag, ServiceAccountOptions};
pub use serving::SecureServingOptions;
pub use webhook::{WebhookAuthenticationOptions, WebhookAuthorizationOptions};
