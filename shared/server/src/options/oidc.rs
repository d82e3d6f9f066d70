//! kube-apiserver's OIDC flags (`--oidc-*`) and `--authentication-config`
//! (`BuiltInAuthenticationOptions`' JWT and structured-configuration parts): the
//! configuration of kas-auth's JWT authenticators, one per issuer, reaching their
//! providers through kas-webhook's HTTPS client.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use kas_auth::authentication::oidc::config::{
    AnonymousAuthConfig, AuthenticationConfiguration, ClaimMappings, ClaimValidationRule, Issuer,
    JwtAuthenticator, PrefixedClaimOrExpression,
};
use kas_auth::authentication::oidc::{
    ALL_VALID_SIGNING_ALGORITHMS, OidcAuthenticator, OidcOptions as AuthenticatorOptions,
    system_clock, validate_authentication_configuration,
};
use kas_auth::authentication::{AnonymousConfig, DynAuthenticator};

use super::oidc_reload::ReloadableJwt;

#[derive(Args, Clone, Debug, Default)]
pub struct OidcOptions {
    /// The URL of the OpenID issuer, only HTTPS scheme will be accepted. If set, it will be
    /// used to verify the OIDC JSON Web Token (JWT).
    #[arg(long = "oidc-issuer-url")]
    pub issuer_url: Option<String>,
    /// The client ID for the OpenID Connect client, must be set if oidc-issuer-url is set.
    #[arg(long = "oidc-client-id")]
    pub client_id: Option<String>,
    /// If set, the OpenID server's certificate will be verified by one of the authorities in
    /// the oidc-ca-file, otherwise the host's root CA set will be used.
    #[arg(long = "oidc-ca-file")]
    pub ca_file: Option<PathBuf>,
    /// The OpenID claim to use as the user name. Note that claims other than the default
    /// ('sub') is not guaranteed to be unique and immutable. [default: sub]
    #[arg(long = "oidc-username-claim")]
    pub username_claim: Option<String>,
    /// If provided, all usernames will be prefixed with this value. If not provided,
    /// username claims other than 'email' are prefixed by the issuer URL to avoid clashes.
    /// To skip any prefixing, provide the value '-'.
    #[arg(long = "oidc-username-prefix")]
    pub username_prefix: Option<String>,
    /// If provided, the name of a custom OpenID Connect claim for specifying user groups.
    /// The claim value is expected to be a string or array of strings.
    #[arg(long = "oidc-groups-claim")]
    pub groups_claim: Option<String>,
    /// If provided, all groups will be prefixed with this value to prevent conflicts with
    /// other authentication strategies.
    #[arg(long = "oidc-groups-prefix")]
    pub groups_prefix: Option<String>,
    /// A key=value pair that describes a required claim in the ID Token. If set, the claim
    /// is verified to be present in the ID Token with a matching value. Repeat this flag to
    /// specify multiple claims.
    #[arg(long = "oidc-required-claim", value_parser = parse_pair)]
    pub required_claims: Vec<(String, String)>,
    /// Comma-separated list of allowed JOSE asymmetric signing algorithms. JWTs with a
    /// supported 'alg' header values are: RS256, RS384, RS512, ES256, ES384, ES512, PS256,
    /// PS384, PS512. [default: RS256]
    #[arg(long = "oidc-signing-algs", value_delimiter = ',')]
    pub signing_algs: Option<Vec<String>>,
    /// File with Authentication Configuration to configure the JWT Token authenticator or
    /// the anonymous authenticator. This flag is mutually exclusive with the --oidc-* flags
    /// if the file configures the JWT Token authenticator. This flag is mutually exclusive
    /// with --anonymous-auth if the file configures the Anonymous authenticator.
    #[arg(long = "authentication-config")]
    pub authentication_config: Option<PathBuf>,
}

/// cliflag's `MapStringStringNoSplit`: one `key=value` per flag.
fn parse_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) => Ok((k.trim().to_owned(), v.trim().to_owned())),
        None => Err(format!("malformed pair, expect string=string, got {s}")),
    }
}

