//! The flags every role takes, flattened into each binary's command line.

use clap::Args;

use super::{
    AuditOptions, AuthenticationOptions, AuthorizationOptions, LoggingOptions,
    SecureServingOptions, ServerRunOptions, TracingOptions,
};
use crate::config::Config;
use crate::{Error, Result};

#[derive(Args, Clone, Debug)]
pub struct CommonOptions {
    #[command(flatten)]
    pub secure_serving: SecureServingOptions,
    #[command(flatten)]
    pub authentication: AuthenticationOptions,
    #[command(flatten)]
    pub authorization: AuthorizationOptions,
    #[command(flatten)]
    pub server_run: ServerRunOptions,
    #[command(flatten)]
    pub logging: LoggingOptions,
    #[command(flatten)]
    pub tracing: TracingOptions,
    #[command(flatten)]
    pub audit: AuditOptions,
}

impl CommonOptions {
    /// Every problem at once, as upstream's `Validate()` aggregates them.
    pub fn validate(&self, extra: Vec<String>) -> Result<()> {
        let mut errs = self.secure_serving.validate();
        errs.extend(self.authentication.validate());
        errs.extend(self.authorization.validate());
        errs.extend(self.server_run.validate());
        errs.extend(self.audit.validate());
        errs.extend(extra);
        if errs.is_empty() {
            Ok(())
        } else {
            Err(Error::InvalidOptions(errs))
        }
    }

    /// `anonymous_by_default`: whether the role accepts anonymous requests when
    /// `--anonymous-auth` is not given (the client-facing aggregator does; core and
    /// extensions accept only their peers, and anonymous health probes).
    /// Applies every option but authentication and `--authorization-mode`, which wait for
    /// what the role builds itself (see `run::Serving`).
    pub fn apply_to(&self, config: &mut Config) -> Result<()> {
        self.secure_serving
            .apply_to(config, &self.authentication.client_ca_files())?;
        self.server_run.apply_to(config);
        Ok(())
    }
}
