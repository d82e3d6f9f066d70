//! An etcd a real kube-apiserver 1.33.12 wrote (`tests/fixtures/upstream-etcd/v1.33.json`:
//! each key, its raw value, and upstream's `kubectl get -o json --show-managed-fields`
//! answer) is served here as upstream served it: built-in resources in protobuf, a CRD in
//! v1beta1 JSON, a custom resource in JSON, with read-time defaults (a Job's labels from
//! its template, which upstream does not store). What this server writes is upstream's
//! format: protobuf for core's kinds, typed JSON for CRDs and APIServices.

use std::time::{Duration, Instant};

use base64::Engine;
use kas_e2e::start_cluster;
use serde_json::Value;

#[derive(serde::Deserialize)]
struct Item {
    key: String,
    value: String,
    resource: String,
    namespace: Option<String>,
    name: String,
    served: Value,
}

fn fixture(name: &str) -> Vec<Item> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/upstream-etcd")
        .join(name);
    serde_json::from_slice(&std::fs::read(path).expect("the fixture")).expect("fixture JSON")
}

/// Puts the fixture's raw values into etcd, CRDs first (so that their custom resources
/// are served when they arrive).
async fn put_all(kv: &mut etcd_client::KvClient, items: &[Item]) {
    let crds_first = items
        .iter()
        .filter(|i| i.key.contains("customresourcedefinitions"))
        .chain(
            items
                .iter()
                .filter(|i| !i.key.contains("customresourcedefinitions")),
        );
    for item in crds_first {
        let value = base64::engine::general_purpose::STANDARD
            .decode(&item.value)
            .unwrap();
        kv.put(item.key.as_str(), value, None).await.unwrap();
    }
}

