use serde_json::json;

use super::*;

fn codec(media_type: MediaType) -> Codec {
    let codec = Codec::default();
    let kind = |group, version, kind| StoredKind {
        group,
        version,
        kind,
        resource: "r",
        media_type,
    };
    codec
        .register("configmaps", kind("", "v1", "ConfigMap"))
        .unwrap();
    codec
        .register("services/specs", kind("", "v1", "Service"))
        .unwrap();
    codec
        .register(
            "ipaddresses",
            kind("networking.k8s.io", "v1beta1", "IPAddress"),
        )
        .unwrap();
    codec
        .register(
            "apiextensions.k8s.io/customresourcedefinitions",
            StoredKind {
                media_type: MediaType::Json,
                ..kind(
                    "apiextensions.k8s.io",
                    "v1beta1",
                    "CustomResourceDefinition",
                )
            },
        )
        .unwrap();
    codec
}

fn config_map() -> Value {
    json!({
        "metadata": {"name": "a", "namespace": "default", "resourceVersion": "12",
                     "uid": "9c9d3154-0c63-418b-b43b-ca851262016b",
                     "creationTimestamp": "2026-11-28T23:53:22Z"},
        "data": {"k": "v"}
    })
}

fn without_rv(mut value: Value) -> Value {
    value["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    value
}

#[test]
fn built_ins_are_written_in_upstreams_protobuf_envelope_without_resource_version() {
    let codec = codec(MediaType::Protobuf);
    let bytes = codec
        .encode("/configmaps/default/a", &config_map())
        .unwrap();
    let unknown = protobuf::decode_envelope(&bytes).unwrap();
    assert_eq!(
        (unknown.api_version.as_str(), unknown.kind.as_str()),
        ("v1", "ConfigMap")
    );
    let back = codec.decode("/configmaps/default/a", &bytes).unwrap();
    assert_eq!(back, without_rv(config_map()));
    assert!(back["metadata"].get("resourceVersion").is_none());
}

#[test]
fn json_and_yaml_carry_kind_and_api_version_and_read_back_without() {
    let bytes = codec(MediaType::Json)
        .encode("/configmaps/default/a", &config_map())
        .unwrap();
    assert!(bytes.starts_with(br#"{"kind":"ConfigMap","apiVersion":"v1","data":"#));
    let back = codec(MediaType::Json)
        .decode("/configmaps/default/a", &bytes)
        .unwrap();
    assert_eq!(back, without_rv(config_map()));

    let yaml = codec(MediaType::Yaml)
        .encode("/configmaps/default/a", &config_map())
        .unwrap();
    let text = String::from_utf8(yaml.clone()).unwrap();
    assert!(
        text.contains("apiVersion: v1\n") && text.contains("kind: ConfigMap\n"),
        "{text}"
    );
    // Whatever the flag says, reads take every form.
    let back = codec(MediaType::Protobuf)
        .decode("/configmaps/default/a", &yaml)
        .unwrap();
    assert_eq!(back, without_rv(config_map()));
}

#[test]
fn keys_find_their_storage_resource_by_one_or_two_segments() {
    let codec = codec(MediaType::Protobuf);
    let service = json!({"metadata": {"name": "k", "namespace": "default"}, "spec": {}});
    let bytes = codec.encode("/services/specs/default/k", &service).unwrap();
    assert!(bytes.starts_with(&protobuf::MAGIC));
    // Not registered: the caller's JSON as it is.
    let bytes = codec
        .encode("/services/endpoints/default/k", &service)
        .unwrap();
    assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap(), service);
    let widget =
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
    let bytes = codec
        .encode("/example.com/widgets/default/w", &widget)
        .unwrap();
    assert_eq!(
        codec
            .decode("/example.com/widgets/default/w", &bytes)
            .unwrap(),
        widget
    );
    for key in ["/", "", "//", "/config", "/configmapsx/a"] {
        assert!(codec.written(key).is_none(), "{key}");
    }
    assert!(codec.written("/configmaps/ns/a").is_some());
}

#[test]
fn versions_upstream_stores_but_does_not_serve_read_with_the_served_message() {
    let codec = codec(MediaType::Protobuf);
    let ip = json!({"metadata": {"name": "10.0.0.1", "creationTimestamp": "2026-11-28T23:53:22Z"},
                    "spec": {"parentRef": {"resource": "services",
                                           "namespace": "default", "name": "kubernetes"}}});
    let bytes = codec.encode("/ipaddresses/10.0.0.1", &ip).unwrap();
    let unknown = protobuf::decode_envelope(&bytes).unwrap();
    assert_eq!(unknown.api_version, "networking.k8s.io/v1beta1");
    assert_eq!(codec.decode("/ipaddresses/10.0.0.1", &bytes).unwrap(), ip);
}

#[test]
fn older_typeless_json_of_this_server_still_reads() {
    let codec = codec(MediaType::Protobuf);
    let stored = serde_json::to_vec(&without_rv(config_map())).unwrap();
    assert_eq!(
        codec.decode("/configmaps/default/a", &stored).unwrap(),
        without_rv(config_map())
    );
}

#[test]
fn bad_bytes_are_invalid_objects_never_panics() {
    let codec = codec(MediaType::Protobuf);
    let key = "/configmaps/default/a";
    let good = codec.encode(key, &config_map()).unwrap();
    for cut in 0..good.len() {
        let _ = codec.decode(key, &good[..cut]);
    }
    let err = codec
        .decode(key, b"k8s:enc:aescbc:v1:key1:\x00\x01")
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("identity transformer tried to read encrypted data"),
        "{err}"
    );
    let unknown_kind = protobuf::encode_envelope("v1", "Nonsense", b"");
    let err = codec.decode(key, &unknown_kind).unwrap_err();
    assert!(
        err.to_string()
            .contains(r#"no kind "Nonsense" is registered for version "v1""#),
        "{err}"
    );
    assert!(matches!(
        codec.decode(key, b"[1]"),
        Err(Error::InvalidObj { .. })
    ));
    assert!(matches!(
        codec.decode(key, b"{"),
        Err(Error::InvalidObj { .. })
    ));
    assert!(matches!(
        codec.decode(key, b""),
        Err(Error::InvalidObj { .. })
    ));
}

/// A CRD as upstream 1.33 serves it (v1) ...
fn crd_v1() -> Value {
    json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets",
                      "shortNames": ["wd"], "singular": "widget"},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "schema": {"openAPIV3Schema": {"type": "object"}},
                 "subresources": {"status": {}},
                 "additionalPrinterColumns": [{"jsonPath": ".spec.size", "name": "Size", "type": "integer"}]},
                {"name": "v2", "served": true, "storage": false,
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                 "subresources": {"status": {}},
                 "additionalPrinterColumns": [{"jsonPath": ".spec.size", "name": "Size", "type": "integer"}]}
            ],
            "conversion": {"strategy": "Webhook", "webhook": {
                "clientConfig": {"service": {"name": "conv", "namespace": "default", "port": 443}},
                "conversionReviewVersions": ["v1"]}}
        },
        "status": {"acceptedNames": {"kind": "Widget", "plural": "widgets"}, "storedVersions": ["v1"]}
    })
}

