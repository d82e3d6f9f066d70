use serde_json::{Value, json};

use super::rules::*;

fn pod(spec: Value) -> Value {
    json!({"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
}

#[test]
fn the_token_is_mounted_in_init_containers_and_containers_but_not_ephemeral_ones() {
    let mut p = pod(json!({
        "initContainers": [{"name": "init", "image": "i"}],
        "containers": [
            {"name": "a", "image": "i"},
            {"name": "own", "image": "i", "volumeMounts": [{"name": "mine", "mountPath": TOKEN_MOUNT_PATH}]}
        ],
        "ephemeralContainers": [{"name": "debug", "image": "i"}],
        "volumes": [{"name": "mine", "emptyDir": {}}]
    }));
    mount_token(&mut p, || "kube-api-access-x2b4z".to_owned());
    let mount =
        json!({"name": "kube-api-access-x2b4z", "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
    assert_eq!(
        p["spec"]["initContainers"][0]["volumeMounts"],
        json!([mount])
    );
    assert_eq!(p["spec"]["containers"][0]["volumeMounts"], json!([mount]));
    assert_eq!(
        p["spec"]["containers"][1]["volumeMounts"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert!(
        p["spec"]["ephemeralContainers"][0]
            .get("volumeMounts")
            .is_none()
    );
    assert_eq!(
        p["spec"]["volumes"][1],
        json!({"name": "kube-api-access-x2b4z", "projected": {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
        ]}})
    );
}

#[test]
fn an_existing_access_volume_is_reused_and_no_mount_needs_no_volume() {
    let mut p = pod(json!({
        "containers": [{"name": "a", "image": "i"}],
        "volumes": [{"name": "kube-api-access-abcde", "emptyDir": {}}]
    }));
    mount_token(&mut p, || unreachable!("a name is there"));
    assert_eq!(p["spec"]["volumes"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        p["spec"]["containers"][0]["volumeMounts"][0]["name"],
        "kube-api-access-abcde"
    );
    let mut all_mounted = pod(json!({"containers": [
        {"name": "a", "image": "i", "volumeMounts": [{"name": "m", "mountPath": TOKEN_MOUNT_PATH}]}
    ]}));
    mount_token(&mut all_mounted, || "kube-api-access-zzzzz".to_owned());
    assert!(all_mounted["spec"].get("volumes").is_none());
}

#[test]
fn automount_is_the_pods_choice_then_the_accounts() {
    let account = |v: Value| json!({"metadata": {"name": "sa"}, "automountServiceAccountToken": v});
    let p = |v: Value| pod(json!({"automountServiceAccountToken": v}));
    assert!(should_automount(&account(Value::Null), &p(Value::Null)));
    assert!(!should_automount(&account(json!(false)), &p(Value::Null)));
    assert!(should_automount(&account(json!(false)), &p(json!(true))));
    assert!(!should_automount(&account(json!(true)), &p(json!(false))));
}

#[test]
fn image_pull_secrets_come_from_the_account_when_the_pod_has_none() {
    let account = json!({"imagePullSecrets": [{"name": "reg"}, {"name": "other"}]});
    let mut p = pod(json!({}));
    copy_image_pull_secrets(&account, &mut p);
    assert_eq!(
        p["spec"]["imagePullSecrets"],
        json!([{"name": "reg"}, {"name": "other"}])
    );
    let mut own = pod(json!({"imagePullSecrets": [{"name": "mine"}]}));
    copy_image_pull_secrets(&account, &mut own);
    assert_eq!(own["spec"]["imagePullSecrets"], json!([{"name": "mine"}]));
    let mut none = pod(json!({}));
    copy_image_pull_secrets(&json!({}), &mut none);
    assert!(none["spec"].get("imagePullSecrets").is_none());
}

#[test]
fn mountable_secrets_are_enforced_only_when_the_account_asks() {
    let annotated = |v: &str| {
        json!({"metadata": {"name": "sa", "annotations": {"kubernetes.io/enforce-mountable-secrets": v}},
               "secrets": [{"name": "ok"}], "imagePullSecrets": [{"name": "reg"}]})
    };
    assert!(enforce_mountable_secrets(&annotated("true")));
    assert!(enforce_mountable_secrets(&annotated("T")));
    assert!(!enforce_mountable_secrets(&annotated("yes")));
    assert!(!enforce_mountable_secrets(
        &json!({"metadata": {"name": "sa"}})
    ));
    let account = annotated("true");
    let refused = |spec: Value| limit_secret_references(&account, &pod(spec)).unwrap_err();
    assert_eq!(
        refused(json!({"volumes": [{"name": "v", "secret": {"secretName": "top"}}]})),
        "volume with secret.secretName=\"top\" is not allowed because service account sa does not reference that secret"
    );
    assert_eq!(
        refused(
            json!({"initContainers": [{"name": "i", "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"name": "top", "key": "k"}}}]}]})
        ),
        "init container i with envVar E referencing secret.secretName=\"top\" is not allowed because service account sa does not reference that secret"
    );
    assert_eq!(
        refused(
            json!({"containers": [{"name": "c", "envFrom": [{"secretRef": {"name": "top"}}]}]})
        ),
        "container c with envFrom referencing secret.secretName=\"top\" is not allowed because service account sa does not reference that secret"
    );
    assert_eq!(
        refused(json!({"imagePullSecrets": [{"name": "reg"}, {"name": "x"}]})),
        "imagePullSecrets[1].name=\"x\" is not allowed because service account sa does not reference that imagePullSecret"
    );
    let fine = pod(
        json!({"volumes": [{"name": "v", "secret": {"secretName": "ok"}}],
        "containers": [{"name": "c", "envFrom": [{"secretRef": {"name": "ok"}}]}]}),
    );
    assert_eq!(limit_secret_references(&account, &fine), Ok(()));
    let debug = pod(json!({"ephemeralContainers": [
        {"name": "d", "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"name": "top", "key": "k"}}}]}
    ]}));
    assert_eq!(
        limit_ephemeral_secret_references(&account, &debug).unwrap_err(),
        "ephemeral container d with envVar E referencing secret.secretName=\"top\" is not allowed because service account sa does not reference that secret"
    );
}

#[test]
fn mirror_pods_reference_no_account_secret_or_token() {
    let mirror = |spec: Value| json!({"metadata": {"name": "m", "annotations": {"kubernetes.io/config.mirror": "x"}}, "spec": spec});
    assert!(is_mirror(&mirror(json!({}))));
    assert!(!is_mirror(&pod(json!({}))));
    assert_eq!(
        mirror_refusal(&mirror(json!({"containers": [{"name": "c"}]}))),
        None
    );
    assert_eq!(
        mirror_refusal(&mirror(json!({"serviceAccountName": "sa"}))),
        Some("a mirror pod may not reference service accounts")
    );
    for spec in [
        json!({"imagePullSecrets": [{"name": "reg"}]}),
        json!({"ephemeralContainers": [{"name": "d", "envFrom": [{"secretRef": {"name": "s"}}]}]}),
        json!({"volumes": [{"name": "v", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "s"}}}]}),
        json!({"volumes": [{"name": "v", "projected": {"sources": [{"secret": {"name": "s"}}]}}]}),
    ] {
        assert_eq!(
            mirror_refusal(&mirror(spec.clone())),
            Some("a mirror pod may not reference secrets"),
            "{spec}"
        );
    }
    assert_eq!(
        mirror_refusal(&mirror(
            json!({"volumes": [{"name": "v", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}]})
        )),
        Some("a mirror pod may not use ServiceAccountToken volume projections")
    );
}
