//! Upstream's `ValidateAuthenticationConfiguration` and `CompileAndValidateJWTAuthenticator`
//! (`pkg/apis/apiserver/validation`), with the StructuredAuthenticationConfiguration and
//! AnonymousAuthConfigurableEndpoints gates on (their 1.33 defaults).

use std::collections::HashSet;

use kas_apimachinery::validation::field::{self, BadValue, Error, Path};
use kas_apimachinery::validation::{is_dns1123_subdomain, regex_error};

use super::cel::{self, CLAIMS, Compiled, USER};
use super::config::{
    AUDIENCE_MATCH_POLICY_MATCH_ANY, AuthenticationConfiguration, ClaimMappings,
    ClaimValidationRule, Issuer, JwtAuthenticator, PrefixedClaimOrExpression, UserValidationRule,
};

/// The compiled expressions of one authenticator (upstream's `CELMapper`).
#[derive(Clone, Debug, Default)]
pub struct CelMapper {
    pub username: Option<Compiled>,
    pub groups: Option<Compiled>,
    pub uid: Option<Compiled>,
    /// `(key, valueExpression)`.
    pub extra: Vec<(String, Compiled)>,
    /// `(expression, message)`.
    pub claim_validation_rules: Vec<(Compiled, String)>,
    pub user_validation_rules: Vec<(Compiled, String)>,
}

/// Upstream's `ValidateAuthenticationConfiguration`; `disallowed_issuers` are the
/// service-account issuers.
pub fn validate_authentication_configuration(
    c: &AuthenticationConfiguration,
    disallowed_issuers: &[String],
) -> Vec<Error> {
    let root = Path::new("jwt");
    let mut errs = Vec::new();
    if c.jwt.len() > 64 {
        errs.push(field::too_many(&root, c.jwt.len() as i64, 64));
        return errs;
    }
    let mut seen_issuers = HashSet::new();
    let mut seen_discovery = HashSet::new();
    for (i, a) in c.jwt.iter().enumerate() {
        let path = root.index(i);
        errs.extend(validate_jwt_authenticator(a, &path, disallowed_issuers).1);
        let issuer = path.child("issuer");
        if !seen_issuers.insert(a.issuer.url.as_str()) {
            errs.push(field::duplicate(
                &issuer.child("url"),
                a.issuer.url.as_str(),
            ));
        }
        if !a.issuer.discovery_url.is_empty() && !seen_discovery.insert(&a.issuer.discovery_url) {
            errs.push(field::duplicate(
                &issuer.child("discoveryURL"),
                a.issuer.discovery_url.as_str(),
            ));
        }
    }
    if let Some(anonymous) = &c.anonymous
        && !anonymous.enabled
        && !anonymous.conditions.is_empty()
    {
        let paths: Vec<String> = anonymous
            .conditions
            .iter()
            .map(|c| format!("{{Path:{}}}", c.path))
            .collect();
        errs.push(field::invalid(
            &Path::new("anonymous").child("conditions"),
            BadValue::Raw(format!("[{}]", paths.join(" "))),
            "enabled should be set to true when conditions are defined",
        ));
    }
    errs
}

/// Upstream's `CompileAndValidateJWTAuthenticator`: paths from the authenticator itself.
pub fn compile_and_validate_jwt_authenticator(
    a: &JwtAuthenticator,
    disallowed_issuers: &[String],
) -> (CelMapper, Vec<Error>) {
    validate_jwt_authenticator(a, &Path::nil(), disallowed_issuers)
}

#[derive(Default)]
struct State {
    mapper: CelMapper,
    uses_email: bool,
    uses_email_verified: bool,
}

fn validate_jwt_authenticator(
    a: &JwtAuthenticator,
    path: &Path,
    disallowed: &[String],
) -> (CelMapper, Vec<Error>) {
    let mut state = State::default();
    let mut errs = validate_issuer(&a.issuer, disallowed, &path.child("issuer"));
    errs.extend(validate_claim_validation_rules(
        &mut state,
        &a.claim_validation_rules,
        &path.child("claimValidationRules"),
    ));
    errs.extend(validate_claim_mappings(
        &mut state,
        &a.claim_mappings,
        &path.child("claimMappings"),
    ));
    errs.extend(validate_user_validation_rules(
        &mut state,
        &a.user_validation_rules,
        &path.child("userValidationRules"),
    ));
    (state.mapper, errs)
}

