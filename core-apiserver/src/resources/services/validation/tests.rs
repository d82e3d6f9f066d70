use serde_json::{Value, json};

use super::{validate_service, validate_service_status_update, validate_service_update};

const IP_MSG: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
const CIDR_MSG: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
const QUALIFIED_NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

fn messages(errs: Vec<kas_apimachinery::validation::field::Error>) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

fn create(svc: &Value) -> Vec<String> {
    messages(validate_service(svc))
}

fn update(new: &Value, old: &Value) -> Vec<String> {
    messages(validate_service_update(new, old))
}

fn status(new: &Value) -> Vec<String> {
    messages(validate_service_status_update(new, new))
}

/// Sets the value at a JSON pointer, creating objects on the way; `Value::Null` removes it.
fn set(v: &mut Value, pointer: &str, value: Value) {
    let unescape = |s: &str| s.replace("~1", "/").replace("~0", "~");
    let (parent, key) = pointer.rsplit_once('/').expect("pointer");
    let key = unescape(key);
    let mut cur = v;
    for part in parent.split('/').skip(1).map(unescape) {
        cur = match cur {
            Value::Array(a) => &mut a[part.parse::<usize>().expect("index")],
            other => {
                if !other.is_object() {
                    *other = json!({});
                }
                other
                    .as_object_mut()
                    .expect("object")
                    .entry(part.clone())
                    .or_insert_with(|| json!({}))
            }
        };
    }
    if let Value::Array(a) = cur {
        a[key.parse::<usize>().expect("index")] = value;
        return;
    }
    let map = cur.as_object_mut().expect("object");
    if value.is_null() {
        map.remove(&key);
    } else {
        map.insert(key, value);
    }
}

fn with(base: &Value, changes: &[(&str, Value)]) -> Value {
    let mut v = base.clone();
    for (pointer, value) in changes {
        set(&mut v, pointer, value.clone());
    }
    v
}

fn cluster_ip() -> Value {
    json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "type": "ClusterIP",
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}],
            "selector": {"app": "web"},
            "sessionAffinity": "None",
            "clusterIP": "10.0.0.10",
            "clusterIPs": ["10.0.0.10"],
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster"
        },
        "status": {"loadBalancer": {}}
    })
}

