//! Upstream's scheme defaulting of pod specs (`SetObjectDefaults_Pod` and
//! `SetObjectDefaults_PodTemplate` in `pkg/apis/core/v1`): `SetDefaults_PodSpec`, the
//! volume sources', containers', probes' and handlers' defaults, and `SetDefaults_Pod`, which
//! only pods get. Go tests a string for `""` and a pointer for nil; a missing key and a
//! JSON `null` are both that here.

use kas_apimachinery::resource::Quantity;
use serde_json::{Map, Value, json};

/// Upstream `DefaultTerminationGracePeriodSeconds`.
pub const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;
/// Upstream `SecretVolumeSourceDefaultMode` and the other volume sources' (0644).
const DEFAULT_MODE: i64 = 0o644;

/// The scheme defaults of a pod template's spec (`SetDefaults_PodSpec` and the nested
/// types'); what `SetDefaults_Pod` adds is [`default_pod`]'s.
pub fn default_pod_spec(spec: &mut Value) {
    sync_service_account(spec);
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    set_empty(spec, "dnsPolicy", "ClusterFirst");
    set_empty(spec, "restartPolicy", "Always");
    set_nil(spec, "securityContext", json!({}));
    set_nil(
        spec,
        "terminationGracePeriodSeconds",
        json!(DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS),
    );
    set_empty(spec, "schedulerName", "default-scheduler");
    for volume in items_mut(spec, "volumes") {
        default_volume(volume);
    }
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for container in items_mut(spec, list) {
            default_container(container);
        }
    }
    if let Some(overhead) = spec.get_mut("overhead") {
        default_resource_list(overhead);
    }
}

/// The deprecated `serviceAccount` alias, as upstream's v1 conversions treat it: read as
/// `serviceAccountName` when that is empty (`Convert_v1_PodSpec_To_core_PodSpec`), and
/// always written equal to it (`Convert_core_PodSpec_To_v1_PodSpec`). Run again after
/// anything that sets the account (the ServiceAccount admission plugin).
pub fn sync_service_account(spec: &mut Value) {
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_owned();
    let mut name = text(spec.get("serviceAccountName"));
    if name.is_empty() {
        name = text(spec.get("serviceAccount"));
    }
    if name.is_empty() {
        spec.remove("serviceAccountName");
        spec.remove("serviceAccount");
    } else {
        spec.insert("serviceAccountName".into(), json!(name));
        spec.insert("serviceAccount".into(), json!(name));
    }
}

/// A Pod's scheme defaults: `SetDefaults_Pod`, then the spec's.
pub fn default_pod(pod: &mut Value) {
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        for list in ["containers", "initContainers"] {
            for container in items_mut(spec, list) {
                requests_from_limits(container);
            }
        }
        set_nil(spec, "enableServiceLinks", json!(true));
        if spec.get("hostNetwork").and_then(Value::as_bool) == Some(true) {
            for list in ["containers", "initContainers"] {
                for container in items_mut(spec, list) {
                    for port in items_mut(container, "ports") {
                        if is_zero(port.get("hostPort")) {
                            let container_port = port.get("containerPort").cloned();
                            if let Some(p) = container_port {
                                port.insert("hostPort".into(), p);
                            }
                        }
                    }
                }
            }
        }
    }
    match pod.get_mut("spec") {
        Some(spec) => default_pod_spec(spec),
        None => {
            if let Some(pod) = pod.as_object_mut() {
                let mut spec = json!({});
                default_pod_spec(&mut spec);
                pod.insert("spec".into(), spec);
            }
        }
    }
}

/// A PodTemplateSpec's defaults (`template.spec` of templates and workloads).
pub fn default_pod_template_spec(template: &mut Value) {
    let Some(template) = template.as_object_mut() else {
        return;
    };
    let spec = template.entry("spec").or_insert_with(|| json!({}));
    if spec.is_null() {
        *spec = json!({});
    }
    default_pod_spec(spec);
}

/// `SetDefaults_Pod`: a container's requests default to its limits.
fn requests_from_limits(container: &mut Map<String, Value>) {
    let Some(resources) = container
        .get_mut("resources")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
        return;
    };
    let requests = resources.entry("requests").or_insert_with(|| json!({}));
    if requests.is_null() {
        *requests = json!({});
    }
    if let Some(requests) = requests.as_object_mut() {
        for (k, v) in limits {
            requests.entry(k).or_insert(v);
        }
    }
}

/// `SetDefaults_Volume` and the defaults of each volume source.
fn default_volume(volume: &mut Map<String, Value>) {
    let has_source = volume.iter().any(|(k, v)| k != "name" && !v.is_null());
    if !has_source {
        volume.insert("emptyDir".into(), json!({}));
    }
    default_volume_sources(volume);
}

