use serde_json::json;

use super::{smp, smp_err};
use crate::patch::{
    NoSchema, PatchError, builtin_schema, strategic_merge_patch, strategic_merge_patch_bytes,
};
use crate::status::StatusReason;

#[test]
fn maps_merge_and_null_deletes() {
    let original = json!({"metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}});
    let patch = json!({"metadata": {"labels": {"a": null, "c": "3", "gone": null}}});
    assert_eq!(
        smp(original, patch),
        json!({"metadata": {"name": "p", "labels": {"b": "2", "c": "3"}}})
    );
}

#[test]
fn a_key_missing_from_the_original_takes_the_patch_value_as_is() {
    let out = smp(
        json!({"metadata": {}}),
        json!({"metadata": {"annotations": {"x": null, "y": "1"}}}),
    );
    assert_eq!(
        out,
        json!({"metadata": {"annotations": {"x": null, "y": "1"}}})
    );
}

#[test]
fn containers_merge_by_name_and_new_items_come_first() {
    let original = json!({"spec": {"containers": [
        {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
        {"name": "b", "image": "b:1"}
    ]}});
    let patch = json!({"spec": {"containers": [
        {"name": "a", "image": "a:2", "env": [{"name": "Y", "value": "2"}, {"name": "X", "value": "9"}]},
        {"name": "c", "image": "c:1"}
    ]}});
    assert_eq!(
        smp(original, patch),
        json!({"spec": {"containers": [
            {"name": "a", "image": "a:2", "env": [{"name": "Y", "value": "2"}, {"name": "X", "value": "9"}]},
            {"name": "c", "image": "c:1"},
            {"name": "b", "image": "b:1"}
        ]}})
    );
}

#[test]
fn ports_merge_by_container_port_with_go_int_equality() {
    let original = json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "name": "http"}]}]}});
    let patch = json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}});
    assert_eq!(
        smp(original.clone(), patch),
        json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "name": "http", "protocol": "TCP"}]}]}})
    );
    // 80.0 is a float64 in Go: no match, so it is added.
    let patch =
        json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80.0}]}]}});
    let out = smp(original, patch);
    assert_eq!(
        out["spec"]["containers"][0]["ports"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn patch_delete_directive_removes_elements() {
    let original = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}});
    let patch = json!({"spec": {"containers": [{"name": "b", "$patch": "delete"}, {"name": "zz", "$patch": "delete"}]}});
    assert_eq!(
        smp(original, patch),
        json!({"spec": {"containers": [{"name": "a"}, {"name": "c"}]}})
    );
}

#[test]
fn patch_replace_directive_on_a_list() {
    let original = json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b"}]}});
    let patch = json!({"spec": {"containers": [{"name": "c"}, {"$patch": "replace"}]}});
    assert_eq!(
        smp(original, patch),
        json!({"spec": {"containers": [{"name": "c"}]}})
    );
}

#[test]
fn patch_directives_on_maps() {
    let original = json!({"metadata": {"labels": {"a": "1"}, "name": "n"}});
    let replaced = smp(
        original.clone(),
        json!({"metadata": {"labels": {"$patch": "replace", "b": "2"}}}),
    );
    assert_eq!(
        replaced,
        json!({"metadata": {"labels": {"b": "2"}, "name": "n"}})
    );
    let deleted = smp(
        original.clone(),
        json!({"metadata": {"labels": {"$patch": "delete"}}}),
    );
    assert_eq!(deleted, json!({"metadata": {"labels": {}, "name": "n"}}));
    let whole = smp(
        original.clone(),
        json!({"$patch": "replace", "kind": "Pod"}),
    );
    assert_eq!(whole, json!({"kind": "Pod"}));
    let err = smp_err(
        original,
        json!({"metadata": {"labels": {"$patch": "merge"}}}),
    );
    assert_eq!(
        err,
        PatchError::Other("unknown patch type: merge in map: map[$patch:merge]".into())
    );
}

