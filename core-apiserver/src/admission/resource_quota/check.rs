//! Upstream's `CheckRequest` (`k8s.io/apiserver/pkg/admission/plugin/resourcequota`):
//! which quotas constrain a write, whether it fits them, and their usage after it.

use kas_registry::admission::Operation;
use serde_json::Value;

use super::evaluator::{Evaluator, Quota};
use super::resources::{self, ResourceList};

/// The write as the check sees it.
pub struct Request<'a> {
    pub operation: Operation,
    pub subresource: &'a str,
    pub object: &'a Value,
    pub old_object: Option<&'a Value>,
}

/// Upstream `hasUsageStats`: every hard limit among `restricted` has a used value.
fn has_usage_stats(quota: &Quota, restricted: &[String]) -> bool {
    quota
        .hard
        .keys()
        .filter(|k| restricted.contains(k))
        .all(|k| quota.used.contains_key(k))
}

/// The new `status.used` of each quota (by index) that the write charges, or the
/// message of the Forbidden refusal.
pub fn check_request(
    evaluator: &Evaluator,
    quotas: &[Quota],
    req: &Request<'_>,
) -> Result<Vec<(usize, ResourceList)>, String> {
    let object = req.object;
    let mut interesting = Vec::new();
    for (i, quota) in quotas.iter().enumerate() {
        if !evaluator.matches(quota, object) {
            continue;
        }
        let restricted = evaluator.matching_resources(&quota.hard_names());
        evaluator
            .constraints(&restricted, object)
            .map_err(|e| format!("failed quota: {}: {e}", quota.name))?;
        if !has_usage_stats(quota, &restricted) {
            return Err(format!(
                "status unknown for quota: {}, resources: {}",
                quota.name,
                resources::pretty_print_names(&restricted)
            ));
        }
        interesting.push(i);
    }
    let usage = evaluator.usage(object);
    let negative = resources::negative(&usage);
    if !negative.is_empty() {
        return Err(format!(
            "quota usage is negative for resource(s): {}",
            resources::pretty_print_names(&negative)
        ));
    }
    let mut deltas: Vec<(usize, ResourceList)> =
        interesting.iter().map(|i| (*i, usage.clone())).collect();
    if req.operation == Operation::Update {
        let Some(old) = req.old_object else {
            return Err(
                "unable to get previous usage since prior version of object was not found".into(),
            );
        };
        let delta = resources::subtract_non_negative(&usage, &evaluator.usage(old));
        for (i, d) in &mut deltas {
            if evaluator.matches(&quotas[*i], old) {
                *d = delta.clone();
            }
        }
    }
    let mut charged = Vec::new();
    for (i, delta) in deltas {
        let delta = resources::remove_zeros(&delta);
        if delta.is_empty() {
            continue;
        }
        let quota = &quotas[i];
        let requested = resources::mask(&delta, quota.hard.keys());
        let new_used = resources::add(&quota.used, &requested);
        if req.subresource != "status" {
            let masked = resources::mask(&new_used, requested.keys());
            let (allowed, exceeded) = resources::less_than_or_equal(&masked, &quota.hard);
            if !allowed {
                return Err(format!(
                    "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                    quota.name,
                    resources::pretty_print(&resources::mask(&requested, &exceeded)),
                    resources::pretty_print(&resources::mask(&quota.used, &exceeded)),
                    resources::pretty_print(&resources::mask(&quota.hard, &exceeded)),
                ));
            }
        }
        charged.push((i, new_used));
    }
    Ok(charged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn quota(name: &str, status: Value) -> Quota {
        Quota::new(json!({"metadata": {"name": name}, "spec": {}, "status": status}))
    }

    fn pod(cpu: &str) -> Value {
        json!({"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Mi"}, "limits": {"cpu": cpu, "memory": "1Mi"}}}
        ]}})
    }

    /// How many quotas a write charges, or its refusal.
    fn run(e: &Evaluator, quotas: &[Quota], req: &Request<'_>) -> Result<usize, String> {
        check_request(e, quotas, req).map(|c| c.len())
    }

    fn create(object: &Value) -> Request<'_> {
        Request {
            operation: Operation::Create,
            subresource: "",
            object,
            old_object: None,
        }
    }

    #[test]
    fn pods_are_charged_refused_over_quota_and_without_status() {
        let quotas = [
            quota(
                "q",
                json!({"hard": {"pods": "2", "requests.cpu": "1"}, "used": {"pods": "1", "requests.cpu": "500m"}}),
            ),
            quota(
                "other",
                json!({"hard": {"secrets": "1"}, "used": {"secrets": "0"}}),
            ),
        ];
        let p = pod("500m");
        let charged = check_request(&Evaluator::Pods, &quotas, &create(&p)).expect("fits");
        assert_eq!(charged.len(), 1);
        assert_eq!(charged[0].0, 0);
        assert_eq!(
            resources::pretty_print(&charged[0].1),
            "pods=2,requests.cpu=1"
        );

        let big = pod("600m");
        assert_eq!(
            run(&Evaluator::Pods, &quotas, &create(&big)),
            Err("exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1".into())
        );

        let unknown = [quota(
            "fresh",
            json!({"hard": {"pods": "2", "requests.cpu": "1"}}),
        )];
        assert_eq!(
            run(&Evaluator::Pods, &unknown, &create(&p)),
            Err("status unknown for quota: fresh, resources: pods,requests.cpu".into())
        );
        // A quota without status.hard constrains nothing yet.
        let empty = [quota("new", json!({}))];
        assert_eq!(run(&Evaluator::Pods, &empty, &create(&p)), Ok(0));

        let bare = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}});
        assert_eq!(
            run(&Evaluator::Pods, &quotas, &create(&bare)),
            Err("failed quota: q: must specify requests.cpu for: c".into())
        );
    }

    #[test]
    fn scopes_counts_and_service_updates() {
        let scoped = Quota::new(json!({"metadata": {"name": "be"},
            "spec": {"scopes": ["BestEffort"]},
            "status": {"hard": {"pods": "1"}, "used": {"pods": "1"}}}));
        // The pod requests cpu: not BestEffort, so the quota does not apply.
        let p = pod("1");
        assert_eq!(run(&Evaluator::Pods, &[scoped], &create(&p)), Ok(0));

        let cm = Evaluator::for_resource("", "configmaps").expect("counted");
        assert_eq!(
            cm,
            Evaluator::Count(vec!["count/configmaps".into(), "configmaps".into()])
        );
        let q = [quota(
            "c",
            json!({"hard": {"count/configmaps": "1"}, "used": {"count/configmaps": "1"}}),
        )];
        let obj = json!({"metadata": {"name": "x"}});
        assert_eq!(
            run(&cm, &q, &create(&obj)),
            Err("exceeded quota: c, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1".into())
        );

        let q = [quota(
            "s",
            json!({"hard": {"services.nodeports": "1"}, "used": {"services.nodeports": "0"}}),
        )];
        let old = json!({"metadata": {"name": "s", "resourceVersion": "5"}, "spec": {"type": "ClusterIP", "ports": [{"port": 1}]}});
        let new = json!({"metadata": {"name": "s"}, "spec": {"type": "NodePort", "ports": [{"port": 1}, {"port": 2}]}});
        let update = Request {
            operation: Operation::Update,
            subresource: "",
            object: &new,
            old_object: Some(&old),
        };
        assert_eq!(
            run(&Evaluator::Services, &q, &update),
            Err("exceeded quota: s, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1".into())
        );
    }
}
