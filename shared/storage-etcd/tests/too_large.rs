//! Writes too large for etcd, against a real etcd: past upstream's 2 MiB client limit they
//! are refused before they are sent, in grpc-go's words; between etcd's 1.5 MiB request
//! limit and 2 MiB etcd refuses them. Either way the error is `RequestTooLarge` (what the
//! registry retries without managedFields) and nothing is written.

mod common;

use kas_storage::{Error, GetOptions, Preconditions, Storage};
use kas_storage_etcd::EtcdStore;
use serde_json::{Value, json};

fn config_map(name: &str, bytes: usize) -> Value {
    json!({"metadata": {"name": name, "namespace": "ns"}, "data": {"big": "x".repeat(bytes)}})
}

fn too_large_message(result: kas_storage::Result<impl std::fmt::Debug>) -> String {
    match result {
        Err(Error::RequestTooLarge { message }) => message,
        other => panic!("expected RequestTooLarge, got {other:?}"),
    }
}

#[tokio::test]
async fn writes_past_the_size_limits_are_refused_and_write_nothing() {
    let (_etcd, _dir, client) = common::etcd().await;
    let store = EtcdStore::new(client, "/registry");

    // Past 2 MiB: refused by the client, with the request's size.
    let message = too_large_message(
        store
            .create("/configmaps/ns/a", config_map("a", 2_500_000), None)
            .await,
    );
    let prefix =
        "rpc error: code = ResourceExhausted desc = trying to send message larger than max (";
    let size = message
        .strip_prefix(prefix)
        .and_then(|m| m.strip_suffix(" vs. 2097152)"))
        .unwrap_or_else(|| panic!("{message}"));
    let size: usize = size.parse().unwrap();
    assert!((2_500_000..2_500_200).contains(&size), "{message}");

    // Between etcd's 1.5 MiB and 2 MiB: etcd refuses it.
    let message = too_large_message(
        store
            .create("/configmaps/ns/a", config_map("a", 1_800_000), None)
            .await,
    );
    assert_eq!(message, "etcdserver: request is too large");
    let missing = store.get("/configmaps/ns/a", &GetOptions::default()).await;
    assert!(
        matches!(missing, Err(Error::NotFound { .. })),
        "{missing:?}"
    );

    // An update that grows the object past the limit leaves it as it was.
    let small = store
        .create("/configmaps/ns/b", config_map("b", 10), None)
        .await
        .unwrap();
    let grow = |_: Option<&Value>| Ok(Some(config_map("b", 2_200_000)));
    too_large_message(
        store
            .guaranteed_update(
                "/configmaps/ns/b",
                &Preconditions::default(),
                false,
                &grow,
                None,
                None,
            )
            .await,
    );
    let kept = store
        .get("/configmaps/ns/b", &GetOptions::default())
        .await
        .unwrap()
        .expect("b is kept");
    assert_eq!(kept.resource_version, small.resource_version);
}
