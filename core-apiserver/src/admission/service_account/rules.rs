//! The pure rules of the `ServiceAccount` plugin: what it adds to a pod and what it
//! refuses, on JSON pods and service accounts in their stored (v1) form.

use serde_json::{Value, json};

/// Upstream `DefaultAPITokenMountPath`.
pub const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// Upstream `ServiceAccountVolumeName` and the dash `GenerateName` gets.
pub const VOLUME_PREFIX: &str = "kube-api-access-";
/// Upstream `EnforceMountableSecretsAnnotation`.
const ENFORCE_MOUNTABLE_SECRETS: &str = "kubernetes.io/enforce-mountable-secrets";
/// Upstream `api.MirrorPodAnnotationKey`.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// Upstream `serviceaccount.WarnOnlyBoundTokenExpirationSeconds` (an hour and 7 s).
const TOKEN_EXPIRATION_SECONDS: i64 = 3607;
/// Upstream `corev1.ProjectedVolumeSourceDefaultMode` (0644).
const PROJECTED_DEFAULT_MODE: i64 = 420;

pub fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

pub fn items<'a>(v: &'a Value, pointer: &str) -> impl Iterator<Item = &'a Value> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

pub fn is_mirror(pod: &Value) -> bool {
    pod.pointer("/metadata/annotations")
        .and_then(|a| a.get(MIRROR_ANNOTATION))
        .is_some()
}

/// Upstream `shouldAutomount`: the pod's choice, else the account's, else yes.
pub fn should_automount(account: &Value, pod: &Value) -> bool {
    pod.pointer("/spec/automountServiceAccountToken")
        .and_then(Value::as_bool)
        .or_else(|| {
            account
                .get("automountServiceAccountToken")
                .and_then(Value::as_bool)
        })
        .unwrap_or(true)
}

/// Go's `strconv.ParseBool`; what it cannot parse is `None`.
fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Upstream `enforceMountableSecrets` (the plugin's `LimitSecretReferences` is off).
pub fn enforce_mountable_secrets(account: &Value) -> bool {
    account
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(ENFORCE_MOUNTABLE_SECRETS))
        .and_then(Value::as_str)
        .and_then(parse_bool)
        .unwrap_or(false)
}

/// The names an account lists under `field` (`secrets`, `imagePullSecrets`).
fn listed<'a>(account: &'a Value, field: &str) -> Vec<&'a str> {
    items(account, &format!("/{field}"))
        .map(|r| text(r, "/name"))
        .collect()
}

/// The secrets one container references through `env` and `envFrom`, each refused with
/// upstream's message when the account does not list it; `kind` is "container", "init
/// container" or "ephemeral container".
fn container_secret_references(
    container: &Value,
    kind: &str,
    mountable: &[&str],
    account: &str,
) -> Result<(), String> {
    let name = text(container, "/name");
    for env in items(container, "/env") {
        if let Some(secret) = env.pointer("/valueFrom/secretKeyRef")
            && !mountable.contains(&text(secret, "/name"))
        {
            return Err(format!(
                "{kind} {name} with envVar {} referencing secret.secretName=\"{}\" is not allowed because service account {account} does not reference that secret",
                text(env, "/name"),
                text(secret, "/name")
            ));
        }
    }
    for from in items(container, "/envFrom") {
        if let Some(secret) = from.get("secretRef")
            && !mountable.contains(&text(secret, "/name"))
        {
            return Err(format!(
                "{kind} {name} with envFrom referencing secret.secretName=\"{}\" is not allowed because service account {account} does not reference that secret",
                text(secret, "/name")
            ));
        }
    }
    Ok(())
}

/// Upstream `limitSecretReferences`: the pod's secret volumes, its init containers' and
/// containers' secret environment, and its image pull secrets must be the account's.
pub fn limit_secret_references(account: &Value, pod: &Value) -> Result<(), String> {
    let account_name = text(account, "/metadata/name");
    let mountable = listed(account, "secrets");
    for volume in items(pod, "/spec/volumes") {
        if let Some(secret) = volume.get("secret") {
            let secret_name = text(secret, "/secretName");
            if !mountable.contains(&secret_name) {
                return Err(format!(
                    "volume with secret.secretName=\"{secret_name}\" is not allowed because service account {account_name} does not reference that secret"
                ));
            }
        }
    }
    for (field, kind) in [
        ("initContainers", "init container"),
        ("containers", "container"),
    ] {
        for container in items(pod, &format!("/spec/{field}")) {
            container_secret_references(container, kind, &mountable, account_name)?;
        }
    }
    let pull = listed(account, "imagePullSecrets");
    for (i, reference) in items(pod, "/spec/imagePullSecrets").enumerate() {
        let secret_name = text(reference, "/name");
        if !pull.contains(&secret_name) {
            return Err(format!(
                "imagePullSecrets[{i}].name=\"{secret_name}\" is not allowed because service account {account_name} does not reference that imagePullSecret"
            ));
        }
    }
    Ok(())
}