fn node_port() -> Value {
    with(
        &cluster_ip(),
        &[
            ("/spec/type", json!("NodePort")),
            (
                "/spec/ports",
                json!([{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http", "nodePort": 30080},
                       {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53, "nodePort": 30053}]),
            ),
            ("/spec/externalTrafficPolicy", json!("Cluster")),
        ],
    )
}

fn load_balancer() -> Value {
    with(
        &node_port(),
        &[
            ("/spec/type", json!("LoadBalancer")),
            ("/spec/allocateLoadBalancerNodePorts", json!(true)),
            ("/spec/externalTrafficPolicy", json!("Local")),
            ("/spec/healthCheckNodePort", json!(30500)),
            ("/spec/loadBalancerClass", json!("example.com/lb")),
            (
                "/spec/loadBalancerSourceRanges",
                json!(["10.0.0.0/8", " 192.168.0.0/16 ", "2001:db8::/64"]),
            ),
            ("/spec/trafficDistribution", json!("PreferClose")),
        ],
    )
}

fn external_name() -> Value {
    json!({
        "metadata": {"name": "ext", "namespace": "default"},
        "spec": {"type": "ExternalName", "externalName": "example.com.", "sessionAffinity": "None"}
    })
}

fn headless() -> Value {
    with(
        &cluster_ip(),
        &[
            ("/spec/ports", Value::Null),
            ("/spec/selector", Value::Null),
            ("/spec/clusterIP", json!("None")),
            ("/spec/clusterIPs", json!(["None"])),
            ("/spec/ipFamilies", json!(["IPv4", "IPv6"])),
            ("/spec/ipFamilyPolicy", json!("RequireDualStack")),
        ],
    )
}

fn dual_stack() -> Value {
    with(
        &cluster_ip(),
        &[
            ("/spec/clusterIPs", json!(["10.0.0.10", "fd00::10"])),
            ("/spec/ipFamilies", json!(["IPv4", "IPv6"])),
            ("/spec/ipFamilyPolicy", json!("PreferDualStack")),
        ],
    )
}

#[test]
fn valid_services() {
    for svc in [
        cluster_ip(),
        node_port(),
        load_balancer(),
        external_name(),
        headless(),
        dual_stack(),
    ] {
        assert_eq!(create(&svc), Vec::<String>::new(), "{svc}");
        assert_eq!(update(&svc, &svc), Vec::<String>::new(), "{svc}");
        assert_eq!(status(&svc), Vec::<String>::new(), "{svc}");
    }
    // Same port with other protocols, and an IPv4-mapped external IP that is not special.
    let svc = with(
        &cluster_ip(),
        &[
            (
                "/spec/ports",
                json!([{"name": "a", "port": 53, "protocol": "TCP", "targetPort": 53},
                       {"name": "b", "port": 53, "protocol": "UDP", "targetPort": 53},
                       {"name": "c", "port": 53, "protocol": "SCTP", "targetPort": 53, "appProtocol": "kubernetes.io/h2c"}]),
            ),
            ("/spec/externalIPs", json!(["192.0.2.1", "2001:db8::1"])),
            ("/spec/externalTrafficPolicy", json!("Local")),
        ],
    );
    assert_eq!(create(&svc), Vec::<String>::new());
}

fn assert_create(svc: Value, expected: &[&str]) {
    assert_eq!(create(&svc), expected, "{svc}");
}

#[test]
fn ports() {
    assert_create(
        with(&cluster_ip(), &[("/spec/ports", json!([]))]),
        &["spec.ports: Required value"],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[(
                "/spec/ports",
                json!([{"port": 80, "protocol": "TCP", "targetPort": 80},
                       {"name": "b", "port": 81, "protocol": "TCP", "targetPort": 81}]),
            )],
        ),
        &["spec.ports[0].name: Required value"],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[(
                "/spec/ports",
                json!([{"name": "a", "port": 80, "protocol": "TCP", "targetPort": 80},
                       {"name": "a", "port": 81, "protocol": "TCP", "targetPort": 81}]),
            )],
        ),
        &["spec.ports[1].name: Duplicate value: \"a\""],
    );
    assert_create(
        with(&cluster_ip(), &[("/spec/ports/0/name", json!("A_b"))]),
        &[
            "spec.ports[0].name: Invalid value: \"A_b\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ],
    );
    assert_create(
        with(&cluster_ip(), &[("/spec/ports/0/port", json!(0))]),
        &["spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"],
    );
    assert_create(
        with(&cluster_ip(), &[("/spec/ports/0/protocol", json!("HTTP"))]),
        &[
            "spec.ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
        ],
    );
    assert_create(
        with(&cluster_ip(), &[("/spec/ports/0/protocol", json!(""))]),
        &["spec.ports[0].protocol: Required value"],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[("/spec/ports/0/targetPort", json!("-bad"))],
        ),
        &["spec.ports[0].targetPort: Invalid value: \"-bad\": must not begin or end with a hyphen"],
    );
    assert_create(
        with(&cluster_ip(), &[("/spec/ports/0/targetPort", json!(70000))]),
        &["spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive"],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[("/spec/ports/0/appProtocol", json!("bad proto"))],
        ),
        &[&format!(
            "spec.ports[0].appProtocol: Invalid value: \"bad proto\": {QUALIFIED_NAME_MSG}"
        )],
    );
    assert_create(
        with(&cluster_ip(), &[("/spec/ports/0/nodePort", json!(30080))]),
        &["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
    );
    assert_create(
        with(
            &node_port(),
            &[
                ("/spec/ports/1/protocol", json!("TCP")),
                ("/spec/ports/1/nodePort", json!(30080)),
            ],
        ),
        &["spec.ports[1].nodePort: Duplicate value: 30080"],
    );
    assert_create(
        with(
            &node_port(),
            &[
                ("/spec/ports/1/port", json!(80)),
                ("/spec/ports/1/protocol", json!("TCP")),
            ],
        ),
        &[
            "spec.ports[1]: Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}",
        ],
    );
}

