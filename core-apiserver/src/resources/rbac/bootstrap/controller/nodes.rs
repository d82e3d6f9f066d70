//! The roles of the node, volume, replication, service and statefulset controllers, in
//! upstream's order.

use serde_json::Value;

use super::super::builder::groups::*;

use super::super::builder::{events_rule, rule};

const READ: &[&str] = super::super::builder::READ;

pub(super) fn node_and_volume_controllers() -> Vec<(&'static str, Vec<Value>)> {
    vec![
        (
            "node-controller",
            vec![
                rule(&["get", "list", "watch", "update", "delete", "patch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes"])
                    .build(),
                rule(&["patch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["nodes/status"])
                    .build(),
                rule(&["patch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["pods/status"])
                    .build(),
                rule(&["list", "watch", "get", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "persistent-volume-binder",
            vec![
                rule(&["get", "list", "watch", "update", "create", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumes"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumes/status"])
                    .build(),
                rule(&["get", "list", "watch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims/status"])
                    .build(),
                rule(&["list", "watch", "get", "create", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                rule(READ)
                    .groups(&[STORAGE])
                    .resources(&["storageclasses"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes"])
                    .build(),
                events_rule(),
                rule(&["watch"])
                    .groups(&[LEGACY])
                    .resources(&["events"])
                    .build(),
                rule(&["get"])
                    .groups(&[LEGACY])
                    .resources(&["services"])
                    .build(),
            ],
        ),
        (
            "pod-garbage-collector",
            vec![
                rule(&["list", "watch", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                rule(READ).groups(&[LEGACY]).resources(&["nodes"]).build(),
                rule(&["patch"])
                    .groups(&[LEGACY])
                    .resources(&["pods/status"])
                    .build(),
            ],
        ),
        (
            "replicaset-controller",
            vec![
                rule(&["get", "list", "watch", "update"])
                    .groups(&[APPS, EXTENSIONS])
                    .resources(&["replicasets"])
                    .build(),
                rule(&["update"])
                    .groups(&[APPS, EXTENSIONS])
                    .resources(&["replicasets/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[APPS, EXTENSIONS])
                    .resources(&["replicasets/finalizers"])
                    .build(),
                rule(&["list", "watch", "patch", "create", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "replication-controller",
            vec![
                rule(&["get", "list", "watch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["replicationcontrollers"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["replicationcontrollers/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["replicationcontrollers/finalizers"])
                    .build(),
                rule(&["list", "watch", "patch", "create", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "resourcequota-controller",
            vec![
                rule(&["list", "watch"])
                    .groups(&["*"])
                    .resources(&["*"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["resourcequotas/status"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "route-controller",
            vec![
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes"])
                    .build(),
                rule(&["patch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes/status"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "service-account-controller",
            vec![
                rule(&["create"])
                    .groups(&[LEGACY])
                    .resources(&["serviceaccounts"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "service-controller",
            vec![
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["services"])
                    .build(),
                rule(&["patch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["services/status"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes"])
                    .build(),
                events_rule(),
            ],
        ),
        // MultiCIDRServiceAllocator (GA).
        (
            "service-cidrs-controller",
            vec![
                rule(&["get", "list", "watch", "patch", "update"])
                    .groups(&[NETWORKING])
                    .resources(&["servicecidrs"])
                    .build(),
                rule(&["patch", "update"])
                    .groups(&[NETWORKING])
                    .resources(&["servicecidrs/finalizers"])
                    .build(),
                rule(&["patch", "update"])
                    .groups(&[NETWORKING])
                    .resources(&["servicecidrs/status"])
                    .build(),
                rule(READ)
                    .groups(&[NETWORKING])
                    .resources(&["ipaddresses"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "statefulset-controller",
            vec![
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                rule(READ)
                    .groups(&[APPS])
                    .resources(&["statefulsets"])
                    .build(),
                rule(&["update"])
                    .groups(&[APPS])
                    .resources(&["statefulsets/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[APPS])
                    .resources(&["statefulsets/finalizers"])
                    .build(),
                rule(&["get", "create", "delete", "update", "patch"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                rule(&[
                    "get", "create", "delete", "update", "patch", "list", "watch",
                ])
                .groups(&[APPS])
                .resources(&["controllerrevisions"])
                .build(),
                rule(&["get", "create", "list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
                events_rule(),
                // StatefulSetAutoDeletePVC (GA).
                rule(&["update", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["pods/finalizers"])
                    .build(),
            ],
        ),
        (
            "ttl-controller",
            vec![
                rule(&["update", "patch", "list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes"])
                    .build(),
                events_rule(),
            ],
        ),
    ]
}
