//! The roles of the workload controllers (attach/detach to namespace), in upstream's order.

use serde_json::Value;

use super::super::builder::groups::*;

use super::super::builder::{events_rule, rule};

const READ: &[&str] = super::super::builder::READ;

pub(super) fn workload_controllers() -> Vec<(&'static str, Vec<Value>)> {
    vec![
        (
            "attachdetach-controller",
            vec![
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumes", "persistentvolumeclaims"])
                    .build(),
                rule(READ).groups(&[LEGACY]).resources(&["nodes"]).build(),
                rule(&["patch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["nodes/status"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
                rule(&["get", "create", "delete", "list", "watch"])
                    .groups(&[STORAGE])
                    .resources(&["volumeattachments"])
                    .build(),
                rule(READ)
                    .groups(&[STORAGE])
                    .resources(&["csidrivers"])
                    .build(),
                rule(READ)
                    .groups(&[STORAGE])
                    .resources(&["csinodes"])
                    .build(),
            ],
        ),
        (
            "clusterrole-aggregation-controller",
            vec![
                rule(&["escalate", "get", "list", "watch", "update", "patch"])
                    .groups(&[RBAC])
                    .resources(&["clusterroles"])
                    .build(),
            ],
        ),
        (
            "cronjob-controller",
            vec![
                rule(&["get", "list", "watch", "update"])
                    .groups(&[BATCH])
                    .resources(&["cronjobs"])
                    .build(),
                rule(&[
                    "get", "list", "watch", "create", "update", "delete", "patch",
                ])
                .groups(&[BATCH])
                .resources(&["jobs"])
                .build(),
                rule(&["update"])
                    .groups(&[BATCH])
                    .resources(&["cronjobs/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[BATCH])
                    .resources(&["cronjobs/finalizers"])
                    .build(),
                rule(&["list", "watch", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "daemon-set-controller",
            vec![
                rule(READ)
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["daemonsets"])
                    .build(),
                rule(&["update"])
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["daemonsets/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["daemonsets/finalizers"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["nodes"])
                    .build(),
                rule(&["list", "watch", "create", "delete", "patch"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                rule(&["create"])
                    .groups(&[LEGACY])
                    .resources(&["pods/binding"])
                    .build(),
                rule(&[
                    "get", "list", "watch", "create", "delete", "update", "patch",
                ])
                .groups(&[APPS])
                .resources(&["controllerrevisions"])
                .build(),
                events_rule(),
            ],
        ),
        (
            "deployment-controller",
            vec![
                rule(&["get", "list", "watch", "update"])
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["deployments"])
                    .build(),
                rule(&["update"])
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["deployments/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["deployments/finalizers"])
                    .build(),
                rule(&[
                    "get", "list", "watch", "create", "update", "patch", "delete",
                ])
                .groups(&[APPS, EXTENSIONS])
                .resources(&["replicasets"])
                .build(),
                rule(&["get", "list", "watch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "disruption-controller",
            vec![
                rule(READ)
                    .groups(&[EXTENSIONS, APPS])
                    .resources(&["deployments"])
                    .build(),
                rule(READ)
                    .groups(&[APPS, EXTENSIONS])
                    .resources(&["replicasets"])
                    .build(),
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["replicationcontrollers"])
                    .build(),
                rule(READ)
                    .groups(&[POLICY])
                    .resources(&["poddisruptionbudgets"])
                    .build(),
                rule(READ)
                    .groups(&[APPS])
                    .resources(&["statefulsets"])
                    .build(),
                rule(&["update"])
                    .groups(&[POLICY])
                    .resources(&["poddisruptionbudgets/status"])
                    .build(),
                rule(&["patch", "update"])
                    .groups(&[LEGACY])
                    .resources(&["pods/status"])
                    .build(),
                rule(&["get"])
                    .groups(&["*"])
                    .resources(&["*/scale"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "endpoint-controller",
            vec![
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["services", "pods"])
                    .build(),
                rule(&["get", "list", "watch", "create", "update", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["endpoints"])
                    .build(),
                rule(&["create"])
                    .groups(&[LEGACY])
                    .resources(&["endpoints/restricted"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "endpointslice-controller",
            vec![
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["services", "pods", "nodes"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["services/finalizers"])
                    .build(),
                rule(&["get", "list", "watch", "create", "update", "delete"])
                    .groups(&[DISCOVERY])
                    .resources(&["endpointslices"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "endpointslicemirroring-controller",
            vec![
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["services", "endpoints"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["services/finalizers"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["endpoints/finalizers"])
                    .build(),
                rule(&["get", "list", "watch", "create", "update", "delete"])
                    .groups(&[DISCOVERY])
                    .resources(&["endpointslices"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "expand-controller",
            vec![
                rule(&["get", "list", "watch", "update", "patch"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumes"])
                    .build(),
                rule(&["update", "patch"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims/status"])
                    .build(),
                rule(READ)
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
                events_rule(),
                rule(&["get"])
                    .groups(&[LEGACY])
                    .resources(&["services"])
                    .build(),
            ],
        ),
        (
            "ephemeral-volume-controller",
            vec![
                rule(READ).groups(&[LEGACY]).resources(&["pods"]).build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["pods/finalizers"])
                    .build(),
                rule(&["get", "list", "watch", "create"])
                    .groups(&[LEGACY])
                    .resources(&["persistentvolumeclaims"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "generic-garbage-collector",
            vec![
                rule(&["get", "list", "watch", "patch", "update", "delete"])
                    .groups(&["*"])
                    .resources(&["*"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "horizontal-pod-autoscaler",
            vec![
                rule(READ)
                    .groups(&[AUTOSCALING])
                    .resources(&["horizontalpodautoscalers"])
                    .build(),
                rule(&["update"])
                    .groups(&[AUTOSCALING])
                    .resources(&["horizontalpodautoscalers/status"])
                    .build(),
                rule(&["get", "update"])
                    .groups(&["*"])
                    .resources(&["*/scale"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                rule(&["list", "watch"])
                    .groups(&["metrics.k8s.io"])
                    .resources(&["pods"])
                    .build(),
                rule(READ)
                    .groups(&["custom.metrics.k8s.io"])
                    .resources(&["*"])
                    .build(),
                rule(READ)
                    .groups(&["external.metrics.k8s.io"])
                    .resources(&["*"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "job-controller",
            vec![
                rule(&["get", "list", "watch", "update", "patch"])
                    .groups(&[BATCH])
                    .resources(&["jobs"])
                    .build(),
                rule(&["update"])
                    .groups(&[BATCH])
                    .resources(&["jobs/status"])
                    .build(),
                rule(&["update"])
                    .groups(&[BATCH])
                    .resources(&["jobs/finalizers"])
                    .build(),
                rule(&["list", "watch", "create", "delete", "patch"])
                    .groups(&[LEGACY])
                    .resources(&["pods"])
                    .build(),
                events_rule(),
            ],
        ),
        (
            "namespace-controller",
            vec![
                rule(&["get", "list", "watch", "delete"])
                    .groups(&[LEGACY])
                    .resources(&["namespaces"])
                    .build(),
                rule(&["update"])
                    .groups(&[LEGACY])
                    .resources(&["namespaces/finalize", "namespaces/status"])
                    .build(),
                rule(&["get", "list", "watch", "delete", "deletecollection"])
                    .groups(&["*"])
                    .resources(&["*"])
                    .build(),
            ],
        ),
    ]
}
