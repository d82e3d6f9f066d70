use std::sync::Arc;

use kas_storage::Object;
use serde_json::json;

use super::*;
use crate::testutil::*;

fn object(key: &str, value: &Value) -> ObjectRef {
    Arc::new(Object::new(key, 1, value.clone()).unwrap())
}

#[test]
fn events_add_modify_and_delete() {
    let index = Index::new();
    let (_, v1) = cluster_role("r", &[rule_json("get", "", "pods", "")]);
    let (_, v2) = cluster_role(
        "r",
        &[
            rule_json("get", "", "pods", ""),
            rule_json("list", "", "pods", ""),
        ],
    );
    index
        .apply(
            Kind::ClusterRole,
            &WatchEvent::Added(object("/clusterroles/r", &v1)),
        )
        .unwrap();
    assert_eq!(index.view().cluster_role("r").unwrap().len(), 1);
    index
        .apply(
            Kind::ClusterRole,
            &WatchEvent::Modified(object("/clusterroles/r", &v2)),
        )
        .unwrap();
    assert_eq!(index.view().cluster_role("r").unwrap().len(), 2);
    index
        .apply(Kind::ClusterRole, &WatchEvent::Bookmark(9))
        .unwrap();
    index
        .apply(
            Kind::ClusterRole,
            &WatchEvent::Deleted(object("/clusterroles/r", &v2)),
        )
        .unwrap();
    assert!(index.view().cluster_role("r").is_none());
    assert!(index.is_empty());
}

#[test]
fn roles_are_per_namespace_and_cluster_kinds_ignore_namespaces() {
    let index = Index::new();
    for (kind, v) in [
        role("a", "r", &[rule_json("get", "", "pods", "")]),
        role("b", "r", &[]),
        cluster_role("c", &[]),
    ] {
        index.upsert_value(kind, &v).unwrap();
    }
    // A namespace on a cluster-scoped object is not part of its key.
    let stray = json!({"metadata": {"name": "crb", "namespace": "x"}, "roleRef": {"kind": "ClusterRole", "name": "c"}, "subjects": [{"kind": "User", "name": "u"}]});
    index
        .upsert_value(Kind::ClusterRoleBinding, &stray)
        .unwrap();
    let view = index.view();
    assert_eq!(view.role("a", "r").unwrap().len(), 1);
    assert_eq!(view.role("b", "r").unwrap().len(), 0);
    assert!(view.role("c", "r").is_none());
    assert!(view.role("", "c").is_none(), "ClusterRoles are not Roles");
    assert_eq!(
        view.cluster_role_bindings
            .candidates("", &user("u", &[]))
            .len(),
        1
    );
    drop(view);
    assert_eq!(index.len(Kind::Role), 2);
    assert_eq!(index.len(Kind::ClusterRole), 1);
    index
        .remove(
            Kind::ClusterRoleBinding,
            Doc::Value(&json!({"metadata": {"name": "crb"}})),
        )
        .unwrap();
    assert_eq!(index.len(Kind::ClusterRoleBinding), 0);
}

#[test]
fn replace_swaps_the_whole_kind_and_skips_what_does_not_decode() {
    let index = Index::new();
    index
        .upsert_value(
            Kind::RoleBinding,
            &role_binding("ns", "old", "Role", "r", &["User:u"]).1,
        )
        .unwrap();
    let good = role_binding("ns", "new", "Role", "r", &["User:u"]).1;
    let bad = json!({"metadata": {"name": "bad", "namespace": "ns"}, "subjects": "nope"});
    index.replace(
        Kind::RoleBinding,
        &[
            object("/rolebindings/ns/new", &good),
            object("/rolebindings/ns/bad", &bad),
        ],
    );
    let view = index.view();
    let found = view.role_bindings.candidates("ns", &user("u", &[]));
    assert_eq!(found.len(), 1);
    assert_eq!(&*found[0].name, "new");
}

#[test]
fn decode_errors_name_the_object() {
    let index = Index::new();
    let bad = json!({"metadata": {"name": "r", "namespace": "ns"}, "rules": [{"verbs": 1}]});
    let err = index
        .upsert_value(Kind::Role, &bad)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("decoding Role \"ns/r\": "), "{err}");
    let err = index
        .upsert(Kind::ClusterRole, Doc::Bytes(b"{"))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("decoding ClusterRole \"\": "), "{err}");
}

#[test]
fn null_and_absent_fields_read_as_empty() {
    let index = Index::new();
    let v =
        json!({"metadata": {"name": "b", "namespace": "ns"}, "roleRef": null, "subjects": null});
    index.upsert_value(Kind::RoleBinding, &v).unwrap();
    let v = json!({"metadata": {"name": "r"}, "rules": null, "aggregationRule": {"clusterRoleSelectors": []}});
    index.upsert_value(Kind::ClusterRole, &v).unwrap();
    assert_eq!(index.view().cluster_role("r").unwrap().len(), 0);
    assert_eq!(index.len(Kind::RoleBinding), 1);
}

/// The index holds far less than the objects' JSON: a rule packs into one string and an
/// offsets array, and a binding keeps names and subjects only.
#[test]
fn packed_rules_are_smaller_than_their_json() {
    let v = rule_json("get,list,watch", "", "pods,services,endpoints", "");
    let json_len = serde_json::to_vec(&v).unwrap().len();
    let r = PolicyRule::from_value(&v).unwrap();
    let size = std::mem::size_of::<PolicyRule>() + r.heap_size();
    assert!(size < json_len, "{size} >= {json_len}");
}

/// A decision looks at the bindings that name the user or their groups, however many
/// other bindings there are.
#[test]
fn lookups_see_only_the_bindings_of_the_subject() {
    let index = Index::new();
    let items: Vec<ObjectRef> = (0..10_000)
        .map(|i| {
            let name = format!("b{i}");
            let subject = format!("User:user-{i}");
            let (_, v) = role_binding("ns", &name, "ClusterRole", "view", &[&subject]);
            object(&format!("/rolebindings/ns/{name}"), &v)
        })
        .collect();
    index.replace(Kind::RoleBinding, &items);
    let (_, group) = role_binding("ns", "devs", "ClusterRole", "edit", &["Group:devs"]);
    index.upsert_value(Kind::RoleBinding, &group).unwrap();
    assert_eq!(index.len(Kind::RoleBinding), 10_001);
    let view = index.view();
    let found = view
        .role_bindings
        .candidates("ns", &user("user-42", &["devs", "system:authenticated"]));
    let names: Vec<&str> = found.iter().map(|b| &*b.name).collect();
    assert_eq!(names, ["b42", "devs"]);
}
