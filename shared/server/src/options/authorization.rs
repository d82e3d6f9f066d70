//! `--authorization-mode` with the `--authorization-webhook-*` flags, or
//! `--authorization-config` (kube-apiserver's `BuiltInAuthorizationOptions`): the file is
//! upstream's structured `AuthorizationConfiguration`, exclusive with the other flags,
//! validated at start and reloaded while the server runs (kas-auth's
//! `authorization::config`).
//!
//! Upstream tells whether a legacy flag was given with pflag's `Changed`; clap tells it by
//! the arguments' value source, so the options implement `Args` over their derived flags.

use std::path::PathBuf;
use std::sync::Arc;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, Command, FromArgMatches};
use kas_apimachinery::golang::strconv::quote;
use kas_auth::authorization::config::reload::RELOAD_INTERVAL;
use kas_auth::authorization::config::validation::AUTHORIZATION_MODE_CHOICES;
use kas_auth::authorization::config::{
    AuthorizationConfiguration, ReloadableAuthorizer, WebhookFactory, load_and_validate_data,
};
use kas_auth::authorization::{DynAuthorizer, DynRuleResolver, ModeAuthorizers};
use kas_webhook::generic::Backoff;

use crate::config::Config;
use crate::{Error, Result};

/// The flags, as clap derives them.
#[derive(Args, Clone, Debug)]
struct Flags {
    /// Ordered list of plug-ins to do authorization on secure port. Defaults to AlwaysAllow
    /// if --authorization-config is not used. Comma-delimited list of:
    /// AlwaysAllow,AlwaysDeny,Node,RBAC,Webhook.
    #[arg(long, value_delimiter = ',', default_value = "AlwaysAllow")]
    authorization_mode: Vec<String>,
    #[command(flatten)]
    webhook: super::WebhookAuthorizationOptions,
    /// File with Authorization Configuration to configure the authorizer chain. This flag
    /// is mutually exclusive with the other --authorization-mode and
    /// --authorization-webhook-* flags.
    #[arg(long = "authorization-config")]
    authorization_config: Option<PathBuf>,
}

/// The argument ids of upstream's legacy flags (`AreLegacyFlagsSet`).
const LEGACY_FLAG_IDS: &[&str] = &[
    "authorization_mode",
    "webhook_config_file",
    "webhook_version",
    "webhook_cache_authorized_ttl",
    "webhook_cache_unauthorized_ttl",
];

#[derive(Clone, Debug)]
pub struct AuthorizationOptions {
    /// `--authorization-mode`; `AlwaysAllow` when not given. Ignored with
    /// `--authorization-config` (see [`AuthorizationOptions::modes`]).
    pub authorization_mode: Vec<String>,
    pub webhook: super::WebhookAuthorizationOptions,
    /// `--authorization-config`.
    pub authorization_config: Option<PathBuf>,
    /// Whether `--authorization-mode` or an `--authorization-webhook-*` flag was given.
    pub legacy_flags_set: bool,
}

