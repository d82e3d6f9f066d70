//! Upstream's `pkg/apis/certificates/validation` for CertificateSigningRequests
//! (`validateCertificateSigningRequest`, `validateConditions`,
//! `validateCertificateSigningRequestUpdate` with the options each write path gets) and
//! core's `ValidateSignerName`.

use base64::Engine as _;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::{is_dns1123_label, is_dns1123_subdomain};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use serde_json::Value;

use super::pem;
use crate::resources::apps::common::causes;

/// Upstream `LegacyUnknownSignerName`, refused through v1.
const LEGACY_UNKNOWN_SIGNER: &str = "kubernetes.io/legacy-unknown";

/// Upstream `allValidUsages`.
const USAGES: [&str; 23] = [
    "signing",
    "digital signature",
    "content commitment",
    "key encipherment",
    "key agreement",
    "data encipherment",
    "cert sign",
    "crl sign",
    "encipher only",
    "decipher only",
    "any",
    "server auth",
    "client auth",
    "code signing",
    "email protection",
    "s/mime",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "timestamping",
    "ocsp signing",
    "microsoft sgc",
    "netscape sgc",
];

/// Upstream `trueConditionTypes`: types whose status may only be True.
const TRUE_ONLY_TYPES: [&str; 3] = ["Approved", "Denied", "Failed"];

/// Upstream `certificateValidationOptions`.
#[derive(Default)]
pub struct Options {
    pub allow_setting_approval_conditions: bool,
    pub allow_setting_certificate: bool,
    allow_both_approved_and_denied: bool,
    allow_legacy_signer_name: bool,
    allow_duplicate_condition_types: bool,
    allow_empty_condition_type: bool,
    allow_arbitrary_certificate: bool,
    allow_unknown_usages: bool,
    allow_duplicate_usages: bool,
}

fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn list<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn conditions(csr: &Value) -> &[Value] {
    list(csr, "/status/conditions")
}

/// A bytes field, decoded from its base64 form; `None` when it is absent.
fn bytes(v: &Value, pointer: &str) -> Option<Vec<u8>> {
    let text = v.pointer(pointer).and_then(Value::as_str)?;
    Some(
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap_or_default(),
    )
}

/// A `[]byte` as Go's `%#v` prints it.
fn go_bytes(b: Option<&[u8]>) -> String {
    match b {
        None => "[]byte(nil)".to_owned(),
        Some(b) => {
            let items: Vec<String> = b.iter().map(|x| format!("{x:#04x}")).collect();
            format!("[]byte{{{}}}", items.join(", "))
        }
    }
}

/// Upstream `getValidationOptions`: what a write tolerates because the stored object
/// already has it (`old` is `None` on create).
pub fn options(new: &Value, old: Option<&Value>) -> Options {
    let Some(old) = old else {
        return Options::default();
    };
    let types: Vec<&str> = conditions(old).iter().map(|c| s(c, "/type")).collect();
    let mut seen = std::collections::HashSet::new();
    let usages = list(old, "/spec/usages");
    let mut seen_usages = std::collections::HashSet::new();
    let old_cert = bytes(old, "/status/certificate").unwrap_or_default();
    let new_cert = bytes(new, "/status/certificate").unwrap_or_default();
    Options {
        allow_both_approved_and_denied: types.contains(&"Approved") && types.contains(&"Denied"),
        allow_legacy_signer_name: s(old, "/spec/signerName") == LEGACY_UNKNOWN_SIGNER,
        allow_duplicate_condition_types: !types.iter().all(|t| seen.insert(*t)),
        allow_empty_condition_type: types.contains(&""),
        allow_arbitrary_certificate: new_cert == old_cert
            || pem::check_certificates(&old_cert).is_err(),
        allow_unknown_usages: usages
            .iter()
            .any(|u| !USAGES.contains(&u.as_str().unwrap_or(""))),
        allow_duplicate_usages: !usages.iter().all(|u| seen_usages.insert(u.as_str())),
        ..Options::default()
    }
}

