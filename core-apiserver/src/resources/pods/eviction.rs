//! `pods/eviction`, after upstream's `EvictionREST` (`pkg/registry/core/pod/storage/
//! eviction.go`): a policy/v1 Eviction deletes the pod with the eviction's delete options.
//! PodDisruptionBudgets are not served yet, so no budget can refuse an eviction; once
//! policy/v1 is served, a pod covered by a budget that allows no disruption is refused
//! here with upstream's 429.

use kas_apimachinery::Status;
use kas_registry::descriptor::{SubresourceHandler, SubresourceKind};
use kas_registry::strategy::SubresourceEffect;
use kas_registry::{Subresource, Verb};
use serde_json::Value;

pub const EVICTION: Subresource = Subresource {
    name: "eviction",
    verbs: &[Verb::Create],
    kind: Some(SubresourceKind {
        group: "policy",
        version: "v1",
        kind: "Eviction",
        schema: &kas_api::policy::v1::EVICTION,
    }),
    handler: SubresourceHandler::StrategyCreate,
};

/// What evicting `pod` as `eviction` asks: its deletion with the eviction's options.
pub fn evict(eviction: &Value, pod: &Value) -> kas_registry::Result<SubresourceEffect> {
    if kas_registry::meta::name(eviction) != kas_registry::meta::name(pod) {
        return Err(
            Status::bad_request("name in URL does not match name in Eviction object").into(),
        );
    }
    let options = eviction.get("deleteOptions").unwrap_or(&Value::Null);
    let s = |p: &str| {
        options
            .pointer(p)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let dry_run = options
        .get("dryRun")
        .and_then(Value::as_array)
        .is_some_and(|d| !d.is_empty());
    Ok(SubresourceEffect::Delete {
        preconditions: kas_storage::Preconditions {
            uid: s("/preconditions/uid"),
            resource_version: s("/preconditions/resourceVersion"),
        },
        grace_period_seconds: options.get("gracePeriodSeconds").and_then(Value::as_i64),
        dry_run,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_eviction_deletes_with_its_options() {
        let pod = json!({"metadata": {"name": "web"}});
        let eviction = json!({"metadata": {"name": "web"},
            "deleteOptions": {"gracePeriodSeconds": 5, "preconditions": {"uid": "u1"}, "dryRun": ["All"]}});
        let SubresourceEffect::Delete {
            preconditions,
            grace_period_seconds,
            dry_run,
        } = evict(&eviction, &pod).expect("effect")
        else {
            panic!("not a deletion");
        };
        assert_eq!(preconditions.uid.as_deref(), Some("u1"));
        assert_eq!(preconditions.resource_version, None);
        assert_eq!(grace_period_seconds, Some(5));
        assert!(dry_run);
        let other = json!({"metadata": {"name": "db"}});
        assert_eq!(evict(&other, &pod).unwrap_err().to_status().code, 400);
    }
}