#[test]
fn type_and_external_name() {
    assert_create(
        with(&cluster_ip(), &[("/spec/type", json!("Foo"))]),
        &[
            "spec.type: Unsupported value: \"Foo\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
        ],
    );
    assert_create(
        with(&external_name(), &[("/spec/externalName", json!("."))]),
        &["spec.externalName: Required value"],
    );
    assert_create(
        with(
            &external_name(),
            &[("/spec/externalName", json!("Bad_Name"))],
        ),
        &[
            "spec.externalName: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ],
    );
    assert_create(
        with(
            &external_name(),
            &[
                ("/spec/clusterIP", json!("10.0.0.1")),
                ("/spec/clusterIPs", json!(["10.0.0.1"])),
            ],
        ),
        &["spec.clusterIPs: Forbidden: may not be set for ExternalName services"],
    );
    assert_create(
        with(&external_name(), &[("/spec/ipFamilies", json!(["IPv4"]))]),
        &["spec.ipFamilies: Forbidden: may not be set for ExternalName services"],
    );
    assert_create(
        with(
            &external_name(),
            &[("/spec/ipFamilyPolicy", json!("SingleStack"))],
        ),
        &["spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services"],
    );
    assert_create(
        with(
            &load_balancer(),
            &[
                ("/spec/clusterIP", json!("None")),
                ("/spec/clusterIPs", json!(["None"])),
            ],
        ),
        &[
            "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for LoadBalancer services",
        ],
    );
    assert_create(
        with(
            &node_port(),
            &[
                ("/spec/clusterIP", json!("None")),
                ("/spec/clusterIPs", json!(["None"])),
            ],
        ),
        &[
            "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services",
        ],
    );
}

#[test]
fn selector_and_affinity() {
    assert_create(
        with(&cluster_ip(), &[("/spec/selector/app", json!("-x"))]),
        &[
            "spec.selector: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ],
    );
    assert_create(
        with(&cluster_ip(), &[("/spec/sessionAffinity", json!("Sticky"))]),
        &[
            "spec.sessionAffinity: Unsupported value: \"Sticky\": supported values: \"ClientIP\", \"None\"",
        ],
    );
    assert_create(
        with(&cluster_ip(), &[("/spec/sessionAffinity", json!(""))]),
        &["spec.sessionAffinity: Required value"],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[("/spec/sessionAffinity", json!("ClientIP"))],
        ),
        &["spec.sessionAffinityConfig: Required value: when session affinity type is ClientIP"],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[
                ("/spec/sessionAffinity", json!("ClientIP")),
                ("/spec/sessionAffinityConfig/clientIP", json!({})),
            ],
        ),
        &[
            "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Required value: when session affinity type is ClientIP",
        ],
    );
    for timeout in [0, 86401] {
        assert_create(
            with(
                &cluster_ip(),
                &[
                    ("/spec/sessionAffinity", json!("ClientIP")),
                    (
                        "/spec/sessionAffinityConfig/clientIP/timeoutSeconds",
                        json!(timeout),
                    ),
                ],
            ),
            &[&format!(
                "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: {timeout}: must be greater than 0 and less than 86400"
            )],
        );
    }
    assert_create(
        with(
            &cluster_ip(),
            &[(
                "/spec/sessionAffinityConfig/clientIP/timeoutSeconds",
                json!(10),
            )],
        ),
        &["spec.sessionAffinityConfig: Forbidden: must not be set when session affinity is None"],
    );
}

