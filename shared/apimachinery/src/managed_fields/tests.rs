use serde_json::json;

use super::*;
use crate::schema::{Field, Kind, Message};

static META: Message = Message {
    name: "test.Meta",
    description: "",
    fields: &[
        Field::new("name", 1, Kind::String),
        Field::new("labels", 2, Kind::Map(&Kind::String)),
        Field::new("creationTimestamp", 3, Kind::Time),
    ],
    required: &[],
    atomic: false,
};
static STATUS: Message = Message {
    name: "test.Status",
    description: "",
    fields: &[Field::new("phase", 1, Kind::String)],
    required: &[],
    atomic: false,
};
static OBJ: Message = Message {
    name: "test.Obj",
    description: "",
    fields: &[
        Field::new("kind", 0, Kind::String),
        Field::new("metadata", 1, Kind::Message(&META)),
        Field::new("data", 2, Kind::Map(&Kind::String)),
        Field::new("status", 3, Kind::Message(&STATUS)),
    ],
    required: &[],
    atomic: false,
};

fn op<'a>(manager: &'a str, time: &str) -> Operation<'a> {
    Operation {
        manager,
        api_version: "v1",
        subresource: "",
        time: time.to_owned(),
        ignored: field_paths(&["status"]),
    }
}

fn write(entries: Vec<Entry>, old: &Value, new: &Value, op: &Operation<'_>) -> Vec<Entry> {
    let cmp = |v: &str| (v == "v1").then(|| compare(old, new, &OBJ));
    update(entries, &cmp, op)
}

fn fields(entries: &[Entry]) -> Vec<(String, Value)> {
    entries
        .iter()
        .map(|e| (e.manager.clone(), e.fields.to_json()))
        .collect()
}

#[test]
fn a_create_owns_what_it_set_but_server_fields_and_reset_ones() {
    let zero = json!({"metadata": {"creationTimestamp": null}, "status": {}});
    let new = json!({"kind": "Obj", "metadata": {"name": "x", "labels": {"app": "a"},
        "creationTimestamp": null}, "data": {"k": "v"}, "status": {"phase": "Active"}});
    let entries = write(
        Vec::new(),
        &zero,
        &new,
        &op("kubectl-create", "2024-01-01T00:00:00Z"),
    );
    assert_eq!(
        encode(&entries),
        json!([{
            "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1",
            "time": "2024-01-01T00:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:k": {}},
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}])
    );
    assert_eq!(decode(Some(&encode(&entries))), Some(entries));
}

#[test]
fn updates_move_fields_between_managers() {
    let v1 = json!({"metadata": {"name": "x"}, "data": {"a": "1", "b": "2"}});
    let created = write(
        Vec::new(),
        &json!({}),
        &v1,
        &op("create", "2024-01-01T00:00:00Z"),
    );

    // Another manager changes a and adds c: it takes both; b stays with the creator.
    let v2 = json!({"metadata": {"name": "x"}, "data": {"a": "9", "b": "2", "c": "3"}});
    let edited = write(created, &v1, &v2, &op("edit", "2024-01-01T00:01:00Z"));
    assert_eq!(
        fields(&edited),
        [
            ("create".into(), json!({"f:data": {".": {}, "f:b": {}}})),
            ("edit".into(), json!({"f:data": {"f:a": {}, "f:c": {}}})),
        ]
    );

    // Removing b takes it from the creator, which keeps the map itself; a write that
    // changes nothing changes no entry, not even its time.
    let v3 = json!({"metadata": {"name": "x"}, "data": {"a": "9", "c": "3"}});
    let removed = write(edited, &v2, &v3, &op("edit", "2024-01-01T00:02:00Z"));
    assert_eq!(
        fields(&removed),
        [
            ("create".into(), json!({"f:data": {}})),
            ("edit".into(), json!({"f:data": {"f:a": {}, "f:c": {}}})),
        ]
    );
    assert_eq!(removed[1].time.as_deref(), Some("2024-01-01T00:01:00Z"));
    let same = write(
        removed.clone(),
        &v3,
        &v3,
        &op("edit", "2024-01-01T00:03:00Z"),
    );
    assert_eq!(same, removed);

    // The same manager again: its fields are merged, its time moves.
    let v4 = json!({"metadata": {"name": "x", "labels": {"l": "1"}}, "data": {"a": "9", "c": "3"}});
    let labeled = write(same, &v3, &v4, &op("edit", "2024-01-01T00:04:00Z"));
    assert_eq!(
        labeled[1].fields.to_json(),
        json!({"f:data": {"f:a": {}, "f:c": {}}, "f:metadata": {"f:labels": {".": {}, "f:l": {}}}})
    );
    assert_eq!(labeled[1].time.as_deref(), Some("2024-01-01T00:04:00Z"));

    // Removing the whole map empties the creator, which is dropped.
    let v5 = json!({"metadata": {"name": "x", "labels": {"l": "1"}}});
    let emptied = write(labeled, &v4, &v5, &op("edit", "2024-01-01T00:05:00Z"));
    assert_eq!(
        fields(&emptied),
        [(
            "edit".into(),
            json!({"f:metadata": {"f:labels": {".": {}, "f:l": {}}}})
        )]
    );
}

