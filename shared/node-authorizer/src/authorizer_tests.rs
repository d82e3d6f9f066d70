use kas_apimachinery::fields::parse_selector;
use serde_json::json;

use super::*;
use crate::graph::tests::{full_pod, pod, pv};

fn rule(verbs: &[&str], group: &str, resources: &[&str]) -> PolicyRule {
    PolicyRule::from_value(&json!({"verbs": verbs, "apiGroups": [group], "resources": resources}))
        .unwrap()
}

/// A part of the bootstrap policy's node rules.
fn node_rules() -> Vec<PolicyRule> {
    vec![
        rule(&["get", "list", "watch"], "", &["services"]),
        rule(&["create", "get", "list", "watch"], "", &["nodes"]),
        rule(&["get", "list", "watch"], "", &["pods"]),
        rule(&["create", "delete"], "", &["pods"]),
        rule(&["get", "list", "watch"], "", &["secrets", "configmaps"]),
        rule(
            &["get"],
            "",
            &["persistentvolumeclaims", "persistentvolumes"],
        ),
        rule(&["get"], "storage.k8s.io", &["volumeattachments"]),
        rule(&["create"], "", &["serviceaccounts/token"]),
    ]
}

fn node_user(name: &str) -> UserInfo {
    UserInfo {
        name: name.to_owned(),
        groups: vec![NODES_GROUP.to_owned(), "system:authenticated".to_owned()],
        ..UserInfo::default()
    }
}

fn attrs(
    user: UserInfo,
    verb: &str,
    group: &str,
    resource: &str,
    ns: &str,
    name: &str,
) -> Attributes {
    let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
    Attributes {
        user,
        verb: verb.to_owned(),
        is_resource_request: true,
        namespace: ns.to_owned(),
        api_group: group.to_owned(),
        api_version: "v1".to_owned(),
        resource: resource.to_owned(),
        subresource: subresource.to_owned(),
        name: name.to_owned(),
        ..Attributes::default()
    }
}

fn authorizer() -> NodeAuthorizer {
    let graph = Arc::new(Graph::new());
    graph.add_pod(&pod(full_pod("ns", "p1", "n1")));
    graph.add_pod(&pod(json!({
        "metadata": {"namespace": "ns", "name": "p2"},
        "spec": {"nodeName": "n2", "serviceAccountName": "other-sa", "imagePullSecrets": [{"name": "n2-only"}]}
    })));
    graph.add_pv(&pv(json!({
        "metadata": {"name": "vol"},
        "spec": {"claimRef": {"namespace": "ns", "name": "data"}, "csi": {"driver": "d", "nodeStageSecretRef": {"namespace": "sec", "name": "stage"}}}
    })));
    graph.add_volume_attachment("va1", "n1");
    NodeAuthorizer::new(graph, node_rules())
}

const NO_RELATION_N1: &str = "no relationship found between node 'n1' and this object";

fn check(a: &NodeAuthorizer, at: Attributes, want: Decision, reason: &str) {
    let got = a.decide(&at);
    assert_eq!(got, (want, reason.to_owned()), "{at:?}");
}

#[test]
fn reads_along_the_graph() {
    let a = authorizer();
    let n1 = || node_user("system:node:n1");
    let allowed = [
        ("get", "", "secrets", "ns", "vol-secret"),
        ("list", "", "secrets", "ns", "pull"),
        ("watch", "", "configmaps", "ns", "proj-cm"),
        ("get", "", "persistentvolumeclaims", "ns", "data"),
        ("get", "", "persistentvolumes", "", "vol"),
        ("get", "", "secrets", "sec", "stage"),
        (
            "get",
            "resource.k8s.io",
            "resourceclaims",
            "ns",
            "shared-gpu",
        ),
        ("get", "storage.k8s.io", "volumeattachments", "", "va1"),
        ("create", "", "serviceaccounts/token", "ns", "sa"),
        ("update", "", "persistentvolumeclaims/status", "ns", "data"),
        ("get", "", "pods", "ns", "p1"),
    ];
    for (verb, group, resource, ns, name) in allowed {
        check(
            &a,
            attrs(n1(), verb, group, resource, ns, name),
            Decision::Allow,
            "",
        );
    }
    let unrelated = [
        ("get", "", "secrets", "ns", "n2-only"),
        ("get", "", "secrets", "ns", "missing"),
        ("get", "", "secrets", "other", "pull"),
        ("get", "", "configmaps", "ns", "nope"),
        ("get", "storage.k8s.io", "volumeattachments", "", "va2"),
        ("create", "", "serviceaccounts/token", "ns", "other-sa"),
        ("get", "", "pods", "ns", "p2"),
    ];
    for (verb, group, resource, ns, name) in unrelated {
        check(
            &a,
            attrs(n1(), verb, group, resource, ns, name),
            Decision::NoOpinion,
            NO_RELATION_N1,
        );
    }
    // A node the graph does not know yet.
    check(
        &a,
        attrs(
            node_user("system:node:n9"),
            "get",
            "",
            "secrets",
            "ns",
            "pull",
        ),
        Decision::NoOpinion,
        "no relationship found between node 'n9' and this object",
    );
}

