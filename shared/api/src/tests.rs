//! Consistency of the tables, and spot checks of tag numbers against upstream's
//! `generated.proto` (k8s.io/api and k8s.io/apimachinery v0.33.0).

use std::collections::HashSet;

use kas_apimachinery::patch::{PatchMeta, PatchSchema};

use crate::{Kind, ListType, Message, all, kind};

fn message(name: &str) -> &'static Message {
    all()
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("{name} is not in all()"))
}

fn tag(message_name: &str, field: &str) -> u32 {
    let m = message(message_name);
    m.field(field)
        .unwrap_or_else(|| panic!("{message_name} has no field {field}"))
        .tag
}

#[test]
fn names_are_unique_in_all() {
    let mut seen = HashSet::new();
    for m in all() {
        assert!(seen.insert(m.name), "{} is listed twice", m.name);
        assert!(
            m.name.starts_with("io.k8s.api.")
                || m.name.starts_with("io.k8s.apimachinery.")
                || m.name.starts_with("io.k8s.apiextensions-apiserver.")
                || m.name.starts_with("io.k8s.kube-aggregator."),
            "{} is not an OpenAPI definition name",
            m.name
        );
    }
}

#[test]
fn json_names_and_tags_are_unique_in_each_message() {
    for m in all() {
        let mut names = HashSet::new();
        let mut tags = HashSet::new();
        for f in m.fields {
            assert!(names.insert(f.name), "{}: {} twice", m.name, f.name);
            if f.tag != 0 {
                assert!(tags.insert(f.tag), "{}: tag {} twice", m.name, f.tag);
            }
        }
    }
}

#[test]
fn only_type_meta_is_json_only() {
    for m in all() {
        for f in m.fields.iter().filter(|f| f.tag == 0) {
            assert!(
                matches!(f.name, "kind" | "apiVersion"),
                "{}.{} has tag 0",
                m.name,
                f.name
            );
        }
    }
}

/// Upstream's OpenAPI requires exactly the fields without `omitempty` and `+optional`, so a
/// required field is always written.
#[test]
fn required_fields_exist_and_are_always_written() {
    for m in all() {
        for name in m.required {
            let field = m
                .field(name)
                .unwrap_or_else(|| panic!("{}: required {name} is not a field", m.name));
            assert!(
                !field.omit_empty,
                "{}: required {name} has omitempty",
                m.name
            );
        }
    }
}

fn check_refs(owner: &str, field: &str, kind: &Kind, names: &HashSet<&str>) {
    if let Some(nested) = kind.element_message() {
        assert!(
            names.contains(nested.name),
            "{owner}.{field} refers to {}, which is not in all()",
            nested.name
        );
    }
}

#[test]
fn nested_messages_are_in_all() {
    let names: HashSet<&str> = all().iter().map(|m| m.name).collect();
    for m in all() {
        for f in m.fields {
            check_refs(m.name, f.name, &f.kind, &names);
        }
    }
}

#[test]
fn list_types_and_patch_strategies_are_on_arrays() {
    for m in all() {
        for f in m.fields {
            // Upstream marks a `[]byte` atomic too (a CSR's `request`).
            if f.list_type.is_some() || f.patch.and_then(|p| p.merge_key).is_some() {
                assert!(
                    matches!(f.kind, Kind::Array(_) | Kind::Bytes),
                    "{}.{} is not an array",
                    m.name,
                    f.name
                );
            }
            // A map list's keys, and a patch merge key, are fields of the element.
            let element = f.kind.element_message();
            if let (Some(ListType::Map(keys)), Some(element)) = (f.list_type, element) {
                for key in keys {
                    assert!(element.field(key).is_some(), "{}.{}: {key}", m.name, f.name);
                }
            }
            if let (Some(key), Some(element)) = (f.patch.and_then(|p| p.merge_key), element) {
                assert!(element.field(key).is_some(), "{}.{}: {key}", m.name, f.name);
            }
        }
    }
}