#[test]
fn cluster_ips_and_families() {
    assert_create(
        with(&cluster_ip(), &[("/spec/clusterIPs", json!(["10.0.0.11"]))]),
        &[
            "spec.clusterIPs: Invalid value: []string{\"10.0.0.11\"}: first value must match `clusterIP`",
        ],
    );
    assert_create(
        with(&cluster_ip(), &[("/spec/clusterIPs", Value::Null)]),
        &["spec.clusterIPs: Required value"],
    );
    assert_create(
        with(&cluster_ip(), &[("/spec/clusterIP", Value::Null)]),
        &[
            "spec.clusterIPs: Invalid value: []string{\"10.0.0.10\"}: must be empty when `clusterIP` is not specified",
        ],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[
                ("/spec/clusterIP", json!("10.0.0.300")),
                ("/spec/clusterIPs", json!(["10.0.0.300"])),
            ],
        ),
        &[&format!(
            "spec.clusterIPs[0]: Invalid value: \"10.0.0.300\": {IP_MSG}"
        )],
    );
    assert_create(
        with(
            &dual_stack(),
            &[(
                "/spec/clusterIPs",
                json!(["10.0.0.10", "fd00::10", "10.0.0.11"]),
            )],
        ),
        &[
            "spec.clusterIPs: Invalid value: []string{\"10.0.0.10\", \"fd00::10\", \"10.0.0.11\"}: may only hold up to 2 values",
        ],
    );
    assert_create(
        with(
            &dual_stack(),
            &[("/spec/clusterIPs", json!(["10.0.0.10", "10.0.0.11"]))],
        ),
        &[
            "spec.clusterIPs: Invalid value: []string{\"10.0.0.10\", \"10.0.0.11\"}: may specify no more than one IP for each IP family",
            "spec.clusterIPs[1]: Invalid value: \"10.0.0.11\": expected an IPv6 value as indicated by `ipFamilies[1]`",
        ],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[
                ("/spec/clusterIP", json!("fd00::10")),
                ("/spec/clusterIPs", json!(["fd00::10"])),
            ],
        ),
        &[
            "spec.clusterIPs[0]: Invalid value: \"fd00::10\": expected an IPv4 value as indicated by `ipFamilies[0]`",
        ],
    );
    assert_create(
        with(&cluster_ip(), &[("/spec/ipFamilies", json!(["IPv5"]))]),
        &["spec.ipFamilies[0]: Unsupported value: \"IPv5\": supported values: \"IPv4\", \"IPv6\""],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[("/spec/ipFamilies", json!(["IPv4", "IPv4"]))],
        ),
        &["spec.ipFamilies[1]: Duplicate value: \"IPv4\""],
    );
    assert_create(
        with(&cluster_ip(), &[("/spec/ipFamilyPolicy", json!("Dual"))]),
        &[
            "spec.ipFamilyPolicy: Unsupported value: \"Dual\": supported values: \"PreferDualStack\", \"RequireDualStack\", \"SingleStack\"",
        ],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[
                ("/spec/clusterIP", json!("None")),
                ("/spec/clusterIPs", json!(["None", "fd00::1"])),
            ],
        ),
        &[
            "spec.clusterIPs: Invalid value: []string{\"None\", \"fd00::1\"}: 'None' must be the first and only value",
        ],
    );
}

#[test]
fn external_ips() {
    let base = with(
        &cluster_ip(),
        &[("/spec/externalTrafficPolicy", json!("Cluster"))],
    );
    for (ip, msg) in [
        ("nope", IP_MSG),
        ("0.0.0.0", "may not be unspecified (0.0.0.0)"),
        ("::", "may not be unspecified (::)"),
        (
            "127.0.0.1",
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ),
        (
            "::ffff:127.0.0.1",
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ),
        (
            "169.254.1.1",
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ),
        (
            "fe80::1",
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ),
        (
            "224.0.0.1",
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ),
        (
            "ff02::1",
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ),
    ] {
        assert_create(
            with(&base, &[("/spec/externalIPs", json!(["192.0.2.1", ip]))]),
            &[&format!(
                "spec.externalIPs[1]: Invalid value: \"{ip}\": {msg}"
            )],
        );
    }
    // External IPs make a ClusterIP Service externally accessible.
    assert_create(
        with(
            &cluster_ip(),
            &[("/spec/externalIPs", json!(["192.0.2.1"]))],
        ),
        &["spec.externalTrafficPolicy: Required value"],
    );
}

