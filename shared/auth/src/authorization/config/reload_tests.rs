use super::*;
use crate::Error;

const HEADER: &str = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n";

fn attrs(user: &str) -> Attributes {
    Attributes {
        user: UserInfo {
            name: user.into(),
            ..UserInfo::default()
        },
        ..Attributes::default()
    }
}

/// A webhook factory whose authorizers allow the users named in the webhook's name
/// (`allow-alice`), and fail (failurePolicy's way) for `fail-*`.
fn factory() -> WebhookFactory {
    struct Named(String, String);
    impl Authorizer for Named {
        fn authorize<'a>(&'a self, a: &'a Attributes) -> BoxFuture<'a, Result<(Decision, String)>> {
            let out = match self.0.strip_prefix("allow-") {
                Some(user) if user == a.user.name => Ok((Decision::Allow, self.0.clone())),
                Some(_) => Ok((Decision::NoOpinion, self.0.clone())),
                None if self.1 == "Deny" => Err(Error::DeniedOnError(Box::new(Error::Webhook(
                    format!("{} down", self.0),
                )))),
                None => Err(Error::Webhook(format!("{} down", self.0))),
            };
            Box::pin(std::future::ready(out))
        }
    }
    Arc::new(|a: &AuthorizerConfiguration| {
        let policy = a
            .webhook
            .as_ref()
            .map(|w| w.failure_policy.clone())
            .unwrap_or_default();
        let named = Arc::new(Named(a.name.clone(), policy));
        Ok((
            named as DynAuthorizer,
            Arc::new(AlwaysDeny) as DynRuleResolver,
        ))
    })
}

fn webhook(name: &str, policy: &str) -> String {
    format!(
        "- type: Webhook\n  name: {name}\n  webhook:\n    timeout: 5s\n    failurePolicy: {policy}\n    subjectAccessReviewVersion: v1\n    connectionInfo:\n      type: InClusterConfig\n"
    )
}

async fn decide(a: &ReloadableAuthorizer, user: &str) -> Result<(Decision, String)> {
    a.authorize(&attrs(user)).await
}

#[tokio::test]
async fn the_chain_follows_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("authz.yaml");
    let first = format!(
        "{HEADER}authorizers:\n{}- type: AlwaysDeny\n  name: alwaysdeny\n",
        webhook("allow-alice", "NoOpinion")
    );
    std::fs::write(&file, &first).unwrap();
    let config =
        crate::authorization::config::load_and_validate_data(first.as_bytes(), &[]).unwrap();
    let a = ReloadableAuthorizer::new(
        file.clone(),
        first.clone().into_bytes(),
        config,
        ModeAuthorizers::default(),
        factory(),
    )
    .unwrap();
    assert_eq!(decide(&a, "alice").await.unwrap().0, Decision::Allow);
    assert_eq!(
        decide(&a, "bob").await.unwrap(),
        (
            Decision::NoOpinion,
            "allow-alice\nEverything is forbidden.".into()
        )
    );
    assert_eq!(a.check_file(), Reload::Unchanged);

    // A new webhook: bob is allowed, alice no longer.
    let second = format!(
        "{HEADER}authorizers:\n{}- type: AlwaysDeny\n  name: alwaysdeny\n",
        webhook("allow-bob", "NoOpinion")
    );
    std::fs::write(&file, &second).unwrap();
    assert_eq!(a.check_file(), Reload::Reloaded);
    assert_eq!(decide(&a, "bob").await.unwrap().0, Decision::Allow);
    assert_eq!(decide(&a, "alice").await.unwrap().0, Decision::NoOpinion);

    // Invalid files keep the chain: bad YAML, a missing type the server started with.
    std::fs::write(&file, "apiVersion: apiserver.config.k8s.io").unwrap();
    assert!(matches!(a.check_file(), Reload::Failed(e) if e.contains("'Kind' is missing")));
    assert_eq!(
        a.check_file(),
        Reload::Unchanged,
        "the same bad bytes are not reported again"
    );
    std::fs::write(
        &file,
        format!(
            "{HEADER}authorizers:\n{}",
            webhook("allow-alice", "NoOpinion")
        ),
    )
    .unwrap();
    assert_eq!(
        a.check_file(),
        Reload::Failed("missing required types: [AlwaysDeny]".into())
    );
    assert_eq!(decide(&a, "bob").await.unwrap().0, Decision::Allow);

    // A removed file is logged; the chain stays.
    std::fs::remove_file(&file).unwrap();
    assert!(
        matches!(a.check_file(), Reload::Failed(e) if e.ends_with("no such file or directory"))
    );
    assert_eq!(decide(&a, "bob").await.unwrap().0, Decision::Allow);
}

