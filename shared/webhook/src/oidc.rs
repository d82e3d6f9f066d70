//! The HTTPS side of kas-auth's OIDC authenticator: [`ProviderClient`] over a [`Client`],
//! as upstream's authenticator builds its `http.Client` (the issuer's
//! `certificateAuthority`, or the system's roots; a 30 s timeout).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use kas_auth::authentication::oidc::{HttpResponse, ProviderClient};

use crate::{Client, Result, TlsConfig};

/// Upstream's client timeout for discovery and key fetches.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Fetches discovery documents and key sets.
pub struct OidcClient {
    client: Client,
}

impl OidcClient {
    /// A client trusting `certificate_authority` (PEM), or the system's roots when empty.
    pub fn new(certificate_authority: &str) -> Result<Arc<OidcClient>> {
        let tls = TlsConfig {
            ca_data: (!certificate_authority.is_empty())
                .then(|| certificate_authority.as_bytes().to_vec()),
            ..TlsConfig::default()
        };
        Ok(Arc::new(OidcClient {
            client: Client::new(&tls, TIMEOUT)?,
        }))
    }
}

impl ProviderClient for OidcClient {
    fn get<'a>(
        &'a self,
        url: &'a str,
        bearer: Option<&'a str>,
    ) -> BoxFuture<'a, Result<HttpResponse, String>> {
        Box::pin(async move {
            let mut headers = http::HeaderMap::new();
            if let Some(token) = bearer {
                let value = http::HeaderValue::from_str(&format!("Bearer {token}"))
                    .map_err(|_| "invalid access token".to_owned())?;
                headers.insert(http::header::AUTHORIZATION, value);
            }
            let resp = self
                .client
                .send(http::Method::GET, url, headers, bytes::Bytes::new())
                .await
                .map_err(|e| e.to_string())?;
            let header = |name: http::header::HeaderName| {
                resp.headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned()
            };
            Ok(HttpResponse {
                status: resp.status.as_u16(),
                content_type: header(http::header::CONTENT_TYPE),
                cache_control: header(http::header::CACHE_CONTROL),
                body: resp.body.to_vec(),
            })
        })
    }
}