#[test]
fn load_balancer_fields() {
    assert_create(
        with(
            &cluster_ip(),
            &[("/spec/loadBalancerSourceRanges", json!(["10.0.0.0/8"]))],
        ),
        &[
            "spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'",
        ],
    );
    assert_create(
        with(
            &load_balancer(),
            &[("/spec/loadBalancerSourceRanges/1", json!("10.0.0.0/33"))],
        ),
        &[&format!(
            "spec.LoadBalancerSourceRanges[1]: Invalid value: \"10.0.0.0/33\": {CIDR_MSG}"
        )],
    );
    let key = "service.beta.kubernetes.io~1load-balancer-source-ranges";
    assert_create(
        with(
            &load_balancer(),
            &[
                ("/spec/loadBalancerSourceRanges", Value::Null),
                (
                    &format!("/metadata/annotations/{key}"),
                    json!(" 10.0.0.0/8, bad "),
                ),
            ],
        ),
        &[&format!(
            "metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: \"bad\": {CIDR_MSG}"
        )],
    );
    assert_create(
        with(
            &node_port(),
            &[(&format!("/metadata/annotations/{key}"), json!("10.0.0.0/8"))],
        ),
        &[
            "metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Forbidden: may only be used when `type` is 'LoadBalancer'",
        ],
    );
    assert_create(
        with(
            &node_port(),
            &[("/spec/allocateLoadBalancerNodePorts", json!(false))],
        ),
        &[
            "spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'",
        ],
    );
    assert_create(
        with(
            &load_balancer(),
            &[("/spec/allocateLoadBalancerNodePorts", Value::Null)],
        ),
        &["allocateLoadBalancerNodePorts: Required value"],
    );
    assert_create(
        with(
            &node_port(),
            &[("/spec/loadBalancerClass", json!("example.com/lb"))],
        ),
        &["spec.loadBalancerClass: Forbidden: may only be used when `type` is 'LoadBalancer'"],
    );
    assert_create(
        with(
            &load_balancer(),
            &[("/spec/loadBalancerClass", json!("bad proto"))],
        ),
        &[&format!(
            "spec.loadBalancerClass: Invalid value: \"bad proto\": {QUALIFIED_NAME_MSG}"
        )],
    );
}

#[test]
fn legacy_cidrs() {
    for ok in [
        "010.0.0.0/8",
        "10.0.0.1/24",
        "10.0.0.0/008",
        "::ffff:1.2.3.4/100",
        "fd00::/128",
    ] {
        let svc = with(
            &load_balancer(),
            &[("/spec/loadBalancerSourceRanges", json!([ok]))],
        );
        assert_eq!(create(&svc), Vec::<String>::new(), "{ok}");
    }
    for bad in [
        "10.0.0.0",
        "10.0.0.0/",
        "10.0.0.0/x",
        "2001:db8::/129",
        "1.2.3/8",
        "",
    ] {
        assert_create(
            with(
                &load_balancer(),
                &[("/spec/loadBalancerSourceRanges", json!([bad]))],
            ),
            &[&format!(
                "spec.LoadBalancerSourceRanges[0]: Invalid value: \"{bad}\": {CIDR_MSG}"
            )],
        );
    }
}

#[test]
fn traffic_policies() {
    assert_create(
        with(
            &cluster_ip(),
            &[("/spec/externalTrafficPolicy", json!("Local"))],
        ),
        &[
            "spec.externalTrafficPolicy: Invalid value: \"Local\": may only be set for externally-accessible services",
        ],
    );
    assert_create(
        with(
            &node_port(),
            &[("/spec/externalTrafficPolicy", json!("Foo"))],
        ),
        &[
            "spec.externalTrafficPolicy: Unsupported value: \"Foo\": supported values: \"Cluster\", \"Local\"",
        ],
    );
    assert_create(
        with(
            &node_port(),
            &[("/spec/externalTrafficPolicy", Value::Null)],
        ),
        &["spec.externalTrafficPolicy: Required value"],
    );
    assert_create(
        with(&node_port(), &[("/spec/healthCheckNodePort", json!(30500))]),
        &[
            "spec.healthCheckNodePort: Invalid value: 30500: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
        ],
    );
    assert_create(
        with(
            &load_balancer(),
            &[("/spec/healthCheckNodePort", Value::Null)],
        ),
        &["spec.healthCheckNodePort: Required value"],
    );
    assert_create(
        with(
            &load_balancer(),
            &[("/spec/healthCheckNodePort", json!(70000))],
        ),
        &["spec.healthCheckNodePort: Invalid value: 70000: must be between 1 and 65535, inclusive"],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[("/spec/internalTrafficPolicy", Value::Null)],
        ),
        &["spec.internalTrafficPolicy: Required value"],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[("/spec/internalTrafficPolicy", json!("Foo"))],
        ),
        &[
            "spec.internalTrafficPolicy: Unsupported value: \"Foo\": supported values: \"Cluster\", \"Local\"",
        ],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[("/spec/trafficDistribution", json!("PreferSameZone"))],
        ),
        &[
            "spec.trafficDistribution: Unsupported value: \"PreferSameZone\": supported values: \"PreferClose\"",
        ],
    );
    assert_create(
        with(
            &cluster_ip(),
            &[
                (
                    "/metadata/annotations/service.kubernetes.io~1topology-mode",
                    json!("Auto"),
                ),
                (
                    "/metadata/annotations/service.kubernetes.io~1topology-aware-hints",
                    json!("auto"),
                ),
            ],
        ),
        &[
            "metadata.annotations[service.kubernetes.io/topology-mode]: Invalid value: \"Auto\": must match annotations[service.kubernetes.io/topology-aware-hints] when both are specified",
        ],
    );
}