#[test]
fn entries_of_other_versions_are_compared_in_their_version() {
    let old = json!({"data": {"a": "1"}});
    let new = json!({"data": {"a": "2"}});
    let mut entries = write(
        Vec::new(),
        &json!({}),
        &old,
        &op("m", "2024-01-01T00:00:00Z"),
    );
    entries[0].api_version = "v2".into();
    // v2 cannot be compared: its entry is left as it is.
    let cmp = |v: &str| (v == "v1").then(|| compare(&old, &new, &OBJ));
    let after = update(entries.clone(), &cmp, &op("n", "2024-01-01T00:01:00Z"));
    assert_eq!(after[0], entries[0]);
    assert_eq!(after.len(), 2);
}

#[test]
fn past_ten_update_managers_the_oldest_merge_into_ancient_changes() {
    let mut entries = Vec::new();
    let mut old = json!({"data": {}});
    for i in 0..12 {
        let mut new = old.clone();
        new["data"][format!("k{i:02}")] = json!("v");
        let time = format!("2024-01-01T00:00:{i:02}Z");
        entries = write(entries, &old, &new, &op(&format!("m{i:02}"), &time));
        old = new;
    }
    let managers: Vec<&str> = entries.iter().map(|e| e.manager.as_str()).collect();
    assert_eq!(
        managers,
        [
            "ancient-changes",
            "m03",
            "m04",
            "m05",
            "m06",
            "m07",
            "m08",
            "m09",
            "m10",
            "m11"
        ]
    );
    assert_eq!(
        entries[0].fields.to_json(),
        json!({"f:data": {"f:k00": {}, "f:k01": {}, "f:k02": {}}})
    );
    assert_eq!(entries[0].time.as_deref(), Some("2024-01-01T00:00:02Z"));
}

#[test]
fn the_manager_is_the_parameter_or_the_user_agent_prefix() {
    assert_eq!(
        manager(Some("kubectl-edit"), Some("kubectl/v1.33.0")),
        "kubectl-edit"
    );
    assert_eq!(
        manager(None, Some("kubectl/v1.33.0 (linux/amd64) kubernetes/abc")),
        "kubectl"
    );
    assert_eq!(manager(Some(""), Some("a\tb/1")), "ab");
    assert_eq!(manager(None, None), "unknown");
    assert_eq!(manager(None, Some(&"x".repeat(200))).len(), 128);
}

#[test]
fn entries_that_are_not_fields_v1_do_not_decode() {
    assert_eq!(decode(Some(&json!([{"manager": "m"}]))), None);
    assert_eq!(decode(Some(&json!("x"))), None);
    assert_eq!(decode(None), Some(Vec::new()));
}

#[test]
fn an_empty_list_or_one_empty_entry_resets_the_entries() {
    assert!(is_reset(Some(&json!([]))));
    assert!(is_reset(Some(&json!([{}]))));
    assert!(is_reset(Some(&json!([{"manager": "", "time": null}]))));
    assert!(!is_reset(None));
    assert!(!is_reset(Some(&Value::Null)));
    assert!(!is_reset(Some(&json!([{"manager": "m"}]))));
    assert!(!is_reset(Some(&json!([{"fieldsV1": {}}]))));
    assert!(!is_reset(Some(&json!([{}, {}]))));
}
