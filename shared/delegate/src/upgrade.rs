//! Upgrade requests (exec, attach and port-forward in SPDY or WebSocket, upgrades through
//! the proxy subresources and to aggregated servers) cross the hop over an HTTP/1.1
//! connection of their own to the picked endpoint, with the proxy client certificate and
//! the front-proxy identity as any request has them, `Connection` and `Upgrade` kept; a
//! `101` answer splices the client's connection with it, any other answer comes back as
//! it is (kas-proxy's `upgrade_over`, upstream's `tryUpgrade`). An endpoint that cannot be
//! dialed is ejected and the next one tried: nothing was sent to it.

use http::header::{self, HeaderValue};
use http::{Request, Response};
use kas_apimachinery::Status;
use kas_endpoints::{Body, write_status};
use kas_proxy::Location;

use crate::endpoint::EndpointState;
use crate::proxy::{Delegate, rewrite_headers};

impl Delegate {
    pub(crate) async fn forward_upgrade(&self, req: Request<Body>) -> Response<Body> {
        let (mut parts, body) = req.into_parts();
        let upgrade = parts.headers.get(header::UPGRADE).cloned();
        rewrite_headers(&mut parts);
        parts
            .headers
            .insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
        if let Some(upgrade) = upgrade {
            parts.headers.insert(header::UPGRADE, upgrade);
        }
        crate::trace::inject(&mut parts.headers);
        let path = parts.uri.path().to_owned();
        let query = parts.uri.query().unwrap_or("").to_owned();
        let mut tried = Vec::new();
        let mut last_error = String::from("no endpoints");
        for _ in 0..self.pool.len() + 1 {
            let Some((index, endpoint)) = self.pool.pick(&tried) else {
                break;
            };
            tried.push(index);
            let location = Location {
                scheme: "https".to_owned(),
                host: endpoint.dial.clone(),
                path: path.clone(),
                query: query.clone(),
            };
            let io = match endpoint.upgrades.dial(&location).await {
                Ok(io) => io,
                Err(e) => {
                    endpoint.set_state(EndpointState::Down);
                    last_error = format!("{}: {e}", endpoint.name);
                    continue;
                }
            };
            if let Ok(host) = HeaderValue::from_str(endpoint.authority.as_str()) {
                parts.headers.insert(header::HOST, host);
            }
            let req = Request::from_parts(parts, body);
            return match kas_proxy::upgrade_over(io, &location, req).await {
                Ok(resp) => resp,
                Err(e) => {
                    tracing::warn!(endpoint = %endpoint.name, error = %e, "delegate upgrade failed");
                    write_status(&Status::service_unavailable(&format!(
                        "error trying to reach service: {e}"
                    )))
                }
            };
        }
        tracing::warn!(error = %last_error, "no delegate endpoint could serve the upgrade");
        write_status(&Status::service_unavailable(&format!(
            "error trying to reach service: {last_error}"
        )))
    }
}

#[cfg(test)]
mod tests;
