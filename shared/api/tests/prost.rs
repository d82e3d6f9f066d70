//! The generated tables against an independent reading of upstream's `generated.proto`:
//! k8s-pb's prost types. For every kind, a sample object with every field set (unique
//! values, every embedded struct, one element in every list and map) is encoded with the
//! tables, decoded by prost into the kind's k8s-pb type, encoded again by prost, and
//! decoded with the tables. A field whose number, wire type or nesting were wrong would be
//! dropped by prost as unknown or fail to decode, and the object would not come back.

use kas_api::{Field, Kind, Message};
use kas_apimachinery::protobuf;
use kas_apimachinery::schema::go_encoded;
use prost::Message as _;
use serde_json::{Map, Value, json};

/// How many messages deep the sample fills; deeper messages are left out.
const DEPTH: usize = 6;

struct Sample {
    counter: i64,
}

impl Sample {
    fn next(&mut self) -> i64 {
        self.counter += 1;
        self.counter
    }

    fn object(&mut self, m: &'static Message, depth: usize) -> Value {
        let mut obj = Map::new();
        self.fill(m, depth, &mut obj);
        Value::Object(obj)
    }

    fn fill(&mut self, m: &'static Message, depth: usize, obj: &mut Map<String, Value>) {
        for f in m.fields {
            if f.tag == 0 {
                continue;
            }
            if let (true, Kind::Message(inner)) = (f.inline, &f.kind) {
                self.fill(inner, depth, obj);
                continue;
            }
            if let Some(v) = self.value(f, &f.kind, depth) {
                obj.insert(f.name.to_owned(), v);
            }
        }
    }

    fn value(&mut self, f: &Field, kind: &'static Kind, depth: usize) -> Option<Value> {
        let n = self.next();
        Some(match kind {
            Kind::String => json!(format!("{}-{n}", f.name)),
            Kind::Bool => json!(true),
            Kind::Int32 | Kind::Int64 => json!(n),
            Kind::Bytes => json!("aGVsbG8="),
            Kind::Time => json!("2024-01-02T03:04:05Z"),
            Kind::MicroTime => json!("2024-01-02T03:04:05.123456Z"),
            Kind::Quantity => json!(format!("{n}m")),
            Kind::IntOrString if n % 2 == 0 => json!(n),
            Kind::IntOrString => json!(format!("p{n}")),
            Kind::FieldsV1 => json!({"f:a": {}}),
            Kind::RawExtension => json!({"a": n}),
            Kind::Float64 => json!(n as f64 + 0.5),
            Kind::Json | Kind::Deduced if n % 2 == 0 => json!({"a": [n, "s", true, null, 1.5]}),
            Kind::Json | Kind::Deduced => json!(format!("j{n}")),
            // The unions take both of their forms, by turns.
            Kind::JsonSchemaPropsOrArray(u) | Kind::JsonSchemaPropsOrStringArray(u)
                if n % 2 == 0 =>
            {
                let array = u.field_by_tag(2)?;
                self.value(array, &array.kind, depth)?
            }
            Kind::JsonSchemaPropsOrBool(_) if n % 2 == 0 => json!(n % 4 == 0),
            Kind::JsonSchemaPropsOrArray(u)
            | Kind::JsonSchemaPropsOrBool(u)
            | Kind::JsonSchemaPropsOrStringArray(u) => {
                let schema = u.field_by_tag(if matches!(kind, Kind::JsonSchemaPropsOrBool(_)) {
                    2
                } else {
                    1
                })?;
                self.value(schema, &schema.kind, depth)?
            }
            Kind::Message(m) if depth < DEPTH => self.object(m, depth + 1),
            Kind::Message(_) => return None,
            Kind::Array(inner) => Value::Array(vec![self.value(f, inner, depth)?]),
            Kind::Map(inner) => json!({ "k": self.value(f, inner, depth)? }),
        })
    }
}

fn round_trip<T: prost::Message + Default>(group: &str, version: &str, kind: &str) {
    let msg = kas_api::kind(group, version, kind)
        .unwrap_or_else(|| panic!("{group}/{version} {kind} is not registered"));
    let mut sample = Sample { counter: 0 }.object(msg, 0);
    go_encoded(&mut sample, &Kind::Message(msg));
    let mut ours = Vec::new();
    protobuf::encode(&sample, msg, &mut ours)
        .unwrap_or_else(|e| panic!("{kind}: encoding the sample: {e}"));
    let theirs = T::decode(ours.as_slice())
        .unwrap_or_else(|e| panic!("{kind}: prost cannot decode our bytes: {e}"))
        .encode_to_vec();
    let back = protobuf::decode(&theirs, msg)
        .unwrap_or_else(|e| panic!("{kind}: decoding prost's bytes: {e}"));
    assert_eq!(
        back, sample,
        "{group}/{version} {kind}: the object did not survive prost"
    );
    // prost writes fields in declaration order, gogo (and we) in tag order: the same
    // bytes once both are in tag order, which a message without out-of-order fields is.
    if is_tag_ordered(msg) {
        assert_eq!(
            ours.len(),
            theirs.len(),
            "{kind}: prost's encoding has a different size"
        );
    }
}

