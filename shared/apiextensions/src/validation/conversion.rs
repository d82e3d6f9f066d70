//! `spec.conversion`, after upstream's `validateCustomResourceConversion`,
//! `validateConversionReviewVersions` and k8s.io/apiserver's `webhook.ValidateWebhookURL`,
//! `ValidateWebhookService` and `ValidateCABundle`.

use kas_apimachinery::golang::base64::STD_ENCODING;
use kas_apimachinery::validation::field::{self, BadValue, Error, Path};
use kas_apimachinery::validation::{is_dns1035_label, is_dns1123_subdomain, is_valid_port_num};
use serde_json::Value;

use super::internal::Conversion;
use super::util::{obj, opt_str, str_of};

/// Upstream `acceptedConversionReviewVersions`, sorted.
const ACCEPTED_REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// Upstream `validateEnumStrings`.
pub fn validate_enum(path: &Path, value: &str, accepted: &[&str], required: bool) -> Vec<Error> {
    if value.is_empty() {
        return if required {
            vec![field::required(path, "")]
        } else {
            Vec::new()
        };
    }
    if accepted.contains(&value) {
        return Vec::new();
    }
    vec![field::not_supported(path, value, accepted)]
}

/// Upstream `hasValidConversionReviewVersionOrEmpty`.
pub fn has_valid_review_version_or_empty(versions: Option<&[Value]>) -> bool {
    let versions = versions.unwrap_or(&[]);
    versions.is_empty()
        || versions
            .iter()
            .any(|v| ACCEPTED_REVIEW_VERSIONS.contains(&v.as_str().unwrap_or("")))
}

