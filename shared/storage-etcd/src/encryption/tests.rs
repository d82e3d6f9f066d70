use super::*;

const CONFIG: &str = r#"
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc:
      keys:
      - {name: new, secret: MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=}
      - {name: old, secret: MTIzNDU2Nzg5MDEyMzQ1Ng==}
  - identity: {}
- resources: [configmaps]
  providers:
  - aesgcm:
      keys:
      - {name: gcm1, secret: MTIzNDU2Nzg5MDEyMzQ1Ng==}
- resources: ["*.apps"]
  providers:
  - secretbox:
      keys:
      - {name: box1, secret: YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY=}
  - identity: {}
"#;

fn encryption() -> Encryption {
    Encryption::parse(CONFIG.as_bytes()).unwrap()
}

#[test]
fn each_provider_writes_its_prefix_and_reads_back() {
    let e = encryption();
    let key = b"/registry/x/ns/a";
    for (group, resource, prefix) in [
        ("", "secrets", "k8s:enc:aescbc:v1:new:"),
        ("", "configmaps", "k8s:enc:aesgcm:v1:gcm1:"),
        ("apps", "deployments", "k8s:enc:secretbox:v1:box1:"),
    ] {
        let t = e.for_resource(group, resource).unwrap();
        for len in [0, 1, 15, 16, 17, 1000] {
            let data = vec![7u8; len];
            let stored = t.transform_to_storage(data.clone(), key).unwrap();
            assert!(stored.starts_with(prefix.as_bytes()), "{resource}");
            assert!(
                !stored
                    .windows(len.max(1))
                    .any(|w| len > 8 && w == &data[..])
            );
            assert_eq!(&*t.transform_from_storage(&stored, key).unwrap(), &data[..]);
        }
    }
    assert!(e.for_resource("", "pods").is_none());
    assert!(e.for_resource("batch", "jobs").is_none());
}

#[test]
fn aesgcm_authenticates_the_etcd_key() {
    let t = encryption().for_resource("", "configmaps").unwrap();
    let stored = t
        .transform_to_storage(b"data".to_vec(), b"/registry/configmaps/a/b")
        .unwrap();
    let err = t
        .transform_from_storage(&stored, b"/registry/configmaps/a/c")
        .unwrap_err();
    assert_eq!(err, "cipher: message authentication failed");
}

#[test]
fn rotation_reads_every_key_and_identity_reads_plain_values() {
    let t = encryption().for_resource("", "secrets").unwrap();
    let key = b"/registry/secrets/a/b";
    assert_eq!(
        &*t.transform_from_storage(b"k8s\x00plain", key).unwrap(),
        b"k8s\x00plain"
    );
    // A value of the older key, as a configuration listing it first wrote it.
    let old = Encryption::parse(
        CONFIG
            .replace(
                "- {name: new, secret: MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=}\n",
                "",
            )
            .as_bytes(),
    )
    .unwrap()
    .for_resource("", "secrets")
    .unwrap()
    .transform_to_storage(b"v".to_vec(), key)
    .unwrap();
    assert!(old.starts_with(b"k8s:enc:aescbc:v1:old:"));
    assert_eq!(&*t.transform_from_storage(&old, key).unwrap(), b"v");
    // A key no provider has, and a value no provider reads.
    let unknown = [b"k8s:enc:aescbc:v1:gone:".as_slice(), &[0u8; 32]].concat();
    assert_eq!(
        t.transform_from_storage(&unknown, key).unwrap_err(),
        "no matching key was found for the provided AES transformer"
    );
    let gcm_only = encryption().for_resource("", "configmaps").unwrap();
    assert_eq!(
        gcm_only.transform_from_storage(b"plain", key).unwrap_err(),
        "no matching prefix found"
    );
}

