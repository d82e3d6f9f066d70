//! The webhook flags of kube-apiserver: `--authentication-token-webhook-*` (flattened into
//! [`super::AuthenticationOptions`]) and `--authorization-webhook-*` (flattened into
//! [`super::AuthorizationOptions`]), with upstream's defaults and validation messages.

use std::path::PathBuf;

use clap::Args;
use kas_auth::authentication::DynAuthenticator;
use kas_auth::authorization::{MODE_WEBHOOK, ModeAuthorizers};
use kas_webhook::generic::Backoff;

use super::GoDuration;

#[derive(Args, Clone, Debug)]
pub struct WebhookAuthenticationOptions {
    /// File with webhook configuration for token authentication in kubeconfig format. The
    /// API server will query the remote service to determine authentication for bearer
    /// tokens.
    #[arg(long = "authentication-token-webhook-config-file")]
    pub token_webhook_config_file: Option<PathBuf>,
    /// The API version of the authentication.k8s.io TokenReview to send to and expect from
    /// the webhook.
    #[arg(
        long = "authentication-token-webhook-version",
        default_value = "v1beta1"
    )]
    pub token_webhook_version: String,
    /// The duration to cache responses from the webhook token authenticator.
    #[arg(
        long = "authentication-token-webhook-cache-ttl",
        default_value = "2m0s"
    )]
    pub token_webhook_cache_ttl: GoDuration,
}

impl WebhookAuthenticationOptions {
    /// kube-apiserver's webhook token authenticator (`newWebhookTokenAuthenticator`) when
    /// a config file is given: it asks for `api_audiences`, remembers answers for the cache
    /// TTL, and goes last among the token authenticators (upstream's union order).
    pub fn token_authenticator(
        &self,
        api_audiences: Vec<String>,
    ) -> Result<Option<DynAuthenticator>, String> {
        let Some(file) = &self.token_webhook_config_file else {
            return Ok(None);
        };
        kas_webhook::token::new_cached(
            file,
            &self.token_webhook_version,
            self.token_webhook_cache_ttl.0,
            api_audiences,
            Backoff::default_retry(),
        )
        .map(Some)
        .map_err(|e| e.to_string())
    }
}

#[derive(Args, Clone, Debug)]
pub struct WebhookAuthorizationOptions {
    /// File with webhook configuration in kubeconfig format, used with
    /// --authorization-mode=Webhook. The API server will query the remote service to
    /// determine access on the API server's secure port.
    #[arg(long = "authorization-webhook-config-file")]
    pub webhook_config_file: Option<PathBuf>,
    /// The API version of the authorization.k8s.io SubjectAccessReview to send to and
    /// expect from the webhook.
    #[arg(long = "authorization-webhook-version", default_value = "v1beta1")]
    pub webhook_version: String,
    /// The duration to cache 'authorized' responses from the webhook authorizer.
    #[arg(
        long = "authorization-webhook-cache-authorized-ttl",
        default_value = "5m0s"
    )]
    pub webhook_cache_authorized_ttl: GoDuration,
    /// The duration to cache 'unauthorized' responses from the webhook authorizer.
    #[arg(
        long = "authorization-webhook-cache-unauthorized-ttl",
        default_value = "30s"
    )]
    pub webhook_cache_unauthorized_ttl: GoDuration,
}

impl WebhookAuthorizationOptions {
    /// Upstream's checks of the webhook flags against `--authorization-mode`.
    pub fn validate(&self, modes: &[String]) -> Vec<String> {
        let webhook_mode = modes.iter().any(|m| m == MODE_WEBHOOK);
        let mut errs = Vec::new();
        if webhook_mode && self.webhook_config_file.is_none() {
            errs.push(
                "authorization-mode Webhook's authorization config file not passed".to_owned(),
            );
        }
        if self.webhook_config_file.is_some() && !webhook_mode {
            errs.push(
                "cannot specify --authorization-webhook-config-file without mode Webhook"
                    .to_owned(),
            );
        }
        errs
    }