#[test]
fn top_level_kinds_and_lists() {
    let kinds = [
        ("", "v1", "ConfigMap", "io.k8s.api.core.v1.ConfigMap"),
        ("", "v1", "SecretList", "io.k8s.api.core.v1.SecretList"),
        ("", "v1", "Event", "io.k8s.api.core.v1.Event"),
        ("events.k8s.io", "v1", "Event", "io.k8s.api.events.v1.Event"),
        (
            "coordination.k8s.io",
            "v1",
            "LeaseList",
            "io.k8s.api.coordination.v1.LeaseList",
        ),
        (
            "autoscaling",
            "v1",
            "Scale",
            "io.k8s.api.autoscaling.v1.Scale",
        ),
        (
            "",
            "v1",
            "Status",
            "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
        ),
        (
            "events.k8s.io",
            "v1",
            "DeleteOptions",
            "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
        ),
        (
            "meta.k8s.io",
            "v1",
            "DeleteOptions",
            "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
        ),
        (
            "meta.k8s.io",
            "v1",
            "PartialObjectMetadataList",
            "io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList",
        ),
        (
            "meta.k8s.io",
            "v1beta1",
            "PartialObjectMetadata",
            "io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata",
        ),
        (
            "meta.k8s.io",
            "v1beta1",
            "PartialObjectMetadataList",
            "io.k8s.apimachinery.pkg.apis.meta.v1beta1.PartialObjectMetadataList",
        ),
    ];
    for (group, version, k, name) in kinds {
        let m = kind(group, version, k).unwrap_or_else(|| panic!("{group}/{version} {k}"));
        assert_eq!(m.name, name);
        assert!(
            all().iter().any(|a| std::ptr::eq(*a, m)),
            "{name} not in all()"
        );
        assert_eq!(m.fields[0].name, "kind", "{name}");
        assert_eq!(m.fields[1].name, "apiVersion", "{name}");
    }
    assert!(kind("", "v1", "Lease").is_none());
    assert!(kind("resource.k8s.io", "v1beta1", "DeleteOptions").is_none());
    assert!(kind("apps", "v1", "DeleteOptions").is_some());
    assert_eq!(
        kind("apps", "v1", "DeploymentList").map(|m| m.name),
        Some("io.k8s.api.apps.v1.DeploymentList")
    );
    assert!(kind("meta.k8s.io", "v1", "WatchEvent").is_none());
    assert!(kind("", "v2", "ConfigMap").is_none());
    assert!(kind("", "v1", "PartialObjectMetadata").is_none());
}

/// meta/v1beta1's PartialObjectMetadataList: items 1 and metadata 2, upstream's
/// generated.proto (ListMeta was added after the items).
#[test]
fn v1beta1_partial_list_keeps_its_numbers() {
    let list = "io.k8s.apimachinery.pkg.apis.meta.v1beta1.PartialObjectMetadataList";
    assert_eq!(tag(list, "items"), 1);
    assert_eq!(tag(list, "metadata"), 2);
    let v1 = "io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList";
    assert_eq!((tag(v1, "metadata"), tag(v1, "items")), (1, 2));
    assert_eq!(
        tag(
            "io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata",
            "metadata"
        ),
        1
    );
}

#[test]
fn lists_hold_list_meta_and_items() {
    for m in all().iter().filter(|m| m.name.ends_with("List")) {
        if m.name.ends_with("APIResourceList") || m.name.ends_with("APIGroupList") {
            continue;
        }
        // Its numbers are swapped upstream; checked in `v1beta1_partial_list_keeps_its_numbers`.
        if std::ptr::eq(*m, &crate::meta::v1beta1::PARTIAL_OBJECT_METADATA_LIST) {
            continue;
        }
        let metadata = m.field("metadata").expect("metadata");
        assert_eq!(metadata.tag, 1);
        assert_eq!(
            metadata.kind.element_message().map(|k| k.name),
            Some("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")
        );
        let items = m.field("items").expect("items");
        assert_eq!((items.tag, items.omit_empty), (2, false), "{}", m.name);
        let item = items.kind.element_message().expect("items of messages");
        assert_eq!(format!("{}List", item.name), m.name);
    }
}

