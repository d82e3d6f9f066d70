use super::*;
use crate::resources::messages;
use kas_registry::Strategy as _;

fn pvc() -> Value {
    let mut pvc = json!({"metadata": {"name": "data", "namespace": "ns", "resourceVersion": "3"},
        "spec": {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}});
    Strategy.default(&mut pvc);
    Strategy.prepare_for_create(&mut pvc);
    pvc
}

#[test]
fn defaults_and_create() {
    let mut pvc = json!({"metadata": {"name": "data", "namespace": "ns"},
        "spec": {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "0.0005"}},
            "dataSource": {"kind": "PersistentVolumeClaim", "name": "src"},
            "volumeAttributesClassName": "gold"},
        "status": {"phase": "Bound", "capacity": {"storage": "1.0001"}}});
    Strategy.default(&mut pvc);
    assert_eq!(pvc["spec"]["volumeMode"], "Filesystem");
    assert_eq!(pvc["spec"]["resources"]["requests"]["storage"], "1m");
    assert_eq!(pvc["status"]["capacity"]["storage"], "1001m");
    assert_eq!(
        Strategy.warnings_on_create(&pvc),
        [
            "spec.resources.requests[storage]: fractional byte value \"1m\" is invalid, must be an integer"
        ]
    );
    Strategy.prepare_for_create(&mut pvc);
    assert_eq!(pvc["status"], json!({"phase": "Pending"}));
    assert!(pvc["spec"].get("volumeAttributesClassName").is_none());
    assert_eq!(
        pvc["spec"]["dataSourceRef"],
        json!({"kind": "PersistentVolumeClaim", "name": "src"})
    );
    assert!(
        Strategy.validate(&pvc).is_empty(),
        "{:?}",
        messages(&Strategy.validate(&pvc))
    );
    let mut bare = json!({"metadata": {"name": "x", "namespace": "ns"}});
    Strategy.default(&mut bare);
    assert_eq!(bare["status"], json!({"phase": "Pending"}));
}

#[test]
fn a_claim_needs_access_modes_and_storage() {
    let mut bad = json!({"metadata": {"name": "data", "namespace": "ns"}, "spec": {}});
    Strategy.default(&mut bad);
    assert_eq!(
        messages(&Strategy.validate(&bad)),
        [
            "spec.accessModes: Required value: at least 1 access mode is required",
            "spec.resources[storage]: Required value",
        ]
    );
    let mut bad = pvc();
    bad["spec"]["accessModes"] = json!(["ReadWriteOncePod", "ReadOnlyMany", "Often"]);
    bad["spec"]["resources"]["requests"]["storage"] = json!("0");
    bad["spec"]["selector"] = json!({"matchExpressions": [{"key": "a", "operator": "In"}]});
    bad["spec"]["storageClassName"] = json!("A");
    bad["spec"]["volumeMode"] = json!("Raw");
    assert_eq!(
        messages(&Strategy.validate(&bad)),
        [
            "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
            "spec.accessModes: Unsupported value: \"Often\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"",
            "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
            "spec.resources[storage]: Invalid value: \"0\": must be greater than zero",
            "spec.storageClassName: Invalid value: \"A\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            "spec.volumeMode: Unsupported value: \"Raw\": supported values: \"Block\", \"Filesystem\"",
        ]
    );
}

#[test]
fn data_sources_are_checked() {
    let mut pvc = pvc();
    pvc["spec"]["dataSource"] = json!({"kind": "Snapshot", "name": ""});
    pvc["spec"]["dataSourceRef"] = json!({"kind": "PersistentVolumeClaim", "name": "b"});
    assert_eq!(
        messages(&Strategy.validate(&pvc)),
        [
            "spec.dataSource.name: Required value",
            "spec.dataSource: Invalid value: \"Snapshot\": must be 'PersistentVolumeClaim' when referencing the default apiGroup",
            "spec: Invalid value: spec.dataSource: must match dataSourceRef",
        ]
    );
}

