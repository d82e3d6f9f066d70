//! Authorizers: decide whether a user may do what a request asks.

pub mod always;
pub mod config;
pub mod privileged_group;
pub mod union;

use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::user::SYSTEM_PRIVILEGED_GROUP;
use crate::{Error, Result, UserInfo};

pub use always::{AlwaysAllow, AlwaysDeny};
pub use privileged_group::PrivilegedGroups;
pub use union::Union;

/// Upstream's `authorizer.Attributes`, built from `RequestInfo` and `UserInfo`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attributes {
    pub user: UserInfo,
    pub verb: String,
    pub is_resource_request: bool,
    pub path: String,
    pub namespace: String,
    pub api_group: String,
    pub api_version: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    /// The request's `fieldSelector`, as sent (decoded from the query); empty without one.
    /// Upstream's `AuthorizeWithSelectors` (beta, on in 1.33) parses it for the authorizers
    /// that look (the Node authorizer, for kubelets' lists of their pods).
    pub field_selector: String,
    /// The request's `labelSelector`, as sent; empty without one (the webhook authorizer
    /// passes it on, as upstream's `AuthorizeWithSelectors`).
    pub label_selector: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny,
    NoOpinion,
}

/// Upstream's `authorizer.Authorizer`: a decision and a reason.
pub trait Authorizer: Send + Sync {
    fn authorize<'a>(&'a self, attrs: &'a Attributes) -> BoxFuture<'a, Result<(Decision, String)>>;
}

pub type DynAuthorizer = Arc<dyn Authorizer>;

/// Upstream's `authorizer.DefaultResourceRuleInfo`: what a user may do to resources.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceRuleInfo {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
}

/// Upstream's `authorizer.DefaultNonResourceRuleInfo`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NonResourceRuleInfo {
    pub verbs: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

/// What [`RuleResolver::rules_for`] answers: the rules, and whether they may be incomplete
/// (some binding's role was missing), with the evaluation errors joined as upstream's
/// `SelfSubjectRulesReview` reports them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RulesInfo {
    pub resource_rules: Vec<ResourceRuleInfo>,
    pub non_resource_rules: Vec<NonResourceRuleInfo>,
    pub incomplete: bool,
    pub evaluation_error: String,
}

/// Upstream's `authorizer.RuleResolver`: the rules a user has in a namespace (`""`: the
/// cluster-wide ones only).
pub trait RuleResolver: Send + Sync {
    fn rules_for<'a>(&'a self, user: &'a UserInfo, namespace: &'a str) -> BoxFuture<'a, RulesInfo>;
}

pub type DynRuleResolver = Arc<dyn RuleResolver>;

pub const MODE_ALWAYS_ALLOW: &str = "AlwaysAllow";
pub const MODE_ALWAYS_DENY: &str = "AlwaysDeny";
pub const MODE_RBAC: &str = "RBAC";
pub const MODE_NODE: &str = "Node";
pub const MODE_WEBHOOK: &str = "Webhook";
/// Modes kube-apiserver has that this server does not implement yet.
const MODES_NOT_SUPPORTED: &[&str] = &["ABAC"];

/// The authorizers of modes whose state a role keeps itself (RBAC's index of roles and
/// bindings, fed by a watch): the role builds them and [`build`] places them in order.
#[derive(Clone, Default)]
pub struct ModeAuthorizers {
    pub rbac: Option<DynAuthorizer>,
    /// RBAC's rules, for SelfSubjectRulesReview.
    pub rbac_rules: Option<DynRuleResolver>,
    /// The Node authorizer (over its graph of pods and what they use) and its rules.
    pub node: Option<DynAuthorizer>,
    pub node_rules: Option<DynRuleResolver>,
    /// The webhook authorizer of `--authorization-webhook-config-file` and its rules
    /// (always incomplete, as upstream's).
    pub webhook: Option<DynAuthorizer>,
    pub webhook_rules: Option<DynRuleResolver>,
}