#[test]
fn updates() {
    let old = cluster_ip();
    let new = with(
        &old,
        &[
            ("/spec/clusterIP", json!("10.0.0.11")),
            ("/spec/clusterIPs", json!(["10.0.0.11"])),
        ],
    );
    assert_eq!(
        update(&new, &old),
        ["spec.clusterIPs[0]: Invalid value: []string{\"10.0.0.11\"}: may not change once set"]
    );
    // To and from ExternalName anything goes.
    assert_eq!(update(&external_name(), &old), Vec::<String>::new());
    assert_eq!(update(&old, &external_name()), Vec::<String>::new());
    // Upgrade to dual-stack, and downgrade with SingleStack.
    assert_eq!(update(&dual_stack(), &old), Vec::<String>::new());
    assert_eq!(update(&old, &dual_stack()), Vec::<String>::new());
    let new = with(&old, &[("/spec/ipFamilyPolicy", json!("PreferDualStack"))]);
    assert_eq!(
        update(&new, &dual_stack()),
        [
            "spec.ipFamilyPolicy: Invalid value: \"PreferDualStack\": must be set to 'SingleStack' when releasing the secondary clusterIP",
            "spec.ipFamilyPolicy: Invalid value: \"PreferDualStack\": must be set to 'SingleStack' when releasing the secondary ipFamily",
        ]
    );
    let new = with(&old, &[("/spec/ipFamilyPolicy", Value::Null)]);
    assert_eq!(
        update(&new, &dual_stack()),
        [
            "spec.ipFamilyPolicy: Invalid value: \"null\": must be set to 'SingleStack' when releasing the secondary clusterIP",
            "spec.ipFamilyPolicy: Invalid value: \"null\": must be set to 'SingleStack' when releasing the secondary ipFamily",
        ]
    );
    let new = with(&old, &[("/spec/ipFamilies", json!(["IPv6"]))]);
    assert_eq!(
        update(&new, &old),
        [
            "spec.ipFamilies[0]: Invalid value: []core.IPFamily{\"IPv6\"}: may not change once set",
            "spec.clusterIPs[0]: Invalid value: \"10.0.0.10\": expected an IPv6 value as indicated by `ipFamilies[0]`",
        ]
    );
    // Upgrading may not change the primary IP or family.
    let new = with(
        &dual_stack(),
        &[
            ("/spec/clusterIP", json!("fd00::10")),
            ("/spec/clusterIPs", json!(["fd00::10", "10.0.0.10"])),
            ("/spec/ipFamilies", json!(["IPv6", "IPv4"])),
        ],
    );
    assert_eq!(
        update(&new, &old),
        [
            "spec.clusterIPs[0]: Invalid value: []string{\"fd00::10\", \"10.0.0.10\"}: may not change once set",
            "spec.ipFamilies[0]: Invalid value: []string{\"fd00::10\", \"10.0.0.10\"}: may not change once set",
        ]
    );
    // Headless services may change families.
    let new = with(
        &headless(),
        &[("/spec/ipFamilies", json!(["IPv6", "IPv4"]))],
    );
    assert_eq!(update(&new, &headless()), Vec::<String>::new());

    let old = load_balancer();
    let new = with(
        &old,
        &[("/spec/loadBalancerClass", json!("example.com/other"))],
    );
    assert_eq!(
        update(&new, &old),
        ["spec.loadBalancerClass: Invalid value: \"example.com/other\": may not change once set"]
    );
    let new = with(&old, &[("/spec/loadBalancerClass", Value::Null)]);
    assert_eq!(
        update(&new, &old),
        ["spec.loadBalancerClass: Invalid value: \"null\": may not change once set"]
    );
    // The class may be set when the type changes to LoadBalancer.
    assert_eq!(update(&old, &node_port()), Vec::<String>::new());
    let new = with(&old, &[("/spec/healthCheckNodePort", json!(30501))]);
    assert_eq!(
        update(&new, &old),
        ["spec.healthCheckNodePort: Forbidden: field is immutable"]
    );
    // Update runs the create checks too.
    let new = with(&old, &[("/spec/ports/0/port", json!(0))]);
    assert_eq!(
        update(&new, &old),
        ["spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"]
    );
}

