//! Upstream's `StorageObjectInUseProtection` plugin
//! (`plugin/pkg/admission/storage/storageobjectinuseprotection`): every PersistentVolume
//! and PersistentVolumeClaim is created with its protection finalizer, which the
//! pv-protection and pvc-protection controllers remove once nothing uses the object.
//! (Upstream also protects VolumeAttributesClasses behind the `VolumeAttributesClass`
//! gate, off by default in 1.33.)

use futures_util::future::BoxFuture;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::Mutate;
use serde_json::{Value, json};

/// Upstream `volumeutil.PVProtectionFinalizer`.
pub const PV_PROTECTION: &str = "kubernetes.io/pv-protection";
/// Upstream `volumeutil.PVCProtectionFinalizer`.
pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";

pub struct StorageObjectInUseProtection;

/// `finalizer` appended to the object's finalizers unless it is there already.
fn add_finalizer(object: &mut Value, finalizer: &str) {
    let meta = kas_registry::meta::metadata_mut(object);
    let finalizers = meta.entry("finalizers").or_insert_with(|| json!([]));
    if !finalizers.is_array() {
        *finalizers = json!([]);
    }
    if let Some(list) = finalizers.as_array_mut()
        && !list.iter().any(|f| f.as_str() == Some(finalizer))
    {
        list.push(json!(finalizer));
    }
}

impl Mutate for StorageObjectInUseProtection {
    fn mutate<'a>(
        &'a self,
        descriptor: &'static ResourceDescriptor,
        _name: &'a str,
        object: &'a mut Value,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        match (descriptor.group, descriptor.plural) {
            ("", "persistentvolumes") => add_finalizer(object, PV_PROTECTION),
            ("", "persistentvolumeclaims") => add_finalizer(object, PVC_PROTECTION),
            _ => {}
        }
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_protection_finalizer_is_added_once() {
        let mut pvc = json!({"metadata": {"name": "c", "finalizers": ["example.com/keep"]}});
        add_finalizer(&mut pvc, PVC_PROTECTION);
        assert_eq!(
            pvc["metadata"]["finalizers"],
            json!(["example.com/keep", PVC_PROTECTION])
        );
        add_finalizer(&mut pvc, PVC_PROTECTION);
        assert_eq!(
            pvc["metadata"]["finalizers"].as_array().map(Vec::len),
            Some(2)
        );
        let mut pv = json!({"metadata": {"name": "v"}});
        add_finalizer(&mut pv, PV_PROTECTION);
        assert_eq!(pv["metadata"]["finalizers"], json!([PV_PROTECTION]));
    }
}