#[test]
fn corrupted_values_fail_with_upstreams_errors_never_panic() {
    let t = encryption().for_resource("", "secrets").unwrap();
    let key = b"/registry/secrets/a/b";
    let good = t
        .transform_to_storage(b"some secret".to_vec(), key)
        .unwrap();
    for cut in 0..good.len() {
        let _ = t.transform_from_storage(&good[..cut], key);
    }
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0xff;
    assert!(t.transform_from_storage(&flipped, key).is_err());
    let short = [b"k8s:enc:aescbc:v1:new:".as_slice(), &[1u8; 8]].concat();
    assert_eq!(
        t.transform_from_storage(&short, key).unwrap_err(),
        "the stored data was shorter than the required size"
    );
    let for_box = encryption().for_resource("apps", "deployments").unwrap();
    let sealed = for_box.transform_to_storage(b"x".to_vec(), key).unwrap();
    let mut bad = sealed.clone();
    bad[30] ^= 1;
    assert!(for_box.transform_from_storage(&bad, key).is_err());
}

#[test]
fn configurations_are_checked_as_upstream_checks_them() {
    let err = |text: &str| Encryption::parse(text.as_bytes()).err().unwrap();
    let head = "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n";
    assert_eq!(
        err(&format!(
            "{head}resources:\n- resources: [secrets]\n  providers:\n  - aescbc:\n      keys:\n      - {{name: k, secret: c2hvcnQ=}}\n"
        )),
        "error while creating cipher for named key k: crypto/aes: invalid key size 5"
    );
    assert_eq!(
        err(&format!(
            "{head}resources:\n- resources: [secrets]\n  providers:\n  - secretbox:\n      keys:\n      - {{name: k, secret: c2hvcnQ=}}\n"
        )),
        "expected key size 32 for secretbox provider, got 5"
    );
    assert_eq!(
        err(&format!(
            "{head}resources:\n- resources: ['*.*']\n  providers: [{{identity: {{}}}}]\n- resources: [secrets]\n  providers: [{{identity: {{}}}}]\n"
        )),
        r#"resource "secrets" is masked by earlier rule "*.*""#
    );
    assert_eq!(
        err(&format!(
            "{head}resources:\n- resources: [secrets]\n  providers:\n  - aesgcm: {{keys: []}}\n"
        )),
        "aes provider has no valid keys"
    );
    assert!(err("apiVersion: v1\nkind: ConfigMap\n").contains("no kind"));
}

#[test]
fn wildcards_cover_a_group_and_everything() {
    let head = "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n";
    let e = Encryption::parse(
        format!("{head}resources:\n- resources: ['*.']\n  providers: [{{identity: {{}}}}]\n- resources: ['*.*']\n  providers:\n  - secretbox:\n      keys:\n      - {{name: b, secret: YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY=}}\n").as_bytes(),
    )
    .unwrap();
    let core = e
        .for_resource("", "pods")
        .unwrap()
        .transform_to_storage(b"p".to_vec(), b"k")
        .unwrap();
    assert_eq!(core, b"p");
    let other = e
        .for_resource("batch", "jobs")
        .unwrap()
        .transform_to_storage(b"p".to_vec(), b"k")
        .unwrap();
    assert!(other.starts_with(b"k8s:enc:secretbox:v1:b:"));
}

fn kms_config(kms: &str) -> String {
    format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n\
         - resources: [secrets]\n  providers:\n  - kms: {kms}\n  - identity: {{}}\n"
    )
}

