//! Upstream's `pkg/registry/authorization/util`: the authorizer's attributes from a review's
//! spec, and the status from its decision. Selectors (`AuthorizeWithSelectors`, beta and on
//! in 1.33) are parsed as upstream parses them: what upstream keeps reaches the authorizers
//! (kas-auth's `Attributes` carry selectors in their raw form; kept structured requirements
//! are written back in that form, which parses to the same requirements), and the parse
//! errors show in `status.evaluationError` as upstream reports them.

use std::collections::BTreeMap;

use kas_apimachinery::fields;
use kas_apimachinery::labels::{self, Requirement};
use kas_apimachinery::selection::Operator;
use kas_auth::UserInfo;
use kas_auth::authorization::{Attributes, Decision, DynAuthorizer};
use serde_json::{Value, json};

use crate::podspec::validation::json::{arr, obj, str_of, strings};

/// Upstream's `ResourceAttributesFrom`: `version` `""` asks for every version (`*`).
pub(crate) fn resource_attributes_from(user: UserInfo, ra: &Value) -> Attributes {
    let version = str_of(ra, "version");
    Attributes {
        user,
        verb: str_of(ra, "verb").to_owned(),
        is_resource_request: true,
        path: String::new(),
        namespace: str_of(ra, "namespace").to_owned(),
        api_group: str_of(ra, "group").to_owned(),
        api_version: if version.is_empty() { "*" } else { version }.to_owned(),
        resource: str_of(ra, "resource").to_owned(),
        subresource: str_of(ra, "subresource").to_owned(),
        name: str_of(ra, "name").to_owned(),
        field_selector: obj(ra, "fieldSelector")
            .map(|sel| field_selector(sel).1)
            .unwrap_or_default(),
        label_selector: obj(ra, "labelSelector")
            .map(|sel| label_selector(sel).1)
            .unwrap_or_default(),
    }
}

/// Upstream's `NonResourceAttributesFrom`.
pub(crate) fn non_resource_attributes_from(user: UserInfo, nra: &Value) -> Attributes {
    Attributes {
        user,
        verb: str_of(nra, "verb").to_owned(),
        is_resource_request: false,
        path: str_of(nra, "path").to_owned(),
        ..Attributes::default()
    }
}

/// The attributes of `user` doing what a spec's `resourceAttributes` or
/// `nonResourceAttributes` say (validation made sure one is there).
pub(crate) fn attributes_for(user: UserInfo, spec: &Value) -> Attributes {
    match obj(spec, "resourceAttributes") {
        Some(ra) => resource_attributes_from(user, ra),
        None => {
            let nra = obj(spec, "nonResourceAttributes").unwrap_or(&Value::Null);
            non_resource_attributes_from(user, nra)
        }
    }
}

/// Upstream's `AuthorizationAttributesFrom`: the user a (Local)SubjectAccessReview names.
pub(crate) fn user_from_spec(spec: &Value) -> UserInfo {
    let extra: BTreeMap<String, Vec<String>> = spec
        .get("extra")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let values = v.as_array().map(Vec::as_slice).unwrap_or(&[]);
                    let values = values.iter().map(|x| x.as_str().unwrap_or("").to_owned());
                    (k.clone(), values.collect())
                })
                .collect()
        })
        .unwrap_or_default();
    UserInfo {
        name: str_of(spec, "user").to_owned(),
        uid: str_of(spec, "uid").to_owned(),
        groups: strings(spec, "groups")
            .into_iter()
            .map(str::to_owned)
            .collect(),
        extra,
    }
}

/// Asks the authorizer and answers the review's status, as upstream's reviews fill it:
/// `allowed`/`denied` from the decision, the reason, and `evaluationError` from the
/// authorizer's error and the selectors' parse errors (`BuildEvaluationError`).
pub(crate) async fn decide(authorizer: &DynAuthorizer, attrs: &Attributes, spec: &Value) -> Value {
    let (decision, reason, error) = match authorizer.authorize(attrs).await {
        Ok((decision, reason)) => (decision, reason, None),
        // A webhook whose failure policy is Deny: denied, with its error.
        Err(kas_auth::Error::DeniedOnError(err)) => {
            (Decision::Deny, String::new(), Some(err.to_string()))
        }
        Err(err) => (Decision::NoOpinion, String::new(), Some(err.to_string())),
    };
    let mut errors: Vec<String> = error.into_iter().collect();
    if let Some(ra) = obj(spec, "resourceAttributes") {
        errors.extend(selector_errors(ra));
    }
    json!({
        "allowed": decision == Decision::Allow,
        "denied": decision == Decision::Deny,
        "reason": reason,
        "evaluationError": errors.join("; "),
    })
}

