//! Cases from upstream's `admission_test.go` (`Test_nodePlugin_Admit`), with its messages.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use kas_auth::UserInfo;
use kas_auth::authorization::{Attributes as AuthzAttributes, Authorizer, Decision};
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Admit, Attributes, Operation, Validate};
use serde_json::{Value, json};

use super::{Lister, NodeRestriction};
use crate::resources;

mod objects;

/// Objects by namespace and name.
#[derive(Default)]
struct Objects(HashMap<(String, String), Value>);

impl Objects {
    fn of(objects: Vec<Value>) -> Arc<dyn Lister> {
        let map = objects
            .into_iter()
            .map(|o| {
                let meta = &o["metadata"];
                let key = |k: &str| meta[k].as_str().unwrap_or("").to_owned();
                ((key("namespace"), key("name")), o)
            })
            .collect();
        Arc::new(Objects(map))
    }
}

impl Lister for Objects {
    fn get<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        let found = self
            .0
            .get(&(namespace.to_owned(), name.to_owned()))
            .cloned();
        Box::pin(async move { Ok(found) })
    }
}

/// Allows the audiences it lists for the token-audience verb, for any account.
struct Audiences(Vec<&'static str>);

impl Authorizer for Audiences {
    fn authorize<'a>(
        &'a self,
        attrs: &'a AuthzAttributes,
    ) -> BoxFuture<'a, kas_auth::Result<(Decision, String)>> {
        let allowed = attrs.verb == "request-serviceaccounts-token-audience"
            && attrs.api_version == "v1"
            && attrs.name == "mysa"
            && self.0.contains(&attrs.resource.as_str());
        let decision = if allowed {
            Decision::Allow
        } else {
            Decision::NoOpinion
        };
        Box::pin(async move { Ok((decision, String::new())) })
    }
}

/// Upstream's `makeTestPod`: a mirror pod gets a controller reference to its node.
fn pod(name: &str, node: &str, mirror: bool) -> Value {
    let mut pod = json!({"metadata": {"name": name, "namespace": "ns", "uid": "pod-uid"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}});
    if mirror {
        pod["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "true"});
        pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "Node",
            "name": node, "uid": format!("{node}-uid"), "controller": true}]);
    }
    pod
}

fn with_volumes(mut pod: Value, volumes: Value) -> Value {
    pod["spec"]["volumes"] = volumes;
    pod
}

fn plugin() -> NodeRestriction {
    let pods = vec![
        pod("mymirrorpod", "mynode", true),
        pod("othermirrorpod", "othernode", true),
        pod("mypod", "mynode", false),
        pod("otherpod", "othernode", false),
        pod("unboundpod", "", false),
        with_volumes(
            pod("mysapod", "mynode", false),
            json!([{"name": "t", "projected": {"sources": [{"serviceAccountToken": {"audience": "foo"}}]}}]),
        ),
        with_volumes(
            pod("defaultsapod", "mynode", false),
            json!([{"name": "t", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}]),
        ),
        with_volumes(
            pod("mycsipod", "mynode", false),
            json!([{"name": "v", "csi": {"driver": "com.example.csi.mydriver"}}]),
        ),
        with_volumes(
            pod("mypvcpod", "mynode", false),
            json!([{"name": "v", "persistentVolumeClaim": {"claimName": "pvclaim"}}]),
        ),
        with_volumes(
            pod("nopvcpod", "mynode", false),
            json!([{"name": "v", "persistentVolumeClaim": {"claimName": "gone"}}]),
        ),
        with_volumes(
            pod("nopvpod", "mynode", false),
            json!([{"name": "v", "persistentVolumeClaim": {"claimName": "pvclaim-nopv"}}]),
        ),
        with_volumes(
            pod("myephemeralpod", "mynode", false),
            json!([{"name": "myvol", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]),
        ),
        with_volumes(
            pod("myintreepod", "mynode", false),
            json!([{"name": "v", "azureFile": {"shareName": "default", "secretName": "secret"}}]),
        ),
        with_volumes(
            pod("nodriverpod", "mynode", false),
            json!([{"name": "v", "csi": {"driver": "com.example.csi.other"}}]),
        ),
    ];
    let claim = |name: &str, volume: &str| json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {"volumeName": volume}});
    let driver = |name: &str| json!({"metadata": {"name": name}, "spec": {"tokenRequests": [{"audience": "foo"}]}});
    NodeRestriction {
        pods: Objects::of(pods),
        nodes: Objects::of(vec![
            json!({"metadata": {"name": "mynode", "uid": "mynode-uid"}}),
        ]),
        claims: Some(Objects::of(vec![
            claim("pvclaim", "pvname"),
            claim("pvclaim-nopv", "nopv"),
            claim("myephemeralpod-myvol", "pvname"),
        ])),
        volumes: Some(Objects::of(vec![json!({"metadata": {"name": "pvname"},
            "spec": {"csi": {"driver": "com.example.csi.mydriver", "volumeHandle": "h"}}})])),
        drivers: Some(Objects::of(vec![
            driver("com.example.csi.mydriver"),
            driver("file.csi.azure.com"),
        ])),
        slices: Some(Objects::of(vec![
            json!({"metadata": {"name": "myslice"}, "spec": {"nodeName": "mynode"}}),
            json!({"metadata": {"name": "otherslice"}, "spec": {"nodeName": "othernode"}}),
        ])),
        authorizer: Arc::new(Audiences(vec!["granted"])),
    }
}

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.to_owned(),
        groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        ..UserInfo::default()
    }
}

