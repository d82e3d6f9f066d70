//! What every object that carries a pod template shares (pods, pod templates, replication
//! controllers, and the workloads of apps and batch later): upstream's `SetDefaults_PodSpec`
//! and the pod-spec half of `pkg/apis/core/validation`.

pub mod defaults;
pub mod validation;

use serde_json::Value;

/// Upstream `layoutContainerCells`: the containers' names and images, each joined by
/// commas (the Containers and Images columns of templates and workloads).
pub fn container_cells(spec: Option<&Value>) -> (String, String) {
    let containers = spec
        .and_then(|s| s.get("containers"))
        .and_then(Value::as_array);
    let field = |key: &str| -> String {
        containers
            .into_iter()
            .flatten()
            .map(|c| c.get(key).and_then(Value::as_str).unwrap_or(""))
            .collect::<Vec<_>>()
            .join(",")
    };
    (field("name"), field("image"))
}

/// The Containers and Images columns of the printers of templates and workloads.
pub const CONTAINERS_COLUMN: kas_registry::TableColumn = kas_registry::TableColumn {
    name: "Containers",
    type_: "string",
    format: "",
    description: "Names of each container in the template.",
    priority: 1,
};

/// See [`CONTAINERS_COLUMN`].
pub const IMAGES_COLUMN: kas_registry::TableColumn = kas_registry::TableColumn {
    name: "Images",
    type_: "string",
    format: "",
    description: "Images referenced by each container in the template.",
    priority: 1,
};

/// What a controller's pod template must hold (the end of upstream's
/// `ValidatePodTemplateSpecForRC`, `...ForReplicaSet`, `...ForStatefulSet` and the DaemonSet
/// spec check): pods that restart always, without a deadline; `kind` names the controller
/// in the refusal.
pub fn validate_controller_template(
    template: &Value,
    template_path: &kas_apimachinery::validation::field::Path,
    kind: &str,
) -> Vec<kas_apimachinery::validation::field::Error> {
    use kas_apimachinery::validation::field;
    let spec_path = template_path.child("spec");
    let mut errs = Vec::new();
    let restart = template
        .pointer("/spec/restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or("");
    if restart != "Always" {
        errs.push(field::not_supported(
            &spec_path.child("restartPolicy"),
            restart,
            &["Always"],
        ));
    }
    if template
        .pointer("/spec/activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        errs.push(field::forbidden(
            &spec_path.child("activeDeadlineSeconds"),
            &format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
    errs
}

/// Upstream `ValidateReplicaSetStatus`, which `ValidateReplicationControllerStatus`
/// repeats: the counts are not negative and not more than the replicas, and the
/// available ones not more than the ready ones.
pub fn validate_replica_status(obj: &Value) -> Vec<kas_apimachinery::validation::field::Error> {
    use kas_apimachinery::validation::field::{self, Path};
    use kas_apimachinery::validation::meta::validate_nonnegative_field;
    let path = Path::new("status");
    let get = |k: &str| {
        obj.pointer(&format!("/status/{k}"))
            .and_then(Value::as_i64)
            .unwrap_or(0)
    };
    let mut errs = Vec::new();
    for k in [
        "replicas",
        "fullyLabeledReplicas",
        "readyReplicas",
        "availableReplicas",
        "observedGeneration",
    ] {
        errs.extend(validate_nonnegative_field(get(k), &path.child(k)));
    }
    let replicas = get("replicas");
    for k in ["fullyLabeledReplicas", "readyReplicas", "availableReplicas"] {
        if get(k) > replicas {
            errs.push(field::invalid(
                &path.child(k),
                get(k),
                "cannot be greater than status.replicas",
            ));
        }
    }
    if get("availableReplicas") > get("readyReplicas") {
        errs.push(field::invalid(
            &path.child("availableReplicas"),
            get("availableReplicas"),
            "cannot be greater than readyReplicas",
        ));
    }
    errs
}
