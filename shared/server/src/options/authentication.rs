//! `--client-ca-file`, `--token-auth-file`, `--anonymous-auth` and the front-proxy
//! `--requestheader-*` flags.

use std::path::PathBuf;

use clap::Args;
use kas_auth::authentication::{
    AnonymousConfig, AuthenticationConfig, DynAuthenticator, RequestHeaderConfig,
};

use crate::Result;
use crate::config::Config;

/// Paths a delegated role answers anonymously even though it refuses anonymous requests
/// otherwise: health probes from kubelets and load balancers carry no credentials. This is
/// upstream's anonymous authenticator restricted by conditions (1.32+ structured config).
pub const HEALTH_PATHS: &[&str] = &["/healthz", "/livez", "/readyz", "/version"];

#[derive(Args, Clone, Debug)]
pub struct AuthenticationOptions {
    /// If set, any request presenting a client certificate signed by one of the authorities
    /// in the client-ca-file is authenticated with an identity corresponding to the
    /// CommonName of the client certificate.
    #[arg(long)]
    pub client_ca_file: Option<PathBuf>,
    /// If set, the file that will be used to secure the secure port of the API server via
    /// token authentication.
    #[arg(long)]
    pub token_auth_file: Option<PathBuf>,
    /// Enable to allow secrets of type 'bootstrap.kubernetes.io/token' in the 'kube-system'
    /// namespace to be used for TLS bootstrapping authentication.
    #[arg(long, num_args = 0..=1, default_value = "false", default_missing_value = "true", value_parser = kas_apimachinery::golang::strconv::parse_bool)]
    pub enable_bootstrap_token_auth: bool,
    /// Enables anonymous requests to the secure port of the API server. Requests that are
    /// not rejected by another authentication method are treated as anonymous requests.
    /// Defaults to true on the aggregator; core and extensions refuse anonymous requests
    /// except on the health paths.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_parser = kas_apimachinery::golang::strconv::parse_bool)]
    pub anonymous_auth: Option<bool>,
    /// Root certificate bundle to use to verify client certificates on incoming requests
    /// before trusting usernames in headers specified by --requestheader-username-headers.
    #[arg(long)]
    pub requestheader_client_ca_file: Option<PathBuf>,
    /// List of client certificate common names to allow to provide usernames in headers
    /// specified by --requestheader-username-headers. If empty, any client certificate
    /// validated by the authorities in --requestheader-client-ca-file is allowed.
    #[arg(long, value_delimiter = ',')]
    pub requestheader_allowed_names: Vec<String>,
    /// List of request headers to inspect for usernames. X-Remote-User is common.
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-User")]
    pub requestheader_username_headers: Vec<String>,
    /// List of request headers to inspect for UIDs. X-Remote-Uid is suggested.
    #[arg(long, value_delimiter = ',')]
    pub requestheader_uid_headers: Vec<String>,
    /// List of request headers to inspect for groups. X-Remote-Group is suggested.
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-Group")]
    pub requestheader_group_headers: Vec<String>,
    /// List of request header prefixes to inspect. X-Remote-Extra- is suggested.
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-Extra-")]
    pub requestheader_extra_headers_prefix: Vec<String>,
    #[command(flatten)]
    pub webhook: super::WebhookAuthenticationOptions,
    #[command(flatten)]
    pub oidc: super::OidcOptions,
}

impl AuthenticationOptions {
    pub fn validate(&self) -> Vec<String> {
        let mut errs = Vec::new();
        if self.requestheader_client_ca_file.is_none()
            && !self.requestheader_allowed_names.is_empty()
        {
            errs.push(
                "--requestheader-allowed-names requires --requestheader-client-ca-file".to_owned(),
            );
        }
        errs.extend(self.oidc.validate(self.anonymous_auth.is_some()));
        errs
    }

    /// The CA bundles the TLS layer must accept client certificates from.
    pub fn client_ca_files(&self) -> Vec<PathBuf> {
        self.client_ca_file
            .iter()
            .chain(self.requestheader_client_ca_file.iter())
            .cloned()
            .collect()
    }

    pub fn to_config(
        &self,
        anonymous_by_default: bool,
        token_authenticators: Vec<DynAuthenticator>,
    ) -> AuthenticationConfig {
        let anonymous = match self.anonymous_auth {
            Some(true) => AnonymousConfig::Enabled,
            Some(false) => AnonymousConfig::Disabled,
            None if anonymous_by_default => AnonymousConfig::Enabled,
            None => AnonymousConfig::Paths(HEALTH_PATHS.iter().map(|p| (*p).to_owned()).collect()),
        };
        // `--authentication-config`'s anonymous section replaces the flag.
        let anonymous = self.oidc.anonymous().unwrap_or(anonymous);
        AuthenticationConfig {
            client_ca_file: self.client_ca_file.clone(),
            token_auth_file: self.token_auth_file.clone(),
            request_header: self.requestheader_client_ca_file.as_ref().map(|ca| {
                RequestHeaderConfig {
                    client_ca_file: ca.clone(),
                    allowed_names: self.requestheader_allowed_names.clone(),
                    username_headers: self.requestheader_username_headers.clone(),
                    uid_headers: self.requestheader_uid_headers.clone(),
                    group_headers: self.requestheader_group_headers.clone(),
                    extra_header_prefixes: self.requestheader_extra_headers_prefix.clone(),
                }
            }),
            anonymous,
            token_authenticators,
        }
    }

    /// Builds the authenticator, with the role's own bearer-token authenticators.
    pub fn apply_to(
        &self,
        config: &mut Config,
        anonymous_by_default: bool,
        token_authenticators: Vec<DynAuthenticator>,
    ) -> Result<()> {
        config.authenticator = Some(kas_auth::authentication::build(
            &self.to_config(anonymous_by_default, token_authenticators),
        )?);
        config.request_header = self
            .requestheader_client_ca_file
            .clone()
            .map(|ca| (ca, self.requestheader_allowed_names.clone()));
        Ok(())
    }
}
