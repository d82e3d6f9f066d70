//! Upstream's `ValidateAuthorizationConfiguration` and `ValidateWebhookConfiguration`
//! (`k8s.io/apiserver/pkg/apis/apiserver/validation`), and kube-apiserver's
//! `LoadAndValidateData` (`pkg/kubeapiserver/authorizer/config.go`) around them.
//!
//! As upstream, a webhook's fields are reported under the authorizer's path
//! (`authorizers[0].timeout`), not under `webhook`.

use std::collections::BTreeSet;
use std::path::Path as FsPath;

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::validation::field::{self, BadValue, Error, Path};
use kas_apimachinery::validation::is_dns1123_subdomain;

use super::cel::compile_match_conditions;
use super::{
    AuthorizationConfiguration, CONNECTION_INFO_IN_CLUSTER, CONNECTION_INFO_KUBECONFIG_FILE,
    FAILURE_POLICY_DENY, FAILURE_POLICY_NO_OPINION, TYPE_WEBHOOK, WebhookConfiguration,
    duration_string,
};
use crate::authorization::{
    MODE_ALWAYS_ALLOW, MODE_ALWAYS_DENY, MODE_NODE, MODE_RBAC, MODE_WEBHOOK,
};

/// kube-apiserver's `AuthorizationModeChoices`.
pub const AUTHORIZATION_MODE_CHOICES: &[&str] = &[
    MODE_ALWAYS_ALLOW,
    MODE_ALWAYS_DENY,
    "ABAC",
    MODE_WEBHOOK,
    MODE_RBAC,
    MODE_NODE,
];

/// kube-apiserver's `repeatableAuthorizerTypes`.
pub const REPEATABLE_AUTHORIZER_TYPES: &[&str] = &[MODE_WEBHOOK];

const MAX_TIMEOUT_NANOS: i64 = 30_000_000_000;

/// Upstream's `ValidateAuthorizationConfiguration` with a nil root path.
pub fn validate_authorization_configuration(
    c: &AuthorizationConfiguration,
    known_types: &[&str],
    repeatable_types: &[&str],
) -> Vec<Error> {
    let mut errs = Vec::new();
    let root = Path::nil();
    if c.authorizers.is_empty() {
        errs.push(field::required(
            &root.child("authorizers"),
            "at least one authorization mode must be defined",
        ));
    }
    let mut known: Vec<&str> = known_types.to_vec();
    known.sort_unstable();
    known.dedup();
    let mut seen_types = BTreeSet::new();
    let mut seen_names = BTreeSet::new();
    for (i, a) in c.authorizers.iter().enumerate() {
        let path = root.child("authorizers").index(i);
        let t = a.authorizer_type.as_str();
        if t.is_empty() {
            errs.push(field::required(&path.child("type"), ""));
            continue;
        }
        if !known.contains(&t) {
            errs.push(field::not_supported(&path.child("type"), t, &known));
            continue;
        }
        if seen_types.contains(t) && !repeatable_types.contains(&t) {
            errs.push(field::duplicate(&path.child("type"), t));
            continue;
        }
        seen_types.insert(t);
        if a.name.is_empty() {
            errs.push(field::required(&path.child("name"), ""));
        } else if seen_names.contains(a.name.as_str()) {
            errs.push(field::duplicate(&path.child("name"), a.name.as_str()));
        } else {
            let problems = is_dns1123_subdomain(&a.name);
            if !problems.is_empty() {
                errs.push(field::invalid(
                    &path.child("name"),
                    a.name.as_str(),
                    &format!("authorizer name is invalid: {}", problems.join(", ")),
                ));
            }
        }
        seen_names.insert(a.name.as_str());
        match (t, &a.webhook) {
            (TYPE_WEBHOOK, None) => errs.push(field::required(
                &path.child("webhook"),
                "required when type=Webhook",
            )),
            (TYPE_WEBHOOK, Some(w)) => errs.extend(validate_webhook_configuration(&path, w)),
            (_, Some(_)) => errs.push(field::invalid(
                &path.child("webhook"),
                "non-null",
                "may only be specified when type=Webhook",
            )),
            (_, None) => {}
        }
    }
    errs
}

/// Upstream's `ValidateWebhookConfiguration`, at the authorizer's `path`.
pub fn validate_webhook_configuration(path: &Path, c: &WebhookConfiguration) -> Vec<Error> {
    let mut errs = Vec::new();
    let timeout = c.timeout.0;
    if timeout == 0 {
        errs.push(field::required(&path.child("timeout"), ""));
    } else if !(0..=MAX_TIMEOUT_NANOS).contains(&timeout) {
        errs.push(field::invalid(
            &path.child("timeout"),
            duration_string(c.timeout),
            "must be > 0s and <= 30s",
        ));
    }
    for (name, ttl) in [
        ("authorizedTTL", c.authorized_ttl),
        ("unauthorizedTTL", c.unauthorized_ttl),
    ] {
        if ttl.0 == 0 {
            errs.push(field::required(&path.child(name), ""));
        } else if ttl.0 < 0 {
            errs.push(field::invalid(
                &path.child(name),
                duration_string(ttl),
                "must be > 0s",
            ));
        }
    }
    let sar = path.child("subjectAccessReviewVersion");
    match c.subject_access_review_version.as_str() {
        "" => errs.push(field::required(&sar, "")),
        "v1" | "v1beta1" => {}
        v => errs.push(field::not_supported(&sar, v, &["v1", "v1beta1"])),
    }
    let mc_sar = path.child("matchConditionSubjectAccessReviewVersion");
    match c.match_condition_subject_access_review_version.as_str() {
        "" if !c.match_conditions.is_empty() => errs.push(field::required(
            &mc_sar,
            "required if match conditions are specified",
        )),
        "" | "v1" => {}
        v => errs.push(field::not_supported(&mc_sar, v, &["v1"])),
    }
    let policy = path.child("failurePolicy");
    match c.failure_policy.as_str() {
        "" => errs.push(field::required(&policy, "")),
        FAILURE_POLICY_NO_OPINION | FAILURE_POLICY_DENY => {}
        v => errs.push(field::not_supported(
            &policy,
            v,
            &[FAILURE_POLICY_NO_OPINION, FAILURE_POLICY_DENY],
        )),
    }
    errs.extend(validate_connection_info(path, c));
    errs.extend(compile_match_conditions(&c.match_conditions, path).1);
    errs
}