/// Upstream's union of the modes' rule resolvers (`authorizer.Config.New`'s second
/// result): each mode's rules in order, concatenated; incomplete when any is, their
/// evaluation errors joined. A mode without rules here (none yet) adds nothing.
pub fn build_rule_resolver(modes: &[String], provided: &ModeAuthorizers) -> DynRuleResolver {
    let resolvers = modes
        .iter()
        .filter_map(|mode| -> Option<DynRuleResolver> {
            match mode.as_str() {
                MODE_ALWAYS_ALLOW => Some(Arc::new(AlwaysAllow)),
                MODE_ALWAYS_DENY => Some(Arc::new(AlwaysDeny)),
                MODE_RBAC => provided.rbac_rules.clone(),
                MODE_NODE => provided.node_rules.clone(),
                MODE_WEBHOOK => provided.webhook_rules.clone(),
                _ => None,
            }
        })
        .collect();
    Arc::new(union::UnionRuleResolver(resolvers))
}

/// Builds the authorizer for `--authorization-mode`, as upstream's
/// `authorizer.Config.New`: the `system:masters` authorizer first, then each mode in order,
/// all in a union.
pub fn build(modes: &[String], provided: &ModeAuthorizers) -> Result<DynAuthorizer> {
    let config_err = |message: String| Error::Config {
        what: "authorization mode",
        path: modes.join(","),
        message,
    };
    if modes.is_empty() {
        return Err(config_err(
            "at least one authorization mode must be passed".to_owned(),
        ));
    }
    let mut authorizers: Vec<DynAuthorizer> = vec![Arc::new(PrivilegedGroups::new(vec![
        SYSTEM_PRIVILEGED_GROUP.to_owned(),
    ]))];
    for mode in modes {
        let authorizer: DynAuthorizer = match mode.as_str() {
            MODE_ALWAYS_ALLOW => Arc::new(AlwaysAllow),
            MODE_ALWAYS_DENY => Arc::new(AlwaysDeny),
            MODE_RBAC => match &provided.rbac {
                Some(rbac) => rbac.clone(),
                None => {
                    return Err(config_err(
                        "authorization mode \"RBAC\" needs etcd (--etcd-servers) to watch roles and bindings".to_owned(),
                    ));
                }
            },
            MODE_NODE => match &provided.node {
                Some(node) => node.clone(),
                None => {
                    return Err(config_err(
                        "authorization mode \"Node\" needs etcd (--etcd-servers) to follow pods and what they use".to_owned(),
                    ));
                }
            },
            MODE_WEBHOOK => match &provided.webhook {
                Some(webhook) => webhook.clone(),
                None => {
                    return Err(config_err(
                        "authorization-mode Webhook's authorization config file not passed"
                            .to_owned(),
                    ));
                }
            },
            m if MODES_NOT_SUPPORTED.contains(&m) => {
                return Err(config_err(format!(
                    "authorization mode {m:?} is not supported yet"
                )));
            }
            m => {
                return Err(config_err(format!(
                    "unknown authorization mode {m:?} specified"
                )));
            }
        };
        authorizers.push(authorizer);
    }
    Ok(Arc::new(Union::new(authorizers)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(groups: &[&str]) -> Attributes {
        Attributes {
            user: UserInfo {
                name: "u".into(),
                groups: groups.iter().map(|g| (*g).to_owned()).collect(),
                ..UserInfo::default()
            },
            ..Attributes::default()
        }
    }

    fn build_with(modes: &[String]) -> Result<DynAuthorizer> {
        build(modes, &ModeAuthorizers::default())
    }

    fn modes(m: &[&str]) -> Vec<String> {
        m.iter().map(|s| (*s).to_owned()).collect()
    }

    #[tokio::test]
    async fn always_deny_forbids_all_but_system_masters() {
        let a = build_with(&modes(&["AlwaysDeny"])).unwrap();
        let denied = a
            .authorize(&attrs(&["system:authenticated"]))
            .await
            .unwrap();
        assert_eq!(
            denied,
            (Decision::NoOpinion, "Everything is forbidden.".to_owned())
        );
        let masters = a.authorize(&attrs(&["system:masters"])).await.unwrap();
        assert_eq!(masters.0, Decision::Allow);
    }

    #[tokio::test]
    async fn modes_apply_in_order() {
        let a = build_with(&modes(&["AlwaysDeny", "AlwaysAllow"])).unwrap();
        assert_eq!(
            a.authorize(&attrs(&[])).await.unwrap(),
            (Decision::Allow, String::new())
        );
        let a = build_with(&modes(&["AlwaysAllow"])).unwrap();
        assert_eq!(a.authorize(&attrs(&[])).await.unwrap().0, Decision::Allow);
    }

    #[tokio::test]
    async fn rule_resolvers_of_the_modes_are_joined_in_order() {
        let provided = ModeAuthorizers {
            rbac_rules: Some(Arc::new(AlwaysDeny)),
            ..ModeAuthorizers::default()
        };
        let user = UserInfo::default();
        let r = build_rule_resolver(&modes(&["RBAC", "AlwaysAllow"]), &provided);
        let rules = r.rules_for(&user, "ns").await;
        assert_eq!(rules.resource_rules.len(), 1);
        assert_eq!(rules.resource_rules[0].verbs, ["*"]);
        assert_eq!(rules.non_resource_rules[0].non_resource_urls, ["*"]);
        let r = build_rule_resolver(&modes(&["AlwaysDeny"]), &provided);
        assert_eq!(r.rules_for(&user, "ns").await, RulesInfo::default());
    }

    #[test]
    fn unsupported_unknown_and_empty_modes_are_config_errors() {
        for bad in [
            &["RBAC"][..],
            &["AlwaysAllow", "Node"],
            &["Bogus"],
            &[],
            &["ABAC"],
        ] {
            let err = build_with(&modes(bad)).err().unwrap();
            assert!(matches!(err, Error::Config { .. }), "{err}");
        }
        let msg = build_with(&modes(&["ABAC"])).err().unwrap().to_string();
        assert!(msg.contains("not supported yet"), "{msg}");
        let msg = build_with(&modes(&["Webhook"])).err().unwrap().to_string();
        assert!(
            msg.ends_with("authorization-mode Webhook's authorization config file not passed"),
            "{msg}"
        );
        let msg = build_with(&modes(&["RBAC"])).err().unwrap().to_string();
        assert!(msg.contains("needs etcd"), "{msg}");
    }

    #[tokio::test]
    async fn a_provided_webhook_takes_its_place_with_its_rules() {
        let provided = ModeAuthorizers {
            webhook: Some(Arc::new(AlwaysAllow)),
            webhook_rules: Some(Arc::new(AlwaysDeny)),
            ..ModeAuthorizers::default()
        };
        let a = build(&modes(&["AlwaysDeny", "Webhook"]), &provided).unwrap();
        assert_eq!(a.authorize(&attrs(&[])).await.unwrap().0, Decision::Allow);
        let r = build_rule_resolver(&modes(&["Webhook", "AlwaysAllow"]), &provided);
        let rules = r.rules_for(&UserInfo::default(), "ns").await;
        assert_eq!(rules.resource_rules.len(), 1);
    }

    #[tokio::test]
    async fn a_provided_rbac_authorizer_takes_its_place_in_the_order() {
        let provided = ModeAuthorizers {
            rbac: Some(Arc::new(AlwaysAllow)),
            ..ModeAuthorizers::default()
        };
        let a = build(&modes(&["AlwaysDeny", "RBAC"]), &provided).unwrap();
        assert_eq!(a.authorize(&attrs(&[])).await.unwrap().0, Decision::Allow);
        let a = build(&modes(&["AlwaysDeny"]), &provided).unwrap();
        assert_eq!(
            a.authorize(&attrs(&[])).await.unwrap().0,
            Decision::NoOpinion
        );
    }
}
