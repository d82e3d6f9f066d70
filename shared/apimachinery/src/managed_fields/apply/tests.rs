use serde_json::json;

use super::*;
use crate::managed_fields::field_paths;
use crate::schema::{Field, Kind};

static META: Message = Message {
    name: "test.Meta",
    description: "",
    fields: &[
        Field::new("name", 1, Kind::String),
        Field::new("labels", 2, Kind::Map(&Kind::String)),
        Field::new("annotations", 3, Kind::Map(&Kind::String)),
    ],
    required: &[],
    atomic: false,
};
static ITEM: Message = Message {
    name: "test.Item",
    description: "",
    fields: &[
        Field::new("name", 1, Kind::String),
        Field::new("value", 2, Kind::String),
    ],
    required: &[],
    atomic: false,
};
static OBJ: Message = Message {
    name: "test.Obj",
    description: "",
    fields: &[
        Field::new("apiVersion", 0, Kind::String),
        Field::new("kind", 1, Kind::String),
        Field::new("metadata", 2, Kind::Message(&META)),
        Field::new("data", 3, Kind::Map(&Kind::String)),
        Field::new("items", 4, Kind::Array(&Kind::Message(&ITEM)))
            .list_type(ListType::Map(&["name"])),
        Field::new("status", 5, Kind::Message(&META)),
    ],
    required: &[],
    atomic: false,
};

fn op(manager: &str, force: bool) -> (Operation<'_>, bool) {
    let op = Operation {
        manager,
        api_version: "v1",
        subresource: "",
        time: "2026-01-01T00:00:00Z".to_owned(),
        ignored: field_paths(&["status"]),
    };
    (op, force)
}