fn validate_connection_info(path: &Path, c: &WebhookConfiguration) -> Option<Error> {
    let info = &c.connection_info;
    let file_path = path.child("connectionInfo").child("kubeConfigFile");
    match info.connection_type.as_str() {
        "" => Some(field::required(
            &path.child("connectionInfo").child("type"),
            "",
        )),
        CONNECTION_INFO_IN_CLUSTER => info.kube_config_file.as_ref().map(|f| {
            field::invalid(
                &file_path,
                f.as_str(),
                "can only be set when type=KubeConfigFile",
            )
        }),
        CONNECTION_INFO_KUBECONFIG_FILE => {
            let file = info.kube_config_file.as_deref().unwrap_or_default();
            if file.is_empty() {
                return Some(field::required(&file_path, ""));
            }
            if !FsPath::new(file).is_absolute() {
                return Some(field::invalid(&file_path, file, "must be an absolute path"));
            }
            match std::fs::metadata(file) {
                Err(e) => Some(field::invalid(
                    &file_path,
                    file,
                    &format!("error loading file: {}", stat_error(file, &e)),
                )),
                Ok(m) if !m.is_file() => {
                    Some(field::invalid(&file_path, file, "must be a regular file"))
                }
                Ok(_) => None,
            }
        }
        _ => Some(field::not_supported(
            &path.child("connectionInfo").child("type"),
            BadValue::Raw(connection_info_go_syntax(info)),
            &[CONNECTION_INFO_IN_CLUSTER, CONNECTION_INFO_KUBECONFIG_FILE],
        )),
    }
}

/// Go's `%#v` of the internal `WebhookConnectionInfo` (a set pointer prints as an address,
/// which varies per process upstream).
fn connection_info_go_syntax(info: &super::WebhookConnectionInfo) -> String {
    let file = match info.kube_config_file {
        None => "(*string)(nil)",
        Some(_) => "(*string)(0xc000010000)",
    };
    format!(
        "apiserver.WebhookConnectionInfo{{Type:{}, KubeConfigFile:{file}}}",
        quote(&info.connection_type)
    )
}

/// Go's `os.Stat` error text.
fn stat_error(file: &str, e: &std::io::Error) -> String {
    let why = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        std::io::ErrorKind::NotADirectory => "not a directory".to_owned(),
        _ => e.to_string(),
    };
    format!("stat {file}: {why}")
}

/// kube-apiserver's `GetNameForAuthorizerMode`.
pub fn name_for_authorizer_mode(mode: &str) -> String {
    mode.to_lowercase()
}

/// kube-apiserver's `LoadAndValidateData`: decode, validate against the modes it knows
/// (only webhooks repeat), each other authorizer named after its type in lower case, and
/// every type of `require_non_webhook_types` (those of the configuration the server
/// started with, on reload) still there.
pub fn load_and_validate_data(
    data: &[u8],
    require_non_webhook_types: &[String],
) -> Result<AuthorizationConfiguration, String> {
    let config = super::load_from_data(data)
        .map_err(|e| format!("failed to load AuthorizationConfiguration from file: {e}"))?;
    let errs = validate_authorization_configuration(
        &config,
        AUTHORIZATION_MODE_CHOICES,
        REPEATABLE_AUTHORIZER_TYPES,
    );
    if let Some(message) = field::aggregate_message(&errs) {
        return Err(message);
    }
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for a in &config.authorizers {
        if a.authorizer_type == TYPE_WEBHOOK {
            continue;
        }
        seen.insert(a.authorizer_type.clone());
        let expected = name_for_authorizer_mode(&a.authorizer_type);
        if expected != a.name {
            problems.push(format!(
                "expected name {expected} for authorizer {} instead of {}",
                a.authorizer_type, a.name
            ));
        }
    }
    let missing: BTreeSet<&String> = require_non_webhook_types
        .iter()
        .filter(|t| !seen.contains(*t))
        .collect();
    if !missing.is_empty() {
        let list: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        problems.push(format!("missing required types: [{}]", list.join(" ")));
    }
    match field::aggregate_strings(problems) {
        Some(message) => Err(message),
        None => Ok(config),
    }
}

#[cfg(test)]
#[path = "validation_tests.rs"]
mod tests;