#[test]
fn kms_providers_are_checked_as_upstream_checks_them() {
    let err = |kms: &str| {
        Encryption::parse(kms_config(kms).as_bytes())
            .err()
            .unwrap_or_else(|| panic!("{kms} was accepted"))
    };
    let path = "resources[0].providers[0].kms";
    assert!(
        err("{name: a, endpoint: 'unix:///k.sock'}").starts_with("KMSv1 is deprecated"),
        "apiVersion defaults to v1, which 1.33 refuses without its gate"
    );
    assert_eq!(
        err("{apiVersion: v2, name: a, endpoint: 'unix:///k.sock', cachesize: 10}"),
        format!("{path}.cachesize: Invalid value: 10: cachesize is not supported in v2")
    );
    assert_eq!(
        err("{apiVersion: v2, name: a, endpoint: 'tcp://127.0.0.1:1'}"),
        format!(
            "{path}.endpoint: Invalid value: \"tcp://127.0.0.1:1\": unsupported scheme \"tcp\" for KMS provider, only unix is supported"
        )
    );
    assert_eq!(
        err("{apiVersion: v2, name: 'a:b', endpoint: 'unix:///k.sock'}"),
        format!(
            "{path}.name: Invalid value: \"a:b\": invalid KMS provider name a:b, must not contain ':'"
        )
    );
    assert_eq!(
        err("{apiVersion: v2, name: a, endpoint: 'unix:///k.sock', timeout: 0s}"),
        format!("{path}.timeout: Invalid value: \"0s\": timeout should be a positive value")
    );
    assert!(
        err("{apiVersion: v3, name: a, endpoint: 'unix:///k.sock'}").contains("only v1 and v2")
    );
    let twice = "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n\
         - resources: [secrets]\n  providers:\n  - kms: {apiVersion: v2, name: a, endpoint: 'unix:///k.sock'}\n\
         - resources: [configmaps]\n  providers:\n  - kms: {apiVersion: v2, name: a, endpoint: 'unix:///k.sock'}\n";
    let e = Encryption::parse(twice.as_bytes()).err().unwrap();
    assert!(e.contains("duplicate KMS provider name a"), "{e}");
    assert!(Encryption::names_kms(twice.as_bytes()));
    assert!(!Encryption::names_kms(CONFIG.as_bytes()));
}

/// A plugin that is not there: nothing is written before a seed was primed, and a value
/// kube-apiserver wrote through the plugin fails with the plugin's error, as upstream's.
#[test]
fn kms_without_its_plugin_fails_the_value_not_the_process() {
    let config = kms_config(
        "{apiVersion: v2, name: testkms, endpoint: 'unix:///nonexistent/kms.sock', timeout: 1s}",
    );
    let e = Encryption::parse(config.as_bytes()).unwrap();
    let t = e.for_resource("", "secrets").unwrap();
    let key = b"/registry/secrets/kms/creds";
    assert_eq!(
        t.transform_to_storage(b"{}".to_vec(), key).unwrap_err(),
        "got unexpected nil transformer"
    );
    let fixture: Value = serde_json::from_slice(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/upstream-etcd/v1.33-kms.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let item = fixture
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["key"] == "/registry/secrets/kms/creds")
        .unwrap();
    let stored = base64::engine::general_purpose::STANDARD
        .decode(item["value"].as_str().unwrap())
        .unwrap();
    let err = t.transform_from_storage(&stored, key).unwrap_err();
    assert!(
        err.starts_with("failed to decrypt DEK, error: rpc error: code = Unavailable"),
        "{err}"
    );
    // Plain values still read (identity is the second provider).
    assert_eq!(&*t.transform_from_storage(b"{}", key).unwrap(), b"{}");
}

#[test]
fn values_another_provider_or_key_wrote_are_stale() {
    let e = encryption();
    let secrets = e.for_resource("", "secrets").unwrap();
    let key = b"/registry/secrets/ns/a";
    let current = secrets.transform_to_storage(b"x".to_vec(), key).unwrap();
    assert!(!secrets.is_stale(&current));
    assert!(secrets.is_stale(b"{\"plain\":true}"));
    assert!(secrets.is_stale(b"k8s:enc:aescbc:v1:old:0123456789abcdef"));
    let apps = e.for_resource("apps", "deployments").unwrap();
    assert!(apps.is_stale(&current));
    let identity_first = Encryption::parse(
        b"apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n\
          - resources: [secrets]\n  providers:\n  - identity: {}\n  - aescbc: {keys: [{name: k, secret: MTIzNDU2Nzg5MDEyMzQ1Ng==}]}\n",
    )
    .unwrap()
    .for_resource("", "secrets")
    .unwrap();
    assert!(identity_first.is_stale(&current));
    assert!(!identity_first.is_stale(b"{}"));
}
