//! storage.k8s.io/v1 VolumeAttachment, after upstream's
//! `pkg/registry/storage/volumeattachment` (the strategy and status strategy),
//! `ValidateVolumeAttachment`, `ValidateVolumeAttachmentV1`,
//! `ValidateVolumeAttachmentUpdate` and `printVolumeAttachment`.
//!
//! Left out: the checks of an `inlineVolumeSpec` (upstream's `ValidatePersistentVolumeSpec`
//! of inline volumes), and the status strategy's clearing of `errorCode`.

use kas_api::storage::v1::{
    VOLUME_ATTACHMENT_SOURCE, VOLUME_ATTACHMENT_SPEC, VOLUME_ATTACHMENT_STATUS,
};
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Value, json};

use super::{causes, go_pointer, quote, s};
use crate::podspec::validation::sources::csi_driver_name;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "storage.k8s.io",
    version: "v1",
    kind: "VolumeAttachment",
    list_kind: "VolumeAttachmentList",
    plural: "volumeattachments",
    singular: "volumeattachment",
    short_names: &[],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: &[
        TableColumn {
            name: "Attacher",
            type_: "string",
            format: "name",
            description: VOLUME_ATTACHMENT_SPEC.doc("attacher"),
            priority: 0,
        },
        TableColumn {
            name: "PV",
            type_: "string",
            format: "",
            description: VOLUME_ATTACHMENT_SOURCE.doc("persistentVolumeName"),
            priority: 0,
        },
        TableColumn {
            name: "Node",
            type_: "string",
            format: "",
            description: VOLUME_ATTACHMENT_SPEC.doc("nodeName"),
            priority: 0,
        },
        TableColumn {
            name: "Attached",
            type_: "boolean",
            format: "",
            description: VOLUME_ATTACHMENT_STATUS.doc("attached"),
            priority: 0,
        },
    ],
    table_name_and_age: true,
    storage_resource: "volumeattachments",
    schema: Some(&kas_api::storage::v1::VOLUME_ATTACHMENT),
    list_schema: Some(&kas_api::storage::v1::VOLUME_ATTACHMENT_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `maxAttachedVolumeMetadataSize` and `maxVolumeErrorMessageSize`.
const MAX_METADATA_SIZE: i64 = 256 * (1 << 10);
const MAX_ERROR_MESSAGE: usize = 1024;

const MSG_ONE_SOURCE: &str =
    "must specify exactly one of inlineVolumeSpec and persistentVolumeName";

fn present<'a>(v: &'a Value, pointer: &str) -> Option<&'a Value> {
    v.pointer(pointer).filter(|v| !v.is_null())
}

/// Upstream `validateVolumeError`.
fn validate_volume_error(e: Option<&Value>, path: &Path) -> Vec<field::Error> {
    let Some(e) = e.filter(|e| !e.is_null()) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    if s(e, "/message").len() > MAX_ERROR_MESSAGE {
        // Upstream reports the metadata limit here.
        errs.push(field::too_long(&path.child("message"), MAX_METADATA_SIZE));
    }
    if let Some(code) = e
        .get("errorCode")
        .and_then(Value::as_i64)
        .filter(|c| *c < 0)
    {
        let msg = kas_apimachinery::validation::inclusive_range_error(0, i64::from(i32::MAX));
        errs.push(field::invalid(&path.child("errorCode"), code, &msg));
    }
    errs
}

/// Upstream `ValidateVolumeAttachment`.
fn validate_attachment(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
    let spec = Path::new("spec");
    let mut e = Vec::new();
    if s(obj, "/spec/attacher").is_empty() {
        e.push(field::required(&spec.child("attacher"), ""));
    }
    let source = spec.child("source");
    let pv = present(obj, "/spec/source/persistentVolumeName");
    match (present(obj, "/spec/source/inlineVolumeSpec"), pv) {
        (None, None) => e.push(field::required(&source, MSG_ONE_SOURCE)),
        (Some(_), Some(_)) => e.push(field::forbidden(&source, MSG_ONE_SOURCE)),
        (None, Some(pv)) => {
            if pv.as_str().unwrap_or("").is_empty() {
                let msg = "must specify non empty persistentVolumeName";
                e.push(field::required(&source.child("persistentVolumeName"), msg));
            }
        }
        (Some(_), None) => {}
    }
    let node = s(obj, "/spec/nodeName");
    for msg in name_is_dns_subdomain(node, false) {
        e.push(field::invalid(&spec.child("nodeName"), node, &msg));
    }
    let status = Path::new("status");
    let metadata = present(obj, "/status/attachmentMetadata").and_then(Value::as_object);
    let size: usize = metadata
        .into_iter()
        .flatten()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if size as i64 > MAX_METADATA_SIZE {
        e.push(field::too_long(
            &status.child("attachmentMetadata"),
            MAX_METADATA_SIZE,
        ));
    }
    for key in ["attachError", "detachError"] {
        e.extend(validate_volume_error(
            obj.pointer(&format!("/status/{key}")),
            &status.child(key),
        ));
    }
    errs.extend(causes(e));
    errs
}

/// Upstream `ValidateVolumeAttachmentV1`: what newly created attachments must also meet.
fn validate_v1(obj: &Value) -> Vec<field::Error> {
    let mut errs = csi_driver_name(s(obj, "/spec/attacher"), &Path::new("spec.attacher"));
    if let Some(pv) = present(obj, "/spec/source/persistentVolumeName") {
        let pv = pv.as_str().unwrap_or("");
        let path = Path::new("spec.source.persistentVolumeName");
        for msg in name_is_dns_subdomain(pv, false) {
            errs.push(field::invalid(&path, pv, &msg));
        }
    }
    errs
}