fn mynode() -> UserInfo {
    user("system:node:mynode", &["system:nodes"])
}

/// One request.
struct Request<'a> {
    operation: Operation,
    descriptor: &'static ResourceDescriptor,
    namespace: &'a str,
    name: &'a str,
    subresource: &'a str,
    object: Option<Value>,
    old: Option<Value>,
}

fn req(
    operation: Operation,
    descriptor: &'static ResourceDescriptor,
    namespace: &'static str,
    name: &'static str,
) -> Request<'static> {
    Request {
        operation,
        descriptor,
        namespace,
        name,
        subresource: "",
        object: None,
        old: None,
    }
}

impl<'a> Request<'a> {
    fn sub(mut self, subresource: &'a str) -> Self {
        self.subresource = subresource;
        self
    }
    fn obj(mut self, object: Value) -> Self {
        self.object = Some(object);
        self
    }
    fn old(mut self, old: Value) -> Self {
        self.old = Some(old);
        self
    }
}

/// The request as the store hands it to the plugin (`Admit` on deletes, `Validate`
/// otherwise): nothing, or the refusal's code and message.
async fn run(p: &NodeRestriction, r: &Request<'_>, u: &UserInfo) -> Option<(u16, String)> {
    let mut a = Attributes::new(
        r.operation,
        r.descriptor,
        r.namespace,
        r.name,
        r.object.as_ref(),
    );
    a.old_object = r.old.as_ref();
    a.subresource = r.subresource;
    a.user = Some(u);
    let result = if r.operation == Operation::Delete {
        Admit::admit(p, &a).await
    } else {
        assert!(p.handles(r.descriptor, r.namespace, r.subresource, r.operation));
        p.validate(&a).await
    };
    let status = result.err()?.to_status();
    Some((status.code, status.message.unwrap_or_default()))
}

async fn allowed(r: Request<'_>) {
    assert_eq!(run(&plugin(), &r, &mynode()).await, None);
}

async fn refused(r: Request<'_>, code: u16, message: &str) {
    assert_eq!(
        run(&plugin(), &r, &mynode()).await,
        Some((code, message.to_owned()))
    );
}

const PODS: &ResourceDescriptor = &resources::pods::DESCRIPTOR;
const NODES: &ResourceDescriptor = &resources::nodes::DESCRIPTOR;
const CLAIMS: &ResourceDescriptor = &resources::persistentvolumeclaims::DESCRIPTOR;
const ACCOUNTS: &ResourceDescriptor = &resources::serviceaccounts::DESCRIPTOR_WITH_TOKEN;
const LEASES: &ResourceDescriptor = &resources::leases::DESCRIPTOR;
const CSI_NODES: &ResourceDescriptor = &resources::storage::csinodes::DESCRIPTOR;
const CSRS: &ResourceDescriptor = &resources::certificates::DESCRIPTOR;
use Operation::{Create, Delete, Update};

