//! The other resources a node writes: claims' status, tokens, leases, CSINodes,
//! ResourceSlices and CSRs.

use super::*;

#[tokio::test]
async fn a_node_writes_only_the_status_of_claims_and_only_capacity_and_conditions() {
    let claim = json!({"metadata": {"name": "c", "namespace": "ns", "resourceVersion": "1"},
        "spec": {"volumeName": "v"}, "status": {"phase": "Bound"}});
    refused(
        req(Update, CLAIMS, "ns", "c")
            .obj(claim.clone())
            .old(claim.clone()),
        403,
        r#"persistentvolumeclaims "c" is forbidden: may only update PVC status"#,
    )
    .await;
    refused(
        req(Delete, CLAIMS, "ns", "c"),
        403,
        r#"persistentvolumeclaims "c" is forbidden: may only update PVC status"#,
    )
    .await;
    let mut grown = claim.clone();
    grown["metadata"]["resourceVersion"] = json!("2");
    grown["status"]["capacity"] = json!({"storage": "2Gi"});
    grown["status"]["conditions"] = json!([{"type": "Resizing", "status": "True"}]);
    grown["status"]["allocatedResources"] = json!({"storage": "2Gi"});
    let status = |new: Value| {
        req(Update, CLAIMS, "ns", "c")
            .sub("status")
            .obj(new)
            .old(claim.clone())
    };
    allowed(status(grown.clone())).await;
    let mut lost = grown;
    lost["status"]["phase"] = json!("Lost");
    let (code, message) = run(&plugin(), &status(lost), &mynode())
        .await
        .unwrap_or_default();
    assert_eq!(code, 403);
    assert!(
        message.starts_with(r#"persistentvolumeclaims "c" is forbidden: node "mynode" is not allowed to update fields other than status.quantity and status.conditions: "#),
        "{message}"
    );
    assert!(message.contains("status.phase"), "{message}");
}

fn token(pod: &str, uid: &str, audiences: Value) -> Request<'static> {
    let mut body = json!({"metadata": {"namespace": "ns"}, "spec": {"audiences": audiences}});
    if !pod.is_empty() {
        body["spec"]["boundObjectRef"] =
            json!({"kind": "Pod", "apiVersion": "v1", "name": pod, "uid": uid});
    }
    req(Create, ACCOUNTS, "ns", "mysa").sub("token").obj(body)
}

