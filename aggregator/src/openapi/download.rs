//! Downloading a service-backed APIService's OpenAPI documents, after upstream's
//! downloaders (`controllers/openapi/aggregator/downloader.go`,
//! `controllers/openapiv3/aggregator/downloader.go`): `/openapi/v2` as JSON, conditional
//! on the last ETag (one the aggregator made up for a server that sends none is compared
//! here instead), and the `/openapi/v3` index; both as `system:aggregator` through the
//! proxy, so an APIService that is not available fails as the proxy's 503 does.

use std::time::Duration;

use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::Value;

use crate::apiservice::conditions;
use crate::backend::{Backends, Verify};

/// Upstream's `specDownloadTimeout`.
const TIMEOUT: Duration = Duration::from_secs(60);
/// Upstream's `aggregatorUser`.
const USER: &str = "system:aggregator";
/// Upstream's `locallyGeneratedEtagPrefix`: marks an ETag made here from the bytes.
const LOCAL_ETAG_PREFIX: &str = "\"6E8F849B434D4B98A569B9D7718876E9-";

/// What a `/openapi/v2` download gives.
#[derive(Debug, PartialEq)]
pub enum V2 {
    NotModified,
    Spec { spec: Value, etag: String },
}

async fn get(
    backends: &Backends,
    api_service: &Value,
    path: &str,
    headers: HeaderMap,
) -> Result<kas_webhook::client::Response, String> {
    if !conditions::is_available(api_service) {
        return Err(format!("GET {path}: 503 service unavailable"));
    }
    let user = kas_auth::UserInfo {
        name: USER.to_owned(),
        ..Default::default()
    };
    let get = backends.get_as(api_service, path, headers, &user, Verify::AsProxy, TIMEOUT);
    match tokio::time::timeout(TIMEOUT, get).await {
        Ok(Ok((_, resp))) => Ok(resp),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("request timed out".to_owned()),
    }
}

/// Upstream's `etagFor`.
fn local_etag(bytes: &[u8]) -> String {
    let digest = kas_endpoints::openapi::Document::new(bytes.to_vec()).etag;
    format!("{LOCAL_ETAG_PREFIX}{digest}\"")
}

/// Upstream's `Downloader.Download` with the cacheable downloader's handling: a 404 is
/// "no spec", an error like any other failure.
pub async fn v2(backends: &Backends, api_service: &Value, etag: &str) -> Result<V2, String> {
    let mut headers = HeaderMap::new();
    headers.insert(
        http::header::ACCEPT,
        HeaderValue::from_static("application/json"),
    );
    if !etag.is_empty()
        && !etag.starts_with(LOCAL_ETAG_PREFIX)
        && let Ok(v) = HeaderValue::from_str(etag)
    {
        headers.insert(http::header::IF_NONE_MATCH, v);
    }
    let resp = get(backends, api_service, "/openapi/v2", headers).await?;
    match resp.status {
        StatusCode::NOT_MODIFIED if etag.is_empty() => {
            Err("http.StatusNotModified is not allowed in absence of etag".to_owned())
        }
        StatusCode::NOT_MODIFIED => Ok(V2::NotModified),
        StatusCode::NOT_FOUND => Err("resource not found".to_owned()),
        StatusCode::OK => {
            let spec: Value = serde_json::from_slice(&resp.body).map_err(|e| e.to_string())?;
            let served = resp
                .headers
                .get(http::header::ETAG)
                .and_then(|v| v.to_str().ok())
                .filter(|v| !v.is_empty());
            let new = match served {
                Some(e) => e.to_owned(),
                None => local_etag(&resp.body),
            };
            if served.is_none() && new == etag {
                return Ok(V2::NotModified);
            }
            Ok(V2::Spec { spec, etag: new })
        }
        code => Err(format!(
            "failed to retrieve openAPI spec, http error: {}: {}",
            code.as_u16(),
            String::from_utf8_lossy(&resp.body)
        )),
    }
}

/// Upstream's `OpenAPIV3Root`: the server's `/openapi/v3` index, `None` when it has none
/// (a 404: upstream then converts its v2 document).
pub async fn v3_root(backends: &Backends, api_service: &Value) -> Result<Option<Value>, String> {
    let resp = get(backends, api_service, "/openapi/v3", HeaderMap::new()).await?;
    match resp.status {
        StatusCode::NOT_FOUND => Ok(None),
        StatusCode::OK => serde_json::from_slice(&resp.body)
            .map(Some)
            .map_err(|e| e.to_string()),
        _ => Err("Error, could not get list of group versions for APIService".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_etags_are_marked() {
        let e = local_etag(b"{}");
        assert!(e.starts_with(LOCAL_ETAG_PREFIX) && e.ends_with('"'));
        assert_eq!(e.len(), LOCAL_ETAG_PREFIX.len() + 128 + 1);
    }
}
