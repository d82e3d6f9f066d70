//! Upstream's ClusterRole aggregation controller
//! (`pkg/controller/clusterroleaggregation`): a ClusterRole with an `aggregationRule` gets
//! as `rules` the union of the rules of every other ClusterRole its
//! `clusterRoleSelectors` match. Selected roles are taken per selector, sorted by name,
//! and their rules appended unless a semantically equal one is already there
//! (`ruleExists`); the role is written only when the result differs from its rules.
//!
//! Upstream writes with a forced server-side apply under the field manager
//! `clusterrole-aggregation-controller`; here the task updates the role through its store
//! (same manager) with the resourceVersion it read, so that several replicas running it
//! converge: a conflict means someone else wrote, and is retried after reading again.
//! It reconciles every aggregated role at start and after any ClusterRole changes
//! (bursts debounced), from a list then a watch of the clusterroles' cache.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt;
use kas_registry::rest::options::{ListOptions, WriteOptions};
use kas_registry::store::Store;
use kas_storage::WatchEvent;
use serde_json::{Map, Value};

/// Upstream's field manager for the writes.
pub const FIELD_MANAGER: &str = "clusterrole-aggregation-controller";

/// How long a burst of changes is gathered before reconciling once.
const DEBOUNCE: Duration = Duration::from_millis(100);

/// How often a write is tried again after conflicts before waiting for the next change.
const CONFLICT_RETRIES: usize = 5;

/// The PolicyRule fields; absent, null and empty lists are the same (upstream's semantic
/// equality treats nil and empty slices alike).
const RULE_FIELDS: &[&str] = &[
    "verbs",
    "apiGroups",
    "resources",
    "resourceNames",
    "nonResourceURLs",
];

fn normalized(rule: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    for field in RULE_FIELDS {
        if let Some(v) = rule.get(*field)
            && !v.is_null()
            && v.as_array().is_none_or(|a| !a.is_empty())
        {
            out.insert((*field).to_owned(), v.clone());
        }
    }
    out
}

/// Upstream `equality.Semantic.DeepEqual` on two PolicyRules.
pub fn rule_equal(a: &Value, b: &Value) -> bool {
    normalized(a) == normalized(b)
}

/// Upstream `ruleExists`.
fn rule_exists(haystack: &[Value], needle: &Value) -> bool {
    haystack.iter().any(|r| rule_equal(r, needle))
}

fn rules_of(role: &Value) -> &[Value] {
    super::items(role, "rules")
}

/// Whether two rule lists are semantically equal (absent rules are an empty list).
pub fn rules_equal(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| rule_equal(x, y))
}

/// The rules `role` aggregates from `all` (every ClusterRole, by name), or `None` when it
/// has no aggregation rule. An invalid selector is an error, as upstream's sync returns.
pub fn aggregate(
    role: &Value,
    all: &BTreeMap<String, Value>,
) -> Result<Option<Vec<Value>>, String> {
    let Some(rule) = role.get("aggregationRule").filter(|r| !r.is_null()) else {
        return Ok(None);
    };
    let own_name = kas_registry::meta::name(role);
    let mut rules: Vec<Value> = Vec::new();
    for selector in super::items(rule, "clusterRoleSelectors") {
        let selector =
            kas_apimachinery::labels::from_label_selector(selector).map_err(|e| e.to_string())?;
        // The map is ordered by name: upstream sorts the listed roles `byName`.
        for (name, other) in all {
            if name == own_name || !selector.matches_json(other) {
                continue;
            }
            for r in rules_of(other) {
                if !rule_exists(&rules, r) {
                    rules.push(r.clone());
                }
            }
        }
    }
    Ok(Some(rules))
}

/// `role` with `rules` as its rules (none written as an absent field).
fn with_rules(mut role: Value, rules: Vec<Value>) -> Value {
    if let Some(obj) = role.as_object_mut() {
        if rules.is_empty() {
            obj.remove("rules");
        } else {
            obj.insert("rules".into(), Value::Array(rules));
        }
    }
    role
}

