//! `--authorization-config` beside the legacy flags, as kube-apiserver's options check it.

use clap::Parser;
use kas_auth::UserInfo;
use kas_auth::authorization::{Attributes, Decision};

use super::*;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    authz: AuthorizationOptions,
}

fn parse(args: &[&str]) -> AuthorizationOptions {
    Cli::try_parse_from(std::iter::once("kas").chain(args.iter().copied()))
        .unwrap()
        .authz
}

const HEADER: &str = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n";

fn write(dir: &std::path::Path, body: &str) -> String {
    let file = dir.join("authz.yaml");
    // Renamed into place, as a configuration management tool writes it.
    let tmp = dir.join("authz.yaml.tmp");
    std::fs::write(&tmp, format!("{HEADER}{body}")).unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    file.to_str().unwrap().to_owned()
}

#[test]
fn the_legacy_flags_are_exclusive_with_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "authorizers:\n- type: AlwaysAllow\n  name: alwaysallow\n",
    );
    let flag = format!("--authorization-config={file}");
    let o = parse(&[&flag]);
    assert!(!o.legacy_flags_set);
    assert!(o.validate().is_empty(), "{:?}", o.validate());
    let exclusive = "--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined";
    for legacy in [
        "--authorization-mode=RBAC",
        "--authorization-mode=AlwaysAllow",
        "--authorization-webhook-config-file=/k",
        "--authorization-webhook-version=v1beta1",
        "--authorization-webhook-cache-authorized-ttl=5m0s",
        "--authorization-webhook-cache-unauthorized-ttl=1s",
    ] {
        let o = parse(&[&flag, legacy]);
        assert!(o.legacy_flags_set, "{legacy}");
        assert_eq!(o.validate(), [exclusive], "{legacy}");
    }
    let o = parse(&[]);
    assert!(!o.legacy_flags_set);
    assert_eq!(o.authorization_mode, ["AlwaysAllow"]);
    assert!(parse(&["--authorization-mode=RBAC"]).legacy_flags_set);
}

#[test]
fn the_file_is_loaded_and_validated_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let o = parse(&[&format!("--authorization-config={}", missing.display())]);
    assert_eq!(
        o.validate(),
        [format!(
            "open {}: no such file or directory",
            missing.display()
        )]
    );
    let file = write(
        dir.path(),
        "authorizers:\n- type: RBAC\n  name: rbac\n- type: Webhook\n  name: w\n",
    );
    let o = parse(&[&format!("--authorization-config={file}")]);
    assert_eq!(
        o.validate(),
        ["authorizers[1].webhook: Required value: required when type=Webhook"]
    );
    let file = write(dir.path(), "authorizers:\n- type: RBAC\n  name: my-rbac\n");
    let o = parse(&[&format!("--authorization-config={file}")]);
    assert_eq!(
        o.validate(),
        ["expected name rbac for authorizer RBAC instead of my-rbac"]
    );
    let file = write(
        dir.path(),
        "authorizers:\n- type: Node\n  name: node\n- type: RBAC\n  name: rbac\n",
    );
    let o = parse(&[&format!("--authorization-config={file}")]);
    assert!(o.validate().is_empty());
    assert_eq!(o.modes().unwrap(), ["Node", "RBAC"]);
    assert_eq!(
        parse(&["--authorization-mode=RBAC,Webhook"])
            .modes()
            .unwrap(),
        ["RBAC", "Webhook"]
    );
    // The role did not build RBAC and Node.
    let err = o.authorizer(&ModeAuthorizers::default()).err().unwrap();
    assert_eq!(
        err.to_string(),
        format!(
            "{file}: authorizer type Node is not allowed if it was not enabled at initial server startup"
        )
    );
}

fn bob() -> Attributes {
    Attributes {
        user: UserInfo {
            name: "bob".into(),
            ..UserInfo::default()
        },
        ..Attributes::default()
    }
}

#[tokio::test]
async fn the_chain_is_reloaded_when_the_file_changes() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "authorizers:\n- type: AlwaysDeny\n  name: alwaysdeny\n",
    );
    let o = parse(&[&format!("--authorization-config={file}")]);
    let (authorizer, rules) = o.authorizer(&ModeAuthorizers::default()).unwrap();
    assert_eq!(
        authorizer.authorize(&bob()).await.unwrap().0,
        Decision::NoOpinion
    );
    assert!(
        rules
            .rules_for(&bob().user, "ns")
            .await
            .resource_rules
            .is_empty()
    );
    // An invalid file keeps the chain.
    write(
        dir.path(),
        "authorizers:\n- type: AlwaysAllow\n  name: allow\n",
    );
    tokio::time::sleep(RELOAD_INTERVAL * 2).await;
    assert_eq!(
        authorizer.authorize(&bob()).await.unwrap().0,
        Decision::NoOpinion
    );
    write(
        dir.path(),
        "authorizers:\n- type: AlwaysDeny\n  name: alwaysdeny\n- type: AlwaysAllow\n  name: alwaysallow\n",
    );
    let mut decision = Decision::NoOpinion;
    for _ in 0..40 {
        tokio::time::sleep(RELOAD_INTERVAL / 4).await;
        decision = authorizer.authorize(&bob()).await.unwrap().0;
        if decision == Decision::Allow {
            break;
        }
    }
    assert_eq!(decision, Decision::Allow);
    assert_eq!(
        rules
            .rules_for(&bob().user, "ns")
            .await
            .resource_rules
            .len(),
        1
    );
}

#[test]
fn the_legacy_flags_are_checked_as_upstream_checks_them() {
    assert!(
        parse(&["--authorization-mode=Node,RBAC"])
            .validate()
            .is_empty()
    );
    assert_eq!(
        parse(&["--authorization-mode="]).validate(),
        ["at least one authorization-mode must be passed"]
    );
    assert_eq!(
        parse(&["--authorization-mode=RBAC,Bogus,ABAC,RBAC"]).validate(),
        [
            "authorization-mode \"Bogus\" is not a valid mode",
            "authorization-mode ABAC's authorization policy file not passed",
            "authorization-mode [\"RBAC\" \"Bogus\" \"ABAC\" \"RBAC\"] has mode specified more than once",
        ]
    );
    assert_eq!(
        parse(&["--authorization-mode=Webhook"]).validate(),
        ["authorization-mode Webhook's authorization config file not passed"]
    );
}
