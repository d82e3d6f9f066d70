//! Upstream's quota evaluators for admission (`pkg/quota/v1/evaluator/core` and the
//! generic object-count one) and the plugin's `CheckRequest`
//! (`k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go`).

use kas_apimachinery::resource::Quantity;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::Operation;
use serde_json::Value;

use super::pods::{self, ScopeRequirement};
use super::resources::{self, ResourceList};

/// Upstream's `ignoredResources` (group, resource).
const IGNORED: [(&str, &str); 10] = [
    ("", "bindings"),
    ("", "componentstatuses"),
    ("authentication.k8s.io", "tokenreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
    ("", "events"),
    ("events.k8s.io", "events"),
];

/// Upstream `legacyObjectCountAliases`.
const LEGACY_ALIASES: [(&str, &str); 4] = [
    ("configmaps", "configmaps"),
    ("resourcequotas", "resourcequotas"),
    ("replicationcontrollers", "replicationcontrollers"),
    ("secrets", "secrets"),
];

const STORAGE_CLASS_SUFFIX: &str = ".storageclass.storage.k8s.io/";

/// The evaluator upstream's registry gives a group-resource.
#[derive(Debug, PartialEq)]
pub enum Evaluator {
    Pods,
    Services,
    Claims,
    /// `generic.NewObjectCountEvaluator`: the `count/...` name and a legacy alias.
    Count(Vec<String>),
}

/// Upstream `ObjectCountQuotaResourceNameFor`.
fn count_name(group: &str, resource: &str) -> String {
    if group.is_empty() {
        format!("count/{resource}")
    } else {
        format!("count/{resource}.{group}")
    }
}

impl Evaluator {
    /// The evaluator of `descriptor`'s resource; `None` for the ignored ones.
    pub fn of(descriptor: &ResourceDescriptor) -> Option<Evaluator> {
        Evaluator::for_resource(descriptor.group, descriptor.plural)
    }

    /// The evaluator of resource `plural` in `group`.
    pub fn for_resource(group: &str, plural: &str) -> Option<Evaluator> {
        if IGNORED.contains(&(group, plural)) {
            return None;
        }
        Some(match (group, plural) {
            ("", "pods") => Evaluator::Pods,
            ("", "services") => Evaluator::Services,
            ("", "persistentvolumeclaims") => Evaluator::Claims,
            _ => {
                let mut names = vec![count_name(group, plural)];
                if group.is_empty()
                    && let Some((_, alias)) = LEGACY_ALIASES.iter().find(|(r, _)| *r == plural)
                {
                    names.push((*alias).to_owned());
                }
                Evaluator::Count(names)
            }
        })
    }

    /// Upstream `Handles`.
    pub fn handles(&self, subresource: &str, operation: Operation) -> bool {
        use Operation::{Create, Update};
        match (self, subresource) {
            (Evaluator::Pods, "") => operation == Create,
            (Evaluator::Pods, "resize") => operation == Update,
            (Evaluator::Services, "") => matches!(operation, Create | Update),
            (Evaluator::Claims, "") => matches!(operation, Create | Update),
            // `RequiresQuotaReplenish` compares two fresh pointers: always true.
            (Evaluator::Claims, "status") => operation == Update,
            (Evaluator::Count(_), "") => operation == Create,
            _ => false,
        }
    }

    /// Upstream `MatchingResources`.
    pub fn matching_resources(&self, input: &[String]) -> Vec<String> {
        let among = |set: &[&str]| -> Vec<String> {
            input
                .iter()
                .filter(|n| set.contains(&n.as_str()))
                .cloned()
                .collect()
        };
        match self {
            Evaluator::Pods => pods::matching_resources(input),
            Evaluator::Services => among(&[
                "count/services",
                "services",
                "services.nodeports",
                "services.loadbalancers",
            ]),
            Evaluator::Claims => input
                .iter()
                .filter(|n| {
                    matches!(
                        n.as_str(),
                        "count/persistentvolumeclaims"
                            | "persistentvolumeclaims"
                            | "requests.storage"
                    ) || n.ends_with(".storageclass.storage.k8s.io/persistentvolumeclaims")
                        || n.ends_with(".storageclass.storage.k8s.io/requests.storage")
                })
                .cloned()
                .collect(),
            Evaluator::Count(names) => input
                .iter()
                .filter(|n| names.contains(n))
                .cloned()
                .collect(),
        }
    }

    fn matches_scope(&self, req: &ScopeRequirement, object: &Value) -> bool {
        match self {
            Evaluator::Pods => pods::matches_scope(req, object),
            // `MatchesNoScopeFunc` (VolumeAttributesClass is off by default in 1.33).
            _ => false,
        }
    }

    /// Upstream `Matches` (`generic.Matches`): the quota names a resource the evaluator
    /// tracks and every scope of the quota matches.
    pub fn matches(&self, quota: &Quota, object: &Value) -> bool {
        !self.matching_resources(&quota.hard_names()).is_empty()
            && quota.scopes.iter().all(|s| self.matches_scope(s, object))
    }

    /// Upstream `Constraints`.
    pub fn constraints(&self, required: &[String], object: &Value) -> Result<(), String> {
        match self {
            Evaluator::Pods => pods::constraints(required, object),
            _ => Ok(()),
        }
    }

    /// Upstream `Usage`.
    pub fn usage(&self, object: &Value) -> ResourceList {
        let one = || Quantity::from_int(1);
        let mut result = ResourceList::new();
        match self {
            Evaluator::Pods => return pods::usage(object),
            Evaluator::Services => {
                let ports = object
                    .pointer("/spec/ports")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len) as i64;
                result.insert("count/services".into(), one());
                result.insert("services".into(), one());
                let (lbs, node_ports) = match object.pointer("/spec/type").and_then(Value::as_str) {
                    Some("NodePort") => (0, ports),
                    Some("LoadBalancer") => {
                        let allocate = object
                            .pointer("/spec/allocateLoadBalancerNodePorts")
                            .and_then(Value::as_bool);
                        let counted = if allocate == Some(false) {
                            object
                                .pointer("/spec/ports")
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                                .filter(|p| {
                                    p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0
                                })
                                .count() as i64
                        } else {
                            ports
                        };
                        (1, counted)
                    }
                    _ => (0, 0),
                };
                result.insert("services.loadbalancers".into(), Quantity::from_int(lbs));
                result.insert("services.nodeports".into(), Quantity::from_int(node_ports));
            }
            Evaluator::Claims => {
                result.insert("persistentvolumeclaims".into(), one());
                result.insert("count/persistentvolumeclaims".into(), one());
                let class = claim_class(object);
                if !class.is_empty() {
                    result.insert(
                        format!("{class}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"),
                        one(),
                    );
                }
                if let Some(storage) = claim_storage(object) {
                    if !class.is_empty() {
                        result.insert(
                            format!("{class}{STORAGE_CLASS_SUFFIX}requests.storage"),
                            storage.clone(),
                        );
                    }
                    result.insert("requests.storage".into(), storage);
                }
            }
            Evaluator::Count(names) => {
                for name in names {
                    result.insert(name.clone(), one());
                }
            }
        }
        result
    }
}