/// The access reviews' answer: the review with the status of asking `authorizer` about
/// `user` (`None`: the user the spec names) doing what the spec says.
pub(crate) async fn answer_access(
    authorizer: &DynAuthorizer,
    review: Value,
    user: Option<UserInfo>,
    schema: &'static kas_apimachinery::schema::Message,
) -> Value {
    let spec = review.get("spec").cloned().unwrap_or_default();
    let user = user.unwrap_or_else(|| user_from_spec(&spec));
    let status = decide(authorizer, &attributes_for(user, &spec), &spec).await;
    super::answer(review, status, schema)
}

/// How a selector fared when upstream turned it into requirements.
#[derive(Debug, PartialEq, Eq)]
enum Parsed {
    Fine,
    /// Some requirements were kept.
    Partly,
    /// None were.
    Ignored,
}

/// `BuildEvaluationError`'s part for the selectors: the field selector, then the label one.
fn selector_errors(ra: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut note = |which: &str, parsed: Parsed| match parsed {
        Parsed::Fine => {}
        Parsed::Partly => out.push(format!(
            "spec.resourceAttributes.{which} partially ignored due to parse error"
        )),
        Parsed::Ignored => out.push(format!(
            "spec.resourceAttributes.{which} ignored due to parse error"
        )),
    };
    if let Some(sel) = obj(ra, "fieldSelector") {
        note("fieldSelector", field_selector(sel).0);
    }
    if let Some(sel) = obj(ra, "labelSelector") {
        note("labelSelector", label_selector(sel).0);
    }
    out
}

/// Upstream's field selector handling in `ResourceAttributesFrom`: the raw selector parsed,
/// else the requirements (`fieldSelectorAsSelector`: `In` and `NotIn` of one value, as `=`
/// and `!=`); how that went, and what was kept in the raw form.
fn field_selector(sel: &Value) -> (Parsed, String) {
    let raw = str_of(sel, "rawSelector");
    let mut parsed = (Parsed::Fine, String::new());
    if !raw.is_empty() {
        parsed = match fields::parse_selector(raw) {
            Ok(_) => (Parsed::Fine, raw.to_owned()),
            Err(_) => (Parsed::Ignored, String::new()),
        };
    }
    let reqs = arr(sel, "requirements");
    if !reqs.is_empty() {
        let kept: Vec<String> = reqs
            .iter()
            .filter_map(|r| {
                let [value] = arr(r, "values") else {
                    return None;
                };
                let op = match str_of(r, "operator") {
                    "In" => "=",
                    "NotIn" => "!=",
                    _ => return None,
                };
                let value = fields::escape_value(value.as_str().unwrap_or_default());
                Some(format!("{}{op}{value}", str_of(r, "key")))
            })
            .collect();
        parsed = (outcome(kept.len(), reqs.len()), kept.join(","));
    }
    parsed
}

/// Upstream's label selector handling: `labels.Parse` of the raw selector, else
/// `labelSelectorAsSelector` of the requirements; how that went, and what was kept in the
/// raw form.
fn label_selector(sel: &Value) -> (Parsed, String) {
    let raw = str_of(sel, "rawSelector");
    let mut parsed = (Parsed::Fine, String::new());
    if !raw.is_empty() {
        parsed = match labels::parse(raw) {
            Ok(_) => (Parsed::Fine, raw.to_owned()),
            Err(_) => (Parsed::Ignored, String::new()),
        };
    }
    let reqs = arr(sel, "requirements");
    if !reqs.is_empty() {
        let kept: Vec<String> = reqs
            .iter()
            .filter_map(|r| label_requirement(r).map(|r| r.to_string()))
            .collect();
        parsed = (outcome(kept.len(), reqs.len()), kept.join(","));
    }
    parsed
}

/// One `LabelSelectorRequirement` as `labels.NewRequirement` takes it; `None` on an error.
fn label_requirement(req: &Value) -> Option<Requirement> {
    let op = match str_of(req, "operator") {
        "In" => Operator::In,
        "NotIn" => Operator::NotIn,
        "Exists" => Operator::Exists,
        "DoesNotExist" => Operator::DoesNotExist,
        _ => return None,
    };
    let values = strings(req, "values").into_iter().map(str::to_owned);
    Requirement::new(str_of(req, "key"), op, values.collect()).ok()
}

