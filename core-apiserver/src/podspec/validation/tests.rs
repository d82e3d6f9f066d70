use serde_json::{Value, json};

use super::*;

/// A realistic defaulted pod spec that upstream accepts.
fn valid() -> Value {
    json!({
        "containers": [{
            "name": "nginx",
            "image": "nginx:1.27",
            "imagePullPolicy": "IfNotPresent",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
            "env": [
                {"name": "MODE", "value": "prod"},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}}},
                {"name": "KEY", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}}
            ],
            "envFrom": [{"configMapRef": {"name": "settings"}, "prefix": "CFG_"}],
            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "250m", "memory": "64Mi"}},
            "livenessProbe": {"httpGet": {"path": "/", "port": 80, "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
            "readinessProbe": {"tcpSocket": {"port": "http"}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
            "lifecycle": {"preStop": {"sleep": {"seconds": 5}}},
            "volumeMounts": [
                {"name": "config", "mountPath": "/etc/nginx/conf.d"},
                {"name": "tls", "mountPath": "/etc/tls", "readOnly": true},
                {"name": "cache", "mountPath": "/var/cache/nginx"}
            ],
            "securityContext": {"runAsUser": 101, "allowPrivilegeEscalation": false}
        }],
        "volumes": [
            {"name": "config", "configMap": {"name": "nginx-conf", "defaultMode": 420, "items": [{"key": "default.conf", "path": "default.conf"}]}},
            {"name": "tls", "secret": {"secretName": "nginx-tls", "defaultMode": 420}},
            {"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}}
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "securityContext": {"fsGroup": 101},
        "schedulerName": "default-scheduler",
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
        "enableServiceLinks": true
    })
}