/// The secret part of upstream `limitEphemeralContainerSecretReferences`.
pub fn limit_ephemeral_secret_references(account: &Value, pod: &Value) -> Result<(), String> {
    let account_name = text(account, "/metadata/name");
    let mountable = listed(account, "secrets");
    for container in items(pod, "/spec/ephemeralContainers") {
        container_secret_references(container, "ephemeral container", &mountable, account_name)?;
    }
    Ok(())
}

/// Upstream `podutil.VisitPodSecretNames` over all containers: whether the pod names any
/// secret (empty names do not count).
pub fn references_secrets(pod: &Value) -> bool {
    let mut names: Vec<&str> = items(pod, "/spec/imagePullSecrets")
        .map(|r| text(r, "/name"))
        .collect();
    for field in ["initContainers", "containers", "ephemeralContainers"] {
        for container in items(pod, &format!("/spec/{field}")) {
            names.extend(items(container, "/envFrom").map(|e| text(e, "/secretRef/name")));
            names.extend(items(container, "/env").map(|e| text(e, "/valueFrom/secretKeyRef/name")));
        }
    }
    for volume in items(pod, "/spec/volumes") {
        names.push(text(volume, "/azureFile/secretName"));
        names.push(text(volume, "/secret/secretName"));
        names.push(text(volume, "/csi/nodePublishSecretRef/name"));
        for source in [
            "cephfs",
            "cinder",
            "flexVolume",
            "rbd",
            "scaleIO",
            "iscsi",
            "storageos",
        ] {
            names.push(text(volume, &format!("/{source}/secretRef/name")));
        }
        names.extend(items(volume, "/projected/sources").map(|s| text(s, "/secret/name")));
    }
    names.iter().any(|n| !n.is_empty())
}

/// Upstream's refusals of a mirror pod, which may reference no account, no secret and no
/// token projection.
pub fn mirror_refusal(pod: &Value) -> Option<&'static str> {
    if !text(pod, "/spec/serviceAccountName").is_empty() {
        return Some("a mirror pod may not reference service accounts");
    }
    if references_secrets(pod) {
        return Some("a mirror pod may not reference secrets");
    }
    let projects_token = items(pod, "/spec/volumes")
        .flat_map(|v| items(v, "/projected/sources"))
        .any(|s| s.get("serviceAccountToken").is_some_and(|t| !t.is_null()));
    projects_token.then_some("a mirror pod may not use ServiceAccountToken volume projections")
}

/// Upstream `TokenVolumeSource`: a bound token, the cluster's CA and the namespace.
pub fn token_volume_source() -> Value {
    json!({
        "defaultMode": PROJECTED_DEFAULT_MODE,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [
                {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
            ]}}
        ]
    })
}

/// `spec[field]` as an array, made one when missing.
fn array_mut<'a>(object: &'a mut Value, field: &str) -> Option<&'a mut Vec<Value>> {
    let map = object.as_object_mut()?;
    let value = map.entry(field).or_insert_with(|| json!([]));
    if !value.is_array() {
        *value = json!([]);
    }
    value.as_array_mut()
}

/// Upstream `mountServiceAccountToken`: every init container and container without a
/// mount at the token path mounts the `kube-api-access-*` volume, which is added (named by
/// `generate`) unless the pod has one.
pub fn mount_token(pod: &mut Value, generate: impl FnOnce() -> String) {
    let existing = items(pod, "/spec/volumes")
        .map(|v| text(v, "/name"))
        .find(|n| n.starts_with(VOLUME_PREFIX))
        .map(str::to_owned);
    let has_volume = existing.is_some();
    let volume_name = existing.unwrap_or_else(generate);
    let mount = json!({"name": volume_name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
    let Some(spec) = pod.get_mut("spec") else {
        return;
    };
    let mut needs_volume = false;
    for field in ["initContainers", "containers"] {
        let Some(containers) = spec.get_mut(field).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers {
            let mounted = items(container, "/volumeMounts")
                .any(|m| text(m, "/mountPath") == TOKEN_MOUNT_PATH);
            if !mounted && let Some(mounts) = array_mut(container, "volumeMounts") {
                mounts.push(mount.clone());
                needs_volume = true;
            }
        }
    }
    if !has_volume
        && needs_volume
        && let Some(volumes) = array_mut(spec, "volumes")
    {
        volumes.push(json!({"name": volume_name, "projected": token_volume_source()}));
    }
}

/// A pod without image pull secrets gets its account's.
pub fn copy_image_pull_secrets(account: &Value, pod: &mut Value) {
    if items(pod, "/spec/imagePullSecrets").next().is_some() {
        return;
    }
    let names: Vec<Value> = listed(account, "imagePullSecrets")
        .into_iter()
        .map(|n| json!({"name": n}))
        .collect();
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut)
        && !names.is_empty()
    {
        spec.insert("imagePullSecrets".into(), Value::Array(names));
    }
}
