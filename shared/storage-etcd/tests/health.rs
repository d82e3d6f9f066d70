//! The `etcd` health check against a real etcd: it passes while etcd answers, fails once it
//! is gone, and a check built from the flags of a role without `--etcd-servers` does not
//! exist.

mod common;

use std::time::{Duration, Instant};

use clap::Parser;
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
    assert!(options(&[]).health_check().is_none());

    let (etcd, _dir, _client) = common::etcd().await;
    let servers = format!("--etcd-servers={}", etcd.url());
    let check = options(&[&servers]).health_check().unwrap();
    assert_eq!(check.name(), "etcd");
    check.check().await.unwrap();
    // A clone shares the connected client.
    check.clone().check().await.unwrap();

    tokio::task::spawn_blocking(move || etcd.stop())
        .await
        .unwrap();
    let started = Instant::now();
    let err = check.check().await.unwrap_err();
    assert!(!err.is_empty());
    // Bounded by the two-second read and connect timeouts, as upstream's check is.
    assert!(started.elapsed() < Duration::from_secs(5), "{err}");
    // Nothing listens there any more: connecting afresh fails too.
    check.check().await.unwrap_err();
}