#[test]
fn the_spec_is_immutable_but_bound_claims_grow() {
    let old = pvc();
    let mut new = old.clone();
    new["spec"]["resources"]["requests"]["storage"] = json!("2Gi");
    Strategy.prepare_for_update(&mut new, &old);
    let msgs = messages(&Strategy.validate_update(&new, &old));
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(
        msgs[0].starts_with("spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n  core.PersistentVolumeClaimSpec{\n"),
        "{}",
        msgs[0]
    );
    let mut bound = old.clone();
    bound["status"] = json!({"phase": "Bound", "capacity": {"storage": "1Gi"}});
    bound["spec"]["volumeName"] = json!("pv1");
    let mut grown = bound.clone();
    grown["spec"]["resources"]["requests"]["storage"] = json!("2Gi");
    Strategy.prepare_for_update(&mut grown, &bound);
    assert!(
        Strategy.validate_update(&grown, &bound).is_empty(),
        "{:?}",
        messages(&Strategy.validate_update(&grown, &bound))
    );
    let mut shrunk = bound.clone();
    shrunk["spec"]["resources"]["requests"]["storage"] = json!("512Mi");
    Strategy.prepare_for_update(&mut shrunk, &bound);
    assert_eq!(
        messages(&Strategy.validate_update(&shrunk, &bound)),
        ["spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"]
    );
    // The volume name may be set once, and the mode never changes.
    let mut named = old.clone();
    named["spec"]["volumeName"] = json!("pv1");
    named["spec"]["volumeMode"] = json!("Block");
    Strategy.prepare_for_update(&mut named, &old);
    let msgs = messages(&Strategy.validate_update(&named, &old));
    assert_eq!(
        msgs.last().map(String::as_str),
        Some("volumeMode: Invalid value: \"Block\": field is immutable")
    );
    assert!(msgs[0].contains("VolumeMode"), "{}", msgs[0]);
    // Spec errors come twice, as upstream validates the claim twice on update.
    let mut invalid = old.clone();
    invalid["spec"]["storageClassName"] = json!("A");
    let msgs = messages(&Strategy.validate_update(&invalid, &old));
    assert_eq!(msgs[0], msgs[1]);
}

#[test]
fn a_storage_class_may_be_set_from_nil() {
    let old = pvc();
    let mut new = old.clone();
    new["spec"]["storageClassName"] = json!("fast");
    Strategy.prepare_for_update(&mut new, &old);
    assert!(Strategy.validate_update(&new, &old).is_empty());
}

#[test]
fn status_rules() {
    let old = pvc();
    let mut new = old.clone();
    new["status"] = json!({"phase": "Bound", "capacity": {"storage": "-1"},
        "allocatedResourceStatuses": {"storage": "Resizing", "cpu": "NodeResizePending"},
        "allocatedResources": {"storage": "1Gi", "example.com/x": "1"}});
    new["spec"]["accessModes"] = json!([]);
    new["metadata"]
        .as_object_mut()
        .map(|m| m.remove("resourceVersion"));
    assert_eq!(
        messages(&Strategy.validate_status_update(&new, &old)),
        [
            "resourceVersion: Required value",
            "Spec.accessModes: Required value",
            "status.capacity[storage]: Invalid value: -1: must be a valid resource quantity",
            "status.allocatedResourceStatus: Unsupported value: \"cpu\": supported values: \"storage\"",
            "status.allocatedResourceStatus: Unsupported value: storage: supported values: \"ControllerResizeInProgress\", \"ControllerResizeInfeasible\", \"NodeResizeInProgress\", \"NodeResizeInfeasible\", \"NodeResizePending\"",
        ]
    );
}

#[test]
fn printer_cells_and_fields() {
    let mut pvc = pvc();
    let cells = Strategy.table_cells(&pvc);
    assert_eq!(
        cells,
        [
            json!("data"),
            json!("Pending"),
            json!(""),
            json!(""),
            json!(""),
            json!(""),
            json!("<unset>"),
            json!("<unknown>"),
            json!("Filesystem"),
        ]
    );
    assert_eq!(cells.len(), DESCRIPTOR.table_columns.len());
    pvc["spec"]["volumeName"] = json!("pv1");
    pvc["spec"]["storageClassName"] = json!("fast");
    pvc["status"] = json!({"phase": "Bound", "capacity": {"storage": "2Gi"},
        "accessModes": ["ReadWriteOncePod", "ReadOnlyMany"]});
    let cells = Strategy.table_cells(&pvc);
    assert_eq!(
        cells[1..6],
        [
            json!("Bound"),
            json!("pv1"),
            json!("2Gi"),
            json!("ROX,RWOP"),
            json!("fast")
        ]
    );
    let fields = Strategy.field_set(&pvc);
    assert_eq!(
        fields.keys().collect::<Vec<_>>(),
        ["metadata.name", "metadata.namespace", "name"]
    );
    assert_eq!(fields["metadata.namespace"], "ns");
    assert_eq!(Strategy.reset_fields("status"), ["spec"]);
}
