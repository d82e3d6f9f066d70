//! Applying a patch to the current object, by patch type, as upstream's patch handler
//! does. Strategic merge needs the type's patch metadata: custom resources get 415.

use kas_apimachinery::{Status, patch};
use serde_json::Value;

use crate::negotiation::PatchType;
use kas_registry::error::Result;
use kas_registry::store::Store;

pub fn apply(store: &Store, patch_type: PatchType, current: &Value, body: &[u8]) -> Result<Value> {
    let mut current = current.clone();
    // The stored form is typeless; patches see the object as clients do.
    if let Some(map) = current.as_object_mut() {
        map.insert(
            "kind".into(),
            Value::String(store.descriptor.kind.to_owned()),
        );
        map.insert(
            "apiVersion".into(),
            Value::String(store.descriptor.api_version()),
        );
    }
    apply_typed(patch_type, &current, body, store.patch_schema())
}

/// A patch applied to a document that already carries its type, such as the Scale a
/// `scale` subresource shows; `schema` is `None` where strategic merge is a 415.
pub fn apply_typed(
    patch_type: PatchType,
    current: &Value,
    body: &[u8],
    schema: Option<&dyn patch::PatchSchema>,
) -> Result<Value> {
    let bad = |e: patch::PatchError| -> kas_registry::Error { e.to_status().into() };
    match patch_type {
        PatchType::Json => patch::json_patch(current, body).map_err(bad),
        PatchType::Merge => patch::merge_patch(current, body).map_err(bad),
        PatchType::StrategicMerge => {
            let Some(schema) = schema else {
                return Err(Status::unsupported_media_type(&[
                    "application/json-patch+json",
                    "application/merge-patch+json",
                    "application/apply-patch+yaml",
                ])
                .into());
            };
            patch::strategic_merge_patch_bytes(current, body, schema).map_err(bad)
        }
        PatchType::ApplyYaml | PatchType::ApplyCbor => Err(Status::unsupported_media_type(&[
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
        ])
        .into()),
    }
}
