//! core/v1 ComponentStatus, after upstream's `pkg/registry/core/componentstatus`: a
//! read-only resource computed on each request, not stored. The components are upstream's
//! (`componentStatusStorage.serversToValidate`): the controller manager and the scheduler
//! probed on their default secure ports on 127.0.0.1 (`/healthz`, TLS not verified), and
//! `etcd-0` for the role's etcd. `printComponentStatus` shows them.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use kas_apimachinery::Status;
use kas_endpoints::responsewriters::table::NAME_COLUMN;
use kas_registry::strategy::FieldErrors;
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use kas_storage::{
    GetOptions, ListOptions, ListResult, Object, ObjectRef, Preconditions, Storage, UpdateFn,
    ValidateDeletionFn, WatchOptions, WatchStream,
};
use serde_json::{Value, json};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "ComponentStatus",
    list_kind: "ComponentStatusList",
    plural: "componentstatuses",
    singular: "componentstatus",
    short_names: &["cs"],
    categories: &[],
    scope: Scope::Cluster,
    verbs: &[Verb::Get, Verb::List],
    subresources: &[],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Status",
            type_: "string",
            format: "",
            description: "Status of the component conditions",
            priority: 0,
        },
        TableColumn {
            name: "Message",
            type_: "string",
            format: "",
            description: "Message of the component conditions",
            priority: 0,
        },
        TableColumn {
            name: "Error",
            type_: "string",
            format: "",
            description: "Error of the component conditions",
            priority: 0,
        },
    ],
    table_name_and_age: false,
    storage_resource: "componentstatuses",
    schema: Some(&kas_api::core::v1::COMPONENT_STATUS),
    list_schema: Some(&kas_api::core::v1::COMPONENT_STATUS_LIST),
};

/// Upstream's `probeTimeOut`.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// Upstream's `ports.KubeControllerManagerPort` and `DefaultKubeSchedulerPort`.
const HTTP_COMPONENTS: [(&str, u16); 2] = [("controller-manager", 10257), ("scheduler", 10259)];
const ETCD: &str = "etcd-0";

/// How the role installs this resource: its own storage, computed over etcd.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install {
        descriptor: &DESCRIPTOR,
        strategy: Arc::new(Strategy),
        reads: super::Reads::Own(|etcd| Arc::new(ComponentStatuses { etcd: etcd.clone() })),
        hooks: None,
    }
}

pub struct Strategy;

impl kas_registry::Strategy for Strategy {
    fn deprecation(&self) -> Option<&'static str> {
        Some("v1 ComponentStatus is deprecated in v1.19+")
    }

    fn validate(&self, _obj: &Value) -> FieldErrors {
        FieldErrors::new()
    }

    fn validate_update(&self, _obj: &Value, _old: &Value) -> FieldErrors {
        FieldErrors::new()
    }

    /// Upstream `printComponentStatus`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let healthy = obj
            .get("conditions")
            .and_then(Value::as_array)
            .and_then(|cs| cs.iter().find(|c| c["type"] == "Healthy"));
        let (status, message, error) = match healthy {
            Some(c) => (
                if c["status"] == "True" {
                    "Healthy"
                } else {
                    "Unhealthy"
                },
                c["message"].as_str().unwrap_or(""),
                c["error"].as_str().unwrap_or(""),
            ),
            None => ("Unknown", "", ""),
        };
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(status),
            json!(message),
            json!(error),
        ]
    }
}

/// One component's status (upstream `getComponentStatus`): its `Healthy` condition.
fn component_status(name: &str, status: &str, message: &str, error: &str) -> Value {
    let mut condition = json!({"type": "Healthy", "status": status});
    if !message.is_empty() {
        condition["message"] = json!(message);
    }
    if !error.is_empty() {
        condition["error"] = json!(error);
    }
    json!({"metadata": {"name": name}, "conditions": [condition]})
}

/// The computed storage: every read probes.
struct ComponentStatuses {
    etcd: Arc<dyn Storage>,
}

