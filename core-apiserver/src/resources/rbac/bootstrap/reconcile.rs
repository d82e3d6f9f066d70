//! The pure decisions of upstream's `pkg/registry/rbac/reconciliation` in its union mode
//! (what the `rbac/bootstrap-roles` hook uses: extra permissions and subjects are kept):
//! `computeReconciledRole`, `computeReconciledRoleBinding`, over kas-rbac's rule coverage
//! (`Covers`, `BreakdownRule`).

use kas_rbac::PolicyRule;
use serde_json::{Map, Value};

use super::builder::AUTO_UPDATE_ANNOTATION;

/// Upstream's `ReconcileOperation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    None,
    Create,
    Update,
    /// A binding whose `roleRef` differs: deleted, then created as expected.
    Recreate,
}

/// Upstream's `ReconcileClusterRoleResult`.
#[derive(Clone, Debug, PartialEq)]
pub struct RoleResult {
    /// What to write.
    pub role: Value,
    pub missing_rules: Vec<Value>,
    pub missing_selectors: Vec<Value>,
    pub operation: Operation,
    /// The existing role's autoupdate annotation is "false": nothing is written.
    pub protected: bool,
}

/// Upstream's `ReconcileClusterRoleBindingResult`.
#[derive(Clone, Debug, PartialEq)]
pub struct BindingResult {
    pub binding: Value,
    pub missing_subjects: Vec<Value>,
    pub operation: Operation,
    pub protected: bool,
}

/// Upstream `BreakdownRule` (kas-rbac's) over a rule's JSON.
pub fn breakdown_rule(rule: &Value) -> Vec<Value> {
    PolicyRule::from_value(rule)
        .map(|r| kas_rbac::escalation::breakdown_rule(&r))
        .unwrap_or_default()
        .iter()
        .map(PolicyRule::to_value)
        .collect()
}

/// Upstream `Covers` (kas-rbac's) over rules' JSON: whether `owner` covers every rule of
/// `servant`, and the atomic rules it does not cover. A rule that is not a PolicyRule
/// (validation refused it) covers nothing and asks for nothing.
pub fn covers(owner: &[Value], servant: &[Value]) -> (bool, Vec<Value>) {
    let rules = |rules: &[Value]| -> Vec<PolicyRule> {
        rules
            .iter()
            .filter_map(|r| PolicyRule::from_value(r).ok())
            .collect()
    };
    let (covered, missing) = kas_rbac::escalation::covers(&rules(owner), &rules(servant));
    (covered, missing.iter().map(PolicyRule::to_value).collect())
}

fn meta_map<'a>(obj: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    obj.pointer(&format!("/metadata/{key}"))
        .and_then(Value::as_object)
}

/// Upstream `merge(expected, existing)` of labels or annotations (the existing values
/// win), and whether the result differs from the existing map.
fn merge_meta(result: &mut Value, expected: &Value, key: &str) -> bool {
    let existing = meta_map(result, key).cloned();
    let mut merged = meta_map(expected, key).cloned().unwrap_or_default();
    merged.extend(existing.clone().unwrap_or_default());
    if merged.is_empty() && existing.is_none() {
        return false;
    }
    let changed = existing.as_ref() != Some(&merged);
    if changed && let Some(meta) = result.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert(key.to_owned(), Value::Object(merged));
    }
    changed
}

fn protected(existing: &Value) -> bool {
    meta_map(existing, "annotations")
        .and_then(|a| a.get(AUTO_UPDATE_ANNOTATION))
        .and_then(Value::as_str)
        == Some("false")
}

fn aggregation_rule(role: &Value) -> Option<&Value> {
    role.get("aggregationRule").filter(|r| !r.is_null())
}

