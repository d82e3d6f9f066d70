//! `--authorization-mode`.

use clap::Args;
use kas_auth::authorization::ModeAuthorizers;

use crate::Result;
use crate::config::Config;

#[derive(Args, Clone, Debug)]
pub struct AuthorizationOptions {
    /// Ordered list of plug-ins to do authorization on secure port. Comma-delimited list of:
    /// AlwaysAllow,AlwaysDeny,Node,RBAC,Webhook.
    #[arg(long, value_delimiter = ',', default_value = "AlwaysAllow")]
    pub authorization_mode: Vec<String>,
    #[command(flatten)]
    pub webhook: super::WebhookAuthorizationOptions,
}

impl AuthorizationOptions {
    pub fn validate(&self) -> Vec<String> {
        let mut errs = self.webhook.validate(&self.authorization_mode);
        let mut seen = std::collections::BTreeSet::new();
        for mode in &self.authorization_mode {
            if !seen.insert(mode) {
                errs.push(format!(
                    "authorization-mode {mode:?} has mode specified more than once"
                ));
            }
        }
        errs
    }

    /// The authorizer of the modes, with what the role `provided`; a role that did not build
    /// the webhook mode's authorizer gets it from the webhook flags here.
    pub fn apply_to(&self, config: &mut Config, provided: &ModeAuthorizers) -> Result<()> {
        let mut provided = provided.clone();
        if provided.webhook.is_none() {
            self.webhook
                .add_to(&self.authorization_mode, &mut provided)
                .map_err(kas_auth::Error::Webhook)?;
        }
        config.authorizer = Some(kas_auth::authorization::build(
            &self.authorization_mode,
            &provided,
        )?);
        Ok(())
    }
}