fn is_tag_ordered(m: &'static Message) -> bool {
    m.fields
        .iter()
        .filter(|f| f.tag != 0)
        .is_sorted_by_key(|f| f.tag)
}

macro_rules! pb_kinds {
    ($(($group:literal, $version:literal, $kind:literal, $ty:ty),)*) => {
        #[test]
        fn every_kind_survives_prost() {
            let mut count = 0;
            $(
                round_trip::<$ty>($group, $version, $kind);
                count += 1;
            )*
            assert!(count > 100, "only {count} kinds");
        }
    };
}

include!("../src/generated/pb_types.rs");

/// Discovery's documents too: `APIResource.verbs` is go-to-protobuf's `Verbs` wrapper.
#[test]
fn discovery_documents_survive_prost() {
    use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
    round_trip::<meta::APIResourceList>("", "v1", "APIResourceList");
    round_trip::<meta::APIGroupList>("", "v1", "APIGroupList");
    round_trip::<meta::Status>("", "v1", "Status");
}

/// The test notices a wrong number: the same sample with one tag changed does not survive.
#[test]
fn a_wrong_tag_is_caught() {
    static WRONG: Message = Message {
        name: "io.k8s.api.core.v1.ConfigMap",
        description: "",
        fields: &[
            Field::new(
                "metadata",
                1,
                Kind::Message(&kas_api::meta::v1::OBJECT_META),
            ),
            // `data` is 2 upstream.
            Field::new("data", 9, Kind::Map(&Kind::String)),
        ],
        required: &[],
        atomic: false,
    };
    let sample = json!({"metadata": {"name": "a"}, "data": {"k": "v"}});
    let mut ours = Vec::new();
    protobuf::encode(&sample, &WRONG, &mut ours).expect("encode");
    let theirs = k8s_pb::api::core::v1::ConfigMap::decode(ours.as_slice())
        .expect("decode")
        .encode_to_vec();
    let back = protobuf::decode(&theirs, &WRONG).expect("decode");
    assert_ne!(back, sample);
}

