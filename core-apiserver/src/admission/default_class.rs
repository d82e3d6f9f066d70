//! What `DefaultStorageClass` and `DefaultIngressClass` share: upstream's choice of the
//! default class (`volumeutil.GetDefaultClass`, `defaultingressclass.getDefaultClass`):
//! among the classes marked default, the newest, ties to the first name; and how an object
//! with no class gets that one's name.

use kas_apimachinery::Status;
use kas_apimachinery::golang::time::{ZERO_UNIX, parse_rfc3339};
use kas_registry::rest::options::ListOptions;
use kas_registry::store::Store;
use serde_json::{Value, json};

/// The value of annotation `key` of `object`.
pub fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

/// The newest of `classes` that `is_default` accepts, ties to the first name.
pub fn newest_default(classes: &[Value], is_default: fn(&Value) -> bool) -> Option<&Value> {
    let created = |c: &Value| {
        parse_rfc3339(kas_registry::meta::str_field(c, "creationTimestamp"))
            .map_or((ZERO_UNIX, 0), |t| (t.seconds, t.nanos))
    };
    classes.iter().filter(|c| is_default(c)).min_by(|a, b| {
        created(b)
            .cmp(&created(a))
            .then_with(|| kas_registry::meta::name(a).cmp(kas_registry::meta::name(b)))
    })
}

/// Sets `object`'s `spec.<field>` to the default class in `classes` (read through its
/// watch cache), if there is one. A failed read refuses the write of `resource` `name`
/// (403), as upstream's plugins do.
pub async fn assign_default(
    classes: &Store,
    is_default: fn(&Value) -> bool,
    (group, resource, name): (&str, &str, &str),
    object: &mut Value,
    field: &str,
) -> kas_registry::Result<()> {
    let opts = ListOptions {
        resource_version: Some("0".into()),
        ..Default::default()
    };
    let listed = classes
        .list("", &opts, Default::default())
        .await
        .map_err(|e| {
            let message = e.to_status().message.unwrap_or_default();
            Status::forbidden(group, resource, name, &message)
        })?;
    let items: Vec<Value> = listed
        .items
        .iter()
        .filter_map(|item| item.value().ok())
        .collect();
    let Some(class) = newest_default(&items, is_default) else {
        return Ok(());
    };
    let class_name = kas_registry::meta::name(class).to_owned();
    if let Some(object) = object.as_object_mut() {
        let spec = object.entry("spec").or_insert_with(|| json!({}));
        if let Some(spec) = spec.as_object_mut() {
            spec.insert(field.into(), json!(class_name));
        }
    }
    Ok(())
}