#[tokio::test]
async fn the_reload_task_picks_changes_up() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("authz.yaml");
    let first = format!(
        "{HEADER}authorizers:\n{}",
        webhook("allow-alice", "NoOpinion")
    );
    std::fs::write(&file, &first).unwrap();
    let config =
        crate::authorization::config::load_and_validate_data(first.as_bytes(), &[]).unwrap();
    let a = ReloadableAuthorizer::new(
        file.clone(),
        first.into_bytes(),
        config,
        ModeAuthorizers::default(),
        factory(),
    )
    .unwrap();
    let task = a.run_reload(Duration::from_millis(20));
    std::fs::write(
        &file,
        format!(
            "{HEADER}authorizers:\n{}",
            webhook("allow-bob", "NoOpinion")
        ),
    )
    .unwrap();
    let mut allowed = false;
    for _ in 0..200 {
        if decide(&a, "bob").await.unwrap().0 == Decision::Allow {
            allowed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(allowed, "the new file was not loaded");
    task.abort();
}

#[tokio::test]
async fn failure_policies_decide_whether_the_chain_goes_on() {
    let build = |body: String| {
        let config = crate::authorization::config::load_and_validate_data(
            format!("{HEADER}authorizers:\n{body}").as_bytes(),
            &[],
        )
        .unwrap();
        new_for_config(&config, &ModeAuthorizers::default(), &factory())
            .unwrap()
            .0
    };
    let allow = "- type: AlwaysAllow\n  name: alwaysallow\n";
    let no_opinion = build(format!("{}{allow}", webhook("fail-open", "NoOpinion")));
    assert_eq!(
        no_opinion.authorize(&attrs("bob")).await.unwrap().0,
        Decision::Allow
    );
    let deny = build(format!(
        "{}{}{allow}",
        webhook("fail-open", "NoOpinion"),
        webhook("fail-closed", "Deny")
    ));
    let err = deny.authorize(&attrs("bob")).await.unwrap_err();
    assert_eq!(err.to_string(), "fail-closed down");
    // system:masters comes first, before any webhook.
    let mut masters = attrs("root");
    masters.user.groups = vec!["system:masters".into()];
    assert_eq!(deny.authorize(&masters).await.unwrap().0, Decision::Allow);
}

#[test]
fn modes_the_role_did_not_build_are_refused() {
    let config = |t: &str| AuthorizationConfiguration {
        authorizers: vec![AuthorizerConfiguration {
            authorizer_type: t.into(),
            name: t.to_lowercase(),
            webhook: None,
        }],
    };
    let err = |t: &str| {
        new_for_config(&config(t), &ModeAuthorizers::default(), &factory())
            .err()
            .unwrap()
    };
    assert_eq!(
        err("Node"),
        "authorizer type Node is not allowed if it was not enabled at initial server startup"
    );
    assert_eq!(
        err("RBAC"),
        "authorizer type RBAC is not allowed if it was not enabled at initial server startup"
    );
    assert_eq!(err("Foo"), "unknown authorization mode Foo specified");
    let empty = AuthorizationConfiguration::default();
    assert_eq!(
        new_for_config(&empty, &ModeAuthorizers::default(), &factory())
            .err()
            .unwrap(),
        "at least one authorization mode must be passed"
    );
    let provided = ModeAuthorizers {
        rbac: Some(Arc::new(AlwaysAllow)),
        ..ModeAuthorizers::default()
    };
    assert!(new_for_config(&config("RBAC"), &provided, &factory()).is_ok());
}
