//! storage.k8s.io/v1 StorageClasses, CSIDrivers and VolumeAttachments as kubectl drives them.

use kas_e2e::{header_and_row, start_cluster};
use serde_json::json;

#[test]
fn storage_resources_as_kubectl_uses_them() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources", "--api-group=storage.k8s.io"]);
    for expected in [
        vec!["csidrivers", "storage.k8s.io/v1", "false", "CSIDriver"],
        vec!["csinodes", "storage.k8s.io/v1", "false", "CSINode"],
        vec![
            "csistoragecapacities",
            "storage.k8s.io/v1",
            "true",
            "CSIStorageCapacity",
        ],
        vec![
            "storageclasses",
            "sc",
            "storage.k8s.io/v1",
            "false",
            "StorageClass",
        ],
        vec![
            "volumeattachments",
            "storage.k8s.io/v1",
            "false",
            "VolumeAttachment",
        ],
    ] {
        assert!(
            resources
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == expected),
            "{resources}"
        );
    }

    let out = c.kubectl_stdin(
        &["create"],
        r#"{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "fast",
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3"}}"#,
    );
    assert!(out.status.success(), "{out:?}");
    let sc = c.kubectl_json(&["get", "sc", "fast"]);
    assert_eq!(sc["reclaimPolicy"], "Delete");
    assert_eq!(sc["volumeBindingMode"], "Immediate");
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "sc"]));
    assert_eq!(
        header,
        [
            "NAME",
            "PROVISIONER",
            "RECLAIMPOLICY",
            "VOLUMEBINDINGMODE",
            "ALLOWVOLUMEEXPANSION",
            "AGE"
        ]
    );
    assert_eq!(
        row[..5],
        [
            "fast (default)",
            "ebs.csi.aws.com",
            "Delete",
            "Immediate",
            "false"
        ]
    );

    let err = c.kubectl_fails(&[
        "patch",
        "sc",
        "fast",
        "--type=merge",
        "-p",
        r#"{"parameters": {"type": "gp2"}}"#,
    ]);
    assert!(
        err.contains("parameters: Forbidden: updates to parameters are forbidden."),
        "{err}"
    );

    let out = c.kubectl_stdin(
        &["create"],
        r#"{"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
            "metadata": {"name": "ebs.csi.aws.com"}, "spec": {}}"#,
    );
    assert!(out.status.success(), "{out:?}");
    let d = c.kubectl_json(&["get", "csidriver", "ebs.csi.aws.com"]);
    assert_eq!(
        d["spec"],
        json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
            "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
            "requiresRepublish": false, "seLinuxMount": false})
    );
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "csidrivers"]));
    assert_eq!(
        header,
        [
            "NAME",
            "ATTACHREQUIRED",
            "PODINFOONMOUNT",
            "STORAGECAPACITY",
            "TOKENREQUESTS",
            "REQUIRESREPUBLISH",
            "MODES",
            "AGE"
        ]
    );
    assert_eq!(
        row[..7],
        [
            "ebs.csi.aws.com",
            "true",
            "false",
            "false",
            "<unset>",
            "false",
            "Persistent"
        ]
    );

    let out = c.kubectl_stdin(
        &["create"],
        r#"{"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
            "metadata": {"name": "va-1"},
            "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "node-1",
                "source": {"persistentVolumeName": "pv-1"}},
            "status": {"attached": true}}"#,
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        c.kubectl_json(&["get", "volumeattachment", "va-1"])["status"]["attached"],
        false
    );
    c.kubectl_ok(&[
        "patch",
        "volumeattachment",
        "va-1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status": {"attached": true, "attachmentMetadata": {"devicePath": "/dev/xvdf"}}}"#,
    ]);
    let va = c.kubectl_json(&["get", "volumeattachment", "va-1"]);
    assert_eq!(
        va["status"],
        json!({"attached": true, "attachmentMetadata": {"devicePath": "/dev/xvdf"}})
    );
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "volumeattachments"]));
    assert_eq!(
        header,
        ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
    );
    assert_eq!(
        row[..5],
        ["va-1", "ebs.csi.aws.com", "pv-1", "node-1", "true"]
    );
    let err = c.kubectl_fails(&[
        "patch",
        "volumeattachment",
        "va-1",
        "--type=merge",
        "-p",
        r#"{"spec": {"nodeName": "node-2"}}"#,
    ]);
    assert!(
        err.contains("spec: Invalid value: storage.VolumeAttachmentSpec{"),
        "{err}"
    );
}