#[test]
fn primitive_merge_lists_are_sets() {
    let original = json!({"metadata": {"finalizers": ["a", "b"]}});
    assert_eq!(
        smp(
            original.clone(),
            json!({"metadata": {"finalizers": ["b", "c"]}})
        ),
        json!({"metadata": {"finalizers": ["a", "b", "c"]}})
    );
    assert_eq!(
        smp(original.clone(), json!({"metadata": {"finalizers": ["c"]}})),
        json!({"metadata": {"finalizers": ["c", "a", "b"]}})
    );
    assert_eq!(
        smp(
            original.clone(),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a", "x"]}})
        ),
        json!({"metadata": {"finalizers": ["b"]}})
    );
    assert_eq!(
        smp(
            original,
            json!({"metadata": {"$setElementOrder/finalizers": ["b", "a", "c"], "finalizers": ["c"]}})
        ),
        json!({"metadata": {"finalizers": ["b", "a", "c"]}})
    );
    // Upstream quirk: a deletion list for a missing field becomes the field.
    assert_eq!(
        smp(
            json!({"metadata": {}}),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})
        ),
        json!({"metadata": {"finalizers": ["a"]}})
    );
}

#[test]
fn atomic_lists_are_replaced() {
    let original = json!({"spec": {"tolerations": [{"key": "a"}], "containers": [{"name": "c", "args": ["1", "2"]}]}});
    let patch = json!({"spec": {"tolerations": [{"key": "b"}], "containers": [{"name": "c", "args": ["3"]}]}});
    assert_eq!(
        smp(original, patch),
        json!({"spec": {"tolerations": [{"key": "b"}], "containers": [{"name": "c", "args": ["3"]}]}})
    );
    // ServiceAccount: secrets merge by name, imagePullSecrets are atomic.
    let sa = builtin_schema("", "v1", "ServiceAccount").unwrap();
    let original = json!({"secrets": [{"name": "s1"}], "imagePullSecrets": [{"name": "p1"}]});
    let patch = json!({"secrets": [{"name": "s2"}], "imagePullSecrets": [{"name": "p2"}]});
    assert_eq!(
        strategic_merge_patch(&original, &patch, sa).unwrap(),
        json!({"secrets": [{"name": "s2"}, {"name": "s1"}], "imagePullSecrets": [{"name": "p2"}]})
    );
    // Namespace spec.finalizers are atomic.
    let ns = builtin_schema("", "v1", "Namespace").unwrap();
    let out = strategic_merge_patch(
        &json!({"spec": {"finalizers": ["kubernetes"]}}),
        &json!({"spec": {"finalizers": ["x"]}}),
        ns,
    );
    assert_eq!(out.unwrap(), json!({"spec": {"finalizers": ["x"]}}));
}