impl FromArgMatches for AuthorizationOptions {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let flags = Flags::from_arg_matches(matches)?;
        let legacy_flags_set = LEGACY_FLAG_IDS.iter().any(|id| {
            matches!(
                matches.value_source(id),
                Some(ValueSource::CommandLine | ValueSource::EnvVariable)
            )
        });
        Ok(AuthorizationOptions {
            authorization_mode: flags.authorization_mode,
            webhook: flags.webhook,
            authorization_config: flags.authorization_config,
            legacy_flags_set,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = AuthorizationOptions::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for AuthorizationOptions {
    fn augment_args(cmd: Command) -> Command {
        Flags::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Flags::augment_args_for_update(cmd)
    }
}

impl AuthorizationOptions {
    pub fn validate(&self) -> Vec<String> {
        if let Some(file) = &self.authorization_config {
            if self.legacy_flags_set {
                return vec![
                    "--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined"
                        .to_owned(),
                ];
            }
            return match load(file) {
                Ok(_) => Vec::new(),
                Err(e) => vec![e],
            };
        }
        self.validate_legacy_flags()
    }

    /// Upstream's checks of `--authorization-mode` and the webhook flags.
    fn validate_legacy_flags(&self) -> Vec<String> {
        let modes = &self.authorization_mode;
        let mut errs = Vec::new();
        // pflag reads `--authorization-mode=` as no modes.
        if modes.iter().all(String::is_empty) {
            errs.push("at least one authorization-mode must be passed".to_owned());
            return errs;
        }
        for mode in modes {
            if !AUTHORIZATION_MODE_CHOICES.contains(&mode.as_str()) {
                errs.push(format!(
                    "authorization-mode {} is not a valid mode",
                    quote(mode)
                ));
            }
            if mode == "ABAC" {
                // No --authorization-policy-file here.
                errs.push(
                    "authorization-mode ABAC's authorization policy file not passed".to_owned(),
                );
            }
        }
        errs.extend(self.webhook.validate(modes));
        let distinct: std::collections::BTreeSet<&String> = modes.iter().collect();
        if distinct.len() != modes.len() {
            let quoted: Vec<String> = modes.iter().map(|m| quote(m)).collect();
            errs.push(format!(
                "authorization-mode [{}] has mode specified more than once",
                quoted.join(" ")
            ));
        }
        errs
    }

    /// The modes whose authorizers a role builds itself (RBAC's, Node's): the types of
    /// `--authorization-config` when given, else `--authorization-mode`.
    pub fn modes(&self) -> Result<Vec<String>, String> {
        let Some(file) = &self.authorization_config else {
            return Ok(self.authorization_mode.clone());
        };
        let (_, config) = load(file)?;
        let mut modes: Vec<String> = Vec::new();
        for a in config.authorizers {
            if !modes.contains(&a.authorizer_type) {
                modes.push(a.authorizer_type);
            }
        }
        Ok(modes)
    }

    /// The authorizer and rule resolver of the flags or the configuration file, with what
    /// the role `provided`. From a file, the chain is reloaded when the file changes (call
    /// within the runtime); from the flags, a webhook the role did not build is built here.
    pub fn authorizer(
        &self,
        provided: &ModeAuthorizers,
    ) -> Result<(DynAuthorizer, DynRuleResolver)> {
        if let Some(file) = &self.authorization_config {
            let reloadable = structured(file, provided)?;
            reloadable.run_reload(RELOAD_INTERVAL);
            return Ok((reloadable.clone(), reloadable));
        }
        let mut provided = provided.clone();
        if provided.webhook.is_none() {
            self.webhook
                .add_to(&self.authorization_mode, &mut provided)
                .map_err(kas_auth::Error::Webhook)?;
        }
        let authorizer = kas_auth::authorization::build(&self.authorization_mode, &provided)?;
        let rules =
            kas_auth::authorization::build_rule_resolver(&self.authorization_mode, &provided);
        Ok((authorizer, rules))
    }

    /// The authorizer of the flags or the configuration file (see [`Self::authorizer`]).
    pub fn apply_to(&self, config: &mut Config, provided: &ModeAuthorizers) -> Result<()> {
        config.authorizer = Some(self.authorizer(provided)?.0);
        Ok(())
    }
}

/// kube-apiserver's `LoadAndValidateFile` with no required types: the file's bytes and
/// its configuration.
fn load(file: &std::path::Path) -> Result<(Vec<u8>, AuthorizationConfiguration), String> {
    let data = kas_auth::authorization::config::read_file(file)?;
    let config = load_and_validate_data(&data, &[])?;
    Ok((data, config))
}

/// The chain of the configuration file, its webhooks built by kas-webhook.
fn structured(
    file: &std::path::Path,
    provided: &ModeAuthorizers,
) -> Result<Arc<ReloadableAuthorizer>> {
    let invalid = |message: String| Error::InvalidFile {
        path: file.to_owned(),
        message,
    };
    let (data, config) = load(file).map_err(invalid)?;
    ReloadableAuthorizer::new(file.to_owned(), data, config, provided.clone(), webhooks())
        .map_err(invalid)
}

/// kube-apiserver's webhooks of a configuration, with the flags' retry backoff.
fn webhooks() -> WebhookFactory {
    Arc::new(|a| {
        let w = kas_webhook::authorizer::new_from_config(a, Backoff::default_retry())
            .map_err(|e| e.to_string())?;
        Ok((w.clone() as DynAuthorizer, w as DynRuleResolver))
    })
}

#[cfg(test)]
#[path = "authorization_config_tests.rs"]
mod tests;