#[tokio::test]
async fn tokens_are_bound_to_a_pod_on_the_node() {
    let forbidden = |m: &str| format!(r#"serviceaccounts "mysa" is forbidden: {m}"#);
    refused(
        token("", "", json!([])),
        403,
        &forbidden("node requested token not bound to a pod"),
    )
    .await;
    refused(
        token("mypod", "", json!([])),
        403,
        &forbidden("node requested token with a pod binding without a uid"),
    )
    .await;
    refused(
        token("nosuchpod", "pod-uid", json!([])),
        404,
        r#"pod "nosuchpod" not found"#,
    )
    .await;
    refused(
        token("mypod", "other-uid", json!([])),
        403,
        &forbidden("the UID in the bound object reference (other-uid) does not match the UID in record. The object might have been deleted and then recreated"),
    )
    .await;
    refused(
        token("otherpod", "pod-uid", json!([])),
        403,
        &forbidden("node requested token bound to a pod scheduled on a different node"),
    )
    .await;
    // Other writes of service accounts are not the plugin's.
    let sa = json!({"metadata": {"name": "mysa", "namespace": "ns"}});
    allowed(req(Create, ACCOUNTS, "ns", "mysa").obj(sa)).await;
}

#[tokio::test]
async fn a_token_audience_is_one_the_pod_uses_or_the_node_is_granted() {
    let forbidden = |m: &str| format!(r#"serviceaccounts "mysa" is forbidden: {m}"#);
    let not_found = |aud: &str| {
        forbidden(&format!(
            r#"audience "{aud}" not found in pod spec volume, system:node:mynode is not authorized to request tokens for this audience"#
        ))
    };
    allowed(token("defaultsapod", "pod-uid", json!([]))).await;
    allowed(token("mysapod", "pod-uid", json!(["foo"]))).await;
    refused(
        token("mysapod", "pod-uid", json!(["foo", "bar"])),
        403,
        &forbidden("node may only request 0 or 1 audiences"),
    )
    .await;
    refused(
        token("mypod", "pod-uid", json!(["foo"])),
        403,
        &not_found("foo"),
    )
    .await;
    refused(token("mypod", "pod-uid", json!([])), 403, &not_found("")).await;
    allowed(token("mypod", "pod-uid", json!(["granted"]))).await;
    // pod -> csi -> driver; pod -> pvc -> pv -> csi -> driver; ephemeral; in-tree.
    for pod in ["mycsipod", "mypvcpod", "myephemeralpod", "myintreepod"] {
        allowed(token(pod, "pod-uid", json!(["foo"]))).await;
        refused(
            token(pod, "pod-uid", json!(["bar"])),
            403,
            &not_found("bar"),
        )
        .await;
    }
    let lookup = |m: &str| forbidden(&format!(r#"error validating audience "foo": {m}"#));
    refused(
        token("nopvcpod", "pod-uid", json!(["foo"])),
        403,
        &lookup(r#"persistentvolumeclaim "gone" not found"#),
    )
    .await;
    refused(
        token("nopvpod", "pod-uid", json!(["foo"])),
        403,
        &lookup(r#"persistentvolume "nopv" not found"#),
    )
    .await;
    refused(
        token("nodriverpod", "pod-uid", json!(["foo"])),
        403,
        &lookup(r#"csidriver.storage.k8s.io "com.example.csi.other" not found"#),
    )
    .await;
}

#[tokio::test]
async fn leases_and_csinodes_are_the_nodes_own() {
    let lease = |ns: &str, name: &str| json!({"metadata": {"name": name, "namespace": ns}, "spec": {"holderIdentity": "mynode"}});
    let namespace = r#"leases.coordination.k8s.io "mynode" is forbidden: can only access leases in the "kube-node-lease" system namespace"#;
    let name = r#"leases.coordination.k8s.io "foo" is forbidden: can only access node lease with the same name as the requesting node"#;
    let own = lease("kube-node-lease", "mynode");
    allowed(req(Create, LEASES, "kube-node-lease", "mynode").obj(own.clone())).await;
    allowed(
        req(Update, LEASES, "kube-node-lease", "mynode")
            .obj(own.clone())
            .old(own),
    )
    .await;
    allowed(req(Delete, LEASES, "kube-node-lease", "mynode")).await;
    let wrong_ns = lease("foo", "mynode");
    refused(
        req(Create, LEASES, "foo", "mynode").obj(wrong_ns.clone()),
        403,
        namespace,
    )
    .await;
    refused(
        req(Update, LEASES, "foo", "mynode")
            .obj(wrong_ns.clone())
            .old(wrong_ns),
        403,
        namespace,
    )
    .await;
    refused(req(Delete, LEASES, "foo", "mynode"), 403, namespace).await;
    let wrong_name = lease("kube-node-lease", "foo");
    refused(
        req(Create, LEASES, "kube-node-lease", "foo").obj(wrong_name.clone()),
        403,
        name,
    )
    .await;
    refused(
        req(Update, LEASES, "kube-node-lease", "foo")
            .obj(wrong_name.clone())
            .old(wrong_name),
        403,
        name,
    )
    .await;
    refused(req(Delete, LEASES, "kube-node-lease", "foo"), 403, name).await;

    let csi = |name: &str| json!({"metadata": {"name": name}, "spec": {"drivers": []}});
    let msg = r#"csinodes.storage.k8s.io "foo" is forbidden: can only access CSINode with the same name as the requesting node"#;
    allowed(req(Create, CSI_NODES, "", "mynode").obj(csi("mynode"))).await;
    allowed(
        req(Update, CSI_NODES, "", "mynode")
            .obj(csi("mynode"))
            .old(csi("mynode")),
    )
    .await;
    allowed(req(Delete, CSI_NODES, "", "mynode")).await;
    refused(req(Create, CSI_NODES, "", "foo").obj(csi("foo")), 403, msg).await;
    refused(
        req(Update, CSI_NODES, "", "foo")
            .obj(csi("foo"))
            .old(csi("foo")),
        403,
        msg,
    )
    .await;
    refused(req(Delete, CSI_NODES, "", "foo"), 403, msg).await;
}

static SLICES: ResourceDescriptor = ResourceDescriptor {
    group: "resource.k8s.io",
    plural: "resourceslices",
    ..resources::leases::DESCRIPTOR
};

#[tokio::test]
async fn resource_slices_are_created_and_deleted_for_the_node_only() {
    let slice =
        |node: Value| json!({"metadata": {"name": "s"}, "spec": {"nodeName": node, "driver": "d"}});
    allowed(req(Create, &SLICES, "", "s").obj(slice(json!("mynode")))).await;
    let create = r#"resourceslices.resource.k8s.io "s" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node"#;
    refused(
        req(Create, &SLICES, "", "s").obj(slice(json!("othernode"))),
        403,
        create,
    )
    .await;
    refused(
        req(Create, &SLICES, "", "s").obj(slice(json!(null))),
        403,
        create,
    )
    .await;
    allowed(req(Delete, &SLICES, "", "myslice")).await;
    refused(
        req(Delete, &SLICES, "", "otherslice"),
        403,
        r#"resourceslices.resource.k8s.io "otherslice" is forbidden: can only delete ResourceSlice with the same NodeName as the requesting node"#,
    )
    .await;
}

/// `openssl req -new -subj "/O=system:nodes/CN=system:node:mynode"` (P-256), and the
/// same for `othernode`.
const MYNODE_CSR: &str = "-----BEGIN CERTIFICATE REQUEST-----
MIHvMIGWAgEAMDQxFTATBgNVBAoMDHN5c3RlbTpub2RlczEbMBkGA1UEAwwSc3lz
dGVtOm5vZGU6bXlub2RlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE2Yz2Pel9
xBDR/f3yt308b/oUVFTMuxYJBGWk+SPuRCeJLWSFE0xzKEg0QUtpUJuwiz4p9hcF
gjdiWRVZEk3K0qAAMAoGCCqGSM49BAMCA0gAMEUCIQClOe8KiMER/diuuVcaI2JO
p4/CFqh0ukSsP1FRvAssnAIgWwbhIHGuueMlg9YcEJP4Sf5mBc67cSzy/HG9RL31
LeE=
-----END CERTIFICATE REQUEST-----
";
const OTHERNODE_CSR: &str = "-----BEGIN CERTIFICATE REQUEST-----
MIHzMIGZAgEAMDcxFTATBgNVBAoMDHN5c3RlbTpub2RlczEeMBwGA1UEAwwVc3lz
dGVtOm5vZGU6b3RoZXJub2RlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE2Yz2
Pel9xBDR/f3yt308b/oUVFTMuxYJBGWk+SPuRCeJLWSFE0xzKEg0QUtpUJuwiz4p
9hcFgjdiWRVZEk3K0qAAMAoGCCqGSM49BAMCA0kAMEYCIQCx4fisApOGQ3txvxib
UgFYORI0tNrpZIWX+7gNA3ArLAIhAPxtbCWYkvDVM2h8okKtS45V6fvK2s/J9yoK
JzZLIo27
-----END CERTIFICATE REQUEST-----
";

#[tokio::test]
async fn node_csrs_name_the_requesting_node() {
    use base64::Engine as _;
    let csr = |signer: &str, pem: &str| {
        let request = base64::engine::general_purpose::STANDARD.encode(pem);
        json!({"metadata": {"name": "req"}, "spec": {"signerName": signer, "request": request}})
    };
    let create = |body: Value| req(Create, CSRS, "", "req").obj(body);
    for signer in [
        "kubernetes.io/kubelet-serving",
        "kubernetes.io/kube-apiserver-client-kubelet",
    ] {
        allowed(create(csr(signer, MYNODE_CSR))).await;
        refused(
            create(csr(signer, OTHERNODE_CSR)),
            403,
            r#"certificatesigningrequests.certificates.k8s.io "req" is forbidden: can only create a node CSR with CN=system:node:mynode"#,
        )
        .await;
        refused(
            create(csr(signer, "nonsense")),
            403,
            r#"certificatesigningrequests.certificates.k8s.io "req" is forbidden: unable to parse csr: PEM block type must be CERTIFICATE REQUEST"#,
        )
        .await;
    }
    allowed(create(csr("example.com/signer", OTHERNODE_CSR))).await;
}
