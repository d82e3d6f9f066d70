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
