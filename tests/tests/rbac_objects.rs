//! rbac.authorization.k8s.io/v1 Roles, ClusterRoles and their bindings as objects (stored,
//! defaulted, validated and printed), as kubectl drives them.

use kas_e2e::{header_and_row, start_cluster};
use serde_json::json;

fn refused(out: std::process::Output) -> String {
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn rbac_objects_as_kubectl_uses_them() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources", "--api-group=rbac.authorization.k8s.io"]);
    for expected in [
        [
            "clusterrolebindings",
            "rbac.authorization.k8s.io/v1",
            "false",
            "ClusterRoleBinding",
        ],
        [
            "clusterroles",
            "rbac.authorization.k8s.io/v1",
            "false",
            "ClusterRole",
        ],
        [
            "rolebindings",
            "rbac.authorization.k8s.io/v1",
            "true",
            "RoleBinding",
        ],
        ["roles", "rbac.authorization.k8s.io/v1", "true", "Role"],
    ] {
        assert!(
            resources
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == expected),
            "{resources}"
        );
    }

    // Roles: kubectl's generator, the default table.
    assert_eq!(
        c.kubectl_ok(&[
            "create",
            "role",
            "reader",
            "--verb=get,list",
            "--resource=pods"
        ]),
        "role.rbac.authorization.k8s.io/reader created\n"
    );
    let role = c.kubectl_json(&["get", "role", "reader"]);
    assert_eq!(
        role["rules"],
        json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}])
    );
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "roles"]));
    assert_eq!(header, ["NAME", "CREATED AT"]);
    assert_eq!(row[0], "reader");
    assert_eq!(
        row[1],
        role["metadata"]["creationTimestamp"].as_str().unwrap()
    );

    assert_eq!(
        c.kubectl_ok(&[
            "create",
            "clusterrole",
            "url-reader",
            "--verb=get",
            "--non-resource-url=/healthz"
        ]),
        "clusterrole.rbac.authorization.k8s.io/url-reader created\n"
    );
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "clusterrole", "url-reader"]));
    assert_eq!(header, ["NAME", "CREATED AT"]);
    assert_eq!(row[0], "url-reader");

    // A namespaced role may not name URLs.
    let err = refused(c.kubectl_stdin(
        &["create"],
        r#"{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "urls"},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}"#,
    ));
    assert!(
        err.contains(
            "rules[0].nonResourceURLs: Invalid value: []string{\"/healthz\"}: namespaced rules cannot apply to non-resource URLs"
        ),
        "{err}"
    );

    // Bindings: defaulted groups, the wide table.
    assert_eq!(
        c.kubectl_ok(&[
            "create",
            "rolebinding",
            "rb",
            "--role=reader",
            "--user=alice"
        ]),
        "rolebinding.rbac.authorization.k8s.io/rb created\n"
    );
    let rb = c.kubectl_json(&["get", "rolebinding", "rb"]);
    assert_eq!(
        rb["roleRef"],
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"})
    );
    assert_eq!(
        rb["subjects"],
        json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}])
    );
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "rolebinding", "rb"]));
    assert_eq!(header, ["NAME", "ROLE", "AGE"]);
    assert_eq!(row[..2], ["rb", "Role/reader"]);
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "rolebinding", "rb", "-o", "wide"]));
    assert_eq!(
        header,
        ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    );
    assert_eq!(row[0], "rb");
    assert_eq!(row[1], "Role/reader");
    assert_eq!(row[3], "alice");

    assert_eq!(
        c.kubectl_ok(&[
            "create",
            "clusterrolebinding",
            "crb",
            "--clusterrole=url-reader",
            "--group=devs",
            "--serviceaccount=default:builder"
        ]),
        "clusterrolebinding.rbac.authorization.k8s.io/crb created\n"
    );
    let crb = c.kubectl_json(&["get", "clusterrolebinding", "crb"]);
    assert_eq!(
        crb["subjects"],
        json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"},
            {"kind": "ServiceAccount", "name": "builder", "namespace": "default"}])
    );
    let (header, row) =
        header_and_row(&c.kubectl_ok(&["get", "clusterrolebinding", "crb", "-o", "wide"]));
    assert_eq!(
        header,
        ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    );
    // The users cell is empty, so the row has one cell fewer.
    assert_eq!(row[0], "crb");
    assert_eq!(row[1], "ClusterRole/url-reader");
    assert_eq!(row[3..], ["devs", "default/builder"]);

    // The role reference cannot change.
    let err = refused(c.kubectl_stdin(
        &["replace"],
        r#"{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "rb", "namespace": "default"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                "name": "view"},
            "subjects": [{"kind": "User", "name": "alice"}]}"#,
    ));
    assert!(
        err.contains(
            "The RoleBinding \"rb\" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"ClusterRole\", Name:\"view\"}: cannot change roleRef"
        ),
        "{err}"
    );

    // An unknown subject kind, and a cluster binding to a Role.
    let err = refused(c.kubectl_stdin(
        &["create"],
        r#"{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "bad"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "x"},
            "subjects": [{"kind": "Robot", "name": "r2"}]}"#,
    ));
    for cause in [
        "The ClusterRoleBinding \"bad\" is invalid: ",
        "* roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\"",
        "* subjects[0].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"",
    ] {
        assert!(err.contains(cause), "{err}");
    }
    c.kubectl_fails(&["get", "clusterrolebinding", "bad"]);
}