/// Go's `os.ReadFile` error.
fn read(path: &std::path::Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_owned(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
            _ => e.to_string(),
        };
        format!("open {}: {why}", path.display())
    })
}

impl OidcOptions {
    /// Whether any `--oidc-*` flag was given (upstream's `FlagsSet`).
    fn flags_set(&self) -> bool {
        self.issuer_url.is_some()
            || self.client_id.is_some()
            || self.ca_file.is_some()
            || self.username_claim.is_some()
            || self.username_prefix.is_some()
            || self.groups_claim.is_some()
            || self.groups_prefix.is_some()
            || !self.required_claims.is_empty()
            || self.signing_algs.is_some()
    }

    /// Upstream's `validateOIDCOptions`, then the configuration as
    /// `ToAuthenticationConfig` builds and validates it. `anonymous_flag_set`: whether
    /// `--anonymous-auth` was given.
    pub fn validate(&self, anonymous_flag_set: bool) -> Vec<String> {
        let mut errs = Vec::new();
        if self.authentication_config.is_none() {
            if self.flags_set()
                && (self.issuer_url.as_deref().unwrap_or_default().is_empty()
                    || self.client_id.as_deref().unwrap_or_default().is_empty())
            {
                errs.push(
                    "oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set"
                        .to_owned(),
                );
            }
        } else if self.flags_set() {
            errs.push(
                "authentication-config file and oidc-* flags are mutually exclusive".to_owned(),
            );
        }
        if !errs.is_empty() {
            return errs;
        }
        let config = match self.configuration() {
            Ok(c) => c,
            Err(e) => return vec![e],
        };
        if config.anonymous.is_some() && anonymous_flag_set {
            return vec!["anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file".to_owned()];
        }
        let field_errs = validate_authentication_configuration(&config, &[]);
        if let Some(msg) = kas_apimachinery::validation::field::aggregate_message(&field_errs) {
            errs.push(format!("invalid authentication configuration: {msg}"));
        }
        if let Some(alg) = self
            .signing_algs()
            .iter()
            .find(|a| !ALL_VALID_SIGNING_ALGORITHMS.contains(&a.as_str()))
        {
            errs.push(format!(
                "oidc: unsupported signing alg: {}",
                kas_apimachinery::golang::strconv::quote(alg)
            ));
        }
        errs
    }

    /// The algorithms tokens may be signed with: every valid one with a configuration
    /// file, else `--oidc-signing-algs`.
    fn signing_algs(&self) -> Vec<String> {
        if self.authentication_config.is_some() {
            return ALL_VALID_SIGNING_ALGORITHMS
                .iter()
                .map(|s| (*s).to_owned())
                .collect();
        }
        self.signing_algs
            .clone()
            .unwrap_or_else(|| vec!["RS256".to_owned()])
    }

    /// The structured configuration: the file's, or the one the `--oidc-*` flags make.
    pub fn configuration(&self) -> Result<AuthenticationConfiguration, String> {
        if let Some(path) = &self.authentication_config {
            return load(path).map_err(|e| {
                format!(
                    "failed to load authentication configuration from file {}: {e}",
                    kas_apimachinery::golang::strconv::quote(&path.display().to_string())
                )
            });
        }
        let (Some(issuer), Some(client_id)) = (&self.issuer_url, &self.client_id) else {
            return Ok(AuthenticationConfiguration::default());
        };
        if issuer.is_empty() || client_id.is_empty() {
            return Ok(AuthenticationConfiguration::default());
        }
        let claim = self
            .username_claim
            .clone()
            .unwrap_or_else(|| "sub".to_owned());
        let prefix = match self.username_prefix.as_deref().unwrap_or_default() {
            // Legacy flag behavior: claims other than email are prefixed by the issuer.
            "" if claim != "email" => format!("{issuer}#"),
            "-" => String::new(),
            p => p.to_owned(),
        };
        let mut jwt = JwtAuthenticator {
            issuer: Issuer {
                url: issuer.clone(),
                audiences: vec![client_id.clone()],
                ..Issuer::default()
            },
            claim_mappings: ClaimMappings {
                username: PrefixedClaimOrExpression {
                    claim,
                    prefix: Some(prefix),
                    expression: String::new(),
                },
                ..ClaimMappings::default()
            },
            ..JwtAuthenticator::default()
        };
        if let Some(groups) = self.groups_claim.as_ref().filter(|g| !g.is_empty()) {
            jwt.claim_mappings.groups = PrefixedClaimOrExpression {
                claim: groups.clone(),
                prefix: Some(self.groups_prefix.clone().unwrap_or_default()),
                expression: String::new(),
            };
        }
        if let Some(ca) = &self.ca_file {
            let pem = read(ca)?;
            jwt.issuer.certificate_authority = String::from_utf8_lossy(&pem).into_owned();
        }
        // A map upstream: the last value of a claim wins.
        let mut required: Vec<(String, String)> = Vec::new();
        for (k, v) in &self.required_claims {
            required.retain(|(seen, _)| seen != k);
            required.push((k.clone(), v.clone()));
        }
        jwt.claim_validation_rules = required
            .into_iter()
            .map(|(claim, required_value)| ClaimValidationRule {
                claim,
                required_value,
                ..ClaimValidationRule::default()
            })
            .collect();
        Ok(AuthenticationConfiguration {
            jwt: vec![jwt],
            ..AuthenticationConfiguration::default()
        })
    }

