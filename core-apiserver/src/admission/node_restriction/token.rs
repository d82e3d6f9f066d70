//! Tokens a node requests: upstream `admitServiceAccount`, and the
//! `ServiceAccountNodeAudienceRestriction` checks (`validateNodeServiceAccountAudience`,
//! `podReferencesAudience`, `getCSIFromPVC`, `csiDriverHasAudience`).

use kas_apimachinery::golang::strconv::quote;
use kas_auth::UserInfo;
use kas_auth::authorization::{Attributes as AuthzAttributes, Decision};
use kas_registry::admission::{Attributes, Operation};
use kas_registry::meta;
use serde_json::Value;

use super::{Lister, NodeRestriction, forbidden, items, lister_not_found, text};

/// The in-tree volume sources csi-translation-lib migrates (1.33's `inTreePlugins`), and
/// the CSI driver each becomes; the same keys name them in a pod's volume and in a
/// PersistentVolume's spec.
const MIGRATED_SOURCES: &[(&str, &str)] = &[
    ("gcePersistentDisk", "pd.csi.storage.gke.io"),
    ("awsElasticBlockStore", "ebs.csi.aws.com"),
    ("cinder", "cinder.csi.openstack.org"),
    ("azureDisk", "disk.csi.azure.com"),
    ("azureFile", "file.csi.azure.com"),
    ("vsphereVolume", "csi.vsphere.vmware.com"),
    ("portworxVolume", "pxd.portworx.com"),
];

fn present(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

/// The CSI driver an in-tree source of `v` (a volume or a PV spec) migrates to.
fn migrated_driver(v: &Value) -> Option<&'static str> {
    MIGRATED_SOURCES
        .iter()
        .find(|(key, _)| present(v, key))
        .map(|(_, driver)| *driver)
}

/// Upstream `utilerrors.NewAggregate(errs).Error()`.
fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// A lister's answer as upstream's lister gives it: the object, or the error's text
/// (NotFound's names the singular resource).
async fn lookup(
    lister: Option<&dyn Lister>,
    group: &str,
    resource: &str,
    namespace: &str,
    name: &str,
) -> Result<Value, String> {
    let found = match lister {
        Some(lister) => lister.get(namespace, name).await?,
        None => None,
    };
    found.ok_or_else(|| {
        let group = if group.is_empty() {
            String::new()
        } else {
            format!(".{group}")
        };
        format!("{resource}{group} {} not found", quote(name))
    })
}

impl NodeRestriction {
    /// Upstream `admitServiceAccount`: a token for a node is bound to a pod on that node.
    pub(super) async fn admit_service_account(
        &self,
        node: &str,
        user: &UserInfo,
        a: &Attributes<'_>,
    ) -> kas_registry::Result<()> {
        if a.operation != Operation::Create || a.subresource != "token" {
            return Ok(());
        }
        let Some(request) = a.object else {
            return Err(forbidden(a, "unexpected type <nil>"));
        };
        let bound = request
            .pointer("/spec/boundObjectRef")
            .filter(|r| !r.is_null());
        let Some(bound) = bound.filter(|r| {
            text(r, "/apiVersion") == "v1"
                && text(r, "/kind") == "Pod"
                && !text(r, "/name").is_empty()
        }) else {
            return Err(forbidden(a, "node requested token not bound to a pod"));
        };
        let uid = text(bound, "/uid");
        if uid.is_empty() {
            return Err(forbidden(
                a,
                "node requested token with a pod binding without a uid",
            ));
        }
        let name = text(bound, "/name");
        let pod = self
            .pods
            .get(a.namespace, name)
            .await
            .map_err(|e| forbidden(a, &e))?;
        let Some(pod) = pod else {
            return Err(lister_not_found("", "pod", name));
        };
        if uid != meta::str_field(&pod, "uid") {
            let message = format!(
                "the UID in the bound object reference ({uid}) does not match the UID in record. The object might have been deleted and then recreated"
            );
            return Err(forbidden(a, &message));
        }
        if text(&pod, "/spec/nodeName") != node {
            return Err(forbidden(
                a,
                "node requested token bound to a pod scheduled on a different node",
            ));
        }
        self.check_audience(request, &pod, user, a)
            .await
            .map_err(|e| forbidden(a, &e))
    }