/// ... and as its apiextensions server writes it (v1beta1 JSON).
fn crd_v1beta1() -> Value {
    json!({
        "kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1beta1",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "version": "v1",
            "names": {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets",
                      "shortNames": ["wd"], "singular": "widget"},
            "scope": "Namespaced",
            "subresources": {"status": {}},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "schema": {"openAPIV3Schema": {"type": "object"}}},
                {"name": "v2", "served": true, "storage": false,
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
            ],
            "additionalPrinterColumns": [{"JSONPath": ".spec.size", "name": "Size", "type": "integer"}],
            "conversion": {"strategy": "Webhook",
                "webhookClientConfig": {"service": {"name": "conv", "namespace": "default", "port": 443}},
                "conversionReviewVersions": ["v1"]},
            "preserveUnknownFields": false
        },
        "status": {"acceptedNames": {"kind": "Widget", "plural": "widgets"}, "storedVersions": ["v1"]}
    })
}

const CRD_KEY: &str = "/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com";

#[test]
fn crds_are_written_as_upstreams_v1beta1_json_and_read_as_v1() {
    let codec = codec(MediaType::Protobuf);
    let bytes = codec.encode(CRD_KEY, &crd_v1()).unwrap();
    assert!(bytes.starts_with(
        br#"{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1beta1","#
    ));
    assert_eq!(
        serde_json::from_slice::<Value>(&bytes).unwrap(),
        crd_v1beta1()
    );
    let stored = serde_json::to_vec(&crd_v1beta1()).unwrap();
    assert_eq!(codec.decode(CRD_KEY, &stored).unwrap(), crd_v1());
}

#[test]
fn a_minimal_v1beta1_crd_gets_v1beta1s_defaults() {
    let codec = codec(MediaType::Protobuf);
    let stored = json!({
        "kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1beta1",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "version": "v1",
                 "names": {"kind": "Gadget", "plural": "gadgets"},
                 "validation": {"openAPIV3Schema": {"type": "object"}}},
        "status": {}
    });
    let crd = codec
        .decode(CRD_KEY, &serde_json::to_vec(&stored).unwrap())
        .unwrap();
    assert_eq!(
        crd,
        json!({
            "metadata": {"name": "gadgets.example.com"},
            "spec": {"group": "example.com",
                     "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget",
                               "listKind": "GadgetList"},
                     "scope": "Namespaced",
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": {"type": "object"}}}],
                     "conversion": {"strategy": "None"},
                     "preserveUnknownFields": true},
            "status": {"storedVersions": ["v1"]}
        })
    );
}

#[test]
fn custom_resources_are_typed_json_and_read_untyped_in_their_registered_version() {
    let codec = codec(MediaType::Protobuf);
    let stored_kind = |version| StoredKind {
        group: "example.com",
        version,
        kind: "Widget",
        resource: "widgets",
        media_type: MediaType::Json,
    };
    codec
        .replace("example.com/widgets", stored_kind("v1"))
        .unwrap();
    let key = "/example.com/widgets/default/w";
    let widget = json!({"metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 1}});
    let bytes = codec.encode(key, &widget).unwrap();
    assert!(bytes.starts_with(br#"{"kind":"Widget","apiVersion":"example.com/v1","metadata":"#));
    assert_eq!(codec.decode(key, &bytes).unwrap(), widget);
    // A typed value (a conversion's) is written with the registered type once.
    let typed =
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
    let bytes = codec.encode(key, &typed).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&bytes)
            .matches("apiVersion")
            .count(),
        1
    );
    // The storage version moves on: objects of the old one keep their type when read.
    codec
        .replace("example.com/widgets", stored_kind("v2"))
        .unwrap();
    let old = codec.decode(key, &bytes).unwrap();
    assert_eq!(old["apiVersion"], "example.com/v1");
}
