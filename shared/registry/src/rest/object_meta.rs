//! What the server owns in `metadata`, after upstream's `rest.BeforeCreate`,
//! `rest.BeforeUpdate` and `FillObjectMetaSystemFields`.

use std::time::SystemTime;

use kas_apimachinery::Status;

use crate::error::Result;
use serde_json::{Value, json};

use crate::ResourceDescriptor;
use crate::meta::{metadata_mut, rfc3339};

/// Upstream's `names.SimpleNameGenerator`: 5 random characters from an alphabet without
/// vowels (no accidental words) and without look-alikes.
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
const RANDOM_LENGTH: usize = 5;
const MAX_NAME_LENGTH: usize = 63;

pub fn generate_name(base: &str) -> String {
    let keep = base.len().min(MAX_NAME_LENGTH - RANDOM_LENGTH);
    let mut base = base.to_owned();
    while !base.is_char_boundary(keep.min(base.len())) {
        base.pop();
    }
    base.truncate(keep);
    let random = uuid::Uuid::new_v4();
    let suffix: String = random.as_bytes()[..RANDOM_LENGTH]
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect();
    format!("{base}{suffix}")
}

/// Checks `apiVersion`/`kind` against the endpoint and fills them when absent, as the
/// decoder's defaulting does.
pub fn check_type(obj: &mut Value, d: &ResourceDescriptor) -> Result<()> {
    let api_version = d.api_version();
    let Some(map) = obj.as_object_mut() else {
        return Err(Status::bad_request("the object provided is not a JSON object").into());
    };
    match map.get("apiVersion").and_then(Value::as_str) {
        None | Some("") => {
            map.insert("apiVersion".into(), json!(api_version));
        }
        Some(v) if v == api_version => {}
        Some(v) => {
            return Err(Status::bad_request(&format!(
                "the API version in the data ({v}) does not match the expected API version ({api_version})"
            )).into());
        }
    }
    match map.get("kind").and_then(Value::as_str) {
        None | Some("") => {
            map.insert("kind".into(), json!(d.kind));
        }
        Some(k) if k == d.kind => {}
        // A resource without a Go type (a custom resource) is decoded unstructured, which
        // keeps any kind; its strategy's validation refuses another (`ValidateTypeMeta`).
        Some(_) if d.schema.is_none() => {}
        Some(k) => {
            return Err(Status::bad_request(&format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                d.kind
            ))
            .into());
        }
    }
    Ok(())
}

/// The object's name must be the URL's (upstream's `checkName` of an update).
pub fn check_name(obj: &Value, name: &str) -> Result<()> {
    let named = crate::meta::name(obj);
    if named != name {
        return Err(Status::bad_request(&format!(
            "the name of the object ({named}) does not match the name on the URL ({name})"
        ))
        .into());
    }
    Ok(())
}

/// Makes the object's namespace agree with the request's (upstream's
/// `EnsureObjectNamespaceMatchesRequestNamespace`).
pub fn ensure_namespace(obj: &mut Value, d: &ResourceDescriptor, request_ns: &str) -> Result<()> {
    let meta = metadata_mut(obj);
    let object_ns = meta
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if !d.namespaced() {
        // Cluster-scoped objects carry no namespace.
        meta.remove("namespace");
        return Ok(());
    }
    match (object_ns.as_str(), request_ns) {
        (o, r) if o == r => Ok(()),
        ("", r) => {
            meta.insert("namespace".into(), json!(r));
            Ok(())
        }
        _ => Err(Status::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )
        .into()),
    }
}

/// The system fields a create sets: uid, creationTimestamp, a generated name; and the
/// fields a client may not set on create.
pub fn before_create(obj: &mut Value) {
    let meta = metadata_mut(obj);
    for owned in [
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "resourceVersion",
        "selfLink",
    ] {
        meta.remove(owned);
    }
    let named = meta
        .get("name")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    if !named
        && let Some(base) = meta
            .get("generateName")
            .and_then(Value::as_str)
            .filter(|g| !g.is_empty())
    {
        let name = generate_name(base);
        meta.insert("name".into(), json!(name));
    }
    meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
    meta.insert(
        "creationTimestamp".into(),
        json!(rfc3339(SystemTime::now())),
    );
}

/// On update the server keeps what it owns from the stored object.
pub fn before_update(new: &mut Value, old: &Value) {
    let old_meta = crate::meta::metadata(old).cloned().unwrap_or_default();
    let meta = metadata_mut(new);
    for owned in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "generateName",
    ] {
        match old_meta.get(owned) {
            Some(v) => meta.insert(owned.to_owned(), v.clone()),
            None => meta.remove(owned),
        };
    }
    // Upstream's `BeforeUpdate` never removes a grace period; changing one is invalid
    // (`validate_object_meta_update`).
    if let Some(period) = old_meta.get("deletionGracePeriodSeconds")
        && !meta.contains_key("deletionGracePeriodSeconds")
    {
        meta.insert("deletionGracePeriodSeconds".into(), period.clone());
    }
    meta.remove("selfLink");
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: ResourceDescriptor = crate::descriptor::fixtures::CONFIG_MAP;

    #[test]
    fn generated_names() {
        let n = generate_name("web-");
        assert_eq!(n.len(), 9);
        assert!(n.starts_with("web-"));
        assert!(n[4..].bytes().all(|b| ALPHABET.contains(&b)));
        assert_eq!(generate_name(&"x".repeat(80)).len(), 63);
    }

    #[test]
    fn type_and_namespace_checks() {
        let mut o = json!({"metadata": {"name": "a"}});
        check_type(&mut o, &D).unwrap();
        assert_eq!(o["apiVersion"], "v1");
        assert_eq!(o["kind"], "ConfigMap");
        let mut wrong = json!({"apiVersion": "apps/v1", "kind": "ConfigMap"});
        let e = check_type(&mut wrong, &D).unwrap_err().to_status();
        assert_eq!(
            e.message.as_deref(),
            Some(
                "the API version in the data (apps/v1) does not match the expected API version (v1)"
            )
        );
        ensure_namespace(&mut o, &D, "default").unwrap();
        assert_eq!(o["metadata"]["namespace"], "default");
        assert_eq!(
            ensure_namespace(&mut o, &D, "other")
                .unwrap_err()
                .to_status()
                .code,
            400
        );
    }

    #[test]
    fn create_and_update_own_system_fields() {
        let mut o =
            json!({"metadata": {"generateName": "cm-", "resourceVersion": "5", "uid": "mine"}});
        before_create(&mut o);
        assert!(o["metadata"]["name"].as_str().unwrap().starts_with("cm-"));
        assert_ne!(o["metadata"]["uid"], "mine");
        assert!(o["metadata"].get("resourceVersion").is_none());
        let mut n = json!({"metadata": {"name": "x", "uid": "forged"}});
        before_update(&mut n, &o);
        assert_eq!(n["metadata"]["uid"], o["metadata"]["uid"]);
        assert_eq!(
            n["metadata"]["creationTimestamp"],
            o["metadata"]["creationTimestamp"]
        );
    }
}
