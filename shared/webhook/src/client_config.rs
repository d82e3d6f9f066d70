//! The `clientConfig` of a webhook an API object names (admissionregistration's and
//! apiextensions' `WebhookClientConfig`): its `url`, or its `service` as
//! `https://<name>.<namespace>.svc:<port><path>` (the name the serving certificate must
//! carry), trusting its `caBundle`, else the system's roots.

use base64::Engine as _;
use serde_json::Value;

use crate::TlsConfig;

/// The URL to call, and the TLS settings to call it with (a `caBundle` that is not
/// base64 fails them, after the URL is known for the error's message).
pub fn endpoint(config: &Value) -> (String, Result<TlsConfig, String>) {
    let (url, server_name) = match config.get("url").and_then(Value::as_str) {
        Some(url) => (url.to_owned(), None),
        None => {
            let service = config.get("service").unwrap_or(&Value::Null);
            let text = |k: &str| service.get(k).and_then(Value::as_str).unwrap_or("");
            let host = format!("{}.{}.svc", text("name"), text("namespace"));
            let port = service.get("port").and_then(Value::as_i64).unwrap_or(443);
            (format!("https://{host}:{port}{}", text("path")), Some(host))
        }
    };
    let ca_data = match config.get("caBundle").and_then(Value::as_str) {
        Some(b64) if !b64.is_empty() => {
            match base64::engine::general_purpose::STANDARD.decode(b64) {
                Ok(pem) => Some(pem),
                Err(e) => return (url, Err(format!("caBundle: {e}"))),
            }
        }
        _ => None,
    };
    let tls = TlsConfig {
        ca_data,
        server_name,
        ..TlsConfig::default()
    };
    (url, Ok(tls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn urls_of_services_and_bundles() {
        let (url, tls) = endpoint(&json!({"url": "https://example.com/x"}));
        assert_eq!(url, "https://example.com/x");
        let tls = tls.unwrap();
        assert!(tls.ca_data.is_none() && tls.server_name.is_none());
        let (url, tls) = endpoint(&json!({
            "service": {"namespace": "ns", "name": "hook", "path": "/convert", "port": 8443},
            "caBundle": "cGVt",
        }));
        assert_eq!(url, "https://hook.ns.svc:8443/convert");
        let tls = tls.unwrap();
        assert_eq!(tls.server_name.as_deref(), Some("hook.ns.svc"));
        assert_eq!(tls.ca_data.as_deref(), Some(&b"pem"[..]));
        let (url, tls) =
            endpoint(&json!({"service": {"namespace": "ns", "name": "h"}, "caBundle": "%"}));
        assert_eq!(url, "https://h.ns.svc:443");
        assert!(tls.unwrap_err().starts_with("caBundle: "));
    }
}