    /// The configuration file's `anonymous` section, which replaces `--anonymous-auth`.
    pub fn anonymous(&self) -> Option<AnonymousConfig> {
        self.authentication_config.as_ref()?;
        let AnonymousAuthConfig {
            enabled,
            conditions,
        } = self.configuration().ok()?.anonymous?;
        Some(match (enabled, conditions.is_empty()) {
            (false, _) => AnonymousConfig::Disabled,
            (true, true) => AnonymousConfig::Enabled,
            (true, false) => {
                AnonymousConfig::Paths(conditions.into_iter().map(|c| c.path).collect())
            }
        })
    }

    /// One JWT authenticator per configured issuer, each discovering its provider in the
    /// background (call within the runtime). `disallowed_issuers`: the service-account
    /// issuers.
    pub fn token_authenticators(
        &self,
        disallowed_issuers: &[String],
    ) -> Result<Vec<DynAuthenticator>, String> {
        if self.authentication_config.is_some() {
            // One union of the file's authenticators, replaced when the file changes.
            let reloadable = ReloadableJwt::new(self, disallowed_issuers)?;
            reloadable.run_reload();
            return Ok(vec![reloadable]);
        }
        // The flags' authenticator; its initializing task runs on, detached.
        let (authenticators, _tasks) = self.build_jwt(self.configuration()?, disallowed_issuers)?;
        Ok(authenticators)
    }

    /// The JWT authenticators of `config`, each initializing (discovering its provider) in
    /// the background, and those tasks.
    pub(super) fn build_jwt(
        &self,
        config: AuthenticationConfiguration,
        disallowed_issuers: &[String],
    ) -> Result<(Vec<DynAuthenticator>, Vec<tokio::task::JoinHandle<()>>), String> {
        let mut authenticators: Vec<DynAuthenticator> = Vec::new();
        let mut tasks = Vec::new();
        for jwt in config.jwt {
            let client = kas_webhook::oidc::OidcClient::new(&jwt.issuer.certificate_authority)
                .map_err(|e| format!("oidc: {e}"))?;
            let authenticator = OidcAuthenticator::new(AuthenticatorOptions {
                jwt,
                supported_signing_algs: self.signing_algs(),
                disallowed_issuers: disallowed_issuers.to_vec(),
                client,
                now: system_clock(),
            })?;
            tasks.push(tokio::spawn(authenticator.clone().run()));
            authenticators.push(authenticator as Arc<dyn kas_auth::authentication::Authenticator>);
        }
        Ok((authenticators, tasks))
    }
}

