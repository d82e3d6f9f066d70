//! Asks authorizers in order, after upstream's `authorization/union`.

use futures_util::future::BoxFuture;

use super::{
    Attributes, Authorizer, Decision, DynAuthorizer, DynRuleResolver, RuleResolver, RulesInfo,
};
use crate::{Error, Result, UserInfo};

/// The first Allow or Deny wins, with its own reason (a Deny with an error,
/// [`Error::DeniedOnError`], wins with its error). When everyone has no opinion, the
/// reasons are joined with newlines; errors are then returned, aggregated (an error from
/// an authorizer counts as no opinion until the end, as upstream's filter lets an Allow
/// override errors).
pub struct Union {
    authorizers: Vec<DynAuthorizer>,
}

impl Union {
    pub fn new(authorizers: Vec<DynAuthorizer>) -> Self {
        Union { authorizers }
    }
}

impl Authorizer for Union {
    fn authorize<'a>(&'a self, attrs: &'a Attributes) -> BoxFuture<'a, Result<(Decision, String)>> {
        Box::pin(async move {
            let mut errs = Vec::new();
            let mut reasons = Vec::new();
            for authorizer in &self.authorizers {
                match authorizer.authorize(attrs).await {
                    Ok((decision @ (Decision::Allow | Decision::Deny), reason)) => {
                        return Ok((decision, reason));
                    }
                    Ok((Decision::NoOpinion, reason)) => {
                        if !reason.is_empty() {
                            reasons.push(reason);
                        }
                    }
                    // Upstream's Deny with an error: the first decision wins.
                    Err(err @ Error::DeniedOnError(_)) => return Err(err),
                    Err(err) => errs.push(err),
                }
            }
            match Error::aggregate(errs) {
                Some(err) => Err(err),
                None => Ok((Decision::NoOpinion, reasons.join("\n"))),
            }
        })
    }
}

/// Upstream's `unionAuthzRulesHandler`.
pub struct UnionRuleResolver(pub Vec<DynRuleResolver>);

impl RuleResolver for UnionRuleResolver {
    fn rules_for<'a>(&'a self, user: &'a UserInfo, namespace: &'a str) -> BoxFuture<'a, RulesInfo> {
        Box::pin(async move {
            let mut all = RulesInfo::default();
            let mut errors = Vec::new();
            for resolver in &self.0 {
                let rules = resolver.rules_for(user, namespace).await;
                all.resource_rules.extend(rules.resource_rules);
                all.non_resource_rules.extend(rules.non_resource_rules);
                all.incomplete |= rules.incomplete;
                if !rules.evaluation_error.is_empty() {
                    errors.push(rules.evaluation_error);
                }
            }
            // Upstream's utilerrors aggregate: one error bare, several in brackets.
            all.evaluation_error = match errors.len() {
                0 | 1 => errors.pop().unwrap_or_default(),
                _ => format!("[{}]", errors.join(", ")),
            };
            all
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    struct Fixed(Result<(Decision, &'static str), &'static str>);

    impl Authorizer for Fixed {
        fn authorize<'a>(&'a self, _: &'a Attributes) -> BoxFuture<'a, Result<(Decision, String)>> {
            let out = match self.0 {
                Ok((d, r)) => Ok((d, r.to_owned())),
                Err(e) => Err(Error::InvalidCredentials(e.to_owned())),
            };
            Box::pin(std::future::ready(out))
        }
    }

    fn union(parts: Vec<Result<(Decision, &'static str), &'static str>>) -> Union {
        Union::new(
            parts
                .into_iter()
                .map(|p| Arc::new(Fixed(p)) as DynAuthorizer)
                .collect(),
        )
    }

    async fn run(u: &Union) -> Result<(Decision, String)> {
        u.authorize(&Attributes::default()).await
    }

    #[tokio::test]
    async fn first_decision_wins_with_its_own_reason() {
        let u = union(vec![
            Ok((Decision::NoOpinion, "a")),
            Ok((Decision::Deny, "denied")),
            Ok((Decision::Allow, "")),
        ]);
        assert_eq!(
            run(&u).await.unwrap(),
            (Decision::Deny, "denied".to_owned())
        );
        let u = union(vec![Err("boom"), Ok((Decision::Allow, "ok"))]);
        assert_eq!(run(&u).await.unwrap(), (Decision::Allow, "ok".to_owned()));
    }

    #[tokio::test]
    async fn no_opinion_joins_reasons() {
        let u = union(vec![
            Ok((Decision::NoOpinion, "first")),
            Ok((Decision::NoOpinion, "")),
            Ok((Decision::NoOpinion, "second")),
        ]);
        assert_eq!(
            run(&u).await.unwrap(),
            (Decision::NoOpinion, "first\nsecond".to_owned())
        );
        assert_eq!(
            run(&union(Vec::new())).await.unwrap(),
            (Decision::NoOpinion, String::new())
        );
    }

    struct DeniesOnError;

    impl Authorizer for DeniesOnError {
        fn authorize<'a>(&'a self, _: &'a Attributes) -> BoxFuture<'a, Result<(Decision, String)>> {
            let err = Error::DeniedOnError(Box::new(Error::Webhook("hook down".into())));
            Box::pin(std::future::ready(Err(err)))
        }
    }

    #[tokio::test]
    async fn a_deny_with_an_error_stops_the_union_with_only_its_error() {
        let u = Union::new(vec![
            Arc::new(Fixed(Err("earlier"))),
            Arc::new(DeniesOnError),
            Arc::new(Fixed(Ok((Decision::Allow, "")))),
        ]);
        let err = run(&u).await.unwrap_err();
        assert!(matches!(err, Error::DeniedOnError(_)));
        assert_eq!(err.to_string(), "hook down");
    }

    #[tokio::test]
    async fn errors_surface_when_nobody_decides() {
        let u = union(vec![Err("one"), Ok((Decision::NoOpinion, "x")), Err("two")]);
        assert_eq!(run(&u).await.unwrap_err().to_string(), "[one, two]");
    }
}