/// A CustomResourceDefinition with a schema using every JSON form of the
/// `JSONSchemaProps` unions and `JSON` values: JSON → protobuf → prost → protobuf → JSON
/// gives it back unchanged, and prost reads the protobuf form upstream's `generated.proto`
/// gives each form.
#[test]
fn a_rich_custom_resource_definition_survives_prost() {
    use k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1 as pb;
    let msg = &kas_api::apiextensions::v1::CUSTOM_RESOURCE_DEFINITION;
    let schema = json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "description": "a widget",
        "required": ["spec"],
        "properties": {
            "spec": {
                "type": "object",
                "default": {"replicas": 1, "mode": "auto"},
                "example": {"replicas": 3},
                "x-kubernetes-preserve-unknown-fields": false,
                "x-kubernetes-validations": [
                    {"rule": "self.replicas >= 0", "message": "no negatives",
                     "reason": "FieldValueInvalid", "fieldPath": ".replicas",
                     "optionalOldSelf": true},
                ],
                "properties": {
                    "replicas": {"type": "integer", "format": "int32", "minimum": 0,
                        "maximum": 10.5, "multipleOf": 1, "exclusiveMaximum": true},
                    "mode": {"type": "string", "enum": ["auto", "manual", null, 3, {"x": [1]}],
                        "maxLength": 16, "minLength": 0, "pattern": "^[a-z]+$", "nullable": true},
                    "ports": {
                        "type": "array",
                        "items": {"type": "object", "required": ["name"],
                            "properties": {"name": {"type": "string"}},
                            "additionalProperties": false},
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "maxItems": 8, "minItems": 1, "uniqueItems": true,
                    },
                    "tuple": {
                        "type": "array",
                        "items": [{"type": "string"}, {"type": "integer", "maximum": 1e+21}],
                        "additionalItems": {"type": "boolean"},
                    },
                    "labels": {"type": "object", "additionalProperties": {"type": "string"},
                        "x-kubernetes-map-type": "granular", "maxProperties": 4, "minProperties": 1},
                    "free": {"type": "object", "additionalProperties": true,
                        "x-kubernetes-preserve-unknown-fields": true},
                    "embedded": {"type": "object", "x-kubernetes-embedded-resource": true,
                        "x-kubernetes-preserve-unknown-fields": true},
                    "port": {"x-kubernetes-int-or-string": true,
                        "anyOf": [{"type": "integer"}, {"type": "string"}]},
                    "ref": {"$ref": "#/definitions/thing", "id": "thing", "title": "Thing"},
                    "dependent": {
                        "type": "object",
                        "dependencies": {"a": ["b", "c"], "d": {"required": ["e"]}},
                        "patternProperties": {"^x-": {"type": "string"}},
                        "allOf": [{"minProperties": 1}],
                        "oneOf": [{"required": ["a"]}],
                        "not": {"required": ["z"]},
                        "definitions": {"thing": {"type": "string", "default": "x"}},
                    },
                    "docs": {"type": "string", "externalDocs":
                        {"description": "see", "url": "https://example.com"},
                        "default": "", "example": false, "exclusiveMinimum": true,
                        "minimum": -2.25},
                },
            },
        },
    });
    let sample = json!({
        "metadata": {"name": "widgets.example.com", "creationTimestamp": null},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                "listKind": "WidgetList", "shortNames": ["wd"], "categories": ["all"]},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "deprecated": true, "deprecationWarning": "use v2",
                "schema": {"openAPIV3Schema": schema},
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
                "additionalPrinterColumns": [{"name": "Mode", "type": "string",
                    "jsonPath": ".spec.mode", "priority": 1, "description": "the mode"}],
                "selectableFields": [{"jsonPath": ".spec.mode"}],
            }],
            "conversion": {"strategy": "Webhook", "webhook": {
                "clientConfig": {"service": {"namespace": "ns", "name": "svc",
                    "path": "/convert", "port": 443}, "caBundle": "aGVsbG8="},
                "conversionReviewVersions": ["v1"]}},
        },
        "status": {
            "conditions": [{"type": "Established", "status": "True",
                "lastTransitionTime": "2024-01-02T03:04:05Z", "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted"}],
            "acceptedNames": {"plural": "widgets", "kind": "Widget"},
            "storedVersions": ["v1"],
        },
    });
    // Already what Go writes for it.
    let mut encoded = sample.clone();
    go_encoded(&mut encoded, &Kind::Message(msg));
    assert_eq!(encoded, sample);

    let mut ours = Vec::new();
    protobuf::encode(&sample, msg, &mut ours).expect("encode");
    let crd = pb::CustomResourceDefinition::decode(ours.as_slice()).expect("prost decodes");
    let back = protobuf::decode(&crd.encode_to_vec(), msg).expect("decode prost's bytes");
    assert_eq!(back, sample);

    // The protobuf forms, as prost reads them.
    let root = crd.spec.as_ref().expect("spec").versions[0]
        .schema
        .as_ref()
        .and_then(|s| s.open_apiv3_schema.as_ref())
        .expect("schema");
    assert_eq!(
        root.schema.as_deref(),
        Some("http://json-schema.org/draft-04/schema#")
    );
    let spec = &root.properties["spec"];
    let raw = |j: &Option<pb::Json>| j.as_ref().and_then(|j| j.raw.clone());
    assert_eq!(
        raw(&spec.default).as_deref(),
        Some(&br#"{"mode":"auto","replicas":1}"#[..])
    );
    assert_eq!(spec.x_kubernetes_preserve_unknown_fields, Some(false));
    let p = &spec.properties;
    let mode = &p["mode"];
    let enums: Vec<Option<Vec<u8>>> = mode.r#enum.iter().map(|j| j.raw.clone()).collect();
    assert_eq!(
        enums,
        [
            Some(b"\"auto\"".to_vec()),
            Some(b"\"manual\"".to_vec()),
            None,
            Some(b"3".to_vec()),
            Some(br#"{"x":[1]}"#.to_vec())
        ]
    );
    assert_eq!(p["replicas"].maximum, Some(10.5));
    assert_eq!(p["replicas"].minimum, Some(0.0));
    let items = p["ports"].items.as_ref().expect("items");
    assert!(items.schema.is_some() && items.j_son_schemas.is_empty());
    let object = items.schema.as_ref().expect("schema");
    let no_more = object.additional_properties.as_ref().expect("bool");
    assert_eq!(
        (no_more.allows, no_more.schema.is_none()),
        (Some(false), true)
    );
    let tuple = p["tuple"].items.as_ref().expect("items");
    assert_eq!(
        (tuple.schema.is_none(), tuple.j_son_schemas.len()),
        (true, 2)
    );
    assert_eq!(tuple.j_son_schemas[1].maximum, Some(1e21));
    let labels = p["labels"].additional_properties.as_ref().expect("schema");
    assert_eq!(labels.allows, Some(true));
    assert_eq!(
        labels.schema.as_ref().and_then(|s| s.r#type.as_deref()),
        Some("string")
    );
    let free = p["free"].additional_properties.as_ref().expect("true");
    assert_eq!((free.allows, free.schema.is_none()), (Some(true), true));
    assert_eq!(p["ref"].r#ref.as_deref(), Some("#/definitions/thing"));
    let deps = &p["dependent"].dependencies;
    assert_eq!(deps["a"].property, ["b", "c"]);
    assert!(deps["a"].schema.is_none());
    assert_eq!(
        deps["d"].schema.as_ref().map(|s| s.required.clone()),
        Some(vec!["e".to_owned()])
    );
    assert_eq!(raw(&p["docs"].default).as_deref(), Some(&b"\"\""[..]));
    assert_eq!(raw(&p["docs"].example).as_deref(), Some(&b"false"[..]));
}