#[test]
fn verbs_and_shapes_of_graph_resources() {
    let a = authorizer();
    let n1 = || node_user("system:node:n1");
    let cases = [
        (
            "update",
            "",
            "secrets",
            "ns",
            "pull",
            "can only read resources of this type",
        ),
        (
            "get",
            "",
            "secrets/x",
            "ns",
            "pull",
            "cannot read subresource",
        ),
        (
            "list",
            "",
            "secrets",
            "",
            "",
            "can only read namespaced object of this type",
        ),
        ("list", "", "configmaps", "ns", "", "No Object name found"),
        (
            "list",
            "",
            "persistentvolumes",
            "",
            "",
            "can only get individual resources of this type",
        ),
        (
            "get",
            "",
            "persistentvolumes/status",
            "",
            "vol",
            "cannot get subresource",
        ),
        (
            "get",
            "",
            "persistentvolumeclaims/status",
            "ns",
            "data",
            "can only get/update/patch this type",
        ),
        (
            "get",
            "",
            "serviceaccounts",
            "ns",
            "sa",
            "can only create tokens for individual service accounts",
        ),
        (
            "create",
            "",
            "serviceaccounts/token",
            "ns",
            "",
            "can only create tokens for individual service accounts",
        ),
        (
            "create",
            "",
            "serviceaccounts",
            "ns",
            "sa",
            "can only create token subresource of serviceaccount",
        ),
    ];
    for (verb, group, resource, ns, name, reason) in cases {
        check(
            &a,
            attrs(n1(), verb, group, resource, ns, name),
            Decision::NoOpinion,
            reason,
        );
    }
}

#[test]
fn leases_and_csinodes_by_name() {
    let a = authorizer();
    let n1 = || node_user("system:node:n1");
    let coord = "coordination.k8s.io";
    check(
        &a,
        attrs(n1(), "update", coord, "leases", "kube-node-lease", "n1"),
        Decision::Allow,
        "",
    );
    check(
        &a,
        attrs(n1(), "create", coord, "leases", "kube-node-lease", ""),
        Decision::Allow,
        "",
    );
    check(
        &a,
        attrs(n1(), "get", coord, "leases", "kube-node-lease", "n2"),
        Decision::NoOpinion,
        "can only access node lease with the same name as the requesting node",
    );
    check(
        &a,
        attrs(n1(), "get", coord, "leases", "default", "n1"),
        Decision::NoOpinion,
        "can only access leases in the \"kube-node-lease\" system namespace",
    );
    check(
        &a,
        attrs(n1(), "list", coord, "leases", "kube-node-lease", ""),
        Decision::NoOpinion,
        "can only get, create, update, patch, or delete a node lease",
    );
    let st = "storage.k8s.io";
    check(
        &a,
        attrs(n1(), "patch", st, "csinodes", "", "n1"),
        Decision::Allow,
        "",
    );
    check(
        &a,
        attrs(n1(), "get", st, "csinodes", "", "n2"),
        Decision::NoOpinion,
        "can only access CSINode with the same name as the requesting node",
    );
    check(
        &a,
        attrs(n1(), "get", st, "csinodes/status", "", "n1"),
        Decision::NoOpinion,
        "cannot authorize CSINode subresources",
    );
    check(
        &a,
        attrs(n1(), "watch", st, "csinodes", "", "n1"),
        Decision::NoOpinion,
        "can only get, create, update, patch, or delete a CSINode",
    );
}

