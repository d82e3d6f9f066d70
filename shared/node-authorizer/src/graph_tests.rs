use serde_json::{Value, json};

use super::*;
use crate::populator::{PersistentVolume, Pod};

pub(crate) fn pod(value: Value) -> Pod {
    Pod::from_json(value.to_string().as_bytes()).unwrap()
}

pub(crate) fn pv(value: Value) -> PersistentVolume {
    PersistentVolume::from_json(value.to_string().as_bytes()).unwrap()
}

/// A pod of `ns` on `node` using a secret, a config map and a claim in every way upstream
/// visits.
pub(crate) fn full_pod(ns: &str, name: &str, node: &str) -> Value {
    json!({
        "metadata": {"namespace": ns, "name": name, "uid": "u1"},
        "spec": {
            "nodeName": node,
            "serviceAccountName": "sa",
            "imagePullSecrets": [{"name": "pull"}, {"name": ""}],
            "initContainers": [{"envFrom": [{"secretRef": {"name": "init-env"}}]}],
            "containers": [{
                "envFrom": [{"configMapRef": {"name": "cm-env"}}],
                "env": [
                    {"name": "A", "valueFrom": {"secretKeyRef": {"name": "key-secret", "key": "k"}}},
                    {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "key-cm", "key": "k"}}},
                    {"name": "C", "value": "plain"}
                ]
            }],
            "ephemeralContainers": [{"env": [{"name": "D", "valueFrom": {"secretKeyRef": {"name": "debug-secret"}}}]}],
            "volumes": [
                {"name": "s", "secret": {"secretName": "vol-secret"}},
                {"name": "c", "configMap": {"name": "vol-cm"}},
                {"name": "p", "projected": {"sources": [
                    {"secret": {"name": "proj-secret"}},
                    {"configMap": {"name": "proj-cm"}},
                    {"serviceAccountToken": {"path": "t"}}
                ]}},
                {"name": "claim", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                {"name": "csi", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "csi-secret"}}}
            ],
            "resourceClaims": [
                {"name": "gpu", "resourceClaimName": "shared-gpu"},
                {"name": "tpl", "resourceClaimTemplateName": "t"},
                {"name": "later", "resourceClaimTemplateName": "t"}
            ]
        },
        "status": {"resourceClaimStatuses": [{"name": "tpl", "resourceClaimName": "p1-tpl-abc"}]}
    })
}

fn reaches(g: &Graph, node: &str, ty: VertexType, ns: &str, name: &str) -> bool {
    g.has_path_from(node, ty, ns, name).is_ok()
}

#[test]
fn a_pod_links_everything_it_uses_to_its_node() {
    let g = Graph::new();
    g.add_pod(&pod(full_pod("ns", "p1", "n1")));
    for s in [
        "pull",
        "init-env",
        "key-secret",
        "debug-secret",
        "vol-secret",
        "proj-secret",
        "csi-secret",
    ] {
        assert!(reaches(&g, "n1", VertexType::Secret, "ns", s), "{s}");
    }
    for c in ["cm-env", "key-cm", "vol-cm", "proj-cm"] {
        assert!(reaches(&g, "n1", VertexType::ConfigMap, "ns", c), "{c}");
    }
    assert!(reaches(&g, "n1", VertexType::Pvc, "ns", "data"));
    assert!(reaches(&g, "n1", VertexType::Pvc, "ns", "p1-scratch"));
    assert!(reaches(&g, "n1", VertexType::ServiceAccount, "ns", "sa"));
    assert!(reaches(
        &g,
        "n1",
        VertexType::ResourceClaim,
        "ns",
        "shared-gpu"
    ));
    assert!(reaches(
        &g,
        "n1",
        VertexType::ResourceClaim,
        "ns",
        "p1-tpl-abc"
    ));
    assert!(reaches(&g, "n1", VertexType::Pod, "ns", "p1"));
    // Empty names make no vertex; a claim the status does not name yet makes none.
    assert!(!g.contains(VertexType::Secret, "ns", ""));
    assert_eq!(g.names(VertexType::ResourceClaim).len(), 2);
    // Another namespace's object of the same name is another vertex.
    assert_eq!(
        g.has_path_from("n1", VertexType::Secret, "other", "pull"),
        Err(PathError::UnknownObject {
            node: "n1".into(),
            ty: "secret",
            namespace: "other".into(),
            name: "pull".into()
        })
    );
    assert_eq!(
        g.has_path_from("n9", VertexType::Secret, "ns", "pull")
            .unwrap_err()
            .to_string(),
        "unknown node 'n9' cannot get secret ns/pull"
    );
}