/// The defaults of each volume source in `volume` (a pod's volume, or a PersistentVolume's
/// spec, whose sources default alike).
pub(crate) fn default_volume_sources(volume: &mut Map<String, Value>) {
    if let Some(host_path) = object_mut(volume, "hostPath") {
        set_nil(host_path, "type", json!(""));
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(source) = object_mut(volume, source) {
            set_nil(source, "defaultMode", json!(DEFAULT_MODE));
        }
    }
    if let Some(downward) = object_mut(volume, "downwardAPI") {
        default_downward_items(downward);
    }
    if let Some(projected) = object_mut(volume, "projected") {
        for source in items_mut(projected, "sources") {
            if let Some(downward) = object_mut(source, "downwardAPI") {
                default_downward_items(downward);
            }
            if let Some(token) = object_mut(source, "serviceAccountToken") {
                set_nil(token, "expirationSeconds", json!(3600));
            }
        }
    }
    if let Some(iscsi) = object_mut(volume, "iscsi") {
        set_empty(iscsi, "iscsiInterface", "default");
    }
    if let Some(rbd) = object_mut(volume, "rbd") {
        set_empty(rbd, "pool", "rbd");
        set_empty(rbd, "user", "admin");
        set_empty(rbd, "keyring", "/etc/ceph/keyring");
    }
    if let Some(disk) = object_mut(volume, "azureDisk") {
        set_nil(disk, "cachingMode", json!("ReadWrite"));
        set_nil(disk, "kind", json!("Shared"));
        set_nil(disk, "fsType", json!("ext4"));
        set_nil(disk, "readOnly", json!(false));
    }
    if let Some(scale_io) = object_mut(volume, "scaleIO") {
        set_empty(scale_io, "storageMode", "ThinProvisioned");
        set_empty(scale_io, "fsType", "xfs");
    }
    if let Some(spec) = volume
        .get_mut("ephemeral")
        .and_then(|e| e.get_mut("volumeClaimTemplate"))
        .and_then(|t| t.get_mut("spec"))
        .and_then(Value::as_object_mut)
    {
        set_nil(spec, "volumeMode", json!("Filesystem"));
        if let Some(resources) = object_mut(spec, "resources") {
            for list in ["limits", "requests"] {
                if let Some(l) = resources.get_mut(list) {
                    default_resource_list(l);
                }
            }
        }
    }
}

/// `SetDefaults_ObjectFieldSelector` of a downward API projection's items.
fn default_downward_items(downward: &mut Map<String, Value>) {
    for item in items_mut(downward, "items") {
        if let Some(field_ref) = object_mut(item, "fieldRef") {
            set_empty(field_ref, "apiVersion", "v1");
        }
    }
}

/// `SetDefaults_Container` and what nests in a container.
fn default_container(container: &mut Map<String, Value>) {
    if is_empty(container.get("imagePullPolicy")) {
        let image = container.get("image").and_then(Value::as_str).unwrap_or("");
        let policy = if image_tag(image) == "latest" {
            "Always"
        } else {
            "IfNotPresent"
        };
        container.insert("imagePullPolicy".into(), json!(policy));
    }
    set_empty(container, "terminationMessagePath", "/dev/termination-log");
    set_empty(container, "terminationMessagePolicy", "File");
    for port in items_mut(container, "ports") {
        set_empty(port, "protocol", "TCP");
    }
    for env in items_mut(container, "env") {
        if let Some(field_ref) = env
            .get_mut("valueFrom")
            .and_then(|v| v.get_mut("fieldRef"))
            .and_then(Value::as_object_mut)
        {
            set_empty(field_ref, "apiVersion", "v1");
        }
    }
    if let Some(resources) = object_mut(container, "resources") {
        for list in ["limits", "requests"] {
            if let Some(l) = resources.get_mut(list) {
                default_resource_list(l);
            }
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = object_mut(container, probe) {
            for (field, value) in [
                ("timeoutSeconds", 1),
                ("periodSeconds", 10),
                ("successThreshold", 1),
                ("failureThreshold", 3),
            ] {
                if is_zero(probe.get(field)) {
                    probe.insert(field.into(), json!(value));
                }
            }
            default_handler(probe);
        }
    }
    if let Some(lifecycle) = object_mut(container, "lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(hook) = object_mut(lifecycle, hook) {
                default_handler(hook);
            }
        }
    }
}

/// `SetDefaults_HTTPGetAction`, and a gRPC probe's service (`+default=""`).
fn default_handler(handler: &mut Map<String, Value>) {
    if let Some(get) = object_mut(handler, "httpGet") {
        set_empty(get, "path", "/");
        set_empty(get, "scheme", "HTTP");
    }
    if let Some(grpc) = object_mut(handler, "grpc") {
        set_nil(grpc, "service", json!(""));
    }
}

/// `SetDefaults_ResourceList`: every quantity rounded up to milli units.
pub fn default_resource_list(list: &mut Value) {
    let Some(list) = list.as_object_mut() else {
        return;
    };
    for value in list.values_mut() {
        let Some(text) = value.as_str() else {
            continue;
        };
        if let Ok(mut q) = Quantity::parse(text.trim())
            && q.round_up(-3)
        {
            *value = Value::String(q.canonical());
        }
    }
}