    /// Upstream `validateNodeServiceAccountAudience`: the audience is one the pod's
    /// volumes use, or one the authorizer lets the node request.
    async fn check_audience(
        &self,
        request: &Value,
        pod: &Value,
        user: &UserInfo,
        a: &Attributes<'_>,
    ) -> Result<(), String> {
        let audiences: Vec<&str> = items(request, "/spec/audiences")
            .map(|v| v.as_str().unwrap_or(""))
            .collect();
        let audience = match audiences[..] {
            [] => "",
            [one] => one,
            _ => return Err("node may only request 0 or 1 audiences".to_owned()),
        };
        let quoted = quote(audience);
        match self.pod_references_audience(pod, audience).await {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(e) => return Err(format!("error validating audience {quoted}: {e}")),
        }
        let attrs = AuthzAttributes {
            user: user.clone(),
            verb: "request-serviceaccounts-token-audience".to_owned(),
            is_resource_request: true,
            namespace: a.namespace.to_owned(),
            api_version: "v1".to_owned(),
            resource: audience.to_owned(),
            name: a.name.to_owned(),
            ..AuthzAttributes::default()
        };
        let user = &user.name;
        match self.authorizer.authorize(&attrs).await {
            Ok((Decision::Allow, _)) => Ok(()),
            Err(e) => Err(format!(
                "audience {quoted} not found in pod spec volume, error authorizing {user} to request tokens for this audience: {e}"
            )),
            Ok(_) => Err(format!(
                "audience {quoted} not found in pod spec volume, {user} is not authorized to request tokens for this audience"
            )),
        }
    }

    /// Upstream `podReferencesAudience`: a token projection with the audience, or a CSI
    /// driver (inline, through a claim, or migrated from an in-tree source) that requests
    /// tokens for it. Lookups that fail are the error when no volume matched.
    async fn pod_references_audience(&self, pod: &Value, audience: &str) -> Result<bool, String> {
        let mut errors = Vec::new();
        let namespace = meta::namespace(pod);
        for volume in items(pod, "/spec/volumes") {
            let projected = items(volume, "/projected/sources").any(|s| {
                s.get("serviceAccountToken")
                    .is_some_and(|t| !t.is_null() && text(t, "/audience") == audience)
            });
            if projected {
                return Ok(true);
            }
            let driver = if volume
                .pointer("/ephemeral/volumeClaimTemplate")
                .is_some_and(|t| !t.is_null())
            {
                // Upstream `ephemeral.VolumeClaimName`.
                let claim = format!("{}-{}", meta::name(pod), text(volume, "/name"));
                self.csi_from_claim(namespace, &claim).await
            } else if present(volume, "persistentVolumeClaim") {
                let claim = text(volume, "/persistentVolumeClaim/claimName");
                self.csi_from_claim(namespace, claim).await
            } else if present(volume, "csi") {
                Ok(text(volume, "/csi/driver").to_owned())
            } else {
                Ok(migrated_driver(volume).unwrap_or_default().to_owned())
            };
            let driver = match driver {
                Ok(driver) => driver,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            if driver.is_empty() {
                continue;
            }
            match self.driver_has_audience(&driver, audience).await {
                Ok(true) => return Ok(true),
                Ok(false) => {}
                Err(e) => errors.push(e),
            }
        }
        if errors.is_empty() {
            Ok(false)
        } else {
            Err(aggregate(&errors))
        }
    }

    /// Upstream `getCSIFromPVC`: the driver of the claim's volume, empty for a volume no
    /// CSI driver serves.
    async fn csi_from_claim(&self, namespace: &str, claim: &str) -> Result<String, String> {
        let claims = self.claims.as_deref();
        let claim = lookup(claims, "", "persistentvolumeclaim", namespace, claim).await?;
        let volume_name = text(&claim, "/spec/volumeName");
        let volumes = self.volumes.as_deref();
        let volume = lookup(volumes, "", "persistentvolume", "", volume_name).await?;
        let spec = volume.get("spec").unwrap_or(&Value::Null);
        if present(spec, "csi") {
            return Ok(text(spec, "/csi/driver").to_owned());
        }
        Ok(migrated_driver(spec).unwrap_or_default().to_owned())
    }

    /// Upstream `csiDriverHasAudience`.
    async fn driver_has_audience(&self, driver: &str, audience: &str) -> Result<bool, String> {
        let drivers = self.drivers.as_deref();
        let found = lookup(drivers, "storage.k8s.io", "csidriver", "", driver).await?;
        Ok(items(&found, "/spec/tokenRequests").any(|t| text(t, "/audience") == audience))
    }
}
