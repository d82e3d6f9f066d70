//! Where a connect request goes, after upstream's `pkg/registry/core/pod/strategy.go`
//! (`validateContainer`, `getPodIP`, `ResourceLocation`), `pkg/registry/core/service`
//! (`ResourceLocation`), `k8s.io/apimachinery/pkg/util/net` (`SplitSchemeNamePort`) and
//! `pkg/util/node` (`GetPreferredNodeAddress`): the rules on objects, without the stores.

use std::net::IpAddr;

use kas_apimachinery::Status;
use serde_json::Value;

/// Upstream's `--kubelet-preferred-address-types` default.
pub const PREFERRED_ADDRESS_TYPES: &[&str] = &[
    "Hostname",
    "InternalDNS",
    "InternalIP",
    "ExternalDNS",
    "ExternalIP",
];
/// Upstream's `--kubelet-timeout` default.
pub const KUBELET_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
/// Upstream's `--kubelet-port` default, for nodes that report none.
pub const DEFAULT_KUBELET_PORT: i64 = 10250;

fn names<'a>(pod: &'a Value, list: &str) -> impl Iterator<Item = &'a str> {
    pod.pointer(&format!("/spec/{list}"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str))
}

/// Upstream's `validateContainer`: the container asked for, or the only one; 400 when
/// none is named and the choice is not obvious, or when the name is no container's.
pub fn validate_container(container: &str, pod: &Value) -> kas_registry::Result<String> {
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut all = names(pod, "initContainers")
        .chain(names(pod, "containers"))
        .chain(names(pod, "ephemeralContainers"));
    if !container.is_empty() {
        return match all.any(|c| c == container) {
            true => Ok(container.to_owned()),
            false => Err(Status::bad_request(&format!(
                "container {container} is not valid for pod {name}"
            ))
            .into()),
        };
    }
    let regular: Vec<&str> = names(pod, "containers").collect();
    match regular.len() {
        1 => Ok(regular[0].to_owned()),
        0 => Err(Status::bad_request(&format!(
            "a container name must be specified for pod {name}"
        ))
        .into()),
        _ => {
            let every: Vec<&str> = all.collect();
            Err(Status::bad_request(&format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                every.join(" ")
            ))
            .into())
        }
    }
}

/// The node a pod is bound to, if any.
pub fn node_name(pod: &Value) -> &str {
    pod.pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Upstream's `utilnet.SplitSchemeNamePort`: `name`, `name:port` or `scheme:name:port`,
/// the scheme `http`, `https` or empty; `None` when invalid.
pub fn split_scheme_name_port(id: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = id.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port] => (*scheme, *name, *port),
        _ => return None,
    };
    (!name.is_empty() && matches!(scheme, "" | "http" | "https")).then_some((scheme, name, port))
}

/// Go's `net.IP.IsGlobalUnicast`: not unspecified, loopback, multicast, link-local or
/// the IPv4 broadcast address.
pub fn is_global_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_multicast()
                || v4.is_link_local()
                || v4.is_broadcast())
        }
        IpAddr::V6(v6) => {
            let link_local = (v6.segments()[0] & 0xffc0) == 0xfe80;
            match v6.to_ipv4_mapped() {
                Some(v4) => is_global_unicast(IpAddr::V4(v4)),
                None => {
                    !(v6.is_unspecified() || v6.is_loopback() || v6.is_multicast() || link_local)
                }
            }
        }
    }
}

/// Upstream's pod `ResourceLocation` (pods/proxy): `(scheme, host[:port])` of the pod
/// `id` names, once the pod is fetched; the port is the one asked for, else the first
/// container port.
pub fn pod_proxy_host(pod: &Value, port: &str) -> kas_registry::Result<String> {
    let mut port = port.to_owned();
    if port.is_empty() {
        let first = pod
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find_map(|c| c.pointer("/ports/0/containerPort").and_then(Value::as_i64));
        if let Some(p) = first {
            port = p.to_string();
        }
    }
    let ip = pod
        .pointer("/status/podIPs/0/ip")
        .or_else(|| pod.pointer("/status/podIP"))
        .and_then(Value::as_str)
        .unwrap_or("");
    match ip.parse::<IpAddr>() {
        Ok(parsed) if is_global_unicast(parsed) => {}
        _ => return Err(Status::bad_request("address not allowed").into()),
    }
    Ok(if port.is_empty() {
        ip.to_owned()
    } else {
        kas_proxy::resolve::join_host_port(ip, &port)
    })
}

/// Upstream's `GetPreferredNodeAddress` with the preference of
/// `--kubelet-preferred-address-types`, and its `NoMatchError` (Go's `%v` of the
/// addresses) as a plain error (a 500).
pub fn preferred_node_address(
    node: &Value,
    preferred: &[impl AsRef<str>],
) -> kas_registry::Result<String> {
    let addresses: Vec<&Value> = node
        .pointer("/status/addresses")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let field = |a: &Value, f: &str| a.get(f).and_then(Value::as_str).unwrap_or("").to_owned();
    for wanted in preferred {
        if let Some(a) = addresses
            .iter()
            .find(|a| field(a, "type") == wanted.as_ref())
        {
            return Ok(field(a, "address"));
        }
    }
    let known: Vec<String> = addresses
        .iter()
        .map(|a| format!("{{{} {}}}", field(a, "type"), field(a, "address")))
        .collect();
    let message = format!(
        "no preferred addresses found; known addresses: [{}]",
        known.join(" ")
    );
    Err(Status::from_plain_error(message).into())
}