fn outcome(ok: usize, all: usize) -> Parsed {
    match ok {
        n if n == all => Parsed::Fine,
        0 => Parsed::Ignored,
        _ => Parsed::Partly,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_attributes_match_upstream() {
        let ra = json!({
            "namespace": "myns", "verb": "create", "group": "extensions",
            "resource": "deployments", "subresource": "scale", "name": "mydeployment"
        });
        let user = UserInfo {
            name: "bob".into(),
            ..UserInfo::default()
        };
        let attrs = resource_attributes_from(user.clone(), &ra);
        assert_eq!(
            attrs,
            Attributes {
                user,
                verb: "create".into(),
                is_resource_request: true,
                path: String::new(),
                namespace: "myns".into(),
                api_group: "extensions".into(),
                api_version: "*".into(),
                resource: "deployments".into(),
                subresource: "scale".into(),
                name: "mydeployment".into(),
                field_selector: String::new(),
                label_selector: String::new(),
            }
        );
        let spec = json!({"user": "u", "uid": "1", "groups": ["g"], "extra": {"k": ["v"]},
            "nonResourceAttributes": {"path": "/mypath", "verb": "get"}});
        let attrs = attributes_for(user_from_spec(&spec), &spec);
        assert!(!attrs.is_resource_request);
        assert_eq!(
            (attrs.path.as_str(), attrs.verb.as_str()),
            ("/mypath", "get")
        );
        assert_eq!(attrs.user.extra["k"], vec!["v".to_owned()]);
        assert_eq!((attrs.user.uid.as_str(), attrs.user.groups.len()), ("1", 1));
    }

    #[test]
    fn kept_selectors_reach_the_authorizers_in_their_raw_form() {
        let attrs = |ra: Value| resource_attributes_from(UserInfo::default(), &ra);
        let raw = attrs(json!({
            "fieldSelector": {"rawSelector": "spec.nodeName=n1"},
            "labelSelector": {"rawSelector": "app in (a,b),!tier"}
        }));
        assert_eq!(
            (raw.field_selector.as_str(), raw.label_selector.as_str()),
            ("spec.nodeName=n1", "app in (a,b),!tier")
        );
        // Requirements win over the raw form; the ones upstream drops are dropped.
        let structured = attrs(json!({
            "fieldSelector": {"rawSelector": "a=b", "requirements": [
                {"key": "spec.nodeName", "operator": "In", "values": ["n,1"]},
                {"key": "metadata.name", "operator": "NotIn", "values": ["x"]},
                {"key": "x", "operator": "Exists"},
                {"key": "y", "operator": "In", "values": ["1", "2"]}
            ]},
            "labelSelector": {"requirements": [
                {"key": "app", "operator": "In", "values": ["b", "a"]},
                {"key": "tier", "operator": "DoesNotExist"},
                {"key": "bad key", "operator": "Exists"}
            ]}
        }));
        assert_eq!(
            structured.field_selector,
            "spec.nodeName=n\\,1,metadata.name!=x"
        );
        assert_eq!(structured.label_selector, "app in (a,b),!tier");
        let parsed = fields::parse_selector(&structured.field_selector).unwrap();
        assert_eq!(parsed.requires_exact_match("spec.nodeName"), Some("n,1"));
        let bad = attrs(json!({"fieldSelector": {"rawSelector": "a in (b)"}}));
        assert_eq!(bad.field_selector, "");
    }

    #[test]
    fn selector_parse_errors_as_build_evaluation_error_writes_them() {
        let ra = |f: Value, l: Value| json!({"fieldSelector": f, "labelSelector": l});
        let fine = ra(
            json!({"requirements": [{"key": "a", "operator": "In", "values": ["x"]}]}),
            json!({"rawSelector": "a in (b)"}),
        );
        assert!(selector_errors(&fine).is_empty());
        let bad = ra(
            json!({"requirements": [
                {"key": "a", "operator": "In", "values": ["x"]},
                {"key": "b", "operator": "Exists"}
            ]}),
            json!({"rawSelector": "a in (b"}),
        );
        assert_eq!(
            selector_errors(&bad),
            vec![
                "spec.resourceAttributes.fieldSelector partially ignored due to parse error",
                "spec.resourceAttributes.labelSelector ignored due to parse error",
            ]
        );
        let labels = ra(
            json!({"rawSelector": "a"}),
            json!({"requirements": [{"key": "-bad", "operator": "In", "values": ["x"]},
                                    {"key": "k", "operator": "Gt", "values": ["1"]}]}),
        );
        assert_eq!(
            selector_errors(&labels),
            vec![
                "spec.resourceAttributes.fieldSelector ignored due to parse error",
                "spec.resourceAttributes.labelSelector ignored due to parse error",
            ]
        );
    }
}