/// Starts the controller over the role's stores (a no-op without clusterroles); it runs
/// for as long as the process does.
pub fn start(stores: &[Store]) {
    let Some(store) = crate::admission::store(stores, super::GROUP_NAME, "clusterroles") else {
        return;
    };
    tokio::spawn(async move {
        loop {
            if let Err(e) = follow(&store).await {
                tracing::debug!(error = %e.to_status().message.unwrap_or_default(), "following clusterroles");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
}

/// Applies one watch event to the known roles; whether it changed a role.
fn apply_event(
    roles: &mut BTreeMap<String, Value>,
    event: WatchEvent,
) -> kas_registry::Result<Option<bool>> {
    match event {
        WatchEvent::Added(o) | WatchEvent::Modified(o) => {
            let role = o.value()?;
            roles.insert(kas_registry::meta::name(&role).to_owned(), role);
            Ok(Some(true))
        }
        WatchEvent::Deleted(o) => {
            let role = o.value()?;
            roles.remove(kas_registry::meta::name(&role));
            Ok(Some(true))
        }
        WatchEvent::Error(_) => Ok(None),
        _ => Ok(Some(false)),
    }
}

/// A list, a reconcile, then a watch from the list's revision reconciling after each
/// burst of changes, until the watch ends.
async fn follow(store: &Store) -> kas_registry::Result<()> {
    let opts = ListOptions {
        resource_version: Some("0".into()),
        ..Default::default()
    };
    let listed = store.list("", &opts, Default::default()).await?;
    let mut roles = BTreeMap::new();
    for item in &listed.items {
        let role = item.value()?;
        roles.insert(kas_registry::meta::name(&role).to_owned(), role);
    }
    let watch = ListOptions {
        resource_version: Some(listed.resource_version.to_string()),
        watch: true,
        ..Default::default()
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3600);
    let mut events = store
        .watch("", None, &watch, Default::default(), deadline)
        .await?;
    reconcile(store, &roles).await;
    while let Some(event) = events.next().await {
        let Some(mut changed) = apply_event(&mut roles, event)? else {
            return Ok(());
        };
        if !changed {
            continue;
        }
        let until = tokio::time::Instant::now() + DEBOUNCE;
        loop {
            tokio::select! {
                event = events.next() => {
                    let Some(event) = event else { break };
                    match apply_event(&mut roles, event)? {
                        Some(c) => changed |= c,
                        None => break,
                    }
                }
                () = tokio::time::sleep_until(until) => break,
            }
        }
        if changed {
            reconcile(store, &roles).await;
        }
    }
    Ok(())
}

/// Upstream's sync of every aggregated role (its event handler queues them all on any
/// change, as the dependency graph is unknown).
async fn reconcile(store: &Store, roles: &BTreeMap<String, Value>) {
    for (name, role) in roles {
        if role.get("aggregationRule").is_none_or(Value::is_null) {
            continue;
        }
        if let Err(message) = sync_role(store, role, roles).await {
            tracing::warn!(clusterrole = %name, error = %message, "aggregating clusterrole");
        }
    }
}

/// Writes `role`'s aggregated rules when they differ from its rules; on a conflict reads
/// the role again and recomputes.
async fn sync_role(
    store: &Store,
    role: &Value,
    roles: &BTreeMap<String, Value>,
) -> Result<(), String> {
    let name = kas_registry::meta::name(role).to_owned();
    let opts = WriteOptions {
        manager: FIELD_MANAGER.into(),
        ..Default::default()
    };
    let mut current = role.clone();
    for _ in 0..CONFLICT_RETRIES {
        let Some(rules) = aggregate(&current, roles)? else {
            return Ok(());
        };
        if rules_equal(&rules, rules_of(&current)) {
            return Ok(());
        }
        match store
            .update("", &name, with_rules(current, rules), &opts)
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if e.to_status().code == 409 => {
                current = match store
                    .get("", &name, None)
                    .await
                    .and_then(|o| o.value().map_err(Into::into))
                {
                    Ok(fresh) => fresh,
                    Err(e) if e.to_status().code == 404 => return Ok(()),
                    Err(e) => return Err(e.to_status().message.unwrap_or_default()),
                };
            }
            Err(e) => return Err(e.to_status().message.unwrap_or_default()),
        }
    }
    Err("conflicts on every retry".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn all(roles: &[Value]) -> BTreeMap<String, Value> {
        roles
            .iter()
            .map(|r| (kas_registry::meta::name(r).to_owned(), r.clone()))
            .collect()
    }

    fn role(name: &str, labels: Value, rules: Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels}, "rules": rules})
    }

    fn aggregated(selectors: Value) -> Value {
        json!({"metadata": {"name": "agg"},
            "aggregationRule": {"clusterRoleSelectors": selectors}})
    }

    #[test]
    fn semantic_rule_equality_ignores_empty_lists_not_order() {
        let a = json!({"verbs": ["get"], "resources": ["pods"]});
        let b = json!({"verbs": ["get"], "resources": ["pods"], "apiGroups": [],
            "resourceNames": null});
        assert!(rule_equal(&a, &b));
        let c = json!({"verbs": ["get"], "resources": ["pods"], "apiGroups": [""]});
        assert!(!rule_equal(&a, &c));
        let d = json!({"verbs": ["list", "get"], "resources": ["pods"]});
        let e = json!({"verbs": ["get", "list"], "resources": ["pods"]});
        assert!(!rule_equal(&d, &e), "order matters to DeepEqual");
        assert!(rules_equal(&[], &[]));
        assert!(!rules_equal(std::slice::from_ref(&a), &[]));
    }

    #[test]
    fn no_aggregation_rule_is_left_alone() {
        let plain = role("plain", json!({}), json!([{"verbs": ["get"]}]));
        assert_eq!(
            aggregate(&plain, &all(std::slice::from_ref(&plain))),
            Ok(None)
        );
    }

    #[test]
    fn union_sorted_by_name_without_duplicates_or_self() {
        let sel = json!([{"matchLabels": {"agg": "true"}}]);
        let mut agg = aggregated(sel);
        agg["metadata"]["labels"] = json!({"agg": "true"});
        agg["rules"] = json!([{"verbs": ["delete"], "resources": ["self"]}]);
        let get = json!({"verbs": ["get"], "resources": ["pods"]});
        let list = json!({"verbs": ["list"], "resources": ["pods"]});
        let watch = json!({"verbs": ["watch"], "resources": ["pods"]});
        let zeta = role("zeta", json!({"agg": "true"}), json!([watch, get]));
        let alpha = role("alpha", json!({"agg": "true"}), json!([get, list]));
        let other = role("other", json!({"agg": "false"}), json!([{"verbs": ["*"]}]));
        let got = aggregate(&agg, &all(&[agg.clone(), zeta, alpha, other])).unwrap();
        assert_eq!(got, Some(vec![get, list, watch]));
    }

    #[test]
    fn selectors_in_order_then_names() {
        let sel = json!([
            {"matchLabels": {"second": "true"}},
            {"matchExpressions": [{"key": "first", "operator": "Exists"}]}
        ]);
        let agg = aggregated(sel);
        let a = json!({"verbs": ["a"]});
        let b = json!({"verbs": ["b"]});
        let first = role("aaa", json!({"first": "x"}), json!([a]));
        let second = role("zzz", json!({"second": "true"}), json!([b]));
        let got = aggregate(&agg, &all(&[agg.clone(), first, second])).unwrap();
        assert_eq!(
            got,
            Some(vec![b, a]),
            "the first selector's roles come first"
        );
    }

    #[test]
    fn nothing_selected_is_empty_and_invalid_selector_errs() {
        let agg = aggregated(json!([{"matchLabels": {"none": "here"}}]));
        assert_eq!(
            aggregate(&agg, &all(std::slice::from_ref(&agg))),
            Ok(Some(vec![]))
        );
        let written = with_rules(json!({"metadata": {"name": "agg"}, "rules": [{}]}), vec![]);
        assert!(written.get("rules").is_none());
        let bad = aggregated(json!([{"matchExpressions": [{"key": "k", "operator": "Bogus"}]}]));
        assert!(aggregate(&bad, &all(&[])).is_err());
    }
}