impl ComponentStatuses {
    /// Upstream's `DoServerCheck` of one component.
    async fn check(&self, name: &str) -> Option<Value> {
        if name == ETCD {
            let probe = tokio::time::timeout(PROBE_TIMEOUT, self.etcd.current_revision());
            return Some(match probe.await {
                Ok(Ok(_)) => component_status(name, "True", "ok", ""),
                Ok(Err(e)) => component_status(name, "False", "", &e.to_string()),
                Err(_) => component_status(name, "False", "", "context deadline exceeded"),
            });
        }
        let (_, port) = HTTP_COMPONENTS.iter().find(|(n, _)| *n == name)?;
        let answer = crate::probe::get(true, "127.0.0.1", *port, "/healthz", PROBE_TIMEOUT).await;
        // Upstream's HTTP prober reports a failed request as a failure whose message is
        // the error, and a status of 400 or more as `HTTP probe failed with statuscode`.
        Some(match answer {
            Ok((code, body)) if (200..400).contains(&code) => {
                component_status(name, "True", &String::from_utf8_lossy(&body), "")
            }
            Ok((code, _)) => component_status(
                name,
                "False",
                &format!("HTTP probe failed with statuscode: {code}"),
                "",
            ),
            Err(e) => component_status(name, "False", &e, ""),
        })
    }

    fn object(key: &str, value: Value) -> kas_storage::Result<ObjectRef> {
        Object::unversioned(key, &value).map(Arc::new)
    }

    fn read_only() -> kas_storage::Error {
        kas_storage::Error::internal("componentstatuses are read-only")
    }
}

#[async_trait]
impl Storage for ComponentStatuses {
    async fn create(&self, _: &str, _: Value, _: Option<i64>) -> kas_storage::Result<ObjectRef> {
        Err(Self::read_only())
    }

    /// An unknown component is upstream's plain error (a 500), not a NotFound.
    async fn get(&self, key: &str, _: &GetOptions) -> kas_storage::Result<Option<ObjectRef>> {
        let name = key.rsplit('/').next().unwrap_or("");
        match self.check(name).await {
            Some(status) => Self::object(key, status).map(Some),
            None => {
                let mut status = Status::internal_error("");
                status.message = Some(format!("Component not found: {name}"));
                status.reason = None;
                status.details = None;
                let err = kas_registry::Error::from(status);
                Err(kas_storage::Error::Callback(Box::new(err)))
            }
        }
    }

    async fn list(&self, key: &str, opts: &ListOptions) -> kas_storage::Result<ListResult> {
        let names = HTTP_COMPONENTS.iter().map(|(n, _)| *n).chain([ETCD]);
        let checks = names.map(|n| self.check(n));
        let mut items = Vec::new();
        for status in futures_util::future::join_all(checks)
            .await
            .into_iter()
            .flatten()
        {
            if opts.predicate.matches(&status) {
                let name = kas_registry::meta::name(&status).to_owned();
                items.push(Self::object(&format!("{key}/{name}"), status)?);
            }
        }
        Ok(ListResult {
            items,
            resource_version: 0,
            continue_token: None,
            ..Default::default()
        })
    }

    async fn guaranteed_update(
        &self,
        _: &str,
        _: &Preconditions,
        _: bool,
        _: &UpdateFn<'_>,
        _: Option<ObjectRef>,
        _: Option<i64>,
    ) -> kas_storage::Result<ObjectRef> {
        Err(Self::read_only())
    }

    async fn delete(
        &self,
        _: &str,
        _: &Preconditions,
        _: &ValidateDeletionFn<'_>,
        _: Option<ObjectRef>,
    ) -> kas_storage::Result<ObjectRef> {
        Err(Self::read_only())
    }

    async fn watch(&self, _: &str, _: &WatchOptions) -> kas_storage::Result<WatchStream> {
        Err(Self::read_only())
    }

    async fn count(&self, _: &str) -> kas_storage::Result<i64> {
        Ok(3)
    }

    async fn current_revision(&self) -> kas_storage::Result<u64> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::Strategy as _;

    #[test]
    fn the_printer_shows_the_healthy_condition() {
        let ok = component_status("etcd-0", "True", "ok", "");
        assert_eq!(
            Strategy.table_cells(&ok),
            [json!("etcd-0"), json!("Healthy"), json!("ok"), json!("")]
        );
        let down = component_status(
            "scheduler",
            "False",
            "Get \"https://127.0.0.1:10259/healthz\": dial tcp 127.0.0.1:10259: connect: connection refused",
            "",
        );
        assert_eq!(Strategy.table_cells(&down)[1], "Unhealthy");
        assert_eq!(
            Strategy.table_cells(&json!({"metadata": {"name": "x"}}))[1],
            "Unknown"
        );
    }
}
