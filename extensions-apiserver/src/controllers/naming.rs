//! Upstream's `NamingConditionController`: a CRD's requested names are accepted unless
//! another CRD of its group already holds them (`"x" is already in use`), and the
//! NamesAccepted and Established conditions say so.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::crd::conditions::{self, Condition};

/// The CRD with its accepted names and conditions when they change; `None` when the
/// requested names are already the accepted ones.
pub fn sync(crd: &Value, all: &kas_registry::store::informer::Objects) -> Option<Value> {
    let requested = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
    let accepted = crd
        .pointer("/status/acceptedNames")
        .cloned()
        .unwrap_or(json!({}));
    if same_names(&requested, &accepted) {
        return None;
    }
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("");
    let (resources, kinds) = names_in_group(all, group);
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let list = |v: &Value, k: &str| -> Vec<String> {
        v.get(k)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    };
    let mut new_names = accepted.as_object().cloned().unwrap_or_default();
    let mut failure: Option<(&str, String)> = None;
    for (key, reason, used) in [
        ("plural", "PluralConflict", &resources),
        ("singular", "SingularConflict", &resources),
    ] {
        match fresh(&s(&requested, key), &s(&accepted, key), used) {
            Ok(()) => {
                new_names.insert(key.into(), json!(s(&requested, key)));
            }
            Err(e) => failure = Some((reason, e)),
        }
    }
    let (want_short, have_short) = (
        list(&requested, "shortNames"),
        list(&accepted, "shortNames"),
    );
    if want_short != have_short {
        let errs: Vec<String> = want_short
            .iter()
            .filter(|n| !have_short.contains(n))
            .filter_map(|n| fresh(n, "", &resources).err())
            .collect();
        if errs.is_empty() {
            new_names.insert("shortNames".into(), json!(want_short));
        } else {
            failure = Some(("ShortNamesConflict", aggregate(&errs)));
        }
    }
    for (key, reason) in [("kind", "KindConflict"), ("listKind", "ListKindConflict")] {
        match fresh(&s(&requested, key), &s(&accepted, key), &kinds) {
            Ok(()) => {
                new_names.insert(key.into(), json!(s(&requested, key)));
            }
            Err(e) => failure = Some((reason, e)),
        }
    }
    match requested.get("categories") {
        Some(c) => new_names.insert("categories".into(), c.clone()),
        None => new_names.remove("categories"),
    };
    let new_names: serde_json::Map<String, Value> = new_names
        .into_iter()
        .filter(|(_, v)| {
            !v.is_null() && v.as_str() != Some("") && v.as_array().is_none_or(|a| !a.is_empty())
        })
        .collect();
    let mut updated = crd.clone();
    updated["status"]["acceptedNames"] = Value::Object(new_names);
    let accepted_ok = failure.is_none();
    let (reason, message) = failure.unwrap_or(("NoConflicts", "no conflicts found".into()));
    conditions::set(
        &mut updated,
        Condition::new(
            conditions::NAMES_ACCEPTED,
            if accepted_ok { "True" } else { "False" },
            reason,
            &message,
        ),
    );
    let established = conditions::is_true(crd, conditions::ESTABLISHED);
    if !established {
        let (reason, message) = if accepted_ok {
            ("Installing", "the initial names have been accepted")
        } else {
            ("NotAccepted", "not all names are accepted")
        };
        if accepted_ok || conditions::find(crd, conditions::ESTABLISHED).is_none() {
            conditions::set(
                &mut updated,
                Condition::new(conditions::ESTABLISHED, "False", reason, message),
            );
        }
    }
    Some(updated)
}

/// Spec and accepted names compared as upstream's semantic equality does (absent and
/// empty lists alike).
fn same_names(a: &Value, b: &Value) -> bool {
    let norm = |v: &Value| -> serde_json::Map<String, Value> {
        v.as_object()
            .into_iter()
            .flatten()
            .filter(|(_, v)| {
                !v.is_null() && v.as_str() != Some("") && v.as_array().is_none_or(|a| !a.is_empty())
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    norm(a) == norm(b)
}

/// Upstream's `getAcceptedNamesForGroup`: the resource names and kinds the group's CRDs
/// (this one included) hold.
fn names_in_group(
    all: &kas_registry::store::informer::Objects,
    group: &str,
) -> (HashSet<String>, HashSet<String>) {
    let mut resources = HashSet::new();
    let mut kinds = HashSet::new();
    for crd in all.values() {
        if crd.pointer("/spec/group").and_then(Value::as_str) != Some(group) {
            continue;
        }
        let names = crd.pointer("/status/acceptedNames").unwrap_or(&Value::Null);
        let s = |k: &str| {
            names
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        resources.insert(s("plural"));
        resources.insert(s("singular"));
        for short in names
            .get("shortNames")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            resources.insert(short.as_str().unwrap_or("").to_owned());
        }
        kinds.insert(s("kind"));
        kinds.insert(s("listKind"));
    }
    (resources, kinds)
}

/// Upstream's `equalToAcceptedOrFresh`.
fn fresh(requested: &str, accepted: &str, used: &HashSet<String>) -> Result<(), String> {
    if requested == accepted || !used.contains(requested) {
        return Ok(());
    }
    Err(format!(
        "{} is already in use",
        kas_apimachinery::golang::strconv::quote(requested)
    ))
}

/// `utilerrors.NewAggregate(errs).Error()`.
fn aggregate(errs: &[String]) -> String {
    match errs {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    fn crd(name: &str, plural: &str, kind: &str, accepted: bool) -> Value {
        let names = json!({"plural": plural, "singular": plural.trim_end_matches('s'), "kind": kind, "listKind": format!("{kind}List")});
        json!({"metadata": {"name": format!("{plural}.{name}")},
            "spec": {"group": name, "names": names},
            "status": if accepted { json!({"acceptedNames": names}) } else { json!({}) }})
    }

    #[test]
    fn accepts_fresh_names_and_refuses_taken_ones() {
        let mut all = BTreeMap::new();
        all.insert(
            "widgets.example.com".to_owned(),
            crd("example.com", "widgets", "Widget", true),
        );
        let new = crd("example.com", "gadgets", "Widget", false);
        all.insert("gadgets.example.com".to_owned(), new.clone());
        let all = Arc::new(all);
        let updated = sync(&new, &all).unwrap();
        let cond = conditions::find(&updated, conditions::NAMES_ACCEPTED).unwrap();
        assert_eq!(cond["status"], "False");
        assert_eq!(cond["reason"], "ListKindConflict");
        assert_eq!(cond["message"], "\"WidgetList\" is already in use");
        assert_eq!(updated["status"]["acceptedNames"]["plural"], "gadgets");
        assert!(updated["status"]["acceptedNames"].get("kind").is_none());
        let est = conditions::find(&updated, conditions::ESTABLISHED).unwrap();
        assert_eq!(
            (est["status"].as_str(), est["reason"].as_str()),
            (Some("False"), Some("NotAccepted"))
        );

        let fine = crd("example.com", "gizmos", "Gizmo", false);
        let updated = sync(&fine, &all).unwrap();
        let cond = conditions::find(&updated, conditions::NAMES_ACCEPTED).unwrap();
        assert_eq!(
            (cond["status"].as_str(), cond["reason"].as_str()),
            (Some("True"), Some("NoConflicts"))
        );
        let est = conditions::find(&updated, conditions::ESTABLISHED).unwrap();
        assert_eq!(est["reason"], "Installing");
        // Once accepted, nothing more to do.
        assert!(sync(&updated, &all).is_none());
    }
}
