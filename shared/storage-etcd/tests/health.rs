//! The `etcd` and `etcd-readiness` checks against a real etcd: they pass while etcd
//! answers and fail once it is gone, within their timeouts; a role without
//! `--etcd-servers` has none.

mod common;

use std::time::{Duration, Instant};

use clap::Parser;
use kas_storage::health::Scope;
use kas_storage_etcd::EtcdOptions;

#[derive(Parser)]
struct Flags {
    #[command(flatten)]
    etcd: EtcdOptions,
}

fn options(args: &[&str]) -> EtcdOptions {
    Flags::try_parse_from(std::iter::once("role").chain(args.iter().copied()))
        .unwrap()
        .etcd
}

#[tokio::test]
async fn passes_while_etcd_answers_and_fails_when_it_is_gone() {
    assert!(options(&[]).health_checks().is_empty());

    let (etcd, _dir, _client) = common::etcd().await;
    let servers = format!("--etcd-servers={}", etcd.url());
    let checks = options(&[&servers, "--etcd-readycheck-timeout=1s"]).health_checks();
    let named: Vec<_> = checks.iter().map(|c| (c.name, c.scope)).collect();
    assert_eq!(
        named,
        [
            ("etcd", Scope::Everywhere),
            ("etcd-readiness", Scope::Readyz)
        ]
    );
    for check in &checks {
        check.run().await.unwrap();
        // A clone shares the connected client.
        check.clone().run().await.unwrap();
    }

    tokio::task::spawn_blocking(move || etcd.stop())
        .await
        .unwrap();
    for (check, timeout) in checks.iter().zip([2, 1]) {
        let started = Instant::now();
        let err = check.run().await.unwrap_err();
        assert!(!err.is_empty());
        // Bounded by the read and connect timeouts, as upstream's checks are.
        assert!(
            started.elapsed() < Duration::from_secs(2 * timeout + 1),
            "{err}"
        );
        // Nothing listens there any more: connecting afresh fails too.
        check.run().await.unwrap_err();
    }
}

#[test]
fn timeouts_are_go_durations() {
    let o = options(&[
        "--etcd-healthcheck-timeout=1m30s",
        "--etcd-readycheck-timeout=500ms",
    ]);
    assert_eq!(o.etcd_healthcheck_timeout, Duration::from_secs(90));
    assert_eq!(o.etcd_readycheck_timeout, Duration::from_millis(500));
    let err = Flags::try_parse_from(["role", "--etcd-healthcheck-timeout=2"])
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("missing unit in duration"), "{err}");
}