#[tokio::test]
async fn mirror_pods_bound_to_self_are_created_and_deleted_not_updated() {
    let mirror = pod("mymirrorpod", "mynode", true);
    allowed(req(Create, PODS, "ns", "mymirrorpod").obj(mirror.clone())).await;
    allowed(req(Delete, PODS, "ns", "mymirrorpod")).await;
    allowed(req(Delete, PODS, "ns", "mypod")).await;
    refused(
        req(Update, PODS, "ns", "mymirrorpod").obj(mirror.clone()).old(mirror),
        403,
        r#"pods "mymirrorpod" is forbidden: unexpected operation "UPDATE", node "mynode" can only create and delete mirror pods"#,
    )
    .await;
    refused(
        req(Delete, PODS, "ns", "othermirrorpod"),
        403,
        r#"pods "othermirrorpod" is forbidden: node "mynode" can only delete pods with spec.nodeName set to itself"#,
    )
    .await;
    refused(req(Delete, PODS, "ns", "unboundpod"), 403, r#"pods "unboundpod" is forbidden: node "mynode" can only delete pods with spec.nodeName set to itself"#).await;
    refused(
        req(Delete, PODS, "ns", "nosuchpod"),
        404,
        r#"pods "nosuchpod" not found"#,
    )
    .await;
}

#[tokio::test]
async fn a_node_creates_only_mirror_pods_bound_and_owned_by_itself() {
    let forbidden =
        |name: &str, what: &str| format!(r#"pods "{name}" is forbidden: node "mynode" {what}"#);
    refused(
        req(Create, PODS, "ns", "mypod").obj(pod("mypod", "mynode", false)),
        403,
        r#"pods "mypod" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "mynode" can only create mirror pods"#,
    )
    .await;
    let other = pod("othermirrorpod", "othernode", true);
    let msg = forbidden(
        "othermirrorpod",
        "can only create pods with spec.nodeName set to itself",
    );
    refused(
        req(Create, PODS, "ns", "othermirrorpod").obj(other),
        403,
        &msg,
    )
    .await;
    let unbound = pod("unboundmirrorpod", "", true);
    let msg = forbidden(
        "unboundmirrorpod",
        "can only create pods with spec.nodeName set to itself",
    );
    refused(
        req(Create, PODS, "ns", "unboundmirrorpod").obj(unbound),
        403,
        &msg,
    )
    .await;

    let owners = |refs: Value| {
        let mut p = pod("p", "mynode", true);
        p["metadata"]["ownerReferences"] = refs;
        req(Create, PODS, "ns", "p").obj(p)
    };
    let mine = json!({"apiVersion": "v1", "kind": "Node", "name": "mynode", "uid": "mynode-uid", "controller": true});
    let cases = [
        (
            json!([]),
            "can only create pods with an owner reference set to itself",
        ),
        (
            json!([mine, mine]),
            "can only create pods with a single owner reference set to itself",
        ),
        (
            json!([{"apiVersion": "v1", "kind": "Pod", "name": "mynode", "uid": "mynode-uid", "controller": true}]),
            "can only create pods with an owner reference set to itself",
        ),
        (
            json!([{"apiVersion": "v1", "kind": "Node", "name": "othernode", "uid": "mynode-uid", "controller": true}]),
            "can only create pods with an owner reference set to itself",
        ),
        (
            json!([{"apiVersion": "v1", "kind": "Node", "name": "mynode", "uid": "mynode-uid"}]),
            "can only create pods with a controller owner reference set to itself",
        ),
        (
            json!([{"apiVersion": "v1", "kind": "Node", "name": "mynode", "uid": "mynode-uid", "controller": true, "blockOwnerDeletion": true}]),
            "must not set blockOwnerDeletion on an owner reference",
        ),
    ];
    for (refs, what) in cases {
        refused(owners(refs), 403, &forbidden("p", what)).await;
    }
    refused(
        owners(json!([{"apiVersion": "v1", "kind": "Node", "name": "mynode", "uid": "stale", "controller": true}])),
        403,
        r#"pods "p" is forbidden: node mynode UID mismatch: expected stale got mynode-uid"#,
    )
    .await;
    // The node must exist: its UID is checked.
    let mut lost = plugin();
    lost.nodes = Objects::of(vec![]);
    let r = owners(json!([mine]));
    assert_eq!(
        run(&lost, &r, &mynode()).await,
        Some((404, r#"node "mynode" not found"#.to_owned()))
    );
}

#[tokio::test]
async fn a_mirror_pod_references_no_other_api_object() {
    let cases = [
        (json!({"serviceAccountName": "foo"}), "a service account"),
        (
            json!({"volumes": [{"name": "v", "secret": {"secretName": "foo"}}]}),
            "secrets",
        ),
        (json!({"imagePullSecrets": [{"name": "foo"}]}), "secrets"),
        (
            json!({"volumes": [{"name": "v", "configMap": {"name": "foo"}}]}),
            "configmaps",
        ),
        (
            json!({"containers": [{"name": "c", "image": "i", "envFrom": [{"configMapRef": {"name": "foo"}}]}]}),
            "configmaps",
        ),
        (
            json!({"volumes": [{"name": "v", "projected": {"sources": [{"clusterTrustBundle": {"name": "foo", "path": "p"}}]}}]}),
            "clustertrustbundles",
        ),
        (
            json!({"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "foo"}}]}),
            "persistentvolumeclaims",
        ),
        (
            json!({"resourceClaims": [{"name": "myclaim", "resourceClaimName": "myexternalclaim"}]}),
            "resourceclaims",
        ),
    ];
    for (spec, kind) in cases {
        let mut p = pod("mysecretpod", "mynode", true);
        for (k, v) in spec.as_object().into_iter().flatten() {
            p["spec"][k] = v.clone();
        }
        let message = format!(
            r#"pods "mysecretpod" is forbidden: node "mynode" can not create pods that reference {kind}"#
        );
        refused(req(Create, PODS, "ns", "mysecretpod").obj(p), 403, &message).await;
    }
}

#[tokio::test]
async fn pod_status_is_written_only_for_own_pods_without_labels_or_claims() {
    let mine = pod("mypod", "mynode", false);
    let status = |old: Value, new: Value| {
        req(Update, PODS, "ns", "mypod")
            .sub("status")
            .obj(new)
            .old(old)
    };
    allowed(status(mine.clone(), mine.clone())).await;
    let other = pod("otherpod", "othernode", false);
    refused(
        req(Update, PODS, "ns", "otherpod").sub("status").obj(other.clone()).old(other),
        403,
        r#"pods "otherpod" is forbidden: node "mynode" can only update pod status for pods with spec.nodeName set to itself"#,
    )
    .await;
    let labeled = |labels: Value| {
        let mut p = mine.clone();
        p["metadata"]["labels"] = labels;
        p
    };
    let labels_msg =
        r#"pods "mypod" is forbidden: node "mynode" cannot update labels through pod status"#;
    let a = json!({"label-a": "value-a"});
    let ab = json!({"label-a": "value-a", "label-b": "value-b"});
    for (old, new) in [
        (a.clone(), ab.clone()),
        (ab.clone(), a.clone()),
        (ab, json!({})),
        (json!(null), a),
    ] {
        refused(status(labeled(old), labeled(new)), 403, labels_msg).await;
    }
    allowed(status(labeled(json!(null)), labeled(json!({})))).await;
    let mut claimed = mine.clone();
    claimed["status"] = json!({"resourceClaimStatuses": [{"name": "c", "resourceClaimName": "x"}]});
    refused(
        status(mine.clone(), claimed),
        403,
        r#"pods "mypod" is forbidden: node "mynode" cannot update resource claim statues"#,
    )
    .await;
    refused(
        req(Create, PODS, "ns", "mypod").sub("status").obj(mine),
        403,
        r#"pods "mypod" is forbidden: unexpected operation "CREATE""#,
    )
    .await;
    refused(
        req(Delete, PODS, "ns", "mypod").sub("status"),
        403,
        r#"pods "mypod" is forbidden: unexpected operation "DELETE""#,
    )
    .await;
}

#[tokio::test]
async fn evictions_are_of_own_pods_named_by_the_path_or_the_body() {
    let eviction = |name: &str| json!({"metadata": {"name": name, "namespace": "ns"}});
    let evict = |path: &'static str, body: &str| {
        req(Create, PODS, "ns", path)
            .sub("eviction")
            .obj(eviction(body))
    };
    allowed(evict("mymirrorpod", "mymirrorpod")).await;
    allowed(evict("", "mypod")).await;
    let other = r#"pods "otherpod" is forbidden: node mynode can only evict pods with spec.nodeName set to itself"#;
    refused(evict("otherpod", "otherpod"), 403, other).await;
    refused(evict("otherpod", ""), 403, other).await;
    refused(evict("nosuchpod", ""), 404, r#"pod "nosuchpod" not found"#).await;
    refused(
        evict("", ""),
        403,
        r#"pods "Unknown" is forbidden: could not determine pod from request data"#,
    )
    .await;
    refused(
        req(Delete, PODS, "ns", "mypod").sub("eviction"),
        403,
        r#"pods "mypod" is forbidden: unexpected operation DELETE"#,
    )
    .await;
    refused(
        req(Create, PODS, "ns", "mypod").sub("binding").obj(json!({"target": {"name": "mynode"}})),
        403,
        r#"pods "mypod" is forbidden: unexpected pod subresource "binding", only 'status' and 'eviction' are allowed"#,
    )
    .await;
    // The store's own write of a binding is not admitted again.
    assert!(!plugin().handles(PODS, "ns", "binding", Update));
}

/// Upstream's `setAllowedUpdateLabels` and `setForbiddenUpdateLabels`.
fn node_with_labels(allowed: bool, forbidden: bool, value: &str) -> Value {
    let mut labels = serde_json::Map::new();
    if allowed {
        for key in [
            "foo",
            "example.com/foo",
            "kubernetes.io/hostname",
            "failure-domain.beta.kubernetes.io/zone",
            "failure-domain.beta.kubernetes.io/region",
            "topology.kubernetes.io/zone",
            "topology.kubernetes.io/region",
            "beta.kubernetes.io/instance-type",
            "node.kubernetes.io/instance-type",
            "beta.kubernetes.io/os",
            "beta.kubernetes.io/arch",
            "kubernetes.io/os",
            "kubernetes.io/arch",
            "kubelet.kubernetes.io/foo",
            "foo.kubelet.kubernetes.io/foo",
            "node.kubernetes.io/foo",
            "foo.node.kubernetes.io/foo",
        ] {
            labels.insert(key.into(), json!(value));
        }
    }
    if forbidden {
        for key in [
            "node-restriction.kubernetes.io/foo",
            "foo.node-restriction.kubernetes.io/foo",
            "other.kubernetes.io/foo",
            "other.k8s.io/foo",
        ] {
            labels.insert(key.into(), json!(value));
        }
    }
    json!({"metadata": {"name": "mynode", "uid": "mynode-uid", "labels": labels}})
}

#[tokio::test]
async fn a_node_registers_itself_without_config_source_or_restricted_labels() {
    allowed(req(Create, NODES, "", "mynode").obj(node_with_labels(true, false, "v"))).await;
    refused(
        req(Create, NODES, "", "mynode").obj(node_with_labels(true, true, "v")),
        403,
        r#"nodes "mynode" is forbidden: node "mynode" is not allowed to set the following labels: foo.node-restriction.kubernetes.io/foo, node-restriction.kubernetes.io/foo, other.k8s.io/foo, other.kubernetes.io/foo"#,
    )
    .await;
    let configured = json!({"metadata": {"name": "mynode"}, "spec": {"configSource": {"configMap":
        {"name": "foo", "namespace": "bar", "uid": "fooUID", "kubeletConfigKey": "kubelet"}}}});
    refused(
        req(Create, NODES, "", "mynode").obj(configured),
        403,
        r#"nodes "mynode" is forbidden: node "mynode" is not allowed to create pods with a non-nil configSource"#,
    )
    .await;
    let other = r#"nodes "othernode" is forbidden: node "mynode" is not allowed to modify node "othernode""#;
    let othernode = json!({"metadata": {"name": "othernode"}});
    refused(
        req(Create, NODES, "", "othernode").obj(othernode.clone()),
        403,
        other,
    )
    .await;
    refused(
        req(Update, NODES, "", "othernode")
            .obj(othernode.clone())
            .old(othernode.clone()),
        403,
        other,
    )
    .await;
    refused(
        req(Update, NODES, "", "othernode")
            .sub("status")
            .obj(othernode.clone())
            .old(othernode),
        403,
        other,
    )
    .await;
    refused(req(Delete, NODES, "", "othernode"), 403, other).await;
    allowed(req(Delete, NODES, "", "mynode")).await;
}

#[tokio::test]
async fn a_node_updates_itself_but_not_its_taints_owners_config_source_or_restricted_labels() {
    let update = |old: &Value, new: &Value| {
        req(Update, NODES, "", "mynode")
            .obj(new.clone())
            .old(old.clone())
    };
    let plain = json!({"metadata": {"name": "mynode", "uid": "mynode-uid"}});
    allowed(update(&plain, &plain)).await;
    allowed(update(&plain, &plain).sub("status")).await;
    let with = |path: &str, value: Value| {
        let mut n = plain.clone();
        n[path.split('.').next().unwrap_or("")][path.split('.').nth(1).unwrap_or("")] = value;
        n
    };
    let config = |name: &str| {
        with(
            "spec.configSource",
            json!({"configMap": {"name": name,
        "namespace": "bar", "uid": "u", "kubeletConfigKey": "kubelet"}}),
        )
    };
    let msg = r#"nodes "mynode" is forbidden: node "mynode" is not allowed to update configSource to a new non-nil configSource"#;
    refused(update(&plain, &config("foo")), 403, msg).await;
    refused(update(&config("foo"), &config("qux")), 403, msg).await;
    allowed(update(&config("foo"), &config("foo"))).await;
    allowed(update(&config("foo"), &plain)).await;

    let taint = |v: &str| {
        with(
            "spec.taints",
            json!([{"key": "mykey", "value": v, "effect": "NoSchedule"}]),
        )
    };
    let msg = r#"nodes "mynode" is forbidden: node "mynode" is not allowed to modify taints"#;
    allowed(update(&taint("A"), &taint("A"))).await;
    for (old, new) in [
        (&plain, &taint("A")),
        (&taint("A"), &plain),
        (&taint("A"), &taint("B")),
    ] {
        refused(update(old, new), 403, msg).await;
    }

    let owner = |n: &str| {
        with(
            "metadata.ownerReferences",
            json!([{"apiVersion": "v1", "kind": "X", "name": n, "uid": "u", "controller": true}]),
        )
    };
    let msg =
        r#"nodes "mynode" is forbidden: node "mynode" is not allowed to modify ownerReferences"#;
    for (old, new) in [
        (&plain, &owner("fooerA")),
        (&owner("fooerA"), &plain),
        (&owner("fooerA"), &owner("fooerB")),
    ] {
        refused(update(old, new), 403, msg).await;
    }

    let labels = node_with_labels;
    // Allowed labels come, go and change; forbidden ones may stay as they are.
    allowed(update(&plain, &labels(true, false, "v"))).await;
    allowed(update(&labels(true, false, "v"), &plain)).await;
    allowed(update(&labels(true, false, "v"), &labels(true, false, "w"))).await;
    allowed(update(&labels(false, true, "v"), &labels(true, true, "v"))).await;
    allowed(update(&labels(true, true, "v"), &labels(false, true, "v"))).await;
    let msg = r#"nodes "mynode" is forbidden: is not allowed to modify labels: foo.node-restriction.kubernetes.io/foo, node-restriction.kubernetes.io/foo, other.k8s.io/foo, other.kubernetes.io/foo"#;
    for (old, new) in [
        (labels(true, false, "v"), labels(true, true, "v")),
        (labels(true, true, "v"), labels(true, false, "v")),
        (labels(true, true, "v"), labels(true, true, "w")),
    ] {
        refused(update(&old, &new), 403, msg).await;
    }
}

#[tokio::test]
async fn other_users_and_resources_pass_and_nameless_nodes_are_refused() {
    let p = plugin();
    let other = pod("otherpod", "othernode", false);
    let requests = [
        req(Create, PODS, "ns", "otherpod").obj(other.clone()),
        req(Update, PODS, "ns", "otherpod")
            .obj(other.clone())
            .old(other.clone()),
        req(Delete, PODS, "ns", "otherpod"),
        req(Update, PODS, "ns", "otherpod")
            .sub("status")
            .obj(other.clone())
            .old(other.clone()),
    ];
    for r in &requests {
        assert_eq!(run(&p, r, &user("bob", &[])).await, None);
        // A node name without the group is not a node.
        assert_eq!(run(&p, r, &user("system:node:mynode", &[])).await, None);
    }
    assert_eq!(
        run(&p, &requests[0], &user("system:node:", &["system:nodes"])).await,
        Some((
            403,
            r#"pods "otherpod" is forbidden: could not determine node from user "system:node:""#
                .to_owned()
        ))
    );
    // Unrelated objects are not looked at.
    let configmaps = &resources::configmaps::DESCRIPTOR;
    assert!(!p.handles(configmaps, "ns", "", Create));
    let cm = json!({"metadata": {"name": "cm", "namespace": "ns"}});
    let mut a = Attributes::new(Delete, configmaps, "ns", "cm", Some(&cm));
    let node = mynode();
    a.user = Some(&node);
    assert!(Admit::admit(&p, &a).await.is_ok());
}
