//! Where a request for a Service goes, after upstream's `k8s.io/apiserver/pkg/util/proxy`
//! (`ResolveEndpoint` over EndpointSlices, as 1.33's aggregator resolves them, and
//! `ResolveCluster`) and the aggregator's `resolvers.go`: pure functions over the Service
//! and its EndpointSlices (`kubernetes.io/service-name` labels), no I/O.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

/// Why a Service gives no address; the text is upstream's error's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// Upstream's `NewServiceUnavailable` (no port, no endpoints).
    #[error("{0}")]
    ServiceUnavailable(String),
    /// The lister's NotFound: `service "api" not found`.
    #[error("service {0:?} not found")]
    NotFound(String),
    /// A plain error (`unsupported service type "ExternalName"`).
    #[error("{0}")]
    Other(String),
}

/// Upstream's `--enable-aggregator-routing`: endpoints instead of the cluster IP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Routing {
    #[default]
    ClusterIp,
    Endpoints,
}

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

pub fn service_type(svc: &Value) -> &str {
    match text(svc, "/spec/type") {
        // Go's zero value is what an unset type decodes to; the API defaults it.
        "" => "ClusterIP",
        t => t,
    }
}

/// Upstream's `findServicePort`: the service port whose `port` is `port`, by its name.
pub fn find_service_port<'a>(
    svc: &'a Value,
    name: &str,
    port: i64,
) -> Result<&'a str, ResolveError> {
    svc.pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|p| p.get("port").and_then(Value::as_i64) == Some(port))
        .map(|p| p.get("name").and_then(Value::as_str).unwrap_or(""))
        .ok_or_else(|| {
            ResolveError::ServiceUnavailable(format!(
                "no service port {port} found for service {name:?}"
            ))
        })
}

/// Go's `net.JoinHostPort`.
pub fn join_host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Upstream's `ResolveCluster`: `host:port` of the Service's cluster IP (or external name).
pub fn resolve_cluster(svc: Option<&Value>, name: &str, port: i64) -> Result<String, ResolveError> {
    let svc = svc.ok_or_else(|| ResolveError::NotFound(name.to_owned()))?;
    let cluster_ip = text(svc, "/spec/clusterIP");
    match service_type(svc) {
        "ClusterIP" if cluster_ip == "None" => Err(ResolveError::Other(
            r#"cannot route to service with ClusterIP "None""#.to_owned(),
        )),
        "ClusterIP" | "LoadBalancer" | "NodePort" => {
            find_service_port(svc, name, port)?;
            Ok(join_host_port(cluster_ip, port))
        }
        "ExternalName" => Ok(join_host_port(text(svc, "/spec/externalName"), port)),
        other => Err(ResolveError::Other(format!(
            "unsupported service type {other:?}"
        ))),
    }
}

/// Whether an endpoint is ready (a missing `ready` counts as ready, as upstream's).
fn ready(endpoint: &Value) -> bool {
    endpoint
        .pointer("/conditions/ready")
        .and_then(Value::as_bool)
        != Some(false)
}

/// The port named `port_name` of a slice, when it has a number.
fn slice_port(slice: &Value, port_name: &str) -> Option<i64> {
    slice.get("ports")?.as_array()?.iter().find_map(|p| {
        (p.get("name").and_then(Value::as_str) == Some(port_name))
            .then(|| p.get("port").and_then(Value::as_i64))
            .flatten()
    })
}