/// The tag `parsers.ParseImageName` finds: after the last `:` of the last path segment,
/// `latest` when there is none and no digest either.
fn image_tag(image: &str) -> &str {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last_segment = name.rsplit('/').next().unwrap_or(name);
    match last_segment.rsplit_once(':') {
        Some((_, tag)) => tag,
        None if digest.is_some() => "",
        None => "latest",
    }
}

fn items_mut<'a>(
    obj: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    obj.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

fn object_mut<'a>(
    obj: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    obj.get_mut(key).and_then(Value::as_object_mut)
}

fn is_empty(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null)) || v.and_then(Value::as_str) == Some("")
}

fn is_zero(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null)) || v.and_then(Value::as_i64) == Some(0)
}

/// Go's `if s == "" { s = value }`.
fn set_empty(obj: &mut Map<String, Value>, key: &str, value: &str) {
    if is_empty(obj.get(key)) {
        obj.insert(key.into(), json!(value));
    }
}

/// Go's `if p == nil { p = &value }`.
pub(crate) fn set_nil(obj: &mut Map<String, Value>, key: &str, value: Value) {
    if matches!(obj.get(key), None | Some(Value::Null)) {
        obj.insert(key.into(), value);
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_deprecated_service_account_follows_the_name() {
        let mut legacy = serde_json::json!({"serviceAccount": "old"});
        sync_service_account(&mut legacy);
        assert_eq!(
            legacy,
            serde_json::json!({"serviceAccount": "old", "serviceAccountName": "old"})
        );
        let mut both = serde_json::json!({"serviceAccount": "old", "serviceAccountName": "new"});
        sync_service_account(&mut both);
        assert_eq!(both["serviceAccount"], "new");
        let mut none = serde_json::json!({"serviceAccount": ""});
        sync_service_account(&mut none);
        assert_eq!(none, serde_json::json!({}));
    }
    use super::*;

    #[test]
    fn image_tags_as_parse_image_name_reads_them() {
        assert_eq!(image_tag("nginx"), "latest");
        assert_eq!(image_tag("nginx:1.27"), "1.27");
        assert_eq!(image_tag("localhost:5000/nginx"), "latest");
        assert_eq!(image_tag("localhost:5000/nginx:latest"), "latest");
        assert_eq!(image_tag("nginx@sha256:abcd"), "");
    }

    #[test]
    fn a_pod_gets_upstreams_defaults() {
        let mut pod = json!({"spec": {
            "hostNetwork": true,
            "containers": [{
                "name": "c", "image": "nginx",
                "ports": [{"containerPort": 80}],
                "resources": {"limits": {"cpu": "100u", "memory": "1Gi"}},
                "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "livenessProbe": {"httpGet": {"port": 80}},
                "readinessProbe": {"grpc": {"port": 9000}, "periodSeconds": 5}
            }],
            "volumes": [
                {"name": "a"},
                {"name": "b", "secret": {"secretName": "s"}},
                {"name": "c", "hostPath": {"path": "/x"}},
                {"name": "d", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}
            ]
        }});
        default_pod(&mut pod);
        let spec = &pod["spec"];
        assert_eq!(spec["dnsPolicy"], "ClusterFirst");
        assert_eq!(spec["restartPolicy"], "Always");
        assert_eq!(spec["securityContext"], json!({}));
        assert_eq!(spec["terminationGracePeriodSeconds"], 30);
        assert_eq!(spec["schedulerName"], "default-scheduler");
        assert_eq!(spec["enableServiceLinks"], true);
        let c = &spec["containers"][0];
        assert_eq!(c["imagePullPolicy"], "Always");
        assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
        assert_eq!(c["terminationMessagePolicy"], "File");
        assert_eq!(
            c["ports"][0],
            json!({"containerPort": 80, "hostPort": 80, "protocol": "TCP"})
        );
        assert_eq!(c["resources"]["limits"]["cpu"], "1m");
        assert_eq!(
            c["resources"]["requests"],
            json!({"cpu": "1m", "memory": "1Gi"})
        );
        assert_eq!(c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
        assert_eq!(
            c["livenessProbe"],
            json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
                "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
        );
        assert_eq!(c["readinessProbe"]["grpc"]["service"], "");
        assert_eq!(c["readinessProbe"]["periodSeconds"], 5);
        let v = &spec["volumes"];
        assert_eq!(v[0]["emptyDir"], json!({}));
        assert_eq!(v[1]["secret"]["defaultMode"], 420);
        assert_eq!(v[2]["hostPath"]["type"], "");
        assert_eq!(v[3]["projected"]["defaultMode"], 420);
        assert_eq!(
            v[3]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
            3600
        );
    }

    #[test]
    fn a_template_gets_no_pod_only_defaults() {
        let mut template = json!({"spec": {"containers": [{"name": "c", "image": "nginx:1",
            "resources": {"limits": {"cpu": "1"}}}]}});
        default_pod_template_spec(&mut template);
        let spec = &template["spec"];
        assert!(spec.get("enableServiceLinks").is_none());
        assert!(spec["containers"][0]["resources"].get("requests").is_none());
        assert_eq!(spec["containers"][0]["imagePullPolicy"], "IfNotPresent");
    }
}