#[test]
fn another_nodes_pod_grants_nothing() {
    let g = Graph::new();
    g.add_pod(&pod(full_pod("ns", "p1", "n1")));
    g.add_pod(&pod(json!({
        "metadata": {"namespace": "ns", "name": "p2"},
        "spec": {"nodeName": "n2", "volumes": [{"name": "v", "secret": {"secretName": "other"}}]}
    })));
    assert!(reaches(&g, "n2", VertexType::Secret, "ns", "other"));
    assert_eq!(
        g.has_path_from("n2", VertexType::Secret, "ns", "pull")
            .unwrap_err()
            .to_string(),
        "node 'n2' cannot get secret ns/pull, no relationship to this object was found in the node authorizer graph"
    );
    assert!(!reaches(&g, "n1", VertexType::Secret, "ns", "other"));
}

#[test]
fn a_shared_secret_reaches_each_node_of_its_pods() {
    let g = Graph::new();
    for (name, node) in [("a", "n1"), ("b", "n2")] {
        g.add_pod(&pod(json!({
            "metadata": {"namespace": "ns", "name": name},
            "spec": {"nodeName": node, "imagePullSecrets": [{"name": "shared"}]}
        })));
    }
    assert!(reaches(&g, "n1", VertexType::Secret, "ns", "shared"));
    assert!(reaches(&g, "n2", VertexType::Secret, "ns", "shared"));
    g.delete_pod("a", "ns");
    assert!(!reaches(&g, "n1", VertexType::Secret, "ns", "shared"));
    assert!(reaches(&g, "n2", VertexType::Secret, "ns", "shared"));
}

#[test]
fn moving_or_deleting_a_pod_removes_its_edges_and_orphans() {
    let g = Graph::new();
    g.add_pod(&pod(full_pod("ns", "p1", "n1")));
    g.add_pod(&pod(
        json!({"metadata": {"namespace": "ns", "name": "keep"}, "spec": {"nodeName": "n1"}}),
    ));
    // Re-added on another node (a new pod of the same name).
    g.add_pod(&pod(full_pod("ns", "p1", "n2")));
    assert!(!reaches(&g, "n1", VertexType::Secret, "ns", "vol-secret"));
    assert!(reaches(&g, "n2", VertexType::Secret, "ns", "vol-secret"));
    g.delete_pod("p1", "ns");
    assert!(!g.contains(VertexType::Secret, "ns", "vol-secret"));
    assert!(!g.contains(VertexType::Pod, "ns", "p1"));
    // The node that lost its only pod goes too, as upstream's orphan removal does.
    assert!(!g.contains(VertexType::Node, "", "n2"));
    assert!(g.contains(VertexType::Node, "", "n1"));
    g.delete_pod("keep", "ns");
    assert_eq!(g.len(), (0, 0));
    assert!(g.is_empty());
}