/// A label selector as `equality.Semantic` compares it: empty fields as absent.
fn semantic_selector(selector: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(obj) = selector.as_object() {
        for (k, v) in obj {
            let empty = v.is_null()
                || v.as_object().is_some_and(Map::is_empty)
                || v.as_array().is_some_and(Vec::is_empty);
            if !empty {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// Upstream `aggregationRuleCovers`: the selectors of `servant` no selector of `owner`
/// equals.
fn uncovered_selectors(owner: Option<&Value>, servant: Option<&Value>) -> Vec<Value> {
    let (Some(owner), Some(servant)) = (owner, servant) else {
        return match (owner, servant) {
            (None, Some(s)) => super::super::items(s, "clusterRoleSelectors").to_vec(),
            _ => Vec::new(),
        };
    };
    let owned: Vec<_> = super::super::items(owner, "clusterRoleSelectors")
        .iter()
        .map(semantic_selector)
        .collect();
    super::super::items(servant, "clusterRoleSelectors")
        .iter()
        .filter(|s| !owned.contains(&semantic_selector(s)))
        .cloned()
        .collect()
}

/// The result of reconciling a role that does not exist yet.
pub fn role_to_create(expected: &Value) -> RoleResult {
    RoleResult {
        role: expected.clone(),
        missing_rules: super::super::items(expected, "rules").to_vec(),
        missing_selectors: aggregation_rule(expected)
            .map(|r| super::super::items(r, "clusterRoleSelectors").to_vec())
            .unwrap_or_default(),
        operation: Operation::Create,
        protected: false,
    }
}

/// Upstream `computeReconciledRole` (union mode): the existing role with the expected
/// labels and annotations it lacks, the rules it does not cover (broken down), and the
/// aggregation selectors it lacks; its own extra rules and selectors stay.
pub fn compute_reconciled_role(existing: &Value, expected: &Value) -> RoleResult {
    let mut role = existing.clone();
    let mut operation = Operation::None;
    if merge_meta(&mut role, expected, "annotations") | merge_meta(&mut role, expected, "labels") {
        operation = Operation::Update;
    }
    let existing_rules = super::super::items(existing, "rules");
    let (_, missing_rules) = covers(existing_rules, super::super::items(expected, "rules"));
    if !missing_rules.is_empty() {
        let mut rules = existing_rules.to_vec();
        rules.extend(missing_rules.iter().cloned());
        role["rules"] = Value::Array(rules);
        operation = Operation::Update;
    }
    let (expected_agg, existing_agg) = (aggregation_rule(expected), aggregation_rule(existing));
    let missing_selectors = uncovered_selectors(existing_agg, expected_agg);
    if expected_agg.is_none() && existing_agg.is_some() {
        // Not expected to be aggregated at all: the aggregation goes.
        if let Some(obj) = role.as_object_mut() {
            obj.remove("aggregationRule");
        }
        operation = Operation::Update;
    } else if !missing_selectors.is_empty() {
        let mut selectors = existing_agg
            .map(|r| super::super::items(r, "clusterRoleSelectors").to_vec())
            .unwrap_or_default();
        selectors.extend(missing_selectors.iter().cloned());
        role["aggregationRule"] = serde_json::json!({"clusterRoleSelectors": selectors});
        operation = Operation::Update;
    }
    RoleResult {
        role,
        missing_rules,
        missing_selectors,
        operation,
        protected: protected(existing),
    }
}

/// A subject as Go compares `rbacv1.Subject` values: kind, apiGroup, name, namespace.
fn subject_key(s: &Value) -> [&str; 4] {
    ["kind", "apiGroup", "name", "namespace"]
        .map(|k| s.get(k).and_then(Value::as_str).unwrap_or(""))
}

fn role_ref_key(b: &Value) -> [&str; 3] {
    ["apiGroup", "kind", "name"].map(|k| {
        b.get("roleRef")
            .and_then(|r| r.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
    })
}

/// The result of reconciling a binding that does not exist yet.
pub fn binding_to_create(expected: &Value) -> BindingResult {
    BindingResult {
        binding: expected.clone(),
        missing_subjects: super::super::items(expected, "subjects").to_vec(),
        operation: Operation::Create,
        protected: false,
    }
}

/// Upstream `computeReconciledRoleBinding` (union mode): a different `roleRef` means
/// recreating the binding as expected; otherwise the existing binding with the expected
/// labels, annotations and subjects it lacks.
pub fn compute_reconciled_binding(existing: &Value, expected: &Value) -> BindingResult {
    let protected = protected(existing);
    if role_ref_key(existing) != role_ref_key(expected) {
        return BindingResult {
            binding: expected.clone(),
            missing_subjects: Vec::new(),
            operation: Operation::Recreate,
            protected,
        };
    }
    let mut binding = existing.clone();
    let mut operation = Operation::None;
    if merge_meta(&mut binding, expected, "annotations")
        | merge_meta(&mut binding, expected, "labels")
    {
        operation = Operation::Update;
    }
    let existing_subjects = super::super::items(existing, "subjects");
    let have: Vec<_> = existing_subjects.iter().map(subject_key).collect();
    let missing_subjects: Vec<Value> = super::super::items(expected, "subjects")
        .iter()
        .filter(|s| !have.contains(&subject_key(s)))
        .cloned()
        .collect();
    if !missing_subjects.is_empty() {
        let mut subjects = existing_subjects.to_vec();
        subjects.extend(missing_subjects.iter().cloned());
        binding["subjects"] = Value::Array(subjects);
        operation = Operation::Update;
    }
    BindingResult {
        binding,
        missing_subjects,
        operation,
        protected,
    }
}