#[test]
fn status_updates() {
    let lb = with(
        &load_balancer(),
        &[(
            "/status/loadBalancer/ingress",
            json!([{"ip": "192.0.2.1", "ipMode": "VIP"}, {"hostname": "lb.example.com"}]),
        )],
    );
    assert_eq!(status(&lb), Vec::<String>::new());
    assert_eq!(
        status(&with(&lb, &[("/spec/type", json!("NodePort"))])),
        [
            "status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"
        ]
    );
    assert_eq!(
        status(&with(
            &lb,
            &[("/status/loadBalancer/ingress/0/ip", json!("nope"))]
        )),
        [format!(
            "status.loadBalancer.ingress[0].ip: Invalid value: \"nope\": {IP_MSG}"
        )]
    );
    assert_eq!(
        status(&with(
            &lb,
            &[("/status/loadBalancer/ingress/0/ipMode", Value::Null)]
        )),
        [
            "status.loadBalancer.ingress[0].ipMode: Required value: must be specified when `ip` is set"
        ]
    );
    assert_eq!(
        status(&with(
            &lb,
            &[("/status/loadBalancer/ingress/1/ipMode", json!("Proxy"))]
        )),
        [
            "status.loadBalancer.ingress[1].ipMode: Forbidden: may not be specified when `ip` is not set"
        ]
    );
    assert_eq!(
        status(&with(
            &lb,
            &[("/status/loadBalancer/ingress/0/ipMode", json!("Foo"))]
        )),
        [
            "status.loadBalancer.ingress[0].ipMode: Unsupported value: \"Foo\": supported values: \"Proxy\", \"VIP\""
        ]
    );
    assert_eq!(
        status(&with(
            &lb,
            &[(
                "/status/loadBalancer/ingress/1/hostname",
                json!("192.0.2.2")
            )]
        )),
        [
            "status.loadBalancer.ingress[1].hostname: Invalid value: \"192.0.2.2\": must be a DNS name, not an IP address"
        ]
    );
    // The status checks ignore the spec's own errors.
    let bad_spec = with(&lb, &[("/spec/ports/0/port", json!(0))]);
    assert_eq!(status(&bad_spec), Vec::<String>::new());
}

#[test]
fn odd_json_does_not_panic() {
    for v in [
        json!(null),
        json!({}),
        json!({"spec": []}),
        json!({"spec": {"ports": [1, "x", null], "clusterIPs": [1], "ipFamilies": {}}}),
        json!({"spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {"ingress": [null, 3]}}}),
    ] {
        let _ = create(&v);
        let _ = update(&v, &json!(null));
        let _ = update(&json!({}), &v);
        let _ = status(&v);
    }
    assert_eq!(
        create(&json!({})),
        [
            "spec.ports: Required value",
            "spec.sessionAffinity: Required value",
            "spec.type: Required value",
        ]
    );
}