#[test]
fn nodes_and_pods_with_selectors() {
    let a = authorizer();
    let n1 = || node_user("system:node:n1");
    check(
        &a,
        attrs(n1(), "get", "", "nodes", "", "n1"),
        Decision::Allow,
        "",
    );
    check(
        &a,
        attrs(n1(), "patch", "", "nodes/status", "", "n2"),
        Decision::Allow,
        "",
    );
    check(
        &a,
        attrs(n1(), "get", "", "nodes", "", "n2"),
        Decision::NoOpinion,
        "node 'n1' cannot read 'n2', only its own Node object",
    );
    check(
        &a,
        attrs(n1(), "list", "", "nodes", "", ""),
        Decision::NoOpinion,
        "node 'n1' cannot read all nodes, only its own Node object",
    );
    check(
        &a,
        attrs(n1(), "delete", "", "nodes", "", "n1"),
        Decision::NoOpinion,
        "",
    );
    check(
        &a,
        attrs(n1(), "list", "", "pods", "", ""),
        Decision::NoOpinion,
        "can only list/watch pods with spec.nodeName field selector",
    );
    let mine = parse_selector("spec.nodeName=n1").unwrap();
    let reqs: Vec<_> = mine.terms.iter().map(|t| t.requirement()).collect();
    let list = attrs(n1(), "watch", "", "pods", "", "");
    assert_eq!(
        a.decide_with_fields(&list, &reqs),
        (Decision::Allow, String::new())
    );
    let theirs = parse_selector("spec.nodeName!=n1").unwrap();
    let reqs: Vec<_> = theirs.terms.iter().map(|t| t.requirement()).collect();
    assert_eq!(a.decide_with_fields(&list, &reqs).0, Decision::NoOpinion);
    check(
        &a,
        attrs(n1(), "watch", "", "pods", "ns", "p1"),
        Decision::Allow,
        "",
    );
    check(
        &a,
        attrs(n1(), "create", "", "pods/eviction", "ns", "p2"),
        Decision::Allow,
        "",
    );
    check(
        &a,
        attrs(n1(), "update", "", "pods/status", "ns", "p2"),
        Decision::Allow,
        "",
    );
    check(
        &a,
        attrs(n1(), "update", "", "pods", "ns", "p1"),
        Decision::NoOpinion,
        "",
    );

    // Without the feature, pods and nodes fall to the static rules.
    let a = a.with_selectors(false);
    check(
        &a,
        attrs(n1(), "list", "", "pods", "", ""),
        Decision::Allow,
        "",
    );
    check(
        &a,
        attrs(n1(), "get", "", "nodes", "", "n2"),
        Decision::Allow,
        "",
    );
}

#[test]
fn resource_slices() {
    let a = authorizer();
    a.graph().add_resource_slice("s1", "n1");
    let n1 = || node_user("system:node:n1");
    let g = "resource.k8s.io";
    check(
        &a,
        attrs(n1(), "create", g, "resourceslices", "", ""),
        Decision::Allow,
        "",
    );
    check(
        &a,
        attrs(n1(), "delete", g, "resourceslices", "", "s1"),
        Decision::Allow,
        "",
    );
    check(
        &a,
        attrs(n1(), "update", g, "resourceslices", "", "s2"),
        Decision::NoOpinion,
        NO_RELATION_N1,
    );
    check(
        &a,
        attrs(n1(), "list", g, "resourceslices", "", ""),
        Decision::NoOpinion,
        "can only list/watch/deletecollection resourceslices with nodeName field selector",
    );
    check(
        &a,
        attrs(n1(), "escalate", g, "resourceslices", "", ""),
        Decision::NoOpinion,
        "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection",
    );
    check(
        &a,
        attrs(n1(), "get", g, "resourceslices/status", "", "s1"),
        Decision::NoOpinion,
        "cannot authorize ResourceSlice subresources",
    );
}

#[test]
fn other_resources_fall_to_the_node_rules() {
    let a = authorizer();
    let n1 = || node_user("system:node:n1");
    check(
        &a,
        attrs(n1(), "list", "", "services", "", ""),
        Decision::Allow,
        "",
    );
    check(
        &a,
        attrs(n1(), "delete", "", "services", "ns", "s"),
        Decision::NoOpinion,
        "",
    );
    check(
        &a,
        attrs(n1(), "get", "apps", "deployments", "ns", "d"),
        Decision::NoOpinion,
        "",
    );
    let mut non_resource = attrs(n1(), "get", "", "", "", "");
    non_resource.is_resource_request = false;
    non_resource.path = "/healthz".to_owned();
    check(&a, non_resource, Decision::NoOpinion, "");
}

#[test]
fn only_node_identities_get_an_opinion() {
    let a = authorizer();
    let get = |user| attrs(user, "get", "", "secrets", "ns", "pull");
    // Not in system:nodes, or not named system:node:<name>.
    let mut not_in_group = node_user("system:node:n1");
    not_in_group.groups = vec!["system:authenticated".to_owned()];
    check(&a, get(not_in_group), Decision::NoOpinion, "");
    check(&a, get(node_user("alice")), Decision::NoOpinion, "");
    check(
        &a,
        get(node_user("system:nodes:n1")),
        Decision::NoOpinion,
        "",
    );
    check(&a, get(UserInfo::default()), Decision::NoOpinion, "");
    // A node identity without a name.
    check(
        &a,
        get(node_user("system:node:")),
        Decision::NoOpinion,
        "unknown node for user \"system:node:\"",
    );
}

#[tokio::test]
async fn nodes_rules_are_not_enumerable() {
    let a = authorizer();
    let info = a.rules_for(&node_user("system:node:n1"), "ns").await;
    assert!(info.incomplete);
    assert_eq!(
        info.evaluation_error,
        "node authorizer does not support user rule resolution"
    );
    assert_eq!(
        a.rules_for(&node_user("bob"), "ns").await,
        RulesInfo::default()
    );
    let at = attrs(
        node_user("system:node:n1"),
        "get",
        "",
        "secrets",
        "ns",
        "pull",
    );
    assert_eq!(
        a.authorize(&at).await.unwrap(),
        (Decision::Allow, String::new())
    );
}
