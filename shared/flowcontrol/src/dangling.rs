//! The `Dangling` condition the configuration consumer keeps on each FlowSchema (upstream's
//! `presyncFlowSchemaStatus` and the status writes of `digestConfigObjects`): `True`
//! (`NotFound`) when the schema's priority level does not exist, else `False` (`Found`).
//! After every digest the schemas whose condition differs get the new one, applied
//! (server-side apply, forced) under upstream's field manager; a schema written more than
//! five times in the last minute waits 30 to 75 s, as upstream rate-limits fighting
//! writers.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kas_apimachinery::golang::strconv::quote;
use serde_json::{Value, json};

use crate::config::FlowSchema;
use crate::informer::Informer;

/// Upstream's field manager of the consumer's status writes (`ConfigConsumerAsFieldManager`).
pub const FIELD_MANAGER: &str = "api-priority-and-fairness-config-consumer-v1";

/// A schema's new `Dangling` condition.
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    pub flow_schema: String,
    pub status: &'static str,
    pub reason: &'static str,
    pub message: String,
}

impl Update {
    /// The server-side apply configuration of the status (`toFlowSchemaApplyConfiguration`).
    pub fn apply_configuration(&self, now: &str) -> Value {
        json!({
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "FlowSchema",
            "metadata": {"name": self.flow_schema},
            "status": {"conditions": [{
                "type": "Dangling",
                "status": self.status,
                "lastTransitionTime": now,
                "reason": self.reason,
                "message": self.message,
            }]},
        })
    }
}

/// The condition `schema` should have, when it has another.
pub fn desired(schema: &FlowSchema, level_exists: bool) -> Option<Update> {
    let pl = quote(&schema.spec.priority_level_configuration.name);
    let (status, reason, message) = if level_exists {
        let message = format!(
            "This FlowSchema references the PriorityLevelConfiguration object named {pl} and it exists"
        );
        ("False", "Found", message)
    } else {
        let message = format!(
            "This FlowSchema references the PriorityLevelConfiguration object named {pl} but there is no such object"
        );
        ("True", "NotFound", message)
    };
    if let Some(current) = schema.dangling()
        && current.status == status
        && current.reason == reason
        && current.message == message
    {
        return None;
    }
    Some(Update {
        flow_schema: schema.metadata.name.clone(),
        status,
        reason,
        message,
    })
}

type WriteFuture<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// Writes a schema's condition: the role that owns the FlowSchemas' store implements it.
pub trait StatusWriter: Send + Sync {
    /// Applies `update`; a schema deleted meanwhile is not an error.
    fn apply<'a>(&'a self, update: &'a Update) -> WriteFuture<'a>;
}

/// Upstream's `shouldDelayUpdate` bookkeeping: the schemas written in each recent attempt.
#[derive(Default)]
struct RecentWrites(VecDeque<(Instant, Vec<String>)>);

impl RecentWrites {
    fn should_delay(&mut self, name: &str, now: Instant) -> bool {
        let minute_ago = now.checked_sub(Duration::from_secs(60));
        if let Some(minute_ago) = minute_ago {
            while self.0.back().is_some_and(|(t, _)| *t < minute_ago) {
                self.0.pop_back();
            }
        }
        let count = self
            .0
            .iter()
            .filter(|(_, names)| names.iter().any(|n| n == name))
            .count();
        count > 5
    }

    fn record(&mut self, now: Instant, names: Vec<String>) {
        self.0.push_front((now, names));
    }
}

/// Keeps the schemas' `Dangling` conditions current while `informer` lives.
pub fn spawn_writer(informer: &Arc<Informer>, writer: Arc<dyn StatusWriter>) {
    let weak = Arc::downgrade(informer);
    let mut digested = informer.subscribe();
    tokio::spawn(async move {
        let mut recent = RecentWrites::default();
        loop {
            let Some(informer) = weak.upgrade() else {
                return;
            };
            let mut delay = None;
            if informer.has_synced() {
                let now = Instant::now();
                let mut written = Vec::new();
                for (schema, exists) in informer.schemas_and_levels() {
                    let Some(update) = desired(&schema, exists) else {
                        continue;
                    };
                    if recent.should_delay(&update.flow_schema, now) {
                        delay.get_or_insert_with(|| Duration::from_secs(30 + jitter(45)));
                        continue;
                    }
                    written.push(update.flow_schema.clone());
                    if let Err(err) = writer.apply(&update).await {
                        tracing::warn!(
                            flow_schema = %update.flow_schema,
                            "failed to set a status.condition for FlowSchema: {err}"
                        );
                        delay.get_or_insert(Duration::from_secs(1));
                    }
                }
                recent.record(now, written);
            }
            drop(informer);
            match delay {
                Some(delay) => tokio::time::sleep(delay).await,
                None => {
                    if digested.changed().await.is_err() {
                        return;
                    }
                }
            }
        }
    });
}

fn jitter(max: u64) -> u64 {
    let mut byte = [0u8; 1];
    let _ = aws_lc_rs::rand::fill(&mut byte);
    u64::from(byte[0]) * max / 256
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(pl: &str, condition: Option<(&str, &str, &str)>) -> FlowSchema {
        let conditions: Vec<Value> = condition
            .map(|(s, r, m)| json!({"type": "Dangling", "status": s, "reason": r, "message": m}))
            .into_iter()
            .collect();
        serde_json::from_value(json!({"metadata": {"name": "fs"},
            "spec": {"priorityLevelConfiguration": {"name": pl}},
            "status": {"conditions": conditions}}))
        .unwrap()
    }

    #[test]
    fn conditions_as_upstream_writes_them() {
        let found = desired(&schema("system", None), true).unwrap();
        assert_eq!((found.status, found.reason), ("False", "Found"));
        assert_eq!(
            found.message,
            "This FlowSchema references the PriorityLevelConfiguration object named \"system\" and it exists"
        );
        let missing = desired(&schema("gone", None), false).unwrap();
        assert_eq!((missing.status, missing.reason), ("True", "NotFound"));
        assert_eq!(
            missing.message,
            "This FlowSchema references the PriorityLevelConfiguration object named \"gone\" but there is no such object"
        );
        // Current: nothing to write.
        let current = schema("gone", Some(("True", "NotFound", &missing.message)));
        assert_eq!(desired(&current, false), None);
        // The level appeared: the condition flips.
        assert_eq!(desired(&current, true).unwrap().status, "False");
        let config = found.apply_configuration("2026-01-01T00:00:00Z");
        assert_eq!(config["status"]["conditions"][0]["reason"], "Found");
        assert_eq!(config["metadata"]["name"], "fs");
    }

    #[test]
    fn fighting_writers_are_delayed() {
        let mut recent = RecentWrites::default();
        let start = Instant::now();
        for i in 0..6 {
            assert!(!recent.should_delay("fs", start + Duration::from_secs(i)));
            recent.record(start + Duration::from_secs(i), vec!["fs".into()]);
        }
        assert!(recent.should_delay("fs", start + Duration::from_secs(7)));
        assert!(!recent.should_delay("other", start + Duration::from_secs(7)));
        // A minute later the old writes no longer count.
        assert!(!recent.should_delay("fs", start + Duration::from_secs(70)));
    }
}