fn run(
    entries: Vec<Entry>,
    live: &Value,
    config: &Value,
    (op, force): &(Operation<'_>, bool),
) -> Result<Applied, Vec<Conflict>> {
    apply(entries, live, config, &OBJ, &|_, _| None, op, *force)
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Obj", "metadata": {"name": "x"}, "data": data})
}

#[test]
fn the_configuration_is_merged_and_owned_without_the_servers_fields() {
    let live = json!({"metadata": {"name": "x", "labels": {"keep": "1"}}, "data": {"old": "1"}});
    let config = json!({"apiVersion": "v1", "kind": "Obj", "metadata": {"name": "x", "labels": {"app": "a"}},
        "data": {"a": "1"}, "status": {"name": "ignored"}});
    let out = run(Vec::new(), &live, &config, &op("kubectl", false)).unwrap();
    assert_eq!(out.object["data"], json!({"old": "1", "a": "1"}));
    assert_eq!(
        out.object["metadata"]["labels"],
        json!({"keep": "1", "app": "a"})
    );
    let [e] = out.entries.as_slice() else {
        panic!("{:?}", out.entries)
    };
    assert_eq!(
        (e.operation.as_str(), e.time.as_deref()),
        ("Apply", Some("2026-01-01T00:00:00Z"))
    );
    assert_eq!(
        e.fields.to_json(),
        json!({"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}}})
    );
}

#[test]
fn fields_applied_before_and_left_out_now_are_removed_unless_someone_else_owns_them() {
    let live = cm(json!({"a": "1", "b": "2", "c": "3"}));
    let first = run(
        Vec::new(),
        &live,
        &cm(json!({"a": "1", "b": "2", "c": "3"})),
        &op("m", false),
    )
    .unwrap();
    let mut entries = first.entries;
    // Another manager also set c.
    entries.push(Entry {
        manager: "other".into(),
        operation: UPDATE.into(),
        api_version: "v1".into(),
        time: None,
        subresource: String::new(),
        fields: field_set(&json!({"data": {"c": "3"}}), &OBJ),
    });
    let second = run(entries, &live, &cm(json!({"a": "1"})), &op("m", false)).unwrap();
    assert_eq!(second.object["data"], json!({"a": "1", "c": "3"}));
    // Nothing applied any more: the map goes with its last key.
    let third = run(
        second.entries,
        &second.object,
        &cm(json!({})),
        &op("m", false),
    )
    .unwrap();
    assert_eq!(third.object["data"], json!({"c": "3"}));
}

#[test]
fn a_changed_field_another_manager_owns_is_a_conflict_unless_forced() {
    let live = cm(json!({"a": "1"}));
    let owner = Entry {
        manager: "kubectl-edit".into(),
        operation: UPDATE.into(),
        api_version: "v1".into(),
        time: Some("2025-01-01T00:00:00Z".into()),
        subresource: String::new(),
        fields: field_set(&json!({"data": {"a": "1"}}), &OBJ),
    };
    // The same value is shared, not a conflict.
    let same = run(
        vec![owner.clone()],
        &live,
        &cm(json!({"a": "1"})),
        &op("m", false),
    )
    .unwrap();
    assert_eq!(same.entries.len(), 2);
    // A new value is.
    let err = run(
        vec![owner.clone()],
        &live,
        &cm(json!({"a": "2"})),
        &op("m", false),
    )
    .err()
    .unwrap();
    assert_eq!(
        err,
        vec![Conflict {
            manager: "\"kubectl-edit\" using v1".into(),
            path: ".data.a".into()
        }]
    );
    let status = conflict_status(&err);
    assert_eq!(status.code, 409);
    assert_eq!(
        status.message.as_deref(),
        Some("Apply failed with 1 conflict: conflict with \"kubectl-edit\" using v1: .data.a")
    );
    let forced = run(vec![owner], &live, &cm(json!({"a": "2"})), &op("m", true)).unwrap();
    assert_eq!(forced.object["data"]["a"], "2");
    assert_eq!(forced.entries.len(), 1, "the updater lost its only field");
}

#[test]
fn associative_lists_merge_by_key_in_the_configurations_order() {
    let live = json!({"items": [{"name": "a", "value": "1"}, {"name": "b"}, {"name": "c"}]});
    let config =
        json!({"items": [{"name": "c", "value": "3"}, {"name": "a", "value": "9"}, {"name": "d"}]});
    let out = merge(Some(&live), Some(&config), Shape::Fields(&OBJ)).unwrap();
    assert_eq!(
        out["items"],
        json!([{"name": "b"}, {"name": "c", "value": "3"}, {"name": "a", "value": "9"}, {"name": "d"}])
    );
    assert_eq!(
        path_string(&[
            "f:items".into(),
            "k:{\"name\":\"a\"}".into(),
            "f:value".into()
        ]),
        ".items[name=\"a\"].value"
    );
}

#[test]
fn an_unchanged_object_keeps_the_appliers_time() {
    let live = cm(json!({"a": "1"}));
    let first = run(Vec::new(), &cm(json!({})), &live, &op("m", false)).unwrap();
    let mut again = op("m", false);
    again.0.time = "2027-01-01T00:00:00Z".into();
    let second = run(first.entries, &first.object, &live, &again).unwrap();
    assert_eq!(
        second.entries[0].time.as_deref(),
        Some("2026-01-01T00:00:00Z")
    );
}

#[test]
fn kubectl_takes_over_what_client_side_apply_set_and_nobody_changed() {
    let last =
        r#"{"apiVersion":"v1","data":{"a":"1","b":"1"},"kind":"Obj","metadata":{"name":"x"}}"#;
    let live = json!({"apiVersion": "v1", "kind": "Obj",
        "metadata": {"name": "x", "annotations": {LAST_APPLIED: format!("{last}\n")}},
        "data": {"a": "1", "b": "5"}});
    let csa = Entry {
        manager: "kubectl-client-side-apply".into(),
        operation: UPDATE.into(),
        api_version: "v1".into(),
        time: None,
        subresource: String::new(),
        fields: field_set(&json!({"data": {"a": "1", "b": "1"}}), &OBJ),
    };
    // a still holds what client-side apply set: no conflict for kubectl; b was changed
    // since, so it conflicts still.
    let out = run(
        vec![csa.clone()],
        &live,
        &cm(json!({"a": "2"})),
        &op("kubectl", false),
    )
    .unwrap();
    assert_eq!(out.object["data"]["a"], "2");
    assert_eq!(
        out.object["metadata"]["annotations"][LAST_APPLIED],
        "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"2\"},\"kind\":\"Obj\",\"metadata\":{\"name\":\"x\"}}\n"
    );
    let err = run(
        vec![csa.clone()],
        &live,
        &cm(json!({"a": "2", "b": "2"})),
        &op("kubectl", false),
    )
    .err()
    .unwrap();
    assert_eq!(
        err.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(),
        [".data.b"]
    );
    // Another applier gets no such allowance.
    assert!(
        run(
            vec![csa],
            &live,
            &cm(json!({"a": "2"})),
            &op("other", false)
        )
        .is_err()
    );
}

#[test]
fn list_items_are_printed_by_key_value_or_index() {
    let item = json!({"name": "a", "value": "1"});
    assert_eq!(
        item_path(&item, 3, Some(ListType::Map(&["name"]))),
        "[name=\"a\"]"
    );
    assert_eq!(item_path(&json!("x"), 0, Some(ListType::Set)), "[=\"x\"]");
    assert_eq!(item_path(&json!(3), 0, Some(ListType::Set)), "[=3]");
    assert_eq!(item_path(&item, 3, Some(ListType::Atomic)), "[3]");
}
