//! What the graph learns from each object (upstream's `Graph.AddPod`, `AddPV` and the
//! `graph_populator.go` handlers), read from the objects' JSON. Only the fields that make
//! edges are decoded; the rest is skipped.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::graph::{Graph, Inner, VertexType};

/// `kubernetes.io/config.mirror`: a node's own static pod, which must grant nothing.
pub const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Meta {
    name: Option<String>,
    namespace: Option<String>,
    annotations: Option<Map<String, Value>>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(default)]
struct NameRef {
    name: Option<String>,
    namespace: Option<String>,
}

fn name_of(r: &Option<NameRef>) -> Option<&str> {
    r.as_ref().and_then(|r| r.name.as_deref())
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct EnvFrom {
    secret_ref: Option<NameRef>,
    config_map_ref: Option<NameRef>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct EnvSource {
    secret_key_ref: Option<NameRef>,
    config_map_key_ref: Option<NameRef>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct EnvVar {
    value_from: Option<EnvSource>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct Container {
    env_from: Option<Vec<EnvFrom>>,
    env: Option<Vec<EnvVar>>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct SecretNamed {
    secret_name: Option<String>,
    secret_namespace: Option<String>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct WithSecretRef {
    secret_ref: Option<NameRef>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct Csi {
    node_publish_secret_ref: Option<NameRef>,
    controller_publish_secret_ref: Option<NameRef>,
    controller_expand_secret_ref: Option<NameRef>,
    node_stage_secret_ref: Option<NameRef>,
    node_expand_secret_ref: Option<NameRef>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct Projection {
    secret: Option<NameRef>,
    config_map: Option<NameRef>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(default)]
struct Projected {
    sources: Option<Vec<Projection>>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct ClaimSource {
    claim_name: Option<String>,
}

/// The volume sources that name secrets, config maps or claims, of a pod's volume or a
/// PV's spec (which share these field names).
#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct Volume {
    name: Option<String>,
    azure_file: Option<SecretNamed>,
    cephfs: Option<WithSecretRef>,
    cinder: Option<WithSecretRef>,
    flex_volume: Option<WithSecretRef>,
    projected: Option<Projected>,
    rbd: Option<WithSecretRef>,
    secret: Option<SecretNamed>,
    #[serde(rename = "scaleIO")]
    scale_io: Option<WithSecretRef>,
    iscsi: Option<WithSecretRef>,
    storageos: Option<WithSecretRef>,
    csi: Option<Csi>,
    config_map: Option<NameRef>,
    persistent_volume_claim: Option<ClaimSource>,
    ephemeral: Option<Value>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct PodResourceClaim {
    name: Option<String>,
    resource_claim_name: Option<String>,
    resource_claim_template_name: Option<String>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct PodSpec {
    node_name: Option<String>,
    service_account_name: Option<String>,
    image_pull_secrets: Option<Vec<NameRef>>,
    init_containers: Option<Vec<Container>>,
    containers: Option<Vec<Container>>,
    ephemeral_containers: Option<Vec<Container>>,
    volumes: Option<Vec<Volume>>,
    resource_claims: Option<Vec<PodResourceClaim>>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct ClaimStatus {
    name: Option<String>,
    resource_claim_name: Option<String>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct PodStatus {
    resource_claim_statuses: Option<Vec<ClaimStatus>>,
}

/// The fields of a Pod the graph reads.
#[derive(Deserialize, Default, Debug)]
#[serde(default)]
pub struct Pod {
    metadata: Option<Meta>,
    spec: Option<PodSpec>,
    status: Option<PodStatus>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct PvSpec {
    claim_ref: Option<NameRef>,
    #[serde(flatten)]
    source: Volume,
}

/// The fields of a PersistentVolume the graph reads.
#[derive(Deserialize, Default, Debug)]
#[serde(default)]
pub struct PersistentVolume {
    metadata: Option<Meta>,
    spec: Option<PvSpec>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase", default)]
struct NodeNamed {
    node_name: Option<String>,
}

/// A VolumeAttachment or a ResourceSlice: a name and `spec.nodeName`.
#[derive(Deserialize, Default, Debug)]
#[serde(default)]
pub struct NodeBound {
    metadata: Option<Meta>,
    spec: Option<NodeNamed>,
}

fn decode<T: for<'de> Deserialize<'de>>(kind: &'static str, json: &[u8]) -> Result<T> {
    serde_json::from_slice(json).map_err(|e| Error::Decode {
        kind,
        message: e.to_string(),
    })
}

fn meta_name(meta: &Option<Meta>) -> &str {
    meta.as_ref().and_then(|m| m.name.as_deref()).unwrap_or("")
}

fn meta_namespace(meta: &Option<Meta>) -> &str {
    meta.as_ref()
        .and_then(|m| m.namespace.as_deref())
        .unwrap_or("")
}

fn non_empty(s: Option<&str>) -> Option<&str> {
    s.filter(|s| !s.is_empty())
}

impl Pod {
    pub fn from_json(json: &[u8]) -> Result<Pod> {
        decode("Pod", json)
    }

    pub fn name(&self) -> &str {
        meta_name(&self.metadata)
    }

    pub fn namespace(&self) -> &str {
        meta_namespace(&self.metadata)
    }

    pub fn node_name(&self) -> &str {
        self.spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .unwrap_or("")
    }

    fn is_mirror(&self) -> bool {
        self.metadata
            .as_ref()
            .and_then(|m| m.annotations.as_ref())
            .is_some_and(|a| a.contains_key(MIRROR_POD_ANNOTATION))
    }

    fn containers(&self) -> impl Iterator<Item = &Container> {
        let spec = self.spec.as_ref();
        [
            spec.and_then(|s| s.init_containers.as_ref()),
            spec.and_then(|s| s.containers.as_ref()),
            spec.and_then(|s| s.ephemeral_containers.as_ref()),
        ]
        .into_iter()
        .flatten()
        .flatten()
    }

    fn volumes(&self) -> impl Iterator<Item = &Volume> {
        self.spec
            .as_ref()
            .and_then(|s| s.volumes.as_ref())
            .into_iter()
            .flatten()
    }

    /// Upstream's `VisitPodSecretNames`.
    fn secret_names(&self) -> Vec<&str> {
        let mut out: Vec<Option<&str>> = Vec::new();
        if let Some(refs) = self
            .spec
            .as_ref()
            .and_then(|s| s.image_pull_secrets.as_ref())
        {
            out.extend(refs.iter().map(|r| r.name.as_deref()));
        }
        for c in self.containers() {
            for e in c.env_from.iter().flatten() {
                out.push(name_of(&e.secret_ref));
            }
            for e in c.env.iter().flatten() {
                out.push(
                    e.value_from
                        .as_ref()
                        .and_then(|v| name_of(&v.secret_key_ref)),
                );
            }
        }
        for v in self.volumes() {
            pod_volume_secrets(v, &mut out);
        }
        out.into_iter().filter_map(non_empty).collect()
    }

    /// Upstream's `VisitPodConfigmapNames`.
    fn configmap_names(&self) -> Vec<&str> {
        let mut out: Vec<Option<&str>> = Vec::new();
        for c in self.containers() {
            for e in c.env_from.iter().flatten() {
                out.push(name_of(&e.config_map_ref));
            }
            for e in c.env.iter().flatten() {
                out.push(
                    e.value_from
                        .as_ref()
                        .and_then(|v| name_of(&v.config_map_key_ref)),
                );
            }
        }
        for v in self.volumes() {
            if let Some(p) = &v.projected {
                out.extend(p.sources.iter().flatten().map(|s| name_of(&s.config_map)));
            } else if v.config_map.is_some() {
                out.push(name_of(&v.config_map));
            }
        }
        out.into_iter().filter_map(non_empty).collect()
    }

    /// The claims of `persistentVolumeClaim` volumes, and of ephemeral volumes
    /// (`<pod>-<volume>`, upstream's `ephemeral.VolumeClaimName`).
    fn claim_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        for v in self.volumes() {
            if let Some(c) = &v.persistent_volume_claim {
                out.push(c.claim_name.clone().unwrap_or_default());
            } else if v.ephemeral.as_ref().is_some_and(|e| !e.is_null()) {
                out.push(format!(
                    "{}-{}",
                    self.name(),
                    v.name.as_deref().unwrap_or("")
                ));
            }
        }
        out.retain(|n| !n.is_empty());
        out
    }

    /// The ResourceClaims the pod uses (upstream's `resourceclaim.Name`): a named claim, or
    /// the one made from a template as the pod's status records it; none when the status
    /// does not (yet) name one.
    fn resource_claim_names(&self) -> Vec<&str> {
        let statuses = self
            .status
            .as_ref()
            .and_then(|s| s.resource_claim_statuses.as_ref());
        let mut out = Vec::new();
        for c in self
            .spec
            .iter()
            .flat_map(|s| s.resource_claims.iter().flatten())
        {
            if let Some(name) = &c.resource_claim_name {
                out.push(name.as_str());
            } else if c.resource_claim_template_name.is_some() {
                let status = statuses
                    .into_iter()
                    .flatten()
                    .find(|s| s.name.is_some() && s.name == c.name);
                if let Some(name) = status.and_then(|s| s.resource_claim_name.as_deref()) {
                    out.push(name);
                }
            }
        }
        out
    }
}

/// The secrets of a pod's volume, in the order of upstream's switch (one source applies).
fn pod_volume_secrets<'a>(v: &'a Volume, out: &mut Vec<Option<&'a str>>) {
    let secret_ref = |s: &'a Option<WithSecretRef>| s.as_ref().and_then(|s| name_of(&s.secret_ref));
    if let Some(a) = &v.azure_file {
        out.push(a.secret_name.as_deref());
    } else if v.cephfs.is_some() {
        out.push(secret_ref(&v.cephfs));
    } else if v.cinder.is_some() {
        out.push(secret_ref(&v.cinder));
    } else if v.flex_volume.is_some() {
        out.push(secret_ref(&v.flex_volume));
    } else if let Some(p) = &v.projected {
        out.extend(p.sources.iter().flatten().map(|s| name_of(&s.secret)));
    } else if v.rbd.is_some() {
        out.push(secret_ref(&v.rbd));
    } else if let Some(s) = &v.secret {
        out.push(s.secret_name.as_deref());
    } else if v.scale_io.is_some() {
        out.push(secret_ref(&v.scale_io));
    } else if v.iscsi.is_some() {
        out.push(secret_ref(&v.iscsi));
    } else if v.storageos.is_some() {
        out.push(secret_ref(&v.storageos));
    } else if let Some(c) = &v.csi {
        out.push(name_of(&c.node_publish_secret_ref));
    }
}

impl PersistentVolume {
    pub fn from_json(json: &[u8]) -> Result<PersistentVolume> {
        decode("PersistentVolume", json)
    }

    pub fn name(&self) -> &str {
        meta_name(&self.metadata)
    }

    /// Upstream's `VisitPVSecretNames`, keeping the secrets a kubelet sees: (namespace,
    /// name), a reference without a namespace taking the claim's.
    fn kubelet_secrets(&self) -> Vec<(&str, &str)> {
        let Some(spec) = &self.spec else {
            return Vec::new();
        };
        let claim_ns = spec
            .claim_ref
            .as_ref()
            .and_then(|c| c.namespace.as_deref())
            .unwrap_or("");
        let src = &spec.source;
        let mut out: Vec<SecretRef<'_>> = Vec::new();
        let or_claim = |r| or_claim_namespace(r, claim_ns);
        if let Some(a) = &src.azure_file {
            let ns = non_empty(a.secret_namespace.as_deref()).unwrap_or(claim_ns);
            out.push((ns, a.secret_name.as_deref()));
        } else if src.cephfs.is_some() {
            out.extend(or_claim(&src.cephfs));
        } else if let Some(c) = &src.cinder {
            out.extend(own(&c.secret_ref));
        } else if src.flex_volume.is_some() {
            out.extend(or_claim(&src.flex_volume));
        } else if src.rbd.is_some() {
            out.extend(or_claim(&src.rbd));
        } else if src.scale_io.is_some() {
            out.extend(or_claim(&src.scale_io));
        } else if src.iscsi.is_some() {
            out.extend(or_claim(&src.iscsi));
        } else if let Some(s) = &src.storageos {
            out.extend(own(&s.secret_ref));
        } else if let Some(c) = &src.csi {
            // The controller's secrets are not the kubelet's.
            out.extend(own(&c.node_publish_secret_ref));
            out.extend(own(&c.node_stage_secret_ref));
            out.extend(own(&c.node_expand_secret_ref));
            let _ = (
                &c.controller_publish_secret_ref,
                &c.controller_expand_secret_ref,
            );
        }
        out.into_iter()
            .filter_map(|(ns, name)| non_empty(name).map(|n| (ns, n)))
            .collect()
    }
}

type SecretRef<'a> = (&'a str, Option<&'a str>);

/// A reference's own namespace, else the claim's (objects persisted before references had
/// one).
fn or_claim_namespace<'a>(
    r: &'a Option<WithSecretRef>,
    claim_ns: &'a str,
) -> Option<SecretRef<'a>> {
    let r = r.as_ref()?.secret_ref.as_ref()?;
    let ns = non_empty(r.namespace.as_deref()).unwrap_or(claim_ns);
    Some((ns, r.name.as_deref()))
}

/// A reference with its own namespace.
fn own(r: &Option<NameRef>) -> Option<SecretRef<'_>> {
    let r = r.as_ref()?;
    Some((r.namespace.as_deref().unwrap_or(""), r.name.as_deref()))
}

impl NodeBound {
    pub fn from_json(kind: &'static str, json: &[u8]) -> Result<NodeBound> {
        decode(kind, json)
    }

    pub fn name(&self) -> &str {
        meta_name(&self.metadata)
    }

    pub fn node_name(&self) -> &str {
        self.spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .unwrap_or("")
    }
}

impl Graph {
    /// Upstream's `AddPod`, for a pod bound to a node: `pod -> node`, and unless it is a
    /// mirror pod, edges to the pod from its service account, secrets, config maps,
    /// claims and resource claims, each bound for that node.
    pub fn add_pod(&self, pod: &Pod) {
        let (ns, name) = (pod.namespace(), pod.name());
        let mut g = self.write();
        g.delete_vertex(VertexType::Pod, ns, name);
        let p = g.get_or_create(VertexType::Pod, ns, name);
        let n = g.get_or_create(VertexType::Node, "", pod.node_name());
        g.add_edge(p, n, Some(n));
        if pod.is_mirror() {
            return;
        }
        let to_pod = |g: &mut Inner, ty: VertexType, ref_name: &str| {
            let v = g.get_or_create(ty, ns, ref_name);
            g.add_edge(v, p, Some(n));
        };
        let sa = pod
            .spec
            .as_ref()
            .and_then(|s| s.service_account_name.as_deref());
        if let Some(sa) = non_empty(sa) {
            to_pod(&mut g, VertexType::ServiceAccount, sa);
        }
        for s in pod.secret_names() {
            to_pod(&mut g, VertexType::Secret, s);
        }
        for c in pod.configmap_names() {
            to_pod(&mut g, VertexType::ConfigMap, c);
        }
        for c in pod.claim_names() {
            to_pod(&mut g, VertexType::Pvc, &c);
        }
        for c in pod.resource_claim_names() {
            to_pod(&mut g, VertexType::ResourceClaim, c);
        }
    }

    /// Upstream's `AddPV`: when the PV is bound, `pv -> pvc` and `secret -> pv` for the
    /// secrets a kubelet uses, none bound for a node.
    pub fn add_pv(&self, pv: &PersistentVolume) {
        let mut g = self.write();
        g.delete_vertex(VertexType::Pv, "", pv.name());
        let Some(claim) = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) else {
            return;
        };
        let v = g.get_or_create(VertexType::Pv, "", pv.name());
        let c = g.get_or_create(
            VertexType::Pvc,
            claim.namespace.as_deref().unwrap_or(""),
            claim.name.as_deref().unwrap_or(""),
        );
        g.add_edge(v, c, None);
        for (ns, secret) in pv.kubelet_secrets() {
            let s = g.get_or_create(VertexType::Secret, ns, secret);
            g.add_edge(s, v, None);
        }
    }
}
