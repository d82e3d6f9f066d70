//! Upstream's `checkAPIService`: what to do about one APIService name, from what is wanted
//! (`desired`, labelled with how it is managed) and what is stored (`current`). As
//! upstream's table has it:
//!
//! | current \ desired                      | not wanted  | sync on start | sync always |
//! |----------------------------------------|-------------|---------------|-------------|
//! | not found                              | -           | create once   | create      |
//! | not managed                            | -           | -             | -           |
//! | sync on start, not present at start    | -           | -             | -           |
//! | sync on start, present at start        | delete once | update once   | update once |
//! | sync always                            | delete      | update once   | update      |
//!
//! "once" holds per process: a name this controller synced successfully is not synced on
//! start again.

use serde_json::Value;

use super::{MANAGE_CONTINUOUSLY, MANAGE_ON_START, MANAGED_LABEL};

/// A write the controller must make.
#[derive(Debug, PartialEq)]
pub enum Action {
    Nothing,
    /// Create the desired object.
    Create(Value),
    /// Update the stored object (conditioned on its resourceVersion) to the desired spec.
    Update(Value),
    /// Delete the stored object, conditioned on its uid.
    Delete {
        uid: String,
    },
}

/// How an object says it is managed: its automanaged label.
pub fn managed_type(obj: Option<&Value>) -> &str {
    obj.and_then(|o| o.pointer("/metadata/labels"))
        .and_then(|l| l.get(MANAGED_LABEL))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn on_start(obj: Option<&Value>) -> bool {
    managed_type(obj) == MANAGE_ON_START
}

fn managed(obj: Option<&Value>) -> bool {
    matches!(managed_type(obj), MANAGE_ON_START | MANAGE_CONTINUOUSLY)
}

/// Upstream's decision; `has_synced`: this process synced the name successfully before;
/// `present_at_start`: the name existed when the controller started.
pub fn check(
    desired: Option<&Value>,
    current: Option<&Value>,
    has_synced: bool,
    present_at_start: bool,
) -> Action {
    match (desired, current) {
        (None, None) => Action::Nothing,
        _ if on_start(desired) && has_synced => Action::Nothing,
        (Some(desired), None) => Action::Create(desired.clone()),
        (_, Some(current)) if !managed(Some(current)) => Action::Nothing,
        (_, Some(current)) if on_start(Some(current)) && (!present_at_start || has_synced) => {
            Action::Nothing
        }
        (None, Some(current)) => Action::Delete {
            uid: kas_registry::meta::str_field(current, "uid").to_owned(),
        },
        (Some(desired), Some(current)) if same_spec(desired, current) => Action::Nothing,
        (Some(desired), Some(current)) => {
            let mut updated = current.clone();
            updated["spec"] = desired.get("spec").cloned().unwrap_or_default();
            Action::Update(updated)
        }
    }
}

/// Upstream compares the specs as Go structs: an absent field, a null and its zero value
/// are the same.
fn same_spec(a: &Value, b: &Value) -> bool {
    normalized(a.get("spec")) == normalized(b.get("spec"))
}

fn normalized(spec: Option<&Value>) -> serde_json::Map<String, Value> {
    let zero = |v: &Value| match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_i64() == Some(0),
        _ => false,
    };
    spec.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(_, v)| !zero(v))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(label: Option<&str>, priority: i64) -> Value {
        let mut o = json!({"metadata": {"name": "v1.apps", "uid": "u1", "resourceVersion": "7"},
            "spec": {"group": "apps", "version": "v1", "groupPriorityMinimum": priority,
                     "versionPriority": 15}});
        if let Some(l) = label {
            o["metadata"]["labels"] = json!({MANAGED_LABEL: l});
        }
        o
    }

    #[test]
    fn upstreams_table() {
        let start = obj(Some("onstart"), 17800);
        let always = obj(Some("true"), 17800);
        let user = obj(None, 1);
        let stale_start = obj(Some("onstart"), 1);
        let stale_always = obj(Some("true"), 1);

        // Not found: create what is wanted, once for on-start ones.
        assert_eq!(check(None, None, false, false), Action::Nothing);
        assert_eq!(
            check(Some(&start), None, false, false),
            Action::Create(start.clone())
        );
        assert_eq!(check(Some(&start), None, true, false), Action::Nothing);
        assert_eq!(
            check(Some(&always), None, true, false),
            Action::Create(always.clone())
        );
        // Not managed: never touched.
        for desired in [None, Some(&start), Some(&always)] {
            assert_eq!(check(desired, Some(&user), false, true), Action::Nothing);
        }
        // Sync on start, added after the start: left alone.
        assert_eq!(
            check(None, Some(&stale_start), false, false),
            Action::Nothing
        );
        assert_eq!(
            check(Some(&always), Some(&stale_start), false, false),
            Action::Nothing
        );
        // Sync on start, present at start: deleted or updated once.
        let delete = Action::Delete { uid: "u1".into() };
        assert_eq!(check(None, Some(&stale_start), false, true), delete);
        assert_eq!(check(None, Some(&stale_start), true, true), Action::Nothing);
        let Action::Update(updated) = check(Some(&start), Some(&stale_start), false, true) else {
            panic!("an update")
        };
        assert_eq!(updated["spec"]["groupPriorityMinimum"], 17800);
        assert_eq!(updated["metadata"]["resourceVersion"], "7");
        assert_eq!(
            check(Some(&always), Some(&stale_start), true, true),
            Action::Nothing
        );
        // Sync always: deleted when not wanted, updated when it differs.
        assert_eq!(check(None, Some(&stale_always), true, true), delete);
        assert!(matches!(
            check(Some(&always), Some(&stale_always), true, false),
            Action::Update(_)
        ));
        assert_eq!(
            check(Some(&start), Some(&stale_always), true, true),
            Action::Nothing
        );
        assert_eq!(
            check(Some(&always), Some(&always), true, true),
            Action::Nothing
        );
    }

    #[test]
    fn zero_values_and_absent_fields_are_the_same_spec() {
        let a = json!({"spec": {"group": "", "version": "v1", "groupPriorityMinimum": 18000,
            "versionPriority": 1, "insecureSkipTLSVerify": false, "service": null}});
        let b = json!({"spec": {"version": "v1", "groupPriorityMinimum": 18000,
            "versionPriority": 1}});
        assert!(same_spec(&a, &b));
        let c = json!({"spec": {"version": "v1", "groupPriorityMinimum": 18000,
            "versionPriority": 1, "insecureSkipTLSVerify": true}});
        assert!(!same_spec(&a, &c));
    }
}