fn validate_review_versions(versions: Option<&[Value]>, require: bool, path: &Path) -> Vec<Error> {
    let versions: Vec<&str> = versions
        .unwrap_or(&[])
        .iter()
        .map(|v| v.as_str().unwrap_or(""))
        .collect();
    if versions.is_empty() {
        return vec![field::required(path, "")];
    }
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut accepted = false;
    for (i, v) in versions.iter().enumerate() {
        if seen.contains(v) {
            errs.push(field::invalid(&path.index(i), *v, "duplicate version"));
            continue;
        }
        seen.push(v);
        for msg in is_dns1035_label(v) {
            errs.push(field::invalid(&path.index(i), *v, &msg));
        }
        accepted |= ACCEPTED_REVIEW_VERSIONS.contains(v);
    }
    if require && !accepted {
        let all = versions.iter().map(|s| (*s).to_owned()).collect();
        errs.push(field::invalid(
            path,
            BadValue::Strings(Some(all)),
            &format!(
                "must include at least one of {}",
                ACCEPTED_REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
    errs
}

/// Upstream `webhook.ValidateWebhookURL(path, url, forceHttps=true)`.
fn validate_url(path: &Path, raw: &str) -> Vec<Error> {
    const FORM: &str = "; desired format: https://host[/path]";
    let u = match super::url::parse(raw) {
        Ok(u) => u,
        Err(e) => {
            let msg = format!("url must be a valid URL: {e}{FORM}");
            return vec![field::required(path, &msg)];
        }
    };
    let mut errs = Vec::new();
    if u.scheme != "https" {
        let msg = format!("'https' is the only allowed URL scheme{FORM}");
        errs.push(field::invalid(path, u.scheme.as_str(), &msg));
    }
    if u.host.is_empty() {
        errs.push(field::invalid(
            path,
            u.host,
            &format!("host must be specified{FORM}"),
        ));
    }
    if let Some(user) = u.user {
        let msg = "user information is not permitted in the URL";
        errs.push(field::invalid(path, user, msg));
    }
    if !u.fragment.is_empty() {
        let msg = "fragments are not permitted in the URL";
        errs.push(field::invalid(path, u.fragment, msg));
    }
    if !u.query.is_empty() {
        let msg = "query parameters are not permitted in the URL";
        errs.push(field::invalid(path, u.query, msg));
    }
    errs
}

/// Upstream `webhook.ValidateWebhookService`.
fn validate_service(path: &Path, svc: &Value) -> Vec<Error> {
    let mut errs = Vec::new();
    if str_of(svc, "name").is_empty() {
        errs.push(field::required(
            &path.child("name"),
            "service name is required",
        ));
    }
    if str_of(svc, "namespace").is_empty() {
        let msg = "service namespace is required";
        errs.push(field::required(&path.child("namespace"), msg));
    }
    // Defaulting sets 443; an explicit null reads as 0 after decoding.
    let port = svc.get("port").and_then(Value::as_i64).unwrap_or(0);
    let msgs = is_valid_port_num(port);
    if !msgs.is_empty() {
        let msg = format!("port is not valid: {}", msgs.join(", "));
        errs.push(field::invalid(&path.child("port"), port, &msg));
    }
    let Some(url_path) = opt_str(svc, "path") else {
        return errs;
    };
    let p = path.child("path");
    if url_path == "/" || url_path.is_empty() {
        return errs;
    }
    if url_path == "//" {
        errs.push(field::invalid(&p, url_path, "segment[0] may not be empty"));
        return errs;
    }
    if !url_path.starts_with('/') {
        errs.push(field::invalid(&p, url_path, "must start with a '/'"));
    }
    let check = url_path.get(1..).unwrap_or("");
    let check = check.strip_suffix('/').unwrap_or(check);
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            let msg = format!("segment[{i}] may not be empty");
            errs.push(field::invalid(&p, url_path, &msg));
            continue;
        }
        for failure in is_dns1123_subdomain(step) {
            let msg = format!("segment[{i}]: {failure}");
            errs.push(field::invalid(&p, url_path, &msg));
        }
    }
    errs
}

/// Go's `%#v` of a `[]byte`.
fn go_bytes(bytes: &[u8]) -> BadValue {
    let parts: Vec<String> = bytes.iter().map(|b| format!("0x{b:x}")).collect();
    BadValue::Raw(format!("[]byte{{{}}}", parts.join(", ")))
}

/// The decoded `caBundle`, or `None` when unset (invalid base64 fails decoding upstream,
/// before validation).
fn ca_bundle(cc: &Value) -> Option<Vec<u8>> {
    let raw = opt_str(cc, "caBundle")?;
    STD_ENCODING
        .decode_string(raw)
        .ok()
        .filter(|b| !b.is_empty())
}

/// Upstream `webhook.ValidateCABundle`, approximated: client-go fails when no PEM
/// `CERTIFICATE` block can be read (certificates are not parsed here).
pub fn ca_bundle_error(bundle: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bundle);
    if !text.contains("-----BEGIN ") {
        return Some(
            "unable to load root certificates: unable to parse bytes as PEM block".to_owned(),
        );
    }
    if !text.contains("-----BEGIN CERTIFICATE-----") {
        return Some(
            "unable to load root certificates: no valid certificate authority data seen".to_owned(),
        );
    }
    None
}

/// Whether the conversion webhook's CA bundle is set and invalid (for
/// `allowInvalidCABundle`).
pub fn has_invalid_ca_bundle(crd_spec_conversion: Option<&Conversion<'_>>) -> Option<bool> {
    let cc = crd_spec_conversion?.webhook_client_config?;
    let bundle = ca_bundle(cc)?;
    Some(ca_bundle_error(&bundle).is_some())
}

fn validate_client_config(cc: &Value, path: &Path, allow_invalid_ca: bool) -> Vec<Error> {
    let mut errs = Vec::new();
    let url = opt_str(cc, "url");
    let service = obj(cc, "service");
    match (url, service) {
        (Some(url), None) => errs.extend(validate_url(&path.child("url"), url)),
        (None, Some(svc)) => errs.extend(validate_service(&path.child("service"), svc)),
        _ => errs.push(field::required(
            path,
            "exactly one of url or service is required",
        )),
    }
    if let Some(bundle) = ca_bundle(cc)
        && !allow_invalid_ca
        && let Some(msg) = ca_bundle_error(&bundle)
    {
        errs.push(field::invalid(
            &path.child("caBundle"),
            go_bytes(&bundle),
            &msg,
        ));
    }
    errs
}

/// Upstream `validateCustomResourceConversion`.
pub fn validate_conversion(
    conversion: Option<&Conversion<'_>>,
    require_recognized: bool,
    allow_invalid_ca: bool,
    path: &Path,
) -> Vec<Error> {
    let Some(c) = conversion else {
        return Vec::new();
    };
    let mut errs = validate_enum(
        &path.child("strategy"),
        c.strategy,
        &["None", "Webhook"],
        true,
    );
    let cc_path = path.child("webhookClientConfig");
    let review_path = path.child("conversionReviewVersions");
    if c.strategy == "Webhook" {
        match c.webhook_client_config {
            None => errs.push(field::required(
                &cc_path,
                "required when strategy is set to Webhook",
            )),
            Some(cc) => errs.extend(validate_client_config(cc, &cc_path, allow_invalid_ca)),
        }
        errs.extend(validate_review_versions(
            c.conversion_review_versions,
            require_recognized,
            &review_path,
        ));
    } else {
        const NOT_WEBHOOK: &str = "should not be set when strategy is not set to Webhook";
        if c.webhook_client_config.is_some() {
            errs.push(field::forbidden(&cc_path, NOT_WEBHOOK));
        }
        if !c.conversion_review_versions.unwrap_or(&[]).is_empty() {
            errs.push(field::forbidden(&review_path, NOT_WEBHOOK));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(conversion: Value) -> Vec<String> {
        let crd = json!({"spec": {"conversion": conversion}});
        let spec = super::super::internal::spec(&crd);
        let path = Path::new("spec").child("conversion");
        validate_conversion(spec.conversion.as_ref(), true, true, &path)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn strategy_rules() {
        assert!(check(json!({"strategy": "None"})).is_empty());
        assert_eq!(
            check(json!({"strategy": "Foo"})),
            vec![
                r#"spec.conversion.strategy: Unsupported value: "Foo": supported values: "None", "Webhook""#
            ]
        );
        assert_eq!(
            check(json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}})),
            vec![
                "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook"
            ]
        );
        assert_eq!(
            check(
                json!({"strategy": "None", "webhook": {"clientConfig": {"url": "https://a"},
                "conversionReviewVersions": ["v1"]}})
            ),
            vec![
                "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
                "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook",
            ]
        );
    }

    #[test]
    fn webhook_rules() {
        let hook = |cc: Value, versions: Value| {
            check(
                json!({"strategy": "Webhook", "webhook": {"clientConfig": cc,
                "conversionReviewVersions": versions}}),
            )
        };
        assert!(hook(json!({"url": "https://host/path"}), json!(["v1"])).is_empty());
        assert_eq!(
            hook(json!({"url": "https://a b"}), json!(["v1"])),
            vec![
                r#"spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: parse "https://a b": invalid character " " in host name; desired format: https://host[/path]"#
            ]
        );
        assert_eq!(
            hook(json!({"url": "http://u@host?q=1#f"}), json!(["v2", "v2"])),
            vec![
                r#"spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]"#,
                r#"spec.conversion.webhookClientConfig.url: Invalid value: "u": user information is not permitted in the URL"#,
                r#"spec.conversion.webhookClientConfig.url: Invalid value: "f": fragments are not permitted in the URL"#,
                r#"spec.conversion.webhookClientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL"#,
                r#"spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version"#,
                r#"spec.conversion.conversionReviewVersions: Invalid value: []string{"v2", "v2"}: must include at least one of v1, v1beta1"#,
            ]
        );
        assert_eq!(
            hook(
                json!({"url": "https://a", "service": {"name": "s", "namespace": "n"}}),
                json!(["v1"])
            ),
            vec![
                "spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required"
            ]
        );
        assert_eq!(
            hook(json!({"service": {"port": 0, "path": "/a//B"}}), json!([])),
            vec![
                "spec.conversion.webhookClientConfig.service.name: Required value: service name is required",
                "spec.conversion.webhookClientConfig.service.namespace: Required value: service namespace is required",
                "spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
                r#"spec.conversion.webhookClientConfig.service.path: Invalid value: "/a//B": segment[1] may not be empty"#,
                r#"spec.conversion.webhookClientConfig.service.path: Invalid value: "/a//B": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
                "spec.conversion.conversionReviewVersions: Required value",
            ]
        );
    }

    #[test]
    fn ca_bundles() {
        let crd = json!({"spec": {"conversion": {"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": "https://a", "caBundle": "Zm9v"},
            "conversionReviewVersions": ["v1"]}}}});
        let spec = super::super::internal::spec(&crd);
        let path = Path::new("spec").child("conversion");
        // Allowed on create and before the CRD is established.
        assert!(validate_conversion(spec.conversion.as_ref(), true, true, &path).is_empty());
        let got: Vec<String> = validate_conversion(spec.conversion.as_ref(), true, false, &path)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            vec![
                "spec.conversion.webhookClientConfig.caBundle: Invalid value: []byte{0x66, 0x6f, 0x6f}: unable to load root certificates: unable to parse bytes as PEM block"
            ]
        );
        assert_eq!(has_invalid_ca_bundle(spec.conversion.as_ref()), Some(true));
        let pem = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        assert_eq!(ca_bundle_error(pem), None);
    }
}
