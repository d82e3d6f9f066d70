//! What a real kube-apiserver 1.33.12 wrote to etcd (`tests/fixtures/upstream-etcd`: each
//! key, its raw value, and upstream's GET answer for the object) decodes here, and this
//! server writes the same objects as the same bytes (protobuf) or the same document (the
//! JSON of CRDs and custom resources). That the roles serve them as upstream does, with
//! their defaulting on read, is the e2e test `upstream_storage`.

use base64::Engine;
use kas_storage_etcd::{Codec, MediaType, StoredKind};
use serde_json::Value;

#[derive(serde::Deserialize)]
struct Item {
    key: String,
    value: String,
    served: Value,
}

fn fixture() -> Vec<Item> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/upstream-etcd/v1.33.json"
    );
    serde_json::from_slice(&std::fs::read(path).expect("the fixture")).expect("fixture JSON")
}

/// The caller's key (without `/registry`) and its storage resource, as core registers it:
/// the key without namespace and name.
fn key_and_resource(key: &str, namespaced: bool) -> (&str, String) {
    let key = key.strip_prefix("/registry").expect("under /registry");
    let segments: Vec<&str> = key[1..].split('/').collect();
    let keep = segments.len() - if namespaced { 2 } else { 1 };
    (key, segments[..keep].join("/"))
}

/// What kube-apiserver 1.33 registers for the fixture's kinds.
fn stored_kind(item: &Item, bytes: &[u8]) -> Option<StoredKind> {
    let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    if bytes.starts_with(b"k8s\0") {
        let unknown = kas_apimachinery::protobuf::decode_envelope(bytes).unwrap();
        let (group, version) = unknown
            .api_version
            .split_once('/')
            .unwrap_or(("", &unknown.api_version));
        return Some(StoredKind {
            group: leak(group),
            version: leak(version),
            kind: leak(&unknown.kind),
            resource: "r",
            media_type: MediaType::Protobuf,
        });
    }
    (item.served["kind"] == "CustomResourceDefinition").then_some(StoredKind {
        group: "apiextensions.k8s.io",
        version: "v1beta1",
        kind: "CustomResourceDefinition",
        resource: "customresourcedefinitions",
        media_type: MediaType::Json,
    })
}

#[test]
fn upstreams_objects_decode_and_write_back_as_the_same_bytes() {
    let items = fixture();
    assert!(items.len() >= 16, "{} objects", items.len());
    let mut protobuf = 0;
    for item in &items {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&item.value)
            .unwrap();
        let namespaced = item.served["metadata"].get("namespace").is_some();
        let (key, resource) = key_and_resource(&item.key, namespaced);
        let codec = Codec::default();
        let kind = stored_kind(item, &bytes);
        if let Some(kind) = kind {
            codec.register(&resource, kind).unwrap();
        }

        let read = codec.decode(key, &bytes).unwrap();
        assert_eq!(
            read["metadata"]["uid"], item.served["metadata"]["uid"],
            "{key}"
        );
        assert_eq!(read.get("kind").is_some(), kind.is_none(), "{key}");

        let written = codec.encode(key, &read).unwrap();
        if bytes.starts_with(b"k8s\0") {
            protobuf += 1;
            assert!(written == bytes, "{key}: not upstream's bytes");
        } else {
            let written: Value = serde_json::from_slice(&written).unwrap();
            let stored: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(written, stored, "{key}");
        }
    }
    assert!(protobuf >= 14, "{protobuf} protobuf objects");
}

/// Values a kube-apiserver 1.33.12 encrypted (aescbc for secrets, aesgcm for configmaps,
/// secretbox for `*.apps`, `encryption-configuration.yaml`) decrypt here with the same
/// configuration; what this server encrypts, it reads back.
#[test]
fn upstreams_encrypted_values_decrypt_with_the_same_configuration() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/upstream-etcd");
    let items: Vec<Item> =
        serde_json::from_slice(&std::fs::read(dir.join("v1.33-encrypted.json")).unwrap()).unwrap();
    let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    let mut encrypted = 0;
    for item in &items {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&item.value)
            .unwrap();
        let namespaced = item.served["metadata"].get("namespace").is_some();
        let (key, resource) = key_and_resource(&item.key, namespaced);
        let codec = Codec::new("/registry");
        let encryption =
            kas_storage_etcd::Encryption::from_file(&dir.join("encryption-configuration.yaml"))
                .unwrap();
        codec
            .set_encryption(std::sync::Arc::new(encryption))
            .unwrap();
        let api_version = item.served["apiVersion"].as_str().unwrap();
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let kind = StoredKind {
            group: leak(group),
            version: leak(version),
            kind: leak(item.served["kind"].as_str().unwrap()),
            resource: leak(&resource),
            media_type: MediaType::Protobuf,
        };
        codec.register(&resource, kind).unwrap();
        if bytes.starts_with(b"k8s:enc:") {
            encrypted += 1;
        }
        let read = codec.decode(key, &bytes).unwrap();
        assert_eq!(
            read["metadata"]["uid"], item.served["metadata"]["uid"],
            "{key}"
        );
        let written = codec.encode(key, &read).unwrap();
        assert_eq!(
            written.get(..18),
            bytes
                .get(..18)
                .filter(|b| b.starts_with(b"k8s:enc:"))
                .or(written.get(..18).filter(|w| !w.starts_with(b"k8s:enc:"))),
            "{key}: written with the same provider"
        );
        assert_eq!(codec.decode(key, &written).unwrap(), read, "{key}");
    }
    assert_eq!(encrypted, 3);
}
