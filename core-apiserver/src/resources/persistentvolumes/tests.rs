use super::*;
use crate::resources::messages;
use kas_registry::Strategy as _;

fn pv() -> Value {
    let mut pv = json!({"metadata": {"name": "pv1", "resourceVersion": "5"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/data"}}});
    Strategy.default(&mut pv);
    pv
}

#[test]
fn defaults_are_upstreams() {
    let mut pv = json!({"metadata": {"name": "pv1"},
        "spec": {"capacity": {"storage": "1.0001"}, "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/data"}, "rbd": {"monitors": ["m"], "image": "i"}}});
    Strategy.default(&mut pv);
    assert_eq!(pv["status"], json!({"phase": "Pending"}));
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(pv["spec"]["volumeMode"], "Filesystem");
    assert_eq!(pv["spec"]["hostPath"]["type"], "");
    assert_eq!(pv["spec"]["rbd"]["pool"], "rbd");
    assert_eq!(pv["spec"]["rbd"]["user"], "admin");
    assert_eq!(pv["spec"]["capacity"]["storage"], "1001m");
    // No emptyDir: that default is a pod volume's.
    assert!(pv["spec"].get("emptyDir").is_none());
}

#[test]
fn a_new_volume_is_pending_since_now() {
    let mut pv = pv();
    pv["status"] = json!({"phase": "Bound", "message": "x"});
    pv["spec"]["volumeAttributesClassName"] = json!("gold");
    Strategy.prepare_for_create(&mut pv);
    assert_eq!(pv["status"]["phase"], "Pending");
    assert!(
        pv["status"]["lastPhaseTransitionTime"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    assert_eq!(pv["status"].as_object().map(|m| m.len()), Some(2));
    // The VolumeAttributesClass gate is off in 1.33.
    assert!(pv["spec"].get("volumeAttributesClassName").is_none());
    assert!(
        Strategy.validate(&pv).is_empty(),
        "{:?}",
        messages(&Strategy.validate(&pv))
    );
}

#[test]
fn spec_errors_are_upstreams() {
    let mut bad = json!({"metadata": {"name": "pv1"},
        "spec": {"capacity": {"storage": "0", "cpu": "1"},
            "accessModes": ["ReadWriteOncePod", "ReadWriteOnce", "Sometimes"],
            "persistentVolumeReclaimPolicy": "Keep", "storageClassName": "Bad_Class",
            "volumeMode": "Raw"}});
    Strategy.default(&mut bad);
    assert_eq!(
        messages(&Strategy.validate(&bad)),
        [
            "spec.accessModes: Unsupported value: \"Sometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"",
            "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
            "spec.capacity: Unsupported value: core.ResourceList{\"cpu\":resource.Quantity{i:resource.int64Amount{value:1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"1\", Format:\"DecimalSI\"}, \"storage\":resource.Quantity{i:resource.int64Amount{value:0, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"0\", Format:\"DecimalSI\"}}: supported values: \"storage\"",
            "spec.capacity[storage]: Invalid value: \"0\": must be greater than zero",
            "spec.persistentVolumeReclaimPolicy: Unsupported value: \"Keep\": supported values: \"Delete\", \"Recycle\", \"Retain\"",
            "spec: Required value: must specify a volume type",
            "spec.storageClassName: Invalid value: \"Bad_Class\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            "spec.volumeMode: Unsupported value: \"Raw\": supported values: \"Block\", \"Filesystem\"",
        ]
    );
    let mut empty = json!({"metadata": {"name": "pv1", "namespace": "ns"}, "spec": {}});
    Strategy.default(&mut empty);
    assert_eq!(
        messages(&Strategy.validate(&empty)),
        [
            "metadata.namespace: Forbidden: not allowed on this type",
            "spec.accessModes: Required value",
            "spec.capacity: Required value",
            "spec.capacity: Unsupported value: core.ResourceList(nil): supported values: \"storage\"",
            "spec: Required value: must specify a volume type",
        ]
    );
}

#[test]
fn sources_are_checked_as_upstream_checks_them() {
    let mut pv = pv();
    pv["spec"]["nfs"] = json!({"server": "s", "path": "relative"});
    pv["spec"]["flexVolume"] = json!({});
    pv["spec"]["persistentVolumeReclaimPolicy"] = json!("Recycle");
    pv["spec"]["hostPath"] = json!({"path": "/x/.."});
    assert_eq!(
        messages(&Strategy.validate(&pv)),
        [
            "spec.hostPath.path: Invalid value: \"/x/..\": must not contain '..'",
            "spec.nfs: Forbidden: may not specify more than 1 volume type",
            "spec.flexVolume.driver: Required value",
            "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'",
        ]
    );
    let mut local = json!({"metadata": {"name": "pv1"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "local": {"path": "/mnt"}, "nodeAffinity": {}}});
    Strategy.default(&mut local);
    assert_eq!(
        messages(&Strategy.validate(&local)),
        ["spec.nodeAffinity.required: Required value: must specify required node constraints"]
    );
    local["spec"]
        .as_object_mut()
        .map(|m| m.remove("nodeAffinity"));
    assert_eq!(
        messages(&Strategy.validate(&local)),
        ["spec.nodeAffinity: Required value: Local volume requires node affinity"]
    );
    let mut csi = json!({"metadata": {"name": "pv1"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "csi": {"driver": "d.example.com", "nodePublishSecretRef": {"name": "s"}},
            "iscsi": {"targetPortal": "p", "iqn": "x"}}});
    Strategy.default(&mut csi);
    assert_eq!(
        messages(&Strategy.validate(&csi)),
        [
            "spec.iscsi.iqn: Invalid value: \"x\": must be valid format",
            "spec.csi: Forbidden: may not specify more than 1 volume type",
        ]
    );
    csi["spec"].as_object_mut().map(|m| m.remove("iscsi"));
    assert_eq!(
        messages(&Strategy.validate(&csi)),
        [
            "spec.csi.volumeHandle: Required value",
            "spec.csi.nodePublishSecretRef.namespace: Required value",
        ]
    );
}

#[test]
fn the_source_and_mode_are_immutable() {
    let old = pv();
    let mut new = old.clone();
    new["spec"]["hostPath"]["path"] = json!("/other");
    new["spec"]["volumeMode"] = json!("Block");
    new["spec"]["capacity"]["storage"] = json!("2Gi");
    Strategy.prepare_for_update(&mut new, &old);
    let msgs = messages(&Strategy.validate_update(&new, &old));
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(
        msgs[0].starts_with(
            "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n  core.PersistentVolumeSource{\n"
        ),
        "{}",
        msgs[0]
    );
    assert!(msgs[0].contains("\"/other\""), "{}", msgs[0]);
    assert_eq!(
        msgs[1],
        "volumeMode: Invalid value: \"Block\": field is immutable"
    );
    // The capacity, the class and the policy may change.
    let mut ok = old.clone();
    ok["spec"]["capacity"]["storage"] = json!("2Gi");
    ok["spec"]["persistentVolumeReclaimPolicy"] = json!("Delete");
    assert!(Strategy.validate_update(&ok, &old).is_empty());
}

#[test]
fn node_affinity_may_only_move_to_ga_labels() {
    let term = |key: &str| {
        json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": key, "operator": "In", "values": ["a"]}]}]}})
    };
    let mut old = pv();
    old["spec"]["nodeAffinity"] = term("failure-domain.beta.kubernetes.io/zone");
    let mut ga = old.clone();
    ga["spec"]["nodeAffinity"] = term("topology.kubernetes.io/zone");
    assert!(Strategy.validate_update(&ga, &old).is_empty());
    let mut other = old.clone();
    other["spec"]["nodeAffinity"] = term("example.com/zone");
    assert_eq!(
        messages(&Strategy.validate_update(&other, &old)),
        [
            "nodeAffinity: Invalid value: core.VolumeNodeAffinity{Required:(*core.NodeSelector)(0xc000000000)}: field is immutable, except for updating from beta label to GA"
        ]
    );
}

#[test]
fn status_writes_need_a_resource_version() {
    let old = pv();
    let mut new = old.clone();
    new["status"] = json!({"phase": "Available"});
    assert!(Strategy.validate_status_update(&new, &old).is_empty());
    new["metadata"]
        .as_object_mut()
        .map(|m| m.remove("resourceVersion"));
    assert_eq!(
        messages(&Strategy.validate_status_update(&new, &old)),
        ["resourceVersion: Required value"]
    );
    assert_eq!(Strategy.reset_fields("status"), ["spec"]);
    assert_eq!(Strategy.reset_fields(""), ["status"]);
}

#[test]
fn updates_keep_the_status() {
    let mut old = pv();
    old["status"] = json!({"phase": "Bound"});
    let mut new = old.clone();
    new["status"] = json!({"phase": "Released"});
    Strategy.prepare_for_update(&mut new, &old);
    assert_eq!(new["status"], json!({"phase": "Bound"}));
}

#[test]
fn printer_cells_and_fields() {
    let mut pv = pv();
    pv["metadata"]["annotations"] = json!({"volume.beta.kubernetes.io/storage-class": "legacy"});
    pv["spec"]["storageClassName"] = json!("fast");
    pv["spec"]["accessModes"] = json!(["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"]);
    pv["spec"]["claimRef"] = json!({"namespace": "ns", "name": "data"});
    pv["status"] = json!({"phase": "Bound", "reason": "why"});
    let cells = Strategy.table_cells(&pv);
    assert_eq!(
        cells,
        [
            json!("pv1"),
            json!("1Gi"),
            json!("RWO,RWX"),
            json!("Retain"),
            json!("Bound"),
            json!("ns/data"),
            json!("legacy"),
            json!("<unset>"),
            json!("why"),
            json!("<unknown>"),
            json!("Filesystem"),
        ]
    );
    assert_eq!(cells.len() + 1, DESCRIPTOR.table_columns.len() + 1);
    pv["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
    assert_eq!(Strategy.table_cells(&pv)[4], "Terminating");
    assert_eq!(
        Strategy.warnings_on_create(&pv),
        [
            "metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use \"storageClassName\" attribute instead"
        ]
    );
    let fields = Strategy.field_set(&pv);
    assert_eq!(fields.keys().collect::<Vec<_>>(), ["metadata.name", "name"]);
    assert_eq!(fields["name"], "pv1");
    assert!(!Strategy.field_label_conversion());
    assert_eq!(
        DESCRIPTOR.table_columns[1].description,
        PERSISTENT_VOLUME_SPEC.doc("capacity")
    );
    assert!(!DESCRIPTOR.table_columns[1].description.is_empty());
}

#[test]
fn recycling_is_a_deprecated_policy() {
    let mut pv = pv();
    pv["spec"]["persistentVolumeReclaimPolicy"] = json!("Recycle");
    assert_eq!(
        Strategy.warnings_on_create(&pv),
        [
            "spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning."
        ]
    );
}