/// Upstream `ValidateSignerName`.
pub fn validate_signer_name(path: &Path, name: &str) -> Vec<field::Error> {
    if name.is_empty() {
        return vec![field::required(path, "")];
    }
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() != 2 {
        let msg = "must be a fully qualified domain and path of the form 'example.com/signer-name'";
        return vec![field::invalid(path, name, msg)];
    }
    let mut errs = Vec::new();
    let (domain, rest) = (segments[0], segments[1]);
    if domain.len() > 253 {
        errs.push(field::too_long(path, 253));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    for label in &labels {
        let found = is_dns1123_label(label);
        for e in &found {
            let msg = format!("validating label {}: {e}", quote(label));
            errs.push(field::invalid(path, domain, &msg));
        }
        if !found.is_empty() {
            break;
        }
    }
    if labels.len() < 2 {
        let msg = "should be a domain with at least two segments separated by dots";
        errs.push(field::invalid(path, domain, msg));
    }
    for label in rest.split('.') {
        let found = is_dns1123_subdomain(label);
        for e in &found {
            let msg = format!("validating label {}: {e}", quote(label));
            errs.push(field::invalid(path, rest, &msg));
        }
        if !found.is_empty() {
            break;
        }
    }
    let max = 253 + (253 + 63 + 1) + 1;
    if name.len() > max {
        errs.push(field::too_long(path, max as i64));
    }
    errs
}

fn quote(s: &str) -> String {
    kas_apimachinery::golang::strconv::quote(s)
}

/// Upstream `validateCertificateSigningRequest`.
pub fn validate(csr: &Value, opts: &Options) -> FieldErrors {
    let mut errs = validate_object_meta(csr, false, |_, _| Vec::new());
    let spec = Path::new("spec");
    let mut e = Vec::new();
    let request = bytes(csr, "/spec/request");
    if let Err(msg) = pem::check_csr(request.as_deref().unwrap_or(&[])) {
        let value = BadValue::Raw(go_bytes(request.as_deref()));
        e.push(field::invalid(&spec.child("request"), value, &msg));
    }
    let usages = list(csr, "/spec/usages");
    if usages.is_empty() {
        e.push(field::required(&spec.child("usages"), ""));
    }
    if !opts.allow_unknown_usages {
        let mut valid = USAGES.to_vec();
        valid.sort_unstable();
        for (i, u) in usages.iter().enumerate() {
            let u = u.as_str().unwrap_or("");
            if !USAGES.contains(&u) {
                e.push(field::not_supported(
                    &spec.child("usages").index(i),
                    u,
                    &valid,
                ));
            }
        }
    }
    if !opts.allow_duplicate_usages {
        let mut seen = std::collections::HashSet::new();
        for (i, u) in usages.iter().enumerate() {
            let u = u.as_str().unwrap_or("");
            if !seen.insert(u) {
                e.push(field::duplicate(&spec.child("usages").index(i), u));
            }
        }
    }
    let signer = s(csr, "/spec/signerName");
    if !opts.allow_legacy_signer_name && signer == LEGACY_UNKNOWN_SIGNER {
        let msg = "the legacy signerName is not allowed via this API version";
        e.push(field::invalid(&spec.child("signerName"), signer, msg));
    } else {
        e.extend(validate_signer_name(&spec.child("signerName"), signer));
    }
    if let Some(secs) = csr
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
        .filter(|s| *s < 600)
    {
        let msg = "may not specify a duration less than 600 seconds (10 minutes)";
        e.push(field::invalid(&spec.child("expirationSeconds"), secs, msg));
    }
    e.extend(validate_conditions(csr, opts));
    if !opts.allow_arbitrary_certificate {
        let cert = bytes(csr, "/status/certificate").unwrap_or_default();
        if let Err(msg) = pem::check_certificates(&cert) {
            let path = Path::new("status.certificate");
            e.push(field::invalid(&path, "<certificate data>", &msg));
        }
    }
    errs.extend(causes(e));
    errs
}

/// Upstream `validateConditions`.
fn validate_conditions(csr: &Value, opts: &Options) -> Vec<field::Error> {
    let path = Path::new("status.conditions");
    let mut errs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let (mut approved, mut denied) = (false, false);
    for (i, c) in conditions(csr).iter().enumerate() {
        let (ty, status) = (s(c, "/type"), s(c, "/status"));
        let at = path.index(i);
        if !opts.allow_empty_condition_type && ty.is_empty() {
            errs.push(field::required(&at.child("type"), ""));
        }
        let allowed: &[&str] = if TRUE_ONLY_TYPES.contains(&ty) {
            &["True"]
        } else {
            &["False", "True", "Unknown"]
        };
        if status.is_empty() {
            errs.push(field::required(&at.child("status"), ""));
        } else if !allowed.contains(&status) {
            errs.push(field::not_supported(&at.child("status"), status, allowed));
        }
        if !opts.allow_both_approved_and_denied {
            let clash = match ty {
                "Approved" => {
                    approved = true;
                    denied
                }
                "Denied" => {
                    denied = true;
                    approved
                }
                _ => false,
            };
            if clash {
                let msg = "Approved and Denied conditions are mutually exclusive";
                errs.push(field::invalid(&at.child("type"), ty, msg));
            }
        }
        if !opts.allow_duplicate_condition_types && !seen.insert(ty) {
            errs.push(field::duplicate(&at.child("type"), ty));
        }
    }
    errs
}

fn of_type<'a>(csr: &'a Value, ty: &str) -> Vec<&'a Value> {
    conditions(csr)
        .iter()
        .filter(|c| s(c, "/type") == ty)
        .collect()
}

/// Upstream `validateCertificateSigningRequestUpdate`.
pub fn validate_update(new: &Value, old: &Value, opts: &Options) -> FieldErrors {
    let mut errs = validate(new, opts);
    let path = Path::new("status.conditions");
    let mut e = Vec::new();
    for ty in TRUE_ONLY_TYPES {
        if of_type(new, ty).len() < of_type(old, ty).len() {
            let msg = format!("updates may not remove a condition of type {}", quote(ty));
            e.push(field::forbidden(&path, &msg));
        }
    }
    if !opts.allow_setting_approval_conditions {
        for ty in ["Approved", "Denied"] {
            let (was, is) = (of_type(old, ty), of_type(new, ty));
            if is.len() > was.len() {
                let msg = format!("updates may not add a condition of type {}", quote(ty));
                e.push(field::forbidden(&path, &msg));
            } else if is.len() == was.len() && is != was {
                // Upstream appends a `cmp.Diff` of the conditions to this message.
                let msg = format!("updates may not modify a condition of type {}", quote(ty));
                e.push(field::forbidden(&path, &msg));
            }
        }
    }
    let new_cert = bytes(new, "/status/certificate").unwrap_or_default();
    let old_cert = bytes(old, "/status/certificate").unwrap_or_default();
    if new_cert != old_cert {
        let path = Path::new("status.certificate");
        if !opts.allow_setting_certificate {
            e.push(field::forbidden(
                &path,
                "updates may not set certificate content",
            ));
        } else if !old_cert.is_empty() {
            let msg = "updates may not modify existing certificate content";
            e.push(field::forbidden(&path, msg));
        }
    }
    errs.extend(causes(e));
    errs.extend(validate_object_meta_update(new, old));
    errs
}
