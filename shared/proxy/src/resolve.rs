//! Where a request for a Service goes, after upstream's `k8s.io/apiserver/pkg/util/proxy`
//! (`ResolveEndpoint` over Endpoints, as 1.33's aggregator resolves them, and
//! `ResolveCluster`) and the aggregator's `resolvers.go`: pure functions over the Service
//! and its Endpoints, no I/O.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

/// Why a Service gives no address; the text is upstream's error's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// Upstream's `NewServiceUnavailable` (no port, no endpoints).
    #[error("{0}")]
    ServiceUnavailable(String),
    /// A lister's NotFound: `service "api" not found`, `endpoints "api" not found`.
    #[error("{0} {1:?} not found")]
    NotFound(&'static str, String),
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

/// Go's `net.JoinHostPort`: IPv6 literals in brackets.
pub fn join_host_port(host: &str, port: impl std::fmt::Display) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Upstream's `ResolveCluster`: `host:port` of the Service's cluster IP (or external name).
pub fn resolve_cluster(svc: Option<&Value>, name: &str, port: i64) -> Result<String, ResolveError> {
    let svc = svc.ok_or_else(|| ResolveError::NotFound("service", name.to_owned()))?;
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

/// Upstream 1.33's `ResolveEndpoint` over the Service's Endpoints: from a random subset
/// on, the first with addresses and a port of the service port's name, and a random
/// address of it. (1.34 moved the aggregator to EndpointSlices; 1.33 reads Endpoints.)
pub fn resolve_endpoint(
    svc: Option<&Value>,
    endpoints: Option<&Value>,
    name: &str,
    port: i64,
) -> Result<String, ResolveError> {
    let svc = svc.ok_or_else(|| ResolveError::NotFound("service", name.to_owned()))?;
    let kind = service_type(svc);
    if !matches!(kind, "ClusterIP" | "LoadBalancer" | "NodePort") {
        return Err(ResolveError::Other(format!(
            "unsupported service type {kind:?}"
        )));
    }
    let port_name = find_service_port(svc, name, port)?;
    let endpoints =
        endpoints.ok_or_else(|| ResolveError::NotFound("endpoints", name.to_owned()))?;
    let subsets = list(endpoints, "/subsets");
    let no_endpoints =
        || ResolveError::ServiceUnavailable(format!("no endpoints available for service {name:?}"));
    if subsets.is_empty() {
        return Err(no_endpoints());
    }
    let seed = random_below(subsets.len());
    for i in 0..subsets.len() {
        let subset = &subsets[(seed + i) % subsets.len()];
        let addresses = list(subset, "/addresses");
        if addresses.is_empty() {
            continue;
        }
        let Some(p) = list(subset, "/ports")
            .iter()
            .find(|p| text(p, "/name") == port_name)
        else {
            continue;
        };
        let ip = text(&addresses[random_below(addresses.len())], "/ip");
        let number = p.get("port").and_then(Value::as_i64).unwrap_or(0);
        return Ok(join_host_port(ip, number));
    }
    Err(no_endpoints())
}

/// The remote availability check: a subset with addresses and a port named `port_name`.
pub fn has_active_endpoints(port_name: &str, endpoints: &Value) -> bool {
    list(endpoints, "/subsets").iter().any(|subset| {
        !list(subset, "/addresses").is_empty()
            && list(subset, "/ports")
                .iter()
                .any(|p| text(p, "/name") == port_name)
    })
}

fn list<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn random_below(n: usize) -> usize {
    (random() % n.max(1) as u64) as usize
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

    fn endpoints(subsets: Value) -> Value {
        json!({"metadata": {"name": "api", "namespace": "wardle"}, "subsets": subsets})
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
    fn endpoint_routing_takes_an_address_of_a_subset_with_the_named_port() {
        let eps = endpoints(json!([
            {"notReadyAddresses": [{"ip": "10.9.0.3"}], "ports": [{"name": "https", "port": 8443}]},
            {"addresses": [{"ip": "10.9.0.4"}], "ports": [{"name": "other", "port": 1}]},
            {"addresses": [{"ip": "10.9.0.2"}], "ports": [{"name": "https", "port": 8443}]}]));
        for _ in 0..20 {
            assert_eq!(
                resolve_endpoint(Some(&svc()), Some(&eps), "api", 443).unwrap(),
                "10.9.0.2:8443"
            );
        }
        assert!(has_active_endpoints("https", &eps));
        let none = endpoints(json!([
            {"notReadyAddresses": [{"ip": "10.9.0.3"}], "ports": [{"name": "https", "port": 8443}]}]));
        assert!(!has_active_endpoints("https", &none));
        assert_eq!(
            resolve_endpoint(Some(&svc()), Some(&none), "api", 443)
                .unwrap_err()
                .to_string(),
            "no endpoints available for service \"api\""
        );
        assert_eq!(
            resolve_endpoint(Some(&svc()), None, "api", 443)
                .unwrap_err()
                .to_string(),
            "endpoints \"api\" not found"
        );
    }
}