fn validate_issuer(issuer: &Issuer, disallowed: &[String], path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    let url_path = path.child("url");
    if issuer.url.is_empty() {
        errs.push(field::required(&url_path, "URL is required"));
    } else {
        errs.extend(validate_url(&issuer.url, disallowed, &url_path));
    }
    if !issuer.discovery_url.is_empty() {
        let p = path.child("discoveryURL");
        if !issuer.url.is_empty()
            && issuer.url.trim_end_matches('/') == issuer.discovery_url.trim_end_matches('/')
        {
            errs.push(field::invalid(
                &p,
                issuer.discovery_url.as_str(),
                "discoveryURL must be different from URL",
            ));
        }
        errs.extend(validate_url(&issuer.discovery_url, &[], &p));
    }
    errs.extend(validate_audiences(
        &issuer.audiences,
        &issuer.audience_match_policy,
        &path.child("audiences"),
        &path.child("audienceMatchPolicy"),
    ));
    if !issuer.certificate_authority.is_empty()
        && let Err(e) = super::certificate_pool(issuer.certificate_authority.as_bytes())
    {
        errs.push(field::invalid(
            &path.child("certificateAuthority"),
            "<omitted>",
            &e,
        ));
    }
    errs
}

/// The parts of a URL as Go's `url.Parse` splits them, or its error.
pub(crate) struct ParsedUrl<'a> {
    pub scheme: &'a str,
    pub has_user: bool,
    pub query: &'a str,
    pub fragment: &'a str,
}

pub(crate) fn parse_url(raw: &str) -> Result<ParsedUrl<'_>, String> {
    let quoted = kas_apimachinery::golang::strconv::quote(raw);
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(format!(
            "parse {quoted}: net/url: invalid control character in URL"
        ));
    }
    let (rest, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    let mut scheme = "";
    let mut rest = rest;
    if let Some(i) = rest.find(':') {
        let candidate = &rest[..i];
        if i == 0 {
            return Err(format!("parse {quoted}: missing protocol scheme"));
        }
        let valid = candidate.chars().enumerate().all(|(j, c)| {
            c.is_ascii_alphabetic() || (j > 0 && (c.is_ascii_digit() || "+-.".contains(c)))
        });
        if valid {
            scheme = candidate;
            rest = &rest[i + 1..];
        }
    }
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let authority = rest
        .strip_prefix("//")
        .map(|a| a.split('/').next().unwrap_or_default())
        .unwrap_or_default();
    let (user, host) = authority
        .rsplit_once('@')
        .map_or((None, authority), |(u, h)| (Some(u), h));
    let port = match host.rfind(']') {
        Some(end) => host[end + 1..].strip_prefix(':'),
        None => host.rsplit_once(':').map(|(_, p)| p),
    };
    if let Some(port) = port
        && !port.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(format!(
            "parse {quoted}: invalid port {} after host",
            kas_apimachinery::golang::strconv::quote(&format!(":{port}"))
        ));
    }
    let has_user = user.is_some();
    Ok(ParsedUrl {
        scheme,
        has_user,
        query,
        fragment,
    })
}

fn validate_url(raw: &str, disallowed: &[String], path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    if disallowed.iter().any(|d| d == raw) {
        let mut sorted: Vec<&String> = disallowed.iter().collect();
        sorted.sort();
        sorted.dedup();
        let list: Vec<&str> = sorted.iter().map(|s| s.as_str()).collect();
        errs.push(field::invalid(
            path,
            raw,
            &format!(
                "URL must not overlap with disallowed issuers: [{}]",
                list.join(" ")
            ),
        ));
    }
    let u = match parse_url(raw) {
        Ok(u) => u,
        Err(e) => {
            errs.push(field::invalid(path, raw, &e));
            return errs;
        }
    };
    if u.scheme != "https" {
        errs.push(field::invalid(path, raw, "URL scheme must be https"));
    }
    if u.has_user {
        errs.push(field::invalid(
            path,
            raw,
            "URL must not contain a username or password",
        ));
    }
    if !u.query.is_empty() {
        errs.push(field::invalid(path, raw, "URL must not contain a query"));
    }
    if !u.fragment.is_empty() {
        errs.push(field::invalid(path, raw, "URL must not contain a fragment"));
    }
    errs
}