/// Tag numbers checked by hand against upstream's generated.proto.
#[test]
fn tags_match_generated_proto() {
    let meta = "io.k8s.apimachinery.pkg.apis.meta.v1.";
    let checks = [
        ("ObjectMeta", "uid", 5),
        ("ObjectMeta", "creationTimestamp", 8),
        ("ObjectMeta", "finalizers", 14),
        ("ObjectMeta", "managedFields", 17),
        ("OwnerReference", "apiVersion", 5),
        ("OwnerReference", "kind", 1),
        ("ManagedFieldsEntry", "fieldsV1", 7),
        ("StatusDetails", "uid", 6),
        ("StatusDetails", "causes", 4),
        ("APIResource", "singularName", 6),
        ("APIResource", "storageVersionHash", 10),
        (
            "DeleteOptions",
            "ignoreStoreReadErrorWithClusterBreakingPotential",
            6,
        ),
    ];
    for (m, f, t) in checks {
        assert_eq!(tag(&format!("{meta}{m}"), f), t, "{m}.{f}");
    }
    let checks = [
        ("io.k8s.api.core.v1.Secret", "type", 3),
        ("io.k8s.api.core.v1.Secret", "stringData", 4),
        ("io.k8s.api.core.v1.Secret", "immutable", 5),
        ("io.k8s.api.core.v1.ConfigMap", "immutable", 4),
        (
            "io.k8s.api.core.v1.NamespaceCondition",
            "lastTransitionTime",
            4,
        ),
        ("io.k8s.api.core.v1.Event", "eventTime", 10),
        ("io.k8s.api.core.v1.Event", "reportingComponent", 14),
        ("io.k8s.api.core.v1.Event", "reportingInstance", 15),
        ("io.k8s.api.events.v1.Event", "regarding", 8),
        ("io.k8s.api.events.v1.Event", "deprecatedCount", 15),
        ("io.k8s.api.coordination.v1.LeaseSpec", "renewTime", 4),
        ("io.k8s.api.coordination.v1.LeaseSpec", "preferredHolder", 7),
    ];
    for (m, f, t) in checks {
        assert_eq!(tag(m, f), t, "{m}.{f}");
    }
}

#[test]
fn kinds_of_special_fields() {
    let secret = message("io.k8s.api.core.v1.Secret");
    assert!(matches!(
        secret.field("data").map(|f| f.kind),
        Some(Kind::Map(Kind::Bytes))
    ));
    let lease = message("io.k8s.api.coordination.v1.LeaseSpec");
    let renew = lease.field("renewTime").expect("renewTime");
    assert!(matches!(renew.kind, Kind::MicroTime) && renew.pointer);
    let entry = message("io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry");
    assert!(matches!(
        entry.field("fieldsV1").map(|f| f.kind),
        Some(Kind::FieldsV1)
    ));
    let watch = message("io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent");
    assert!(matches!(
        watch.field_by_tag(2).map(|f| f.kind),
        Some(Kind::RawExtension)
    ));
}

/// apiextensions.k8s.io/v1, checked by hand against k8s.io/apiextensions-apiserver
/// v0.33.0's `generated.proto`, `types.go` and `types_jsonschema.go`.
#[test]
fn apiextensions_v1_follows_upstream() {
    use crate::apiextensions::v1 as ext;
    let crds = crate::KINDS
        .iter()
        .find(|k| k.kind == "CustomResourceDefinition")
        .expect("CustomResourceDefinition");
    assert_eq!(
        (crds.group, crds.version, crds.plural, crds.scope),
        (
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "Cluster"
        )
    );
    assert!(std::ptr::eq(crds.message, &ext::CUSTOM_RESOURCE_DEFINITION));
    assert!(std::ptr::eq(
        kind("apiextensions.k8s.io", "v1", "CustomResourceDefinitionList").expect("list"),
        &ext::CUSTOM_RESOURCE_DEFINITION_LIST
    ));
    let spec =
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec";
    assert_eq!(
        (
            tag(spec, "names"),
            tag(spec, "versions"),
            tag(spec, "conversion")
        ),
        (3, 7, 9)
    );
    assert_eq!(tag(spec, "preserveUnknownFields"), 10);
    let props = &ext::JSON_SCHEMA_PROPS;
    let field = |name: &str| {
        props
            .field(name)
            .unwrap_or_else(|| panic!("JSONSchemaProps has no {name}"))
    };
    let checks: [(&str, u32, bool); 10] = [
        ("$schema", 2, false),
        ("$ref", 3, true),
        ("default", 8, true),
        ("maximum", 9, true),
        ("maxLength", 13, true),
        ("items", 24, true),
        ("additionalProperties", 30, true),
        ("x-kubernetes-preserve-unknown-fields", 38, true),
        ("x-kubernetes-embedded-resource", 39, false),
        ("x-kubernetes-validations", 44, false),
    ];
    for (name, number, pointer) in checks {
        let f = field(name);
        assert_eq!(
            (f.tag, f.pointer, f.omit_empty),
            (number, pointer, true),
            "{name}"
        );
    }
    assert!(matches!(field("default").kind, Kind::Json));
    assert!(matches!(field("enum").kind, Kind::Array(Kind::Json)));
    assert!(matches!(field("maximum").kind, Kind::Float64));
    assert!(matches!(
        field("items").kind,
        Kind::JsonSchemaPropsOrArray(m) if std::ptr::eq(m, &ext::JSON_SCHEMA_PROPS_OR_ARRAY)
    ));
    assert!(matches!(
        field("additionalItems").kind,
        Kind::JsonSchemaPropsOrBool(m) if std::ptr::eq(m, &ext::JSON_SCHEMA_PROPS_OR_BOOL)
    ));
    assert!(matches!(
        field("dependencies").kind,
        Kind::Map(Kind::JsonSchemaPropsOrStringArray(m))
            if std::ptr::eq(*m, &ext::JSON_SCHEMA_PROPS_OR_STRING_ARRAY)
    ));
    assert_eq!(
        field("x-kubernetes-validations").patch,
        Some(PatchMeta::merge_by("rule"))
    );
    // The unions' protobuf messages, their fields named as gogo names them.
    let wrong = kas_apimachinery::protobuf::decode(&[0xc2, 0x01, 2, 0x10, 1], props);
    assert_eq!(
        wrong.map_err(|e| e.to_string()).err().as_deref(),
        Some("proto: wrong wireType = 0 for field JSONSchemas")
    );
    let or_bool = &ext::JSON_SCHEMA_PROPS_OR_BOOL;
    assert!(matches!(
        or_bool.field_by_tag(1).map(|f| f.kind),
        Some(Kind::Bool)
    ));
    assert_eq!(
        field("items").kind.schema_message().map(|m| m.name),
        Some(props.name)
    );
    let status =
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus";
    for name in ["conditions", "acceptedNames", "storedVersions"] {
        let f = message(status).field(name).expect(name);
        assert!(!f.omit_empty && !f.pointer, "{name}");
    }
}

