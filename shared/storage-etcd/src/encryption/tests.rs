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
    assert!(err(&format!("{head}resources:\n- resources: [secrets]\n  providers:\n  - kms: {{name: p, endpoint: unix:///k.sock}}\n")).contains("kms"));
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