#[test]
fn a_mirror_pod_reaches_only_its_node() {
    let g = Graph::new();
    let mut p = full_pod("ns", "static", "n1");
    p["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "hash"});
    g.add_pod(&pod(p));
    assert!(reaches(&g, "n1", VertexType::Pod, "ns", "static"));
    assert!(!g.contains(VertexType::Secret, "ns", "vol-secret"));
    assert_eq!(g.len(), (2, 1));
}

#[test]
fn a_bound_pv_reaches_the_node_of_its_claims_pod() {
    let g = Graph::new();
    g.add_pod(&pod(full_pod("ns", "p1", "n1")));
    g.add_pv(&pv(json!({
        "metadata": {"name": "vol"},
        "spec": {
            "claimRef": {"namespace": "ns", "name": "data"},
            "csi": {
                "driver": "d",
                "nodePublishSecretRef": {"namespace": "sec", "name": "publish"},
                "nodeStageSecretRef": {"namespace": "sec", "name": "stage"},
                "nodeExpandSecretRef": {"namespace": "sec", "name": "expand"},
                "controllerPublishSecretRef": {"namespace": "sec", "name": "controller"}
            }
        }
    })));
    assert!(reaches(&g, "n1", VertexType::Pv, "", "vol"));
    for s in ["publish", "stage", "expand"] {
        assert!(reaches(&g, "n1", VertexType::Secret, "sec", s), "{s}");
    }
    assert!(!g.contains(VertexType::Secret, "sec", "controller"));
    assert!(!reaches(&g, "n2", VertexType::Pv, "", "vol"));

    // A secret reference without a namespace takes the claim's.
    g.add_pv(&pv(json!({
        "metadata": {"name": "rbd"},
        "spec": {"claimRef": {"namespace": "ns", "name": "data"}, "rbd": {"secretRef": {"name": "ceph"}}}
    })));
    assert!(reaches(&g, "n1", VertexType::Secret, "ns", "ceph"));

    // Unbinding drops the PV's edges; deleting it drops the vertex.
    g.add_pv(&pv(
        json!({"metadata": {"name": "vol"}, "spec": {"csi": {"driver": "d"}}}),
    ));
    assert!(!g.contains(VertexType::Pv, "", "vol"));
    assert!(!g.contains(VertexType::Secret, "sec", "publish"));
    g.delete_pv("rbd");
    assert!(!g.contains(VertexType::Secret, "ns", "ceph"));
    assert!(g.contains(VertexType::Pvc, "ns", "data"));
}

#[test]
fn attachments_and_slices_point_at_their_node() {
    let g = Graph::new();
    g.add_volume_attachment("va", "n1");
    g.add_resource_slice("slice", "n1");
    assert!(reaches(&g, "n1", VertexType::VolumeAttachment, "", "va"));
    assert!(reaches(&g, "n1", VertexType::ResourceSlice, "", "slice"));
    g.add_volume_attachment("va", "n2");
    assert!(!reaches(&g, "n1", VertexType::VolumeAttachment, "", "va"));
    assert!(reaches(&g, "n2", VertexType::VolumeAttachment, "", "va"));
    g.add_volume_attachment("va", "");
    assert!(!g.contains(VertexType::VolumeAttachment, "", "va"));
    g.delete_resource_slice("slice");
    assert_eq!(g.len(), (0, 0));
}

#[test]
fn null_fields_decode_as_absent() {
    let p = pod(json!({
        "metadata": {"namespace": "ns", "name": "p", "annotations": null},
        "spec": {"nodeName": "n1", "containers": null, "volumes": [{"name": "v", "secret": null, "configMap": {"name": "c"}}]},
        "status": null
    }));
    let g = Graph::new();
    g.add_pod(&p);
    assert!(reaches(&g, "n1", VertexType::ConfigMap, "ns", "c"));
    assert!(Pod::from_json(b"\"pod\"").is_err());
}

#[test]
fn a_secret_shared_by_many_pods_indexes_its_edges() {
    let g = Graph::new();
    let n = BIG as u32 + 50;
    for i in 0..n {
        g.add_pod(&pod(json!({
            "metadata": {"namespace": "ns", "name": format!("p{i}")},
            "spec": {"nodeName": format!("n{}", i % 3), "imagePullSecrets": [{"name": "shared"}, {"name": "shared"}]}
        })));
    }
    let big = |g: &Graph| {
        let inner = g.read();
        let id = inner.get(VertexType::Secret, "ns", "shared").unwrap();
        inner
            .vertex(id)
            .unwrap()
            .big
            .as_ref()
            .map(|b| (b.position.len(), b.destinations.clone()))
    };
    let (positions, destinations) = big(&g).unwrap();
    assert_eq!(positions, n as usize);
    assert_eq!(destinations.values().sum::<u32>(), n);
    assert_eq!(destinations.len(), 3);
    // A PV using the secret adds an edge to any node.
    g.add_pv(&pv(json!({
        "metadata": {"name": "vol"},
        "spec": {"claimRef": {"namespace": "ns", "name": "c"}, "rbd": {"secretRef": {"name": "shared"}}}
    })));
    assert!(reaches(&g, "n0", VertexType::Secret, "ns", "shared"));
    assert!(!reaches(&g, "n7", VertexType::Secret, "ns", "shared"));
    // Deleting the pods of n0 removes only n0's reach; the index follows each swap.
    for i in (0..n).filter(|i| i % 3 == 0) {
        g.delete_pod(&format!("p{i}"), "ns");
    }
    assert!(!reaches(&g, "n0", VertexType::Secret, "ns", "shared"));
    assert!(reaches(&g, "n1", VertexType::Secret, "ns", "shared"));
    let (positions, destinations) = big(&g).unwrap();
    assert_eq!(positions, (n - n.div_ceil(3)) as usize + 1);
    assert_eq!(destinations.get(&ANY), Some(&1));
    {
        let inner = g.read();
        let id = inner.get(VertexType::Secret, "ns", "shared").unwrap();
        let v = inner.vertex(id).unwrap();
        let b = v.big.as_ref().unwrap();
        for (i, e) in v.out.iter().enumerate() {
            assert_eq!(b.position.get(&e.to), Some(&(i as u32)));
        }
    }
    // Below half the threshold the index goes.
    for i in (0..n).filter(|i| i % 3 != 0) {
        g.delete_pod(&format!("p{i}"), "ns");
    }
    assert_eq!(big(&g), None);
    assert!(g.contains(VertexType::Secret, "ns", "shared"));
    g.delete_pv("vol");
    assert_eq!(g.len(), (0, 0));
}