fn validate_audiences(
    audiences: &[String],
    policy: &str,
    path: &Path,
    policy_path: &Path,
) -> Vec<Error> {
    let mut errs = Vec::new();
    if audiences.is_empty() {
        errs.push(field::required(
            path,
            &format!("at least one {path} is required"),
        ));
        return errs;
    }
    let mut seen = HashSet::new();
    for (i, audience) in audiences.iter().enumerate() {
        let p = path.index(i);
        if audience.is_empty() {
            errs.push(field::required(&p, "audience can't be empty"));
        }
        if !seen.insert(audience) {
            errs.push(field::duplicate(&p, audience.as_str()));
        }
    }
    if audiences.len() > 1 && policy != AUDIENCE_MATCH_POLICY_MATCH_ANY {
        errs.push(field::invalid(
            policy_path,
            policy,
            "audienceMatchPolicy must be MatchAny for multiple audiences",
        ));
    }
    if audiences.len() == 1 && !policy.is_empty() && policy != AUDIENCE_MATCH_POLICY_MATCH_ANY {
        errs.push(field::invalid(
            policy_path,
            policy,
            "audienceMatchPolicy must be empty or MatchAny for single audience",
        ));
    }
    errs
}

fn compile_at(expression: &str, variable: &str, path: &Path) -> Result<Compiled, Error> {
    cel::compile(expression, variable).map_err(|detail| field::invalid(path, expression, &detail))
}

/// Compiles a condition, which cel-go types as `bool`.
fn compile_condition(expression: &str, variable: &str, path: &Path) -> Result<Compiled, Error> {
    let c = compile_at(expression, variable, path)?;
    if !cel::is_bool(c.program.expression()) {
        return Err(field::invalid(path, expression, "must evaluate to bool"));
    }
    Ok(c)
}

fn uses(c: &Compiled, field: &str) -> bool {
    cel::has_select(c.program.expression(), CLAIMS, field)
}

fn validate_claim_validation_rules(
    state: &mut State,
    rules: &[ClaimValidationRule],
    path: &Path,
) -> Vec<Error> {
    let mut errs = Vec::new();
    let mut seen_claims = HashSet::new();
    let mut seen_expressions = HashSet::new();
    for (i, rule) in rules.iter().enumerate() {
        let p = path.index(i);
        match (rule.claim.is_empty(), rule.expression.is_empty()) {
            (false, false) => errs.push(field::invalid(
                &p,
                rule.claim.as_str(),
                "claim and expression can't both be set",
            )),
            (true, true) => errs.push(field::required(&p, "claim or expression is required")),
            (false, true) => {
                if !rule.message.is_empty() {
                    errs.push(field::invalid(
                        &p.child("message"),
                        rule.message.as_str(),
                        "message can't be set when claim is set",
                    ));
                }
                if !seen_claims.insert(&rule.claim) {
                    errs.push(field::duplicate(&p.child("claim"), rule.claim.as_str()));
                }
            }
            (true, false) => {
                if !rule.required_value.is_empty() {
                    errs.push(field::invalid(
                        &p.child("requiredValue"),
                        rule.required_value.as_str(),
                        "requiredValue can't be set when expression is set",
                    ));
                }
                if !seen_expressions.insert(&rule.expression) {
                    errs.push(field::duplicate(
                        &p.child("expression"),
                        rule.expression.as_str(),
                    ));
                    continue;
                }
                match compile_condition(&rule.expression, CLAIMS, &p.child("expression")) {
                    Ok(c) => {
                        state.uses_email_verified |= uses(&c, "email_verified");
                        state
                            .mapper
                            .claim_validation_rules
                            .push((c, rule.message.clone()));
                    }
                    Err(e) => errs.push(e),
                }
            }
        }
    }
    errs
}

fn validate_prefixed(
    mapping: &PrefixedClaimOrExpression,
    path: &Path,
    required: bool,
) -> (Option<Compiled>, Vec<Error>) {
    let mut errs = Vec::new();
    let mut compiled = None;
    match (mapping.claim.is_empty(), mapping.expression.is_empty()) {
        (false, false) => errs.push(field::invalid(
            path,
            "",
            "claim and expression can't both be set",
        )),
        (true, true) if required => {
            errs.push(field::required(path, "claim or expression is required"))
        }
        (true, true) => {}
        (_, false) => {
            if let Some(prefix) = &mapping.prefix {
                errs.push(field::invalid(
                    &path.child("prefix"),
                    prefix.as_str(),
                    "prefix can't be set when expression is set",
                ));
            }
            match compile_at(&mapping.expression, CLAIMS, &path.child("expression")) {
                Ok(c) => compiled = Some(c),
                Err(e) => errs.push(e),
            }
        }
        (false, true) => {
            if mapping.prefix.is_none() {
                errs.push(field::required(
                    &path.child("prefix"),
                    "prefix is required when claim is set. It can be set to an empty string to disable prefixing",
                ));
            }
        }
    }
    // Upstream keeps no mapper when any error was found.
    if !errs.is_empty() {
        compiled = None;
    }
    (compiled, errs)
}