/// Patch metadata found through the tables, as upstream's Go tags have it.
#[test]
fn patch_metadata_follows_go_tags() {
    let paths: &[(&str, &str, &[&str], Option<PatchMeta>)] = &[
        (
            "",
            "ConfigMap",
            &["metadata", "finalizers"],
            Some(PatchMeta::MERGE),
        ),
        (
            "",
            "ConfigMap",
            &["metadata", "ownerReferences"],
            Some(PatchMeta::merge_by("uid")),
        ),
        ("", "ConfigMap", &["metadata", "managedFields"], None),
        (
            "",
            "ServiceAccount",
            &["secrets"],
            Some(PatchMeta::merge_by("name")),
        ),
        ("", "ServiceAccount", &["imagePullSecrets"], None),
        (
            "",
            "Namespace",
            &["status", "conditions"],
            Some(PatchMeta::merge_by("type")),
        ),
        ("", "Namespace", &["spec", "finalizers"], None),
        (
            "",
            "Pod",
            &["spec", "volumes"],
            Some(PatchMeta::merge_retain_keys_by("name")),
        ),
        (
            "",
            "Pod",
            &["spec", "containers", "[]", "env"],
            Some(PatchMeta::merge_by("name")),
        ),
        ("", "Pod", &["spec", "tolerations"], None),
        (
            "apps",
            "Deployment",
            &["spec", "template", "spec", "containers"],
            Some(PatchMeta::merge_by("name")),
        ),
    ];
    for (group, k, path, want) in paths {
        let got = kind(group, "v1", k).expect("kind").lookup(path);
        assert_eq!(got, *want, "{k} {path:?}");
    }
    // Every struct is closed: an unknown field names its Go struct, through lists, maps
    // and embedded structs; free-form values are not structs.
    let pod = kind("", "v1", "Pod").expect("Pod");
    assert_eq!(pod.unknown_field(&["spec", "nope"]), Some("PodSpec"));
    assert_eq!(
        pod.unknown_field(&["spec", "containers", "[]", "nope"]),
        Some("Container")
    );
    assert_eq!(
        pod.unknown_field(&["spec", "containers", "[]", "image"]),
        None
    );
    // `configMap` of a Volume is its embedded VolumeSource's.
    assert_eq!(
        pod.unknown_field(&["spec", "volumes", "[]", "configMap"]),
        None
    );
    assert_eq!(pod.unknown_field(&["metadata", "labels", "x"]), None);
}