/// A `storage.VolumeAttachmentSpec` as Go's `%#v` prints it.
fn go_spec(obj: &Value) -> String {
    format!(
        "storage.VolumeAttachmentSpec{{Attacher:{}, Source:storage.VolumeAttachmentSource{{PersistentVolumeName:{}, InlineVolumeSpec:{}}}, NodeName:{}}}",
        quote(s(obj, "/spec/attacher")),
        go_pointer("string", present(obj, "/spec/source/persistentVolumeName")),
        go_pointer(
            "core.PersistentVolumeSpec",
            present(obj, "/spec/source/inlineVolumeSpec")
        ),
        quote(s(obj, "/spec/nodeName")),
    )
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's status strategy: `ResetObjectMetaForStatus`.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::reset_object_meta_for_status(new, old);
    }

    /// Upstream's store sets `ReturnDeletedObject`.
    fn return_deleted_object(&self) -> bool {
        true
    }

    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["metadata", "spec"],
            _ => &["status"],
        }
    }

    /// The sources' defaults of an inline volume spec.
    fn default(&self, obj: &mut Value) {
        let spec = obj
            .pointer_mut("/spec/source/inlineVolumeSpec")
            .and_then(Value::as_object_mut);
        if let Some(spec) = spec {
            if let Some(capacity) = spec.get_mut("capacity") {
                crate::podspec::defaults::default_resource_list(capacity);
            }
            crate::podspec::defaults::default_volume_sources(spec);
        }
    }

    /// The status is the attacher's.
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), json!({"attached": false}));
        }
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_attachment(obj);
        errs.extend(causes(validate_v1(obj)));
        errs
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::keep_status(new, old);
    }

    /// Upstream validates the attachment, then `ValidateVolumeAttachmentUpdate`, which
    /// validates it again and keeps the spec.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(validate_attachment(new));
        errs.extend(validate_attachment(new));
        let same = crate::resources::persistentvolumes::validation::semantic;
        let spec = |o: &Value| same(o.get("spec").unwrap_or(&Value::Null));
        if spec(new) != spec(old) {
            let value = BadValue::Raw(go_spec(new));
            errs.push(field::invalid(&Path::new("spec"), value, "field is immutable").to_cause());
        }
        errs
    }

    /// Upstream: an update must name the resourceVersion it replaces.
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// Upstream `printVolumeAttachment`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let attached = obj
            .pointer("/status/attached")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        vec![
            json!(s(obj, "/spec/attacher")),
            json!(s(obj, "/spec/source/persistentVolumeName")),
            json!(s(obj, "/spec/nodeName")),
            json!(attached),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn attachment(spec: Value) -> Value {
        json!({"metadata": {"name": "va-1"}, "spec": spec})
    }

    #[test]
    fn spec_rules() {
        let ok = attachment(json!({"attacher": "ebs.csi.aws.com", "nodeName": "node-1",
            "source": {"persistentVolumeName": "pv-1"}}));
        assert!(Strategy.validate(&ok).is_empty());
        let bad = attachment(json!({"attacher": "", "nodeName": "node-1", "source": {}}));
        let msgs = messages(&Strategy.validate(&bad));
        assert_eq!(
            msgs[..3],
            [
                "spec.attacher: Required value",
                "spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName",
                "spec.attacher: Required value",
            ]
        );
        assert!(msgs[3].starts_with("spec.attacher: Invalid value: \"\": a lowercase RFC 1123"));
        assert_eq!(msgs.len(), 4);
        let both = attachment(json!({"attacher": "a.b", "nodeName": "n",
            "source": {"persistentVolumeName": "pv", "inlineVolumeSpec": {}}}));
        assert_eq!(
            messages(&Strategy.validate(&both)),
            vec![
                "spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName"
            ]
        );
    }

    #[test]
    fn status_is_the_attachers_and_spec_is_immutable() {
        let mut obj = attachment(json!({"attacher": "a.b", "nodeName": "n",
            "source": {"persistentVolumeName": "pv"}}));
        obj["status"] = json!({"attached": true});
        Strategy.prepare_for_create(&mut obj);
        assert_eq!(obj["status"], json!({"attached": false}));
        let mut new = obj.clone();
        new["spec"]["nodeName"] = json!("m");
        new["status"] = json!({"attached": true});
        Strategy.prepare_for_update(&mut new, &obj);
        assert_eq!(new["status"], json!({"attached": false}));
        assert_eq!(
            messages(&Strategy.validate_update(&new, &obj)),
            vec![
                "spec: Invalid value: storage.VolumeAttachmentSpec{Attacher:\"a.b\", Source:storage.VolumeAttachmentSource{PersistentVolumeName:(*string)(0xc000000000), InlineVolumeSpec:(*core.PersistentVolumeSpec)(nil)}, NodeName:\"m\"}: field is immutable"
            ]
        );
        let mut status = obj.clone();
        status["status"] =
            json!({"attached": true, "attachError": {"message": "x", "errorCode": -1}});
        assert_eq!(
            messages(&Strategy.validate_status_update(&status, &obj)),
            vec![
                "status.attachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive",
                "status.attachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive",
            ]
        );
        assert_eq!(
            Strategy.table_cells(&status),
            [json!("a.b"), json!("pv"), json!("n"), json!(true)]
        );
    }
}