fn validate_claim_mappings(state: &mut State, m: &ClaimMappings, path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    let (username, e) = validate_prefixed(&m.username, &path.child("username"), true);
    errs.extend(e);
    if let Some(c) = username {
        state.uses_email |= uses(&c, "email");
        state.uses_email_verified |= uses(&c, "email_verified");
        state.mapper.username = Some(c);
    }
    let (groups, e) = validate_prefixed(&m.groups, &path.child("groups"), false);
    errs.extend(e);
    state.mapper.groups = groups;

    let uid = path.child("uid");
    if !m.uid.claim.is_empty() && !m.uid.expression.is_empty() {
        errs.push(field::invalid(
            &uid,
            "",
            "claim and expression can't both be set",
        ));
    } else if !m.uid.expression.is_empty() {
        match compile_at(&m.uid.expression, CLAIMS, &uid.child("expression")) {
            Ok(c) => state.mapper.uid = Some(c),
            Err(e) => errs.push(e),
        }
    }

    let mut seen_keys = HashSet::new();
    for (i, mapping) in m.extra.iter().enumerate() {
        let p = path.child("extra").index(i);
        let key = p.child("key");
        errs.extend(is_domain_prefixed_path(&key, &mapping.key));
        if mapping.key != mapping.key.to_lowercase() {
            errs.push(field::invalid(
                &key,
                mapping.key.as_str(),
                "key must be lowercase",
            ));
        }
        if is_kubernetes_domain_prefix(&mapping.key) {
            errs.push(field::invalid(
                &key,
                mapping.key.as_str(),
                "k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use",
            ));
        }
        if !seen_keys.insert(&mapping.key) {
            errs.push(field::duplicate(&key, mapping.key.as_str()));
            continue;
        }
        if mapping.value_expression.is_empty() {
            errs.push(field::required(
                &p.child("valueExpression"),
                "valueExpression is required",
            ));
            continue;
        }
        match compile_at(
            &mapping.value_expression,
            CLAIMS,
            &p.child("valueExpression"),
        ) {
            Ok(c) => {
                state.uses_email_verified |= uses(&c, "email_verified");
                state.mapper.extra.push((mapping.key.clone(), c));
            }
            Err(e) => errs.push(e),
        }
    }
    if state.uses_email && !state.uses_email_verified {
        errs.push(field::invalid(
            &path.child("username").child("expression"),
            m.username.expression.as_str(),
            "claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression",
        ));
    }
    errs
}

fn validate_user_validation_rules(
    state: &mut State,
    rules: &[UserValidationRule],
    path: &Path,
) -> Vec<Error> {
    let mut errs = Vec::new();
    let mut seen = HashSet::new();
    for (i, rule) in rules.iter().enumerate() {
        let p = path.index(i).child("expression");
        if rule.expression.is_empty() {
            errs.push(field::required(&p, "expression is required"));
            continue;
        }
        if !seen.insert(&rule.expression) {
            errs.push(field::duplicate(&p, rule.expression.as_str()));
            continue;
        }
        match compile_condition(&rule.expression, USER, &p) {
            Ok(c) => state
                .mapper
                .user_validation_rules
                .push((c, rule.message.clone())),
            Err(e) => errs.push(e),
        }
    }
    errs
}

fn is_kubernetes_domain_prefix(key: &str) -> bool {
    let Some((domain, _)) = key.split_once('/') else {
        return false;
    };
    domain == "kubernetes.io"
        || domain.ends_with(".kubernetes.io")
        || domain == "k8s.io"
        || domain.ends_with(".k8s.io")
}

const HTTP_PATH_FMT: &str = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+";

/// apimachinery's `IsDomainPrefixedPath`.
fn is_domain_prefixed_path(path: &Path, dp: &str) -> Vec<Error> {
    if dp.is_empty() {
        return vec![field::required(path, "")];
    }
    let Some((host, rest)) = dp
        .split_once('/')
        .filter(|(h, r)| !h.is_empty() && !r.is_empty())
    else {
        return vec![field::invalid(
            path,
            dp,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )];
    };
    let mut errs: Vec<Error> = is_dns1123_subdomain(host)
        .iter()
        .map(|e| field::invalid(path, host, e))
        .collect();
    let valid = rest
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c));
    if !valid {
        errs.push(field::invalid(
            path,
            rest,
            &regex_error("Invalid path", HTTP_PATH_FMT, &[]),
        ));
    }
    errs
}