/// Upstream's `ResolveEndpoint` over EndpointSlices: a ready endpoint of a slice with the
/// service port's name, slices of the Service's primary IP family first, each looked at
/// from a random endpoint on.
pub fn resolve_endpoint(
    svc: Option<&Value>,
    slices: &[&Value],
    name: &str,
    port: i64,
) -> Result<String, ResolveError> {
    let svc = svc.ok_or_else(|| ResolveError::NotFound(name.to_owned()))?;
    let kind = service_type(svc);
    if !matches!(kind, "ClusterIP" | "LoadBalancer" | "NodePort") {
        return Err(ResolveError::Other(format!(
            "unsupported service type {kind:?}"
        )));
    }
    let port_name = find_service_port(svc, name, port)?;
    let no_endpoints =
        || ResolveError::ServiceUnavailable(format!("no endpoints available for service {name:?}"));
    if slices.is_empty() {
        return Err(no_endpoints());
    }
    let primary = text(svc, "/spec/ipFamilies/0");
    let mut ordered: Vec<(bool, u64, &Value)> = slices
        .iter()
        .map(|s| {
            (
                text(s, "/addressType") != primary || primary.is_empty(),
                random(),
                *s,
            )
        })
        .collect();
    ordered.sort_by_key(|(other_family, r, _)| (*other_family, *r));
    for (_, _, slice) in ordered {
        let Some(number) = slice_port(slice, port_name) else {
            continue;
        };
        let endpoints = slice
            .get("endpoints")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        if endpoints.is_empty() {
            continue;
        }
        let offset = (random() % endpoints.len() as u64) as usize;
        for i in 0..endpoints.len() {
            let endpoint = &endpoints[(i + offset) % endpoints.len()];
            if ready(endpoint) {
                let ip = text(endpoint, "/addresses/0");
                return Ok(join_host_port(ip, number));
            }
        }
    }
    Err(no_endpoints())
}

/// Upstream's `hasAvailableEndpoint`: a slice with a ready endpoint and a numbered port of
/// that name.
pub fn has_available_endpoint(port_name: &str, slices: &[&Value]) -> bool {
    slices.iter().any(|s| {
        let any_ready = s
            .get("endpoints")
            .and_then(Value::as_array)
            .is_some_and(|e| e.iter().any(ready));
        any_ready && slice_port(s, port_name).is_some()
    })
}

/// A random number for spreading requests over endpoints (std's per-instance hasher keys).
fn random() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn svc() -> Value {
        json!({"metadata": {"name": "api", "namespace": "wardle"},
            "spec": {"type": "ClusterIP", "clusterIP": "10.0.0.9", "ipFamilies": ["IPv4"],
                     "ports": [{"name": "https", "port": 443, "targetPort": 8443}]}})
    }

    fn slice(ip: &str, ready: bool) -> Value {
        json!({"addressType": "IPv4", "ports": [{"name": "https", "port": 8443}],
            "endpoints": [{"addresses": [ip], "conditions": {"ready": ready}}]})
    }

    #[test]
    fn cluster_routing_takes_the_cluster_ip_and_service_port() {
        assert_eq!(
            resolve_cluster(Some(&svc()), "api", 443).unwrap(),
            "10.0.0.9:443"
        );
        assert_eq!(
            resolve_cluster(Some(&svc()), "api", 444)
                .unwrap_err()
                .to_string(),
            "no service port 444 found for service \"api\""
        );
        assert_eq!(
            resolve_cluster(None, "api", 443).unwrap_err().to_string(),
            "service \"api\" not found"
        );
        let mut headless = svc();
        headless["spec"]["clusterIP"] = json!("None");
        assert_eq!(
            resolve_cluster(Some(&headless), "api", 443)
                .unwrap_err()
                .to_string(),
            "cannot route to service with ClusterIP \"None\""
        );
    }

    #[test]
    fn endpoint_routing_takes_a_ready_endpoint_of_the_named_port() {
        let (ready, unready) = (slice("10.9.0.2", true), slice("10.9.0.3", false));
        for _ in 0..20 {
            assert_eq!(
                resolve_endpoint(Some(&svc()), &[&unready, &ready], "api", 443).unwrap(),
                "10.9.0.2:8443"
            );
        }
        assert_eq!(
            resolve_endpoint(Some(&svc()), &[&unready], "api", 443)
                .unwrap_err()
                .to_string(),
            "no endpoints available for service \"api\""
        );
        assert!(has_available_endpoint("https", &[&unready, &ready]));
        assert!(!has_available_endpoint("other", &[&ready]));
        assert!(!has_available_endpoint("https", &[&unready]));
    }
}