fn check(spec: &Value) -> Vec<String> {
    validate_pod_spec(spec, &Path::new("spec"))
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// The messages for `valid()` changed at `pointer` to `value`.
fn with(pointer: &str, value: Value) -> Vec<String> {
    let mut spec = valid();
    match spec.pointer_mut(pointer) {
        Some(slot) => *slot = value,
        None => {
            let (parent, key) = pointer.rsplit_once('/').unwrap_or(("", pointer));
            if let Some(Value::Object(m)) = spec.pointer_mut(parent) {
                m.insert(key.replace("~1", "/").replace("~0", "~"), value);
            }
        }
    }
    check(&spec)
}

const DNS_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

#[test]
fn valid_spec_passes() {
    assert_eq!(check(&valid()), Vec::<String>::new());
}

#[test]
fn containers_required() {
    assert_eq!(
        with("/containers", json!([])),
        vec!["spec.containers: Required value"]
    );
}

#[test]
fn container_name_and_image() {
    let label = format!("spec.containers[0].name: Invalid value: \"Nginx\": {DNS_LABEL}");
    assert_eq!(with("/containers/0/name", json!("Nginx")), vec![label]);
    assert_eq!(
        with("/containers/0/image", json!("")),
        vec!["spec.containers[0].image: Required value"]
    );
}

#[test]
fn duplicate_container_names() {
    let mut spec = valid();
    let ctr = spec["containers"][0].clone();
    if let Some(list) = spec["containers"].as_array_mut() {
        list.push(ctr);
    }
    if let Some(ports) = spec.pointer_mut("/containers/1/ports") {
        *ports = json!([]);
    }
    assert_eq!(
        check(&spec),
        vec!["spec.containers[1].name: Duplicate value: \"nginx\""]
    );
}

#[test]
fn pull_and_termination_policies() {
    assert_eq!(
        with("/containers/0/imagePullPolicy", json!("Sometimes")),
        vec![
            "spec.containers[0].imagePullPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", \"Never\""
        ]
    );
    assert_eq!(
        with("/containers/0/terminationMessagePolicy", json!("Log")),
        vec![
            "spec.containers[0].terminationMessagePolicy: Unsupported value: \"Log\": supported values: \"File\", \"FallbackToLogsOnError\""
        ]
    );
}

#[test]
fn ports() {
    assert_eq!(
        with("/containers/0/ports/0/containerPort", json!(70000)),
        vec![
            "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"
        ]
    );
    assert_eq!(
        with("/containers/0/ports/0/protocol", json!("HTTP")),
        vec![
            "spec.containers[0].ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\""
        ]
    );
    assert_eq!(
        with("/containers/0/ports/0/name", json!("123")),
        vec![
            "spec.containers[0].ports[0].name: Invalid value: \"123\": must contain at least one letter (a-z)"
        ]
    );
    let two = json!([
        {"name": "http", "containerPort": 80, "protocol": "TCP"},
        {"name": "http", "containerPort": 81, "protocol": "TCP"}
    ]);
    assert_eq!(
        with("/containers/0/ports", two),
        vec!["spec.containers[0].ports[1].name: Duplicate value: \"http\""]
    );
}

#[test]
fn env() {
    assert_eq!(
        with("/containers/0/env/0/name", json!("A=B")),
        vec![
            "spec.containers[0].env[0].name: Invalid value: \"A=B\": a valid environment variable name must consist only of printable ASCII characters other than '='"
        ]
    );
    assert_eq!(
        with("/containers/0/env/1/value", json!("x")),
        vec![
            "spec.containers[0].env[1].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty"
        ]
    );
    let both = json!({"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}, "secretKeyRef": {"name": "s", "key": "k"}});
    assert_eq!(
        with("/containers/0/env/1/valueFrom", both),
        vec![
            "spec.containers[0].env[1].valueFrom: Invalid value: \"\": may not have more than one field specified at a time"
        ]
    );
    assert_eq!(
        with("/containers/0/env/1/valueFrom", json!({})),
        vec![
            "spec.containers[0].env[1].valueFrom: Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"
        ]
    );
    assert_eq!(
        with(
            "/containers/0/env/1/valueFrom/fieldRef/fieldPath",
            json!("status.phase")
        ),
        vec![
            "spec.containers[0].env[1].valueFrom.fieldRef.fieldPath: Unsupported value: \"status.phase\": supported values: \"metadata.name\", \"metadata.namespace\", \"metadata.uid\", \"spec.nodeName\", \"spec.serviceAccountName\", \"status.hostIP\", \"status.hostIPs\", \"status.podIP\", \"status.podIPs\""
        ]
    );
    assert_eq!(
        with("/containers/0/env/3/valueFrom/secretKeyRef/key", json!("")),
        vec!["spec.containers[0].env[3].valueFrom.secretKeyRef.key: Required value"]
    );
    assert_eq!(
        with("/containers/0/envFrom/0/prefix", json!("A=")),
        vec![
            "spec.containers[0].envFrom[0].prefix: Invalid value: \"A=\": a valid environment variable name must consist only of printable ASCII characters other than '='"
        ]
    );
}

#[test]
fn resources() {
    assert_eq!(
        with("/containers/0/resources/requests/cpu", json!("1")),
        vec![
            "spec.containers[0].resources.requests: Invalid value: \"1\": must be less than or equal to cpu limit of 500m"
        ]
    );
    assert_eq!(
        with("/containers/0/resources/limits/foo", json!("1")),
        vec![
            "spec.containers[0].resources.limits[foo]: Invalid value: \"foo\": must be a standard resource type or fully qualified",
            "spec.containers[0].resources.limits[foo]: Invalid value: \"foo\": must be a standard resource for containers"
        ]
    );
    assert_eq!(
        with("/containers/0/resources/requests/memory", json!("-1")),
        vec![
            "spec.containers[0].resources.requests[memory]: Invalid value: \"-1\": must be greater than or equal to 0"
        ]
    );
    assert_eq!(
        with(
            "/containers/0/resources/requests/example.com~1gpu",
            json!("1")
        ),
        vec![
            "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"
        ]
    );
}

#[test]
fn volume_mounts() {
    assert_eq!(
        with("/containers/0/volumeMounts/0/name", json!("missing")),
        vec!["spec.containers[0].volumeMounts[0].name: Not found: \"missing\""]
    );
    assert_eq!(
        with(
            "/containers/0/volumeMounts/1/mountPath",
            json!("/etc/nginx/conf.d")
        ),
        vec![
            "spec.containers[0].volumeMounts[1].mountPath: Invalid value: \"/etc/nginx/conf.d\": must be unique"
        ]
    );
    assert_eq!(
        with("/containers/0/volumeMounts/0/mountPath", json!("")),
        vec!["spec.containers[0].volumeMounts[0].mountPath: Required value"]
    );
}

#[test]
fn probes() {
    assert_eq!(
        with("/containers/0/livenessProbe/successThreshold", json!(2)),
        vec!["spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"]
    );
    assert_eq!(
        with(
            "/containers/0/readinessProbe/exec",
            json!({"command": ["true"]})
        ),
        vec![
            "spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type"
        ]
    );
    assert_eq!(
        with("/containers/0/livenessProbe/httpGet", Value::Null),
        vec!["spec.containers[0].livenessProbe: Required value: must specify a handler type"]
    );
    assert_eq!(
        with("/containers/0/readinessProbe/periodSeconds", json!(-1)),
        vec![
            "spec.containers[0].readinessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0"
        ]
    );
    assert_eq!(
        with("/containers/0/lifecycle/preStop/sleep/seconds", json!(60)),
        vec![
            "spec.containers[0].lifecycle.preStop.sleep: Invalid value: 60: must be non-negative and less than terminationGracePeriodSeconds (30)"
        ]
    );
}

#[test]
fn init_containers() {
    let init = json!([{
        "name": "setup", "image": "busybox", "imagePullPolicy": "Always",
        "terminationMessagePolicy": "File",
        "readinessProbe": {"exec": {"command": ["true"]}}
    }]);
    assert_eq!(
        with("/initContainers", init.clone()),
        vec![
            "spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always"
        ]
    );
    let mut sidecar = init;
    sidecar[0]["restartPolicy"] = json!("Always");
    assert_eq!(
        with("/initContainers", sidecar.clone()),
        Vec::<String>::new()
    );
    sidecar[0]["restartPolicy"] = json!("Never");
    sidecar[0]["readinessProbe"] = Value::Null;
    sidecar[0]["name"] = json!("nginx");
    assert_eq!(
        with("/initContainers", sidecar),
        vec![
            "spec.initContainers[0].restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
            "spec.initContainers[0].name: Duplicate value: \"nginx\""
        ]
    );
}

#[test]
fn pod_policies() {
    assert_eq!(
        with("/restartPolicy", json!("Sometimes")),
        vec![
            "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\""
        ]
    );
    assert_eq!(
        with("/dnsPolicy", json!("None")),
        vec!["spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"]
    );
    assert_eq!(
        with("/terminationGracePeriodSeconds", Value::Null),
        vec!["spec.terminationGracePeriodSeconds: Required value"]
    );
    assert_eq!(
        with("/activeDeadlineSeconds", json!(0)),
        vec![
            "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"
        ]
    );
    assert_eq!(
        with("/serviceAccountName", json!("Bad_Name")),
        vec![
            "spec.serviceAccountName: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ]
    );
    assert_eq!(
        with("/hostname", json!("a.b")),
        vec!["spec.hostname: Invalid value: \"a.b\": must not contain dots"]
    );
}

#[test]
fn volumes() {
    assert_eq!(
        with("/volumes/2", json!({"name": "cache"})),
        vec![
            "spec.volumes[2]: Required value: must specify a volume type",
            "spec.containers[0].volumeMounts[2].name: Not found: \"cache\""
        ]
    );
    assert_eq!(
        with(
            "/volumes/2",
            json!({"name": "cache", "emptyDir": {}, "hostPath": {"path": "/x"}})
        ),
        vec![
            "spec.volumes[2].hostPath: Forbidden: may not specify more than 1 volume type",
            "spec.containers[0].volumeMounts[2].name: Not found: \"cache\""
        ]
    );
    assert_eq!(
        with("/volumes/1/secret/secretName", json!("")),
        vec![
            "spec.volumes[1].secret.secretName: Required value",
            "spec.containers[0].volumeMounts[1].name: Not found: \"tls\""
        ]
    );
    assert_eq!(
        with("/volumes/1/secret/defaultMode", json!(1000)),
        vec![
            "spec.volumes[1].secret.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive",
            "spec.containers[0].volumeMounts[1].name: Not found: \"tls\""
        ]
    );
    assert_eq!(
        with("/volumes/0/configMap/items/0/path", json!("../x")),
        vec![
            "spec.volumes[0].configMap.items[0].path: Invalid value: \"../x\": must not contain '..'",
            "spec.containers[0].volumeMounts[0].name: Not found: \"config\""
        ]
    );
    let mut dup = valid();
    dup["volumes"][2]["name"] = json!("tls");
    assert_eq!(
        check(&dup),
        vec![
            "spec.volumes[2].name: Duplicate value: \"tls\"",
            "spec.containers[0].volumeMounts[2].name: Not found: \"cache\""
        ]
    );
    assert_eq!(
        with(
            "/volumes/2",
            json!({"name": "cache", "hostPath": {"path": "/x", "type": "Dir"}})
        ),
        vec![
            "spec.volumes[2].hostPath.type: Unsupported value: \"Dir\": supported values: \"\", \"BlockDevice\", \"CharDevice\", \"Directory\", \"DirectoryOrCreate\", \"File\", \"FileOrCreate\", \"Socket\"",
            "spec.containers[0].volumeMounts[2].name: Not found: \"cache\""
        ]
    );
}

#[test]
fn tolerations() {
    assert_eq!(
        with("/tolerations/0/operator", json!("Equal")),
        vec![] as Vec<String>
    );
    assert_eq!(
        with("/tolerations/0/effect", json!("NoSchedule")),
        vec![
            "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"
        ]
    );
    assert_eq!(
        with("/tolerations/0/operator", json!("In")),
        vec![
            "spec.tolerations[0].operator: Unsupported value: \"In\": supported values: \"Equal\", \"Exists\""
        ]
    );
    assert_eq!(with("/tolerations/0/key", json!("")), Vec::<String>::new());
}

#[test]
fn security_contexts() {
    assert_eq!(
        with("/securityContext/runAsUser", json!(-1)),
        vec![
            "spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive"
        ]
    );
    assert_eq!(
        with("/containers/0/securityContext/runAsGroup", json!(-5)),
        vec![
            "spec.containers[0].securityContext.runAsGroup: Invalid value: -5: must be between 0 and 2147483647, inclusive"
        ]
    );
    assert_eq!(
        with(
            "/securityContext/sysctls",
            json!([{"name": "net.core.somaxconn", "value": "1"}, {"name": "net.core.somaxconn", "value": "2"}])
        ),
        vec!["spec.securityContext.sysctls[1].name: Duplicate value: \"net.core.somaxconn\""]
    );
}

#[test]
fn template_labels_and_spec() {
    let template = json!({"metadata": {"labels": {"app": "-bad"}}, "spec": valid()});
    let errs: Vec<String> = validate_pod_template_spec(&template, &Path::new("template"))
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        vec![
            "template.labels: Invalid value: \"-bad\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ]
    );
}

#[test]
fn scheduling() {
    let affinity = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]}]}}});
    assert_eq!(
        with("/affinity", affinity),
        vec![
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: \"Near\": not a valid selector operator"
        ]
    );
    let anti = json!({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "podAffinityTerm": {"topologyKey": ""}}]}});
    assert_eq!(
        with("/affinity", anti),
        vec![
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100",
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey: Required value: can not be empty",
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey: Invalid value: \"\": name part must be non-empty",
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        ]
    );
    let tsc = json!([{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}]);
    assert_eq!(
        with("/topologySpreadConstraints", tsc),
        vec![
            "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
            "spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: \"Maybe\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""
        ]
    );
}