    /// The webhook authorizer and its (incomplete) rules, when `modes` has Webhook: the
    /// legacy flags' configuration (30 s timeout, no opinion on failure, a zero TTL does
    /// not cache).
    pub fn add_to(&self, modes: &[String], provided: &mut ModeAuthorizers) -> Result<(), String> {
        if !modes.iter().any(|m| m == MODE_WEBHOOK) {
            return Ok(());
        }
        let Some(file) = &self.webhook_config_file else {
            return Ok(());
        };
        let webhook = kas_webhook::authorizer::new_from_flags(
            file,
            &self.webhook_version,
            self.webhook_cache_authorized_ttl.0,
            self.webhook_cache_unauthorized_ttl.0,
            Backoff::default_retry(),
        )
        .map_err(|e| e.to_string())?;
        provided.webhook = Some(webhook.clone());
        provided.webhook_rules = Some(webhook);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// A role's whole command line: argument ids must be unique (`version` is clap's).
    #[derive(Parser)]
    #[command(version)]
    struct Role {
        #[command(flatten)]
        common: super::super::CommonOptions,
    }

    #[test]
    fn the_flags_fit_in_a_roles_command_line() {
        let role = Role::try_parse_from([
            "x",
            "--authorization-mode=RBAC,Webhook",
            "--authorization-webhook-config-file=/k",
            "--authentication-token-webhook-version=v1",
        ])
        .unwrap();
        assert_eq!(role.common.authorization.webhook.webhook_version, "v1beta1");
        assert_eq!(
            role.common.authentication.webhook.token_webhook_version,
            "v1"
        );
        assert!(role.common.authorization.validate().is_empty());
    }

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        authn: WebhookAuthenticationOptions,
        #[command(flatten)]
        authz: WebhookAuthorizationOptions,
    }

    fn modes(m: &[&str]) -> Vec<String> {
        m.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn defaults_are_upstreams() {
        let flags = Flags::try_parse_from(["x"]).unwrap();
        assert_eq!(flags.authn.token_webhook_version, "v1beta1");
        assert_eq!(flags.authn.token_webhook_cache_ttl.0.as_secs(), 120);
        assert_eq!(flags.authz.webhook_version, "v1beta1");
        assert_eq!(flags.authz.webhook_cache_authorized_ttl.0.as_secs(), 300);
        assert_eq!(flags.authz.webhook_cache_unauthorized_ttl.0.as_secs(), 30);
        assert!(
            flags.authn.token_webhook_config_file.is_none()
                && flags.authz.webhook_config_file.is_none()
        );
        assert!(
            flags
                .authn
                .token_authenticator(Vec::new())
                .unwrap()
                .is_none()
        );
        let flags = Flags::try_parse_from([
            "x",
            "--authentication-token-webhook-cache-ttl=10s",
            "--authorization-webhook-cache-unauthorized-ttl=0s",
            "--authorization-webhook-version=v1",
        ])
        .unwrap();
        assert_eq!(flags.authn.token_webhook_cache_ttl.0.as_secs(), 10);
        assert!(flags.authz.webhook_cache_unauthorized_ttl.0.is_zero());
        assert_eq!(flags.authz.webhook_version, "v1");
        assert!(
            Flags::try_parse_from(["x", "--authentication-token-webhook-cache-ttl=2"]).is_err()
        );
    }

    #[test]
    fn the_config_file_and_the_mode_go_together() {
        let flags = Flags::try_parse_from(["x"]).unwrap();
        assert_eq!(
            flags.authz.validate(&modes(&["RBAC", "Webhook"])),
            ["authorization-mode Webhook's authorization config file not passed"]
        );
        let flags = Flags::try_parse_from(["x", "--authorization-webhook-config-file=/k"]).unwrap();
        assert_eq!(
            flags.authz.validate(&modes(&["RBAC"])),
            ["cannot specify --authorization-webhook-config-file without mode Webhook"]
        );
        assert!(flags.authz.validate(&modes(&["Webhook"])).is_empty());
    }

    #[test]
    fn building_reports_the_loaders_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let flags = Flags::try_parse_from([
            "x".as_ref(),
            "--authorization-webhook-config-file".as_ref(),
            missing.as_os_str(),
        ])
        .unwrap();
        let mut provided = ModeAuthorizers::default();
        let err = flags
            .authz
            .add_to(&modes(&["Webhook"]), &mut provided)
            .unwrap_err();
        assert_eq!(
            err,
            format!("stat {}: no such file or directory", missing.display())
        );
        let config = dir.path().join("kubeconfig");
        std::fs::write(
            &config,
            "clusters:\n- cluster:\n    server: https://127.0.0.1:1/\n",
        )
        .unwrap();
        let flags = Flags::try_parse_from([
            "x".as_ref(),
            "--authorization-webhook-version=v2".as_ref(),
            "--authorization-webhook-config-file".as_ref(),
            config.as_os_str(),
            "--authentication-token-webhook-config-file".as_ref(),
            config.as_os_str(),
        ])
        .unwrap();
        assert_eq!(
            flags
                .authz
                .add_to(&modes(&["Webhook"]), &mut provided)
                .unwrap_err(),
            "unsupported webhook authorizer version \"v2\", supported versions are \"v1\", \"v1beta1\""
        );
        assert!(
            flags
                .authn
                .token_authenticator(Vec::new())
                .unwrap()
                .is_some()
        );
        flags
            .authz
            .add_to(&modes(&["RBAC"]), &mut provided)
            .unwrap();
        assert!(provided.webhook.is_none());
    }
}
