//! PersistentVolumes and PersistentVolumeClaims through the aggregator, as kubectl drives
//! them.

use kas_e2e::{TestCluster, header_and_row, start_cluster};
use serde_json::json;

/// `kubectl <args> -f -` with `manifest`: stdout when it succeeds, stderr when it fails.
fn create(c: &TestCluster, manifest: &str, ok: bool) -> String {
    let out = c.kubectl_stdin(&["create"], manifest);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.success(), ok, "{stderr}");
    if ok {
        String::from_utf8_lossy(&out.stdout).into_owned()
    } else {
        stderr
    }
}

const PV: &str = r#"
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv1
spec:
  capacity:
    storage: 1Gi
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  storageClassName: manual
  hostPath:
    path: /data/pv1
"#;

const PVC: &str = r#"
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  resources:
    requests:
      storage: 1Gi
"#;

#[test]
fn volumes_and_claims_as_kubectl_uses_them() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources", "--api-group="]);
    for expected in [
        vec![
            "persistentvolumeclaims",
            "pvc",
            "v1",
            "true",
            "PersistentVolumeClaim",
        ],
        vec!["persistentvolumes", "pv", "v1", "false", "PersistentVolume"],
    ] {
        assert!(
            resources
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == expected),
            "{resources}"
        );
    }

    // A volume: upstream's defaults, and a Pending status the server owns.
    assert_eq!(create(&c, PV, true), "persistentvolume/pv1 created\n");
    let pv = c.kubectl_json(&["get", "pv", "pv1"]);
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(pv["spec"]["volumeMode"], "Filesystem");
    assert_eq!(
        pv["spec"]["hostPath"],
        json!({"path": "/data/pv1", "type": ""})
    );
    assert_eq!(pv["status"]["phase"], "Pending");
    assert!(pv["status"]["lastPhaseTransitionTime"].is_string(), "{pv}");
    assert!(pv["metadata"].get("namespace").is_none());

    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "pv"]));
    assert_eq!(
        header,
        [
            "NAME",
            "CAPACITY",
            "ACCESS MODES",
            "RECLAIM POLICY",
            "STATUS",
            "CLAIM",
            "STORAGECLASS",
            "VOLUMEATTRIBUTESCLASS",
            "REASON",
            "AGE"
        ]
    );
    assert_eq!(
        row[..7],
        [
            "pv1", "1Gi", "RWO,ROX", "Retain", "Pending", "manual", "<unset>"
        ]
    );
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "pv", "-o", "wide"]));
    assert_eq!(header.last().map(String::as_str), Some("VOLUMEMODE"));
    assert_eq!(row.last().map(String::as_str), Some("Filesystem"));

    // The status subresource changes the status only.
    c.kubectl_ok(&[
        "patch",
        "pv",
        "pv1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Available"},"spec":{"persistentVolumeReclaimPolicy":"Delete"}}"#,
    ]);
    let pv = c.kubectl_json(&["get", "pv", "pv1"]);
    assert_eq!(pv["status"]["phase"], "Available");
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    // The main resource keeps the status.
    c.kubectl_ok(&[
        "patch",
        "pv",
        "pv1",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Failed"},"spec":{"persistentVolumeReclaimPolicy":"Delete"}}"#,
    ]);
    let pv = c.kubectl_json(&["get", "pv", "pv1"]);
    assert_eq!(pv["status"]["phase"], "Available");
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Delete");
    // The source is immutable.
    let err = c.kubectl_fails(&[
        "patch",
        "pv",
        "pv1",
        "--type=merge",
        "-p",
        r#"{"spec":{"hostPath":{"path":"/elsewhere"}}}"#,
    ]);
    assert!(
        err.contains(
            "The PersistentVolume \"pv1\" is invalid: spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation"
        ),
        "{err}"
    );

    // A claim.
    assert_eq!(
        create(&c, PVC, true),
        "persistentvolumeclaim/data created\n"
    );
    let pvc = c.kubectl_json(&["get", "pvc", "data"]);
    assert_eq!(pvc["spec"]["volumeMode"], "Filesystem");
    assert_eq!(pvc["status"], json!({"phase": "Pending"}));
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "pvc"]));
    assert_eq!(
        header,
        [
            "NAME",
            "STATUS",
            "VOLUME",
            "CAPACITY",
            "ACCESS MODES",
            "STORAGECLASS",
            "VOLUMEATTRIBUTESCLASS",
            "AGE"
        ]
    );
    // Empty cells vanish from the split row.
    assert_eq!(row[..4], ["data", "Pending", "manual", "<unset>"]);

    // Binding, as the controller does it: the volume name once, then the status.
    c.kubectl_ok(&[
        "patch",
        "pvc",
        "data",
        "--type=merge",
        "-p",
        r#"{"spec":{"volumeName":"pv1"}}"#,
    ]);
    c.kubectl_ok(&[
        "patch",
        "pvc",
        "data",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"}}}"#,
    ]);
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "pvc", "data"]));
    assert_eq!(
        row[..7],
        ["data", "Bound", "pv1", "1Gi", "RWO", "manual", "<unset>"]
    );
    // Everything but a bound claim's requests is immutable.
    let err = c.kubectl_fails(&[
        "patch",
        "pvc",
        "data",
        "--type=merge",
        "-p",
        r#"{"spec":{"accessModes":["ReadWriteMany"]}}"#,
    ]);
    assert!(
        err.contains(
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"
        ),
        "{err}"
    );
    // Growing it needs a class that allows expansion (PersistentVolumeClaimResize).
    let grow = [
        "patch",
        "pvc",
        "data",
        "--type=merge",
        "-p",
        r#"{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}"#,
    ];
    let err = c.kubectl_fails(&grow);
    assert!(
        err.contains(
            "persistentvolumeclaims \"data\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"
        ),
        "{err}"
    );
    let class = "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":{\"name\":\"manual\"},\"provisioner\":\"example.com/manual\",\"allowVolumeExpansion\":true}";
    create(&c, class, true);
    c.kubectl_ok(&grow);
    let err = c.kubectl_fails(&[
        "patch",
        "pvc",
        "data",
        "--type=merge",
        "-p",
        r#"{"spec":{"resources":{"requests":{"storage":"512Mi"}}}}"#,
    ]);
    assert!(
        err.contains(
            "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"
        ),
        "{err}"
    );

    // A claim without access modes or a storage request.
    let bad = r#"
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: bad
spec:
  resources: {}
"#;
    let err = create(&c, bad, false);
    assert!(
        err.contains(
            "The PersistentVolumeClaim \"bad\" is invalid: \n\
             * spec.accessModes: Required value: at least 1 access mode is required\n\
             * spec.resources[storage]: Required value\n"
        ),
        "{err}"
    );
    let bad_pv = r#"
apiVersion: v1
kind: PersistentVolume
metadata:
  name: bad
spec:
  capacity:
    storage: 1Gi
"#;
    let err = create(&c, bad_pv, false);
    assert!(
        err.contains(
            "The PersistentVolume \"bad\" is invalid: \n\
             * spec.accessModes: Required value\n\
             * spec: Required value: must specify a volume type\n"
        ),
        "{err}"
    );

    // StorageObjectInUseProtection's finalizers hold both until their controllers (absent
    // here) let go.
    assert_eq!(
        c.kubectl_json(&["get", "pvc", "data"])["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    c.kubectl_ok(&["delete", "pvc", "data", "--wait=false"]);
    c.kubectl_ok(&["delete", "pv", "pv1", "--wait=false"]);
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "pvc", "data"]));
    assert_eq!(row[1], "Terminating");
    let release = r#"{"metadata":{"finalizers":null}}"#;
    c.kubectl_ok(&["patch", "pvc", "data", "--type=merge", "-p", release]);
    c.kubectl_ok(&["patch", "pv", "pv1", "--type=merge", "-p", release]);
    assert!(!c.kubectl_ok(&["get", "pv"]).contains("pv1"));
    assert!(!c.kubectl_ok(&["get", "pvc"]).contains("data"));
}
