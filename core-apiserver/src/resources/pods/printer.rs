//! Upstream `printPod`: the Ready, Status and Restarts cells `kubectl get pods` shows,
//! and the wide columns.

use kas_api::core::v1::{POD_SPEC, POD_STATUS};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::TableColumn;
use serde_json::{Value, json};

pub const COLUMNS: &[TableColumn] = &[
    NAME_COLUMN,
    TableColumn {
        name: "Ready",
        type_: "string",
        format: "",
        description: "The aggregate readiness state of this pod for accepting traffic.",
        priority: 0,
    },
    TableColumn {
        name: "Status",
        type_: "string",
        format: "",
        description: "The aggregate status of the containers in this pod.",
        priority: 0,
    },
    TableColumn {
        name: "Restarts",
        type_: "string",
        format: "",
        description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
        priority: 0,
    },
    AGE_COLUMN,
    TableColumn {
        name: "IP",
        type_: "string",
        format: "",
        description: POD_STATUS.doc("podIP"),
        priority: 1,
    },
    TableColumn {
        name: "Node",
        type_: "string",
        format: "",
        description: POD_SPEC.doc("nodeName"),
        priority: 1,
    },
    TableColumn {
        name: "Nominated Node",
        type_: "string",
        format: "",
        description: POD_STATUS.doc("nominatedNodeName"),
        priority: 1,
    },
    TableColumn {
        name: "Readiness Gates",
        type_: "string",
        format: "",
        description: POD_SPEC.doc("readinessGates"),
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

/// Upstream `IsRestartableInitContainer`: a sidecar.
fn is_restartable(container: Option<&Value>) -> bool {
    container.is_some_and(|c| c.get("restartPolicy").and_then(Value::as_str) == Some("Always"))
}

fn condition_true(pod: &Value, type_: &str) -> bool {
    list(pod, "/status/conditions")
        .iter()
        .any(|c| s(c, "/type") == type_ && s(c, "/status") == "True")
}

/// A container status's last termination time, when later than `latest`.
fn later_restart(status: &Value, latest: &mut String) {
    let finished = s(status, "/lastState/terminated/finishedAt");
    // RFC 3339 in UTC compares as text.
    if !finished.is_empty() && finished > latest.as_str() {
        *latest = finished.to_owned();
    }
}

fn int(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// A terminated state's reason, or its signal or exit code.
fn terminated_reason(terminated: &Value, prefix: &str) -> String {
    let reason = s(terminated, "/reason");
    if !reason.is_empty() {
        return format!("{prefix}{reason}");
    }
    match int(terminated, "/signal") {
        0 => format!("{prefix}ExitCode:{}", int(terminated, "/exitCode")),
        signal => format!("{prefix}Signal:{signal}"),
    }
}

/// The cells after nothing: Name, Ready, Status, Restarts, Age, IP, Node, Nominated Node,
/// Readiness Gates.
pub fn cells(pod: &Value) -> Vec<Value> {
    let init_specs = list(pod, "/spec/initContainers");
    let init_spec = |name: &str| init_specs.iter().find(|c| s(c, "/name") == name);
    let total = list(pod, "/spec/containers").len()
        + init_specs
            .iter()
            .filter(|c| is_restartable(Some(c)))
            .count();
    let phase = s(pod, "/status/phase");
    let mut reason = match s(pod, "/status/reason") {
        "" => phase.to_owned(),
        r => r.to_owned(),
    };
    if list(pod, "/status/conditions")
        .iter()
        .any(|c| s(c, "/type") == "PodScheduled" && s(c, "/reason") == "SchedulingGated")
    {
        reason = "SchedulingGated".into();
    }
    let (mut restarts, mut sidecar_restarts, mut ready) = (0i64, 0i64, 0usize);
    let (mut last_restart, mut last_sidecar_restart) = (String::new(), String::new());
    let init_statuses = list(pod, "/status/initContainerStatuses");
    let mut initializing = false;
    for (i, status) in init_statuses.iter().enumerate() {
        restarts += int(status, "/restartCount");
        later_restart(status, &mut last_restart);
        let sidecar = is_restartable(init_spec(s(status, "/name")));
        if sidecar {
            sidecar_restarts += int(status, "/restartCount");
            later_restart(status, &mut last_sidecar_restart);
        }
        let terminated = status.pointer("/state/terminated").filter(|t| !t.is_null());
        let waiting = s(status, "/state/waiting/reason");
        if terminated.is_some_and(|t| int(t, "/exitCode") == 0) {
            continue;
        }
        if sidecar && status.get("started").and_then(Value::as_bool) == Some(true) {
            if status.get("ready").and_then(Value::as_bool) == Some(true) {
                ready += 1;
            }
            continue;
        }
        reason = match terminated {
            Some(t) => terminated_reason(t, "Init:"),
            None if !waiting.is_empty() && waiting != "PodInitializing" => {
                format!("Init:{waiting}")
            }
            None => format!("Init:{i}/{}", init_specs.len()),
        };
        initializing = true;
        break;
    }
    if !initializing || condition_true(pod, "Initialized") {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        for status in list(pod, "/status/containerStatuses").iter().rev() {
            restarts += int(status, "/restartCount");
            later_restart(status, &mut last_restart);
            let waiting = s(status, "/state/waiting/reason");
            let terminated = status.pointer("/state/terminated").filter(|t| !t.is_null());
            if !waiting.is_empty() {
                reason = waiting.to_owned();
            } else if let Some(t) = terminated {
                reason = terminated_reason(t, "");
            } else if status.get("ready").and_then(Value::as_bool) == Some(true)
                && status
                    .pointer("/state/running")
                    .is_some_and(|r| !r.is_null())
            {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            reason = if condition_true(pod, "Ready") {
                "Running".into()
            } else {
                "NotReady".into()
            };
        }
    }
    let deleting = pod
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null());
    if deleting && s(pod, "/status/reason") == "NodeLost" {
        reason = "Unknown".into();
    } else if deleting && phase != "Failed" && phase != "Succeeded" {
        reason = "Terminating".into();
    }
    let restarts = if restarts != 0 && !last_restart.is_empty() {
        format!("{restarts} ({} ago)", age(&last_restart))
    } else {
        restarts.to_string()
    };
    let none = |v: &str| {
        if v.is_empty() {
            "<none>".to_owned()
        } else {
            v.to_owned()
        }
    };
    let pod_ip = list(pod, "/status/podIPs")
        .first()
        .map_or("", |ip| s(ip, "/ip"));
    let gates = list(pod, "/spec/readinessGates");
    let readiness_gates = if gates.is_empty() {
        "<none>".to_owned()
    } else {
        let conditions = list(pod, "/status/conditions");
        let true_count = gates
            .iter()
            .filter(|g| {
                conditions
                    .iter()
                    .find(|c| s(c, "/type") == s(g, "/conditionType"))
                    .is_some_and(|c| s(c, "/status") == "True")
            })
            .count();
        format!("{true_count}/{}", gates.len())
    };
    vec![
        json!(kas_registry::meta::name(pod)),
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts),
        json!(age(kas_registry::meta::str_field(pod, "creationTimestamp"))),
        json!(none(pod_ip)),
        json!(none(s(pod, "/spec/nodeName"))),
        json!(none(s(pod, "/status/nominatedNodeName"))),
        json!(readiness_gates),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_pod() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Pending"}});
        let c = cells(&pod);
        assert_eq!(c[1..4], [json!("0/2"), json!("Pending"), json!("0")]);
        assert_eq!(
            c[5..],
            [
                json!("<none>"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>")
            ]
        );
    }

    #[test]
    fn a_running_pod_with_a_crashing_container() {
        let pod = json!({"metadata": {"name": "p"},
            "spec": {"nodeName": "n1", "containers": [{"name": "a"}, {"name": "b"}],
                "readinessGates": [{"conditionType": "x"}]},
            "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}],
                "conditions": [{"type": "x", "status": "True"}],
                "containerStatuses": [
                    {"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}},
                    {"name": "b", "ready": false, "restartCount": 3,
                        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                        "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2020-01-01T00:00:00Z"}}}]}});
        let c = cells(&pod);
        assert_eq!(c[1..3], [json!("1/2"), json!("CrashLoopBackOff")]);
        assert!(c[3].as_str().unwrap().starts_with("3 ("), "{}", c[3]);
        assert_eq!(
            c[5..],
            [
                json!("10.0.0.1"),
                json!("n1"),
                json!("<none>"),
                json!("1/1")
            ]
        );
    }

    #[test]
    fn init_containers_and_deletion() {
        let pod = json!({"metadata": {"name": "p", "deletionTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"initContainers": [{"name": "i"}], "containers": [{"name": "a"}]},
            "status": {"phase": "Pending", "initContainerStatuses": [{"name": "i", "state": {"waiting": {"reason": "PodInitializing"}}}]}});
        assert_eq!(cells(&pod)[2], json!("Terminating"));
        let mut pod = pod;
        pod["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("deletionTimestamp");
        assert_eq!(cells(&pod)[2], json!("Init:0/1"));
        pod["status"]["initContainerStatuses"][0]["state"] = json!({"terminated": {"exitCode": 2}});
        assert_eq!(cells(&pod)[2], json!("Init:ExitCode:2"));
    }
}