#[test]
fn dns_config() {
    let config = json!({"nameservers": ["1.2.3.4", "nope"], "searches": ["ns.svc.cluster.local."], "options": [{"name": ""}]});
    assert_eq!(
        with("/dnsConfig", config),
        vec![
            "spec.dnsConfig.nameservers[1]: Invalid value: \"nope\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            "spec.dnsConfig.options[0]: Required value: must not be empty"
        ]
    );
}

#[test]
fn projected_and_downward_volumes() {
    let projected = json!({"name": "cache", "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"path": "token", "expirationSeconds": 60}},
        {"downwardAPI": {"items": [{"path": "labels", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"}}]}},
        {"configMap": {"name": "c", "items": [{"key": "k", "path": "labels"}]}}
    ]}});
    assert_eq!(
        with("/volumes/2", projected),
        vec![
            "spec.volumes[2].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes",
            "spec.volumes[2].projected: Invalid value: \"c\": conflicting duplicate paths",
            "spec.containers[0].volumeMounts[2].name: Not found: \"cache\""
        ]
    );
    let downward = json!({"name": "cache", "downwardAPI": {"items": [{"path": "x", "fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}]}});
    assert_eq!(
        with("/volumes/2", downward),
        vec![
            "spec.volumes[2].downwardAPI.fieldRef.fieldPath: Unsupported value: \"spec.nodeName\": supported values: \"metadata.annotations\", \"metadata.labels\", \"metadata.name\", \"metadata.namespace\", \"metadata.uid\"",
            "spec.containers[0].volumeMounts[2].name: Not found: \"cache\""
        ]
    );
}

#[test]
fn host_network_and_host_ports() {
    let mut spec = valid();
    spec["hostNetwork"] = json!(true);
    spec["containers"][0]["ports"][0]["hostPort"] = json!(8080);
    assert_eq!(
        check(&spec),
        vec![
            "spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` is true"
        ]
    );
}

#[test]
fn huge_pages_need_cpu_or_memory() {
    let r = json!({"limits": {"hugepages-2Mi": "3Mi"}, "requests": {"hugepages-2Mi": "3Mi"}});
    assert_eq!(
        with("/containers/0/resources", r),
        vec![
            "spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi",
            "spec.containers[0].resources.requests[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi",
            "spec.containers[0].resources: Forbidden: HugePages require cpu or memory"
        ]
    );
}

#[test]
fn ephemeral_containers() {
    let eph = json!([{"name": "debug", "image": "busybox", "imagePullPolicy": "Always", "terminationMessagePolicy": "File", "targetContainerName": "gone", "ports": [{"containerPort": 1, "protocol": "TCP"}]}]);
    assert_eq!(
        with("/ephemeralContainers", eph),
        vec![
            "spec.ephemeralContainers[0].targetContainerName: Not found: \"gone\"",
            "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container"
        ]
    );
}
