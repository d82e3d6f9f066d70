//! `--encryption-provider-config-automatic-reload`: a changed configuration file takes
//! effect without a restart (a new first key encrypts new writes; a rewrite moves the old
//! values to it), a file that does not load leaves the last good configuration in effect,
//! and both are counted in upstream's reload metrics. `kms-providers` is on /readyz
//! whatever the file names, as upstream registers it with automatic reload.
//!
//! The roles poll every second here (a test-only knob in their environment,
//! `KAS_ENCRYPTION_CONFIG_POLL_INTERVAL`, as upstream's tests shorten the minute).

use std::time::{Duration, Instant};

use kas_e2e::{Role, metric_value, start_cluster};

const KEY1: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
const KEY2: &str = "YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY=";

fn configuration(keys: &[(&str, &str)]) -> String {
    let keys: String = keys
        .iter()
        .map(|(name, secret)| format!("      - {{name: {name}, secret: {secret}}}\n"))
        .collect();
    format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n\
         - resources: [secrets]\n  providers:\n  - aescbc:\n      keys:\n{keys}  - identity: {{}}\n"
    )
}

async fn stored(kv: &mut etcd_client::KvClient, name: &str) -> Vec<u8> {
    let key = format!("/registry/secrets/default/{name}");
    let resp = kv.get(key.as_str(), None).await.unwrap();
    resp.kvs()[0].value().to_vec()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_configuration_takes_effect_and_a_broken_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("encryption.yaml");
    std::fs::write(&config, configuration(&[("key1", KEY1)])).unwrap();
    let c = start_cluster(|spec| {
        spec.env
            .push(("KAS_ENCRYPTION_CONFIG_POLL_INTERVAL".into(), "1s".into()));
        for role in [Role::Aggregator, Role::Core, Role::Extensions] {
            spec.extra_args.entry(role).or_default().extend([
                format!("--encryption-provider-config={}", config.display()),
                "--encryption-provider-config-automatic-reload".to_owned(),
            ]);
        }
    });
    let client = etcd_client::Client::connect([c.etcd_url()], None)
        .await
        .unwrap();
    let mut kv = client.kv_client();
    let readyz = c.kubectl_ok(&["get", "--raw", "/readyz?verbose"]);
    assert!(readyz.contains("[+]kms-providers ok"), "{readyz}");
    c.kubectl_ok(&[
        "create",
        "secret",
        "generic",
        "before",
        "--from-literal=a=b",
    ]);
    assert!(
        stored(&mut kv, "before")
            .await
            .starts_with(b"k8s:enc:aescbc:v1:key1:")
    );

    // key2 first: new writes move to it once the roles polled.
    std::fs::write(&config, configuration(&[("key2", KEY2), ("key1", KEY1)])).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    for n in 0.. {
        let name = format!("probe-{n}");
        c.kubectl_ok(&["create", "secret", "generic", &name, "--from-literal=a=b"]);
        if stored(&mut kv, &name)
            .await
            .starts_with(b"k8s:enc:aescbc:v1:key2:")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the new configuration never took effect"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let before = c.kubectl_json(&["get", "secret", "before", "-o", "json"]);
    assert_eq!(before["data"]["a"], "Yg==");
    let out = c.kubectl_stdin(&["replace"], &before.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stored(&mut kv, "before")
            .await
            .starts_with(b"k8s:enc:aescbc:v1:key2:")
    );

    // A broken file: the last good configuration stays; the failure is counted.
    std::fs::write(
        &config,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: Nope\n",
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = c.metrics(Role::Core).await;
        let count = |status: &str| {
            metric_value(
                &text,
                "apiserver_encryption_config_controller_automatic_reloads_total",
                &[("status", status)],
            )
        };
        if count("failure").is_some_and(|n| n >= 1.0) {
            assert!(count("success").is_some_and(|n| n >= 1.0), "{text}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no failed reload counted:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    c.kubectl_ok(&["create", "secret", "generic", "after", "--from-literal=a=b"]);
    assert!(
        stored(&mut kv, "after")
            .await
            .starts_with(b"k8s:enc:aescbc:v1:key2:")
    );
}