/// Upstream `GetPersistentVolumeClaimClass`: the beta annotation, else the field.
fn claim_class(claim: &Value) -> &str {
    claim
        .pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
        .or_else(|| claim.pointer("/spec/storageClassName"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Upstream `getStorageUsage`: the request rounded up to whole bytes, or the allocated
/// size when that is larger.
fn claim_storage(claim: &Value) -> Option<Quantity> {
    let parse = |p: &str| {
        claim
            .pointer(p)
            .and_then(Value::as_str)
            .and_then(|s| Quantity::parse(s).ok())
    };
    let rounded = |mut q: Quantity| {
        q.round_up(0);
        q
    };
    let requested = rounded(parse("/spec/resources/requests/storage")?);
    match parse("/status/allocatedResources/storage") {
        Some(allocated) if allocated.cmp_value(&requested).is_gt() => Some(rounded(allocated)),
        _ => Some(requested),
    }
}

/// A ResourceQuota as the plugin reads it.
pub struct Quota {
    pub name: String,
    pub object: Value,
    pub hard: ResourceList,
    pub used: ResourceList,
    /// `spec.scopes` (as `Exists`) and `spec.scopeSelector.matchExpressions`.
    pub scopes: Vec<ScopeRequirement>,
}

impl Quota {
    pub fn new(object: Value) -> Quota {
        let mut scopes: Vec<ScopeRequirement> = object
            .pointer("/spec/scopes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|s| ScopeRequirement {
                scope: s.to_owned(),
                operator: "Exists".into(),
                values: Vec::new(),
            })
            .collect();
        for expr in object
            .pointer("/spec/scopeSelector/matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let text = |k: &str| expr.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            scopes.push(ScopeRequirement {
                scope: text("scopeName"),
                operator: text("operator"),
                values: expr
                    .get("values")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
            });
        }
        Quota {
            name: kas_registry::meta::name(&object).to_owned(),
            hard: resources::from_json(object.pointer("/status/hard")),
            used: resources::from_json(object.pointer("/status/used")),
            scopes,
            object,
        }
    }

    pub fn hard_names(&self) -> Vec<String> {
        self.hard.keys().cloned().collect()
    }
}
