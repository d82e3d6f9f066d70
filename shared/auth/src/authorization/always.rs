//! Upstream's `authorizerfactory` AlwaysAllow and AlwaysDeny.

use futures_util::future::BoxFuture;

use super::{
    Attributes, Authorizer, Decision, NonResourceRuleInfo, ResourceRuleInfo, RuleResolver,
    RulesInfo,
};
use crate::{Result, UserInfo};

/// `--authorization-mode=AlwaysAllow`: allows everything, with no reason.
#[derive(Clone, Copy, Debug, Default)]
pub struct AlwaysAllow;

impl Authorizer for AlwaysAllow {
    fn authorize<'a>(&'a self, _: &'a Attributes) -> BoxFuture<'a, Result<(Decision, String)>> {
        Box::pin(std::future::ready(Ok((Decision::Allow, String::new()))))
    }
}

/// Upstream's `alwaysAllowAuthorizer.RulesFor`: everything, on every resource and URL.
impl RuleResolver for AlwaysAllow {
    fn rules_for<'a>(&'a self, _: &'a UserInfo, _: &'a str) -> BoxFuture<'a, RulesInfo> {
        let all = || vec!["*".to_owned()];
        Box::pin(std::future::ready(RulesInfo {
            resource_rules: vec![ResourceRuleInfo {
                verbs: all(),
                api_groups: all(),
                resources: all(),
                resource_names: Vec::new(),
            }],
            non_resource_rules: vec![NonResourceRuleInfo {
                verbs: all(),
                non_resource_urls: all(),
            }],
            ..RulesInfo::default()
        }))
    }
}

/// `--authorization-mode=AlwaysDeny`. As upstream, it has no opinion rather than denying,
/// so later authorizers still get their say; the reason ends up in the 403.
#[derive(Clone, Copy, Debug, Default)]
pub struct AlwaysDeny;

impl Authorizer for AlwaysDeny {
    fn authorize<'a>(&'a self, _: &'a Attributes) -> BoxFuture<'a, Result<(Decision, String)>> {
        let reason = "Everything is forbidden.".to_owned();
        Box::pin(std::future::ready(Ok((Decision::NoOpinion, reason))))
    }
}

/// Upstream's `alwaysDenyAuthorizer.RulesFor`: nothing.
impl RuleResolver for AlwaysDeny {
    fn rules_for<'a>(&'a self, _: &'a UserInfo, _: &'a str) -> BoxFuture<'a, RulesInfo> {
        Box::pin(std::future::ready(RulesInfo::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn always_allow_allows_without_reason() {
        let got = AlwaysAllow.authorize(&Attributes::default()).await.unwrap();
        assert_eq!(got, (Decision::Allow, String::new()));
    }

    #[tokio::test]
    async fn always_deny_has_no_opinion_with_reason() {
        let got = AlwaysDeny.authorize(&Attributes::default()).await.unwrap();
        assert_eq!(
            got,
            (Decision::NoOpinion, "Everything is forbidden.".to_owned())
        );
    }
}
