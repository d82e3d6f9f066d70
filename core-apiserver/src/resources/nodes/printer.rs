//! Upstream `printNode`: the Status and Roles cells `kubectl get nodes` shows, and the
//! wide columns.

use std::collections::{BTreeMap, BTreeSet};

use kas_api::core::v1::{NODE_STATUS, NODE_SYSTEM_INFO};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::TableColumn;
use serde_json::{Value, json};

/// Upstream's `labelNodeRolePrefix`.
const LABEL_NODE_ROLE_PREFIX: &str = "node-role.kubernetes.io/";
/// Upstream's `nodeLabelRole`.
const NODE_LABEL_ROLE: &str = "kubernetes.io/role";

pub const COLUMNS: &[TableColumn] = &[
    NAME_COLUMN,
    TableColumn {
        name: "Status",
        type_: "string",
        format: "",
        description: "The status of the node",
        priority: 0,
    },
    TableColumn {
        name: "Roles",
        type_: "string",
        format: "",
        description: "The roles of the node",
        priority: 0,
    },
    AGE_COLUMN,
    TableColumn {
        name: "Version",
        type_: "string",
        format: "",
        description: NODE_SYSTEM_INFO.doc("kubeletVersion"),
        priority: 0,
    },
    TableColumn {
        name: "Internal-IP",
        type_: "string",
        format: "",
        description: NODE_STATUS.doc("addresses"),
        priority: 1,
    },
    TableColumn {
        name: "External-IP",
        type_: "string",
        format: "",
        description: NODE_STATUS.doc("addresses"),
        priority: 1,
    },
    TableColumn {
        name: "OS-Image",
        type_: "string",
        format: "",
        description: NODE_SYSTEM_INFO.doc("osImage"),
        priority: 1,
    },
    TableColumn {
        name: "Kernel-Version",
        type_: "string",
        format: "",
        description: NODE_SYSTEM_INFO.doc("kernelVersion"),
        priority: 1,
    },
    TableColumn {
        name: "Container-Runtime",
        type_: "string",
        format: "",
        description: NODE_SYSTEM_INFO.doc("containerRuntimeVersion"),
        priority: 1,
    },
];

fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn list<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The Status cell: Ready, NotReady or Unknown from the last Ready condition, and
/// SchedulingDisabled for an unschedulable node.
fn status(node: &Value) -> String {
    let conditions: BTreeMap<&str, &str> = list(node, "/status/conditions")
        .iter()
        .map(|c| (s(c, "/type"), s(c, "/status")))
        .collect();
    let mut status = vec![match conditions.get("Ready") {
        Some(&"True") => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push("SchedulingDisabled");
    }
    status.join(",")
}

/// Upstream `findNodeRoles`: `node-role.kubernetes.io/<role>` labels and the value of
/// `kubernetes.io/role`, sorted.
fn roles(node: &Value) -> String {
    let mut roles = BTreeSet::new();
    let labels = node.pointer("/metadata/labels").and_then(Value::as_object);
    for (k, v) in labels.into_iter().flatten() {
        let v = v.as_str().unwrap_or("");
        if let Some(role) = k.strip_prefix(LABEL_NODE_ROLE_PREFIX) {
            if !role.is_empty() {
                roles.insert(role.to_owned());
            }
        } else if k == NODE_LABEL_ROLE && !v.is_empty() {
            roles.insert(v.to_owned());
        }
    }
    if roles.is_empty() {
        return "<none>".to_owned();
    }
    roles.into_iter().collect::<Vec<_>>().join(",")
}

/// The first address of a type, `<none>` without one.
fn address<'a>(node: &'a Value, type_: &str) -> &'a str {
    list(node, "/status/addresses")
        .iter()
        .find(|a| s(a, "/type") == type_)
        .map_or("<none>", |a| s(a, "/address"))
}

/// The cells: Name, Status, Roles, Age, Version, Internal-IP, External-IP, OS-Image,
/// Kernel-Version, Container-Runtime.
pub fn cells(node: &Value) -> Vec<Value> {
    let unknown = |p: &str| match s(node, p) {
        "" => "<unknown>",
        v => v,
    };
    vec![
        json!(kas_registry::meta::name(node)),
        json!(status(node)),
        json!(roles(node)),
        json!(age(kas_registry::meta::str_field(
            node,
            "creationTimestamp"
        ))),
        json!(s(node, "/status/nodeInfo/kubeletVersion")),
        json!(address(node, "InternalIP")),
        json!(address(node, "ExternalIP")),
        json!(unknown("/status/nodeInfo/osImage")),
        json!(unknown("/status/nodeInfo/kernelVersion")),
        json!(unknown("/status/nodeInfo/containerRuntimeVersion")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_node_is_unknown_and_roleless() {
        let node = json!({"metadata": {"name": "n1"}});
        let c = cells(&node);
        assert_eq!(c[..3], [json!("n1"), json!("Unknown"), json!("<none>")]);
        assert_eq!(
            c[4..],
            [
                json!(""),
                json!("<none>"),
                json!("<none>"),
                json!("<unknown>"),
                json!("<unknown>"),
                json!("<unknown>")
            ]
        );
    }

    #[test]
    fn a_ready_cordoned_control_plane_node() {
        let node = json!({"metadata": {"name": "n1", "labels": {
                "node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/": "x",
                "kubernetes.io/role": "master"}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "MemoryPressure", "status": "False"},
                    {"type": "Ready", "status": "True"}],
                "addresses": [{"type": "Hostname", "address": "n1"},
                    {"type": "InternalIP", "address": "10.0.0.1"},
                    {"type": "InternalIP", "address": "10.0.0.2"}],
                "nodeInfo": {"kubeletVersion": "v1.33.0", "osImage": "Debian",
                    "kernelVersion": "6.1", "containerRuntimeVersion": "containerd://2.0"}}});
        let c = cells(&node);
        assert_eq!(
            c[1..3],
            [
                json!("Ready,SchedulingDisabled"),
                json!("control-plane,master")
            ]
        );
        assert_eq!(
            c[4..],
            [
                json!("v1.33.0"),
                json!("10.0.0.1"),
                json!("<none>"),
                json!("Debian"),
                json!("6.1"),
                json!("containerd://2.0")
            ]
        );
        let mut not_ready = node;
        not_ready["status"]["conditions"][1]["status"] = json!("Unknown");
        assert_eq!(status(&not_ready), "NotReady,SchedulingDisabled");
    }
}