#[test]
fn owner_references_merge_by_uid() {
    let cm = builtin_schema("", "v1", "ConfigMap").unwrap();
    let original = json!({"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}, {"uid": "2", "name": "b"}]}});
    let patch = json!({"metadata": {"ownerReferences": [{"uid": "2", "name": "B"}, {"uid": "1", "$patch": "delete"}]}});
    assert_eq!(
        strategic_merge_patch(&original, &patch, cm).unwrap(),
        json!({"metadata": {"ownerReferences": [{"uid": "2", "name": "B"}]}})
    );
}

#[test]
fn retain_keys_drops_unlisted_keys() {
    let original = json!({"spec": {"volumes": [{"name": "v", "hostPath": {"path": "/a"}}]}});
    let patch = json!({"spec": {"volumes": [{"name": "v", "emptyDir": {}, "$retainKeys": ["emptyDir", "name"]}]}});
    assert_eq!(
        smp(original.clone(), patch),
        json!({"spec": {"volumes": [{"name": "v", "emptyDir": {}}]}})
    );
    let bad =
        json!({"spec": {"volumes": [{"name": "v", "emptyDir": {}, "$retainKeys": ["name"]}]}});
    assert_eq!(
        smp_err(original.clone(), bad),
        PatchError::BadRequest("invalid patch format of retainKeys".into())
    );
    let not_list = json!({"spec": {"volumes": [{"name": "v", "$retainKeys": "name"}]}});
    assert_eq!(smp_err(original, not_list).to_status().code, 400);
}

#[test]
fn schema_free_patches_replace_every_list() {
    let original = json!({"spec": {"containers": [{"name": "a"}], "m": {"x": 1}}});
    let patch = json!({"spec": {"containers": [{"name": "b"}], "m": {"y": 2}}});
    assert_eq!(
        strategic_merge_patch(&original, &patch, &NoSchema).unwrap(),
        json!({"spec": {"containers": [{"name": "b"}], "m": {"x": 1, "y": 2}}})
    );
}

#[test]
fn type_changes_replace() {
    let out = smp(
        json!({"spec": {"x": 1, "y": "s"}}),
        json!({"spec": {"x": 1.5, "y": ["l"]}}),
    );
    assert_eq!(out, json!({"spec": {"x": 1.5, "y": ["l"]}}));
    assert_eq!(smp(json!({"a": 1}), json!(null)), json!({"a": 1}));
}

#[test]
fn errors_carry_upstream_texts_and_codes() {
    let original = json!({"metadata": {"name": "n"}, "spec": {"containers": [{"name": "a"}]}});
    let cases: Vec<(serde_json::Value, PatchError)> = vec![
        (
            json!({"spec": {"containers": [{"image": "x"}]}}),
            PatchError::Other("map: map[image:x] does not contain declared merge key: name".into()),
        ),
        (
            json!({"spec": {"containers": [{"name": "a", "$patch": "merge"}]}}),
            PatchError::Other("merging lists cannot yet be specified in the patch".into()),
        ),
        (
            json!({"spec": {"containers": [{"name": "a", "$patch": "bogus"}]}}),
            PatchError::Other("unknown patch type: bogus in map: map[$patch:bogus name:a]".into()),
        ),
        (
            json!({"metadata": {"name": "m", "bogus": "x"}, "$deleteFromPrimitiveListfinalizers": ["a"]}),
            PatchError::BadRequest("invalid patch format of primitive list".into()),
        ),
        (
            json!({"metadata": {"$setElementOrderfinalizers": ["a"]}}),
            PatchError::BadRequest("invalid patch format of setElementOrder list".into()),
        ),
        (
            json!({"metadata": {"$setElementOrder/bogus": ["a"]}}),
            PatchError::Other(
                "unable to find api field in struct ObjectMeta for the json field \"bogus\"".into(),
            ),
        ),
        (
            json!({"spec": {"containers": [{"name": "a"}, "x"]}}),
            PatchError::Other(
                "list element types are not identical: [[map[name:a]] [map[name:a] x]]".into(),
            ),
        ),
    ];
    for (patch, want) in cases {
        assert_eq!(
            smp_err(original.clone(), patch.clone()),
            want,
            "patch {patch}"
        );
    }
    let lists = smp_err(
        json!({"metadata": {"finalizers": [["a"]]}}),
        json!({"metadata": {"finalizers": [["b"]]}}),
    );
    assert_eq!(
        lists,
        PatchError::Unprocessable("lists of lists are not supported".into())
    );
    assert_eq!(lists.to_status().code, 422);
    let internal = smp_err(original, json!({"spec": {"containers": [{"image": "x"}]}})).to_status();
    assert_eq!(
        (internal.code, internal.reason),
        (500, Some(StatusReason::Unknown))
    );
    assert!(
        !String::from_utf8(internal.to_json())
            .unwrap()
            .contains("reason")
    );
}

#[test]
fn unknown_fields_fail_only_when_both_sides_have_them() {
    let cm = builtin_schema("", "v1", "ConfigMap").unwrap();
    // Present in the original with the same type: the lookup runs and fails.
    let err =
        strategic_merge_patch(&json!({"bogus": "a"}), &json!({"bogus": "b"}), cm).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unable to find api field in struct ConfigMap for the json field \"bogus\""
    );
    // Absent from the original: taken as is (the typed decode drops it later).
    assert_eq!(
        strategic_merge_patch(&json!({}), &json!({"bogus": "b"}), cm).unwrap(),
        json!({"bogus": "b"})
    );
}

#[test]
fn decoding_the_body() {
    let cm = builtin_schema("", "v1", "ConfigMap").unwrap();
    let err = strategic_merge_patch_bytes(&json!({}), b"[1]", cm).unwrap_err();
    assert_eq!(
        err,
        PatchError::BadRequest(
            "json: cannot unmarshal array into Go value of type map[string]interface {}".into()
        )
    );
    let err = strategic_merge_patch_bytes(&json!({}), b"{x", cm).unwrap_err();
    assert_eq!(
        err,
        PatchError::BadRequest(
            "invalid character 'x' looking for beginning of object key string".into()
        )
    );
    let out =
        strategic_merge_patch_bytes(&json!({"data": {"a": "1"}}), br#"{"data":{"b":"2"}}"#, cm)
            .unwrap();
    assert_eq!(out, json!({"data": {"a": "1", "b": "2"}}));
    assert!(builtin_schema("example.com", "v1", "Widget").is_none());
}
