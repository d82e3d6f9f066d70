//! Upstream's `LoadPolicyFromFile` and `LoadPolicyFromBytes` (`audit/policy/reader.go`):
//! JSON or YAML, decoded strictly and, when only strictness fails (unknown or repeated
//! fields), decoded again leniently with a warning; then the version checked (1.33 loads
//! `audit.k8s.io/v1` only), the policy validated, and a policy without rules refused.

use std::path::Path;

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::runtime::GroupVersionKind;
use kas_apimachinery::runtime::serializer::{self, DecodeError};

use super::decode::read_policy;
use super::types::Policy;
use super::validation::validate_policy;
use crate::error::{Error, Result};

const GROUP: &str = "audit.k8s.io";
const VERSION: &str = "v1";
const KIND: &str = "Policy";
/// `runtime.APIVersionInternal`: what a document without `apiVersion` becomes, from the
/// internal type it is decoded into.
const INTERNAL: &str = "__internal";
/// Where upstream's audit scheme was made, which its "not registered" errors name.
const SCHEME: &str = "k8s.io/apiserver/pkg/audit/scheme.go:30";
/// The group's other kinds: decoded upstream, then not convertible into a `Policy`.
const OTHER_KINDS: &[&str] = &["Event", "EventList", "PolicyList"];

/// Upstream's `LoadPolicyFromFile`: an error of the document names the file.
pub fn load_policy_from_file(path: &Path) -> Result<Policy> {
    if path.as_os_str().is_empty() {
        return Err(Error::FilePathNotSpecified);
    }
    let data =
        kas_auth::authorization::config::read_file(path).map_err(|message| Error::ReadFile {
            path: path.display().to_string(),
            message,
        })?;
    load_policy_from_bytes(&data).map_err(|e| Error::File {
        path: path.display().to_string(),
        source: Box::new(e),
    })
}

/// Upstream's `LoadPolicyFromBytes`.
pub fn load_policy_from_bytes(data: &[u8]) -> Result<Policy> {
    let decoded = decode(data).map_err(Error::Decoding)?;
    let gvk = settle_kind(decoded.gvk, data).map_err(Error::Decoding)?;
    // An internal `Policy` (no apiVersion) is read upstream before this check fails; as
    // its fields have no JSON names, the document's fields are unknown to it.
    if gvk.group != GROUP || gvk.version != VERSION {
        return Err(Error::UnknownGroupVersion(format!(
            "{}/{}, Kind={}",
            gvk.group, gvk.version, gvk.kind
        )));
    }
    let policy = read_v1(&decoded.object, data)?;
    let errs = validate_policy(&policy);
    if !errs.is_empty() {
        return Err(Error::Invalid(errs));
    }
    if policy.rules.is_empty() {
        return Err(Error::NoRules);
    }
    tracing::debug!(
        policy_cnt = policy.rules.len(),
        "Load audit policy rules success"
    );
    Ok(policy)
}

/// The group, version and kind as upstream's serializer settles them when decoding into
/// the internal `Policy`: what the document leaves out comes from the internal type, and
/// a kind the scheme cannot turn into a `Policy` fails here.
fn settle_kind(mut gvk: GroupVersionKind, data: &[u8]) -> Result<GroupVersionKind, DecodeError> {
    // gvkWithDefaults(actual, audit.k8s.io/__internal, Kind=Policy).
    if gvk.kind.is_empty() {
        gvk.kind = KIND.to_owned();
    }
    if gvk.version.is_empty() && gvk.group.is_empty() {
        GROUP.clone_into(&mut gvk.group);
        INTERNAL.clone_into(&mut gvk.version);
    } else if gvk.version.is_empty() && gvk.group == GROUP {
        INTERNAL.clone_into(&mut gvk.version);
    }
    serializer::require_kind_and_version(&gvk, data)?;
    let known_version = gvk.group == GROUP && (gvk.version == VERSION || gvk.version == INTERNAL);
    if known_version && gvk.kind == KIND {
        return Ok(gvk);
    }
    if known_version && OTHER_KINDS.contains(&gvk.kind.as_str()) {
        let package = if gvk.version == INTERNAL {
            "audit"
        } else {
            VERSION
        };
        return Err(DecodeError::Type(format!(
            "converting ({package}.{}) to (audit.Policy): unknown conversion",
            gvk.kind
        )));
    }
    Err(DecodeError::Type(not_registered(&gvk)))
}

/// Upstream's `notRegisteredErr` text for a kind.
fn not_registered(gvk: &GroupVersionKind) -> String {
    if gvk.version == INTERNAL {
        return format!(
            "no kind {} is registered for the internal version of group {} in scheme {}",
            quote(&gvk.kind),
            quote(&gvk.group),
            quote(SCHEME)
        );
    }
    let gv = match gvk.group.is_empty() {
        true => gvk.version.clone(),
        false => format!("{}/{}", gvk.group, gvk.version),
    };
    format!(
        "no kind {} is registered for version {} in scheme {}",
        quote(&gvk.kind),
        quote(&gv),
        quote(SCHEME)
    )
}

/// The universal deserializer's choice: JSON when the data opens with `{`, else YAML.
fn is_json(data: &[u8]) -> bool {
    data.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

fn decode(data: &[u8]) -> Result<serializer::Decoded, DecodeError> {
    match is_json(data) {
        true => serializer::decode_json(data),
        false => serializer::decode_yaml(data),
    }
}

/// The `audit.k8s.io/v1` document read into a policy: a value of the wrong type fails,
/// strictness only warns, as upstream's lenient second decode accepts what the strict
/// one refused.
fn read_v1(object: &serde_json::Value, data: &[u8]) -> Result<Policy> {
    let read = read_policy(object);
    if let Some(err) = read.type_error {
        return Err(Error::Decoding(DecodeError::Type(err)));
    }
    let mut strict = match is_json(data) {
        true => serializer::json_duplicate_fields(data),
        false => match serializer::yaml_strict_error(data) {
            Some(DecodeError::Strict(errs)) => errs,
            _ => Vec::new(),
        },
    };
    strict.extend(read.unknown);
    if !strict.is_empty() {
        tracing::warn!(
            "Audit policy contains errors, falling back to lenient decoding: {}",
            DecodeError::Strict(strict)
        );
    }
    Ok(read.policy)
}