/// Each object as the cluster serves it (from the watch caches, once they heard of the
/// writes) is what upstream served.
async fn assert_served(c: &kas_e2e::TestCluster, items: &[Item]) {
    for item in items {
        let mut args = vec![
            "get",
            &item.resource,
            &item.name,
            "-o",
            "json",
            "--show-managed-fields",
        ];
        if let Some(ns) = &item.namespace {
            args.extend(["-n", ns]);
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        let got = loop {
            let out = c.kubectl(&args);
            if out.status.success() {
                break serde_json::from_slice::<Value>(&out.stdout).unwrap();
            }
            assert!(
                Instant::now() < deadline,
                "{}: {}",
                item.key,
                String::from_utf8_lossy(&out.stderr)
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(
            without_resource_version(got),
            item.served,
            "{} as served",
            item.key
        );
    }
}

fn without_resource_version(mut v: Value) -> Value {
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
    }
    v
}

#[tokio::test(flavor = "multi_thread")]
async fn an_etcd_upstream_wrote_is_served_as_upstream_served_it() {
    let c = start_cluster(|_| {});
    let client = etcd_client::Client::connect([c.etcd_url()], None)
        .await
        .unwrap();
    let items = fixture("v1.33.json");
    let mut kv = client.kv_client();
    put_all(&mut kv, &items).await;
    assert_served(&c, &items).await;

    // Lists read etcd (a consistent list on this etcd) and decode the same.
    let configmaps = c.kubectl_json(&[
        "get",
        "configmaps",
        "-n",
        "upstream-written",
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    let cm = configmaps["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["metadata"]["name"] == "cm1")
        .cloned()
        .expect("cm1 listed");
    let expected = &items.iter().find(|i| i.name == "cm1").unwrap().served;
    assert_eq!(without_resource_version(cm), *expected);

    // A change made here is written back in upstream's format: the object's protobuf
    // envelope, in its storage version.
    c.kubectl_ok(&[
        "label",
        "deployment",
        "d1",
        "-n",
        "upstream-written",
        "changed=here",
    ]);
    let stored = kv
        .get("/registry/deployments/upstream-written/d1", None)
        .await
        .unwrap();
    let value = stored.kvs()[0].value();
    let envelope = kas_apimachinery::protobuf::decode_envelope(value).unwrap();
    assert_eq!(
        (envelope.api_version.as_str(), envelope.kind.as_str()),
        ("apps/v1", "Deployment")
    );
    let decoded = kas_apimachinery::protobuf::decode(
        &envelope.raw,
        kas_api::kind("apps", "v1", "Deployment").unwrap(),
    )
    .unwrap();
    assert_eq!(decoded["metadata"]["labels"]["changed"], "here");
    assert!(decoded["metadata"].get("resourceVersion").is_none());

    // CRDs and APIServices as upstream's apiextensions server and aggregator write them.
    let crd = kv
        .get(
            "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com",
            None,
        )
        .await
        .unwrap();
    let crd: Value = serde_json::from_slice(crd.kvs()[0].value()).unwrap();
    assert_eq!(crd["apiVersion"], "apiextensions.k8s.io/v1beta1");
    let apiservice = kv
        .get("/registry/apiregistration.k8s.io/apiservices/v1.apps", None)
        .await
        .unwrap();
    let apiservice: Value = serde_json::from_slice(apiservice.kvs()[0].value()).unwrap();
    assert_eq!(
        (
            apiservice["kind"].as_str(),
            apiservice["apiVersion"].as_str()
        ),
        (Some("APIService"), Some("apiregistration.k8s.io/v1"))
    );
}

/// Every key the roles wrote at start and for a few writes is in one of upstream's forms:
/// a protobuf envelope, or JSON with `apiVersion` and `kind`.
#[tokio::test(flavor = "multi_thread")]
async fn everything_written_is_in_upstreams_format() {
    let c = start_cluster(|_| {});
    c.kubectl_ok(&["create", "configmap", "fresh", "--from-literal=k=v"]);
    c.kubectl_ok(&["create", "service", "nodeport", "np", "--tcp=80:80"]);
    c.kubectl_ok(&["create", "namespace", "fresh"]);
    let client = etcd_client::Client::connect([c.etcd_url()], None)
        .await
        .unwrap();
    let all = client
        .kv_client()
        .get(
            "/registry/",
            Some(etcd_client::GetOptions::new().with_prefix()),
        )
        .await
        .unwrap();
    let mut protobuf = 0;
    for kv in all.kvs() {
        let key = kv.key_str().unwrap();
        let value = kv.value();
        if value.starts_with(&kas_apimachinery::protobuf::MAGIC) {
            kas_apimachinery::protobuf::decode_envelope(value)
                .unwrap_or_else(|e| panic!("{key}: {e}"));
            protobuf += 1;
            continue;
        }
        let json: Value = serde_json::from_slice(value).unwrap_or_else(|e| panic!("{key}: {e}"));
        assert!(
            json["apiVersion"].is_string() && json["kind"].is_string(),
            "{key} is stored without its type: {json}"
        );
    }
    assert!(protobuf > 100, "{protobuf} protobuf values");
}

/// With upstream's `--encryption-provider-config` (aescbc for secrets, aesgcm for
/// configmaps, secretbox for `*.apps`), values kube-apiserver 1.33.12 encrypted are
/// served, and what this server writes is encrypted with the first provider: etcd never
/// holds the plain text.
#[tokio::test(flavor = "multi_thread")]
async fn encrypted_values_are_read_and_written_as_upstream_encrypts_them() {
    let config = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/upstream-etcd/encryption-configuration.yaml"
    );
    let c = with_encryption(config);
    let items = fixture("v1.33-encrypted.json");
    let mut kv = etcd_kv(&c).await;
    put_all(&mut kv, &items).await;
    assert_served(&c, &items).await;

    c.kubectl_ok(&[
        "create",
        "secret",
        "generic",
        "mine",
        "--from-literal=password=plain-text-here",
    ]);
    let stored = kv
        .get("/registry/secrets/default/mine", None)
        .await
        .unwrap();
    let value = stored.kvs()[0].value();
    assert!(value.starts_with(b"k8s:enc:aescbc:v1:key1:"), "{value:?}");
    let needle = b"plain-text-here";
    assert!(!value.windows(needle.len()).any(|w| w == needle));
    let secret = c.kubectl_json(&["get", "secret", "mine", "-o", "json"]);
    assert_eq!(secret["data"]["password"], "cGxhaW4tdGV4dC1oZXJl");
    // An update that changes nothing writes nothing, encrypted as it is (each encryption
    // draws a new IV, so stored bytes never compare equal).
    let out = c.kubectl_stdin(&["replace", "-o", "json"], &secret.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replaced: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        replaced["metadata"]["resourceVersion"],
        secret["metadata"]["resourceVersion"]
    );
    // Resources no rule names stay plain protobuf.
    c.kubectl_ok(&["create", "serviceaccount", "plain"]);
    let stored = kv
        .get("/registry/serviceaccounts/default/plain", None)
        .await
        .unwrap();
    assert!(
        stored.kvs()[0]
            .value()
            .starts_with(&kas_apimachinery::protobuf::MAGIC)
    );
}

/// KMS v2 with the test plugin (`kas-kms-plugin`, the real gRPC API on a unix socket):
/// Secrets and ConfigMaps kube-apiserver 1.33.12 encrypted through the same plugin and keys
/// (`v1.33-kms.json`, `kms-keys.txt`) are served; what this server writes is an envelope
/// under the plugin's key ID; a key rotation moves new writes, and a rewrite of every
/// Secret, to the new key; a dead plugin fails the `kms-providers` check while values
/// whose seed is known still read and writes go on.
#[tokio::test(flavor = "multi_thread")]
async fn kms_v2_values_are_read_and_written_as_upstream_encrypts_them() {
    let keys = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/upstream-etcd/kms-keys.txt"
    ))
    .unwrap();
    let mut plugin = kas_e2e::kms::KmsPlugin::start(&keys);
    let config = plugin.configuration("testkms", &["secrets", "configmaps"]);
    let c = with_encryption(config.display());
    let items = fixture("v1.33-kms.json");
    let mut kv = etcd_kv(&c).await;
    put_all(&mut kv, &items).await;
    assert_served(&c, &items).await;
    let readyz = c.kubectl_ok(&["get", "--raw", "/readyz?verbose"]);
    assert!(readyz.contains("[+]kms-providers ok"), "{readyz}");

    c.kubectl_ok(&[
        "create",
        "secret",
        "generic",
        "mine",
        "--from-literal=password=plain-text-here",
    ]);
    let stored = stored_value(&mut kv, "/registry/secrets/default/mine").await;
    assert!(stored.starts_with(b"k8s:enc:kms:v2:testkms:"), "{stored:?}");
    assert!(!contains(&stored, b"plain-text-here"));
    let first_key = plugin.current_key_id();
    assert!(contains(&stored, first_key.as_bytes()));
    let secret = c.kubectl_json(&["get", "secret", "mine", "-o", "json"]);
    assert_eq!(secret["data"]["password"], "cGxhaW4tdGV4dC1oZXJl");

    // Rotation: the probe hears of the new key ID once its last healthy answer is 20 s
    // old (a /readyz call asks then); new writes use a new seed under it.
    let new_key = plugin.rotate();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut n = 0;
    loop {
        c.kubectl_ok(&["get", "--raw", "/readyz"]);
        n += 1;
        let name = format!("probe-{n}");
        c.kubectl_ok(&["create", "secret", "generic", &name, "--from-literal=a=b"]);
        let stored = stored_value(&mut kv, &format!("/registry/secrets/default/{name}")).await;
        if contains(&stored, new_key.as_bytes()) {
            break;
        }
        assert!(Instant::now() < deadline, "writes never moved to {new_key}");
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    // Rewriting every Secret re-encrypts them under the new key, unchanged as they are.
    let all = c.kubectl_json(&["get", "secrets", "-A", "-o", "json"]);
    let out = c.kubectl_stdin(&["replace"], &all.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for key in [
        "/registry/secrets/default/mine",
        "/registry/secrets/kms/creds",
    ] {
        let stored = stored_value(&mut kv, key).await;
        assert!(contains(&stored, new_key.as_bytes()), "{key}");
    }
    let secret = c.kubectl_json(&["get", "secret", "mine", "-o", "json"]);
    assert_eq!(secret["data"]["password"], "cGxhaW4tdGV4dC1oZXJl");

    // A dead plugin: the check fails (once the last healthy answer is 20 s old), known
    // seeds still decrypt, and writes go on with the current seed for 3 minutes.
    plugin.kill();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = c.kubectl(&["get", "--raw", "/readyz?verbose"]);
        // A failing /readyz is a 500, which kubectl prints on stderr.
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if text.contains("[-]kms-providers failed") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "kms-providers never failed: {text}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let livez = c.kubectl_ok(&["get", "--raw", "/livez"]);
    assert_eq!(livez, "ok");
    let creds = c.kubectl_json(&["get", "secret", "-n", "kms", "creds", "-o", "json"]);
    assert_eq!(creds["data"]["password"], "czNjcjN0LXVwc3RyZWFt");
    c.kubectl_ok(&[
        "create",
        "secret",
        "generic",
        "while-down",
        "--from-literal=a=b",
    ]);

    // What upstream's metrics say of it all.
    let text = c.metrics(kas_e2e::Role::Core).await;
    let value = |name: &str, labels: &[(&str, &str)]| {
        kas_e2e::metric_value(&text, name, labels).unwrap_or_default()
    };
    let prefix = ("transformer_prefix", "k8s:enc:kms:v2:testkms:");
    for kind in ["to_storage", "from_storage"] {
        let labels = [
            ("resource", "secrets"),
            ("transformation_type", kind),
            prefix,
            ("status", "OK"),
        ];
        let ops = value("apiserver_storage_transformation_operations_total", &labels);
        assert!(ops > 0.0, "{kind}:\n{text}");
    }
    let calls = "apiserver_envelope_encryption_kms_operations_latency_seconds_count";
    let method = |m: &'static str| ("method_name", m);
    let ok = value(
        calls,
        &[
            method("/v2.KeyManagementService/Status"),
            ("grpc_status_code", "OK"),
        ],
    );
    let encrypts = value(
        calls,
        &[
            method("/v2.KeyManagementService/Encrypt"),
            ("grpc_status_code", "OK"),
        ],
    );
    let down = value(
        calls,
        &[
            method("/v2.KeyManagementService/Status"),
            ("grpc_status_code", "Unavailable"),
        ],
    );
    assert!(
        ok > 0.0 && encrypts >= 2.0 && down > 0.0,
        "{ok} {encrypts} {down}"
    );
    // The fixture's seed, upstream's, was not this role's: one Decrypt, one cache miss.
    assert!(
        value(
            "apiserver_storage_envelope_transformation_cache_misses_total",
            &[]
        ) >= 1.0
    );
    let cached = value(
        "apiserver_envelope_encryption_dek_source_cache_size",
        &[("provider_name", "testkms")],
    );
    assert!(cached >= 1.0, "{cached}");
    // Keys are named by their IDs' hashes, never the IDs.
    let hash = |id: &str| {
        let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, id.as_bytes());
        let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    };
    for (kind, key) in [("to_storage", &new_key), ("from_storage", &first_key)] {
        let used = value(
            "apiserver_envelope_encryption_key_id_hash_total",
            &[
                ("transformation_type", kind),
                ("provider_name", "testkms"),
                ("key_id_hash", &hash(key)),
            ],
        );
        assert!(used >= 1.0, "{kind} {key}:\n{text}");
    }
}

/// A cluster whose every role takes `--encryption-provider-config=<config>`.
fn with_encryption(config: impl std::fmt::Display) -> kas_e2e::TestCluster {
    start_cluster(|spec| {
        for role in [
            kas_e2e::Role::Aggregator,
            kas_e2e::Role::Core,
            kas_e2e::Role::Extensions,
        ] {
            spec.extra_args
                .entry(role)
                .or_default()
                .push(format!("--encryption-provider-config={config}"));
        }
    })
}

async fn etcd_kv(c: &kas_e2e::TestCluster) -> etcd_client::KvClient {
    let client = etcd_client::Client::connect([c.etcd_url()], None)
        .await
        .unwrap();
    client.kv_client()
}

async fn stored_value(kv: &mut etcd_client::KvClient, key: &str) -> Vec<u8> {
    let resp = kv.get(key, None).await.unwrap();
    resp.kvs()
        .first()
        .unwrap_or_else(|| panic!("{key} is not in etcd"))
        .value()
        .to_vec()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