/// Upstream's `loadAuthenticationConfig`: YAML or JSON, decoded strictly.
fn load(path: &std::path::Path) -> Result<AuthenticationConfiguration, String> {
    let data = read(path)?;
    if data.is_empty() {
        return Err("empty config data".to_owned());
    }
    let text = String::from_utf8_lossy(&data);
    let value: serde_json::Value =
        serde_saphyr::from_str(&text).map_err(|e| format!("error converting YAML to JSON: {e}"))?;
    AuthenticationConfiguration::decode(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        oidc: OidcOptions,
    }

    fn parse(args: &[&str]) -> OidcOptions {
        Cli::parse_from(std::iter::once("kas").chain(args.iter().copied())).oidc
    }

    #[test]
    fn flags_build_one_authenticator() {
        let o = parse(&[
            "--oidc-issuer-url=https://issuer",
            "--oidc-client-id=kas",
            "--oidc-groups-claim=groups",
            "--oidc-groups-prefix=oidc:",
            "--oidc-required-claim=hd=example.com",
        ]);
        assert!(o.validate(false).is_empty(), "{:?}", o.validate(false));
        let c = o.configuration().unwrap();
        let jwt = &c.jwt[0];
        assert_eq!(jwt.issuer.audiences, vec!["kas"]);
        assert_eq!(jwt.claim_mappings.username.claim, "sub");
        assert_eq!(
            jwt.claim_mappings.username.prefix.as_deref(),
            Some("https://issuer#")
        );
        assert_eq!(jwt.claim_mappings.groups.prefix.as_deref(), Some("oidc:"));
        assert_eq!(jwt.claim_validation_rules[0].claim, "hd");
        assert_eq!(o.signing_algs(), vec!["RS256"]);
        let email = parse(&[
            "--oidc-issuer-url=https://issuer",
            "--oidc-client-id=kas",
            "--oidc-username-claim=email",
        ]);
        let c = email.configuration().unwrap();
        assert_eq!(c.jwt[0].claim_mappings.username.prefix.as_deref(), Some(""));
        let dash = parse(&[
            "--oidc-issuer-url=https://issuer",
            "--oidc-client-id=kas",
            "--oidc-username-prefix=-",
        ]);
        let c = dash.configuration().unwrap();
        assert_eq!(c.jwt[0].claim_mappings.username.prefix.as_deref(), Some(""));
    }

    #[test]
    fn upstream_messages() {
        assert_eq!(
            parse(&["--oidc-client-id=kas"]).validate(false),
            vec![
                "oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set"
            ]
        );
        assert_eq!(
            parse(&[
                "--oidc-issuer-url=http://issuer",
                "--oidc-client-id=kas",
                "--oidc-signing-algs=RS256,HS256"
            ])
            .validate(false),
            vec![
                r#"invalid authentication configuration: jwt[0].issuer.url: Invalid value: "http://issuer": URL scheme must be https"#,
                r#"oidc: unsupported signing alg: "HS256""#
            ]
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("authn.yaml");
        std::fs::write(
            &file,
            "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\nanonymous:\n  enabled: true\n  conditions:\n  - path: /livez\njwt:\n- issuer:\n    url: https://issuer\n    audiences: [kas]\n  claimMappings:\n    username:\n      expression: \"'oidc:' + claims.sub\"\n",
        )
        .unwrap();
        let arg = format!("--authentication-config={}", file.display());
        let o = parse(&[&arg]);
        assert!(o.validate(false).is_empty(), "{:?}", o.validate(false));
        assert_eq!(
            o.anonymous(),
            Some(AnonymousConfig::Paths(vec!["/livez".to_owned()]))
        );
        assert_eq!(o.signing_algs().len(), 9);
        assert_eq!(
            o.validate(true),
            vec![
                "anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file"
            ]
        );
        assert_eq!(
            parse(&[&arg, "--oidc-issuer-url=https://x"]).validate(false),
            vec!["authentication-config file and oidc-* flags are mutually exclusive"]
        );
        let missing = parse(&["--authentication-config=/nonexistent/authn.yaml"]);
        assert_eq!(
            missing.validate(false),
            vec![
                r#"failed to load authentication configuration from file "/nonexistent/authn.yaml": open /nonexistent/authn.yaml: no such file or directory"#
            ]
        );
    }
}