/// The kubelet's port a node reports, or the default.
pub fn kubelet_port(node: &Value) -> i64 {
    node.pointer("/status/daemonEndpoints/kubeletEndpoint/Port")
        .and_then(Value::as_i64)
        .filter(|p| *p > 0)
        .unwrap_or(DEFAULT_KUBELET_PORT)
}

/// Go's `net.JoinPreservingTrailingSlash` of a location's path and the `path` option.
pub fn join_preserving_trailing_slash(base: &str, sub: &str) -> String {
    let joined = format!("{base}/{sub}");
    let mut out: Vec<&str> = Vec::new();
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    let rooted = base.starts_with('/') || (base.is_empty() && sub.starts_with('/'));
    let mut path = out.join("/");
    if rooted {
        path.insert(0, '/');
    }
    if sub.ends_with('/') && !path.ends_with('/') {
        path.push('/');
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn container_choice_follows_upstream() {
        let two = json!({"metadata": {"name": "p"},
            "spec": {"initContainers": [{"name": "i"}], "containers": [{"name": "a"}, {"name": "b"}]}});
        let err = validate_container("", &two).unwrap_err().to_status();
        assert_eq!(err.code, 400);
        assert_eq!(
            err.message.as_deref(),
            Some("a container name must be specified for pod p, choose one of: [i a b]")
        );
        assert_eq!(
            validate_container("x", &two)
                .unwrap_err()
                .to_status()
                .message
                .as_deref(),
            Some("container x is not valid for pod p")
        );
        assert_eq!(validate_container("i", &two).unwrap(), "i");
        let one = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}});
        assert_eq!(validate_container("", &one).unwrap(), "c");
    }

    #[test]
    fn ids_split_as_upstream() {
        assert_eq!(split_scheme_name_port("p"), Some(("", "p", "")));
        assert_eq!(split_scheme_name_port("p:80"), Some(("", "p", "80")));
        assert_eq!(
            split_scheme_name_port("https:p:443"),
            Some(("https", "p", "443"))
        );
        assert_eq!(split_scheme_name_port("ftp:p:21"), None);
        assert_eq!(split_scheme_name_port(":80"), None);
        assert_eq!(split_scheme_name_port("a:b:c:d"), None);
    }

    #[test]
    fn pod_proxies_need_a_global_unicast_ip() {
        let pod = |ip: &str| {
            json!({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 8080}]}]},
                "status": {"podIP": ip, "podIPs": [{"ip": ip}]}})
        };
        assert_eq!(
            pod_proxy_host(&pod("10.1.2.3"), "").unwrap(),
            "10.1.2.3:8080"
        );
        assert_eq!(pod_proxy_host(&pod("fd00::1"), "9").unwrap(), "[fd00::1]:9");
        for bad in ["127.0.0.1", "", "169.254.1.1", "::1"] {
            let err = pod_proxy_host(&pod(bad), "").unwrap_err().to_status();
            assert_eq!(
                (err.code, err.message.as_deref()),
                (400, Some("address not allowed"))
            );
        }
    }

    #[test]
    fn node_addresses_follow_the_preference() {
        let node = json!({"status": {"addresses": [
            {"type": "ExternalIP", "address": "1.2.3.4"},
            {"type": "InternalIP", "address": "10.0.0.1"}]}});
        assert_eq!(
            preferred_node_address(&node, PREFERRED_ADDRESS_TYPES).unwrap(),
            "10.0.0.1"
        );
        assert_eq!(kubelet_port(&node), 10250);
        let err = preferred_node_address(&json!({}), PREFERRED_ADDRESS_TYPES)
            .unwrap_err()
            .to_status();
        assert_eq!(err.code, 500);
        assert_eq!(
            err.message.as_deref(),
            Some("no preferred addresses found; known addresses: []")
        );
        let other = json!({"status": {"addresses": [{"type": "Weird", "address": "x"}]}});
        assert_eq!(
            preferred_node_address(&other, PREFERRED_ADDRESS_TYPES)
                .unwrap_err()
                .to_status()
                .message
                .as_deref(),
            Some("no preferred addresses found; known addresses: [{Weird x}]")
        );
    }

    #[test]
    fn paths_join_as_go() {
        assert_eq!(join_preserving_trailing_slash("", ""), "");
        assert_eq!(join_preserving_trailing_slash("", "/a/b"), "/a/b");
        assert_eq!(join_preserving_trailing_slash("", "/a/b/"), "/a/b/");
        assert_eq!(join_preserving_trailing_slash("", "/"), "/");
    }
}
