//! core/v1 ConfigMap, after upstream's `pkg/registry/core/configmap` and
//! `ValidateConfigMap`.

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::Value;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "ConfigMap",
    list_kind: "ConfigMapList",
    plural: "configmaps",
    singular: "configmap",
    short_names: &["cm"],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[TableColumn {
        name: "Data",
        type_: "string",
        format: "",
        description: kas_api::core::v1::CONFIG_MAP.doc("data"),
        priority: 0,
    }],
    table_name_and_age: true,
    storage_resource: "configmaps",
    schema: Some(&kas_api::core::v1::CONFIG_MAP),
    list_schema: Some(&kas_api::core::v1::CONFIG_MAP_LIST),
};

/// Upstream's `MaxSecretSize`, which also bounds a ConfigMap.
const MAX_SIZE: usize = 1024 * 1024;
const CONFIG_KEY_FMT: &str = "[-._a-zA-Z0-9]+";

/// Upstream `IsConfigMapKey`.
pub fn is_config_map_key(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > 253 {
        errs.push(kas_apimachinery::validation::max_len_error(253));
    }
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
    {
        errs.push(kas_apimachinery::validation::regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            CONFIG_KEY_FMT,
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if key == "." {
        errs.push("must not be '.'".to_owned());
    } else if key == ".." {
        errs.push("must not be '..'".to_owned());
    } else if key.starts_with("..") {
        errs.push("must not start with '..'".to_owned());
    }
    errs
}

/// How the role installs this resource.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn keys(obj: &Value, field_name: &str) -> Vec<(String, usize)> {
    obj.get(field_name)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().map_or(0, str::len)))
                .collect()
        })
        .unwrap_or_default()
}

impl kas_registry::Strategy for Strategy {
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        let data = keys(obj, "data");
        let binary = keys(obj, "binaryData");
        let mut total = 0;
        for (key, size) in &data {
            total += size;
            for msg in is_config_map_key(key) {
                errs.push(
                    field::invalid(&Path::new("data").key(key), key.as_str(), &msg).to_cause(),
                );
            }
        }
        for (key, size) in &binary {
            total += size;
            for msg in is_config_map_key(key) {
                errs.push(
                    field::invalid(&Path::new("binaryData").key(key), key.as_str(), &msg)
                        .to_cause(),
                );
            }
            // Upstream's ValidateConfigMap reports the key on `data`.
            if data.iter().any(|(k, _)| k == key) {
                errs.push(
                    field::invalid(
                        &Path::new("data").key(key),
                        key.as_str(),
                        "duplicate of key present in binaryData",
                    )
                    .to_cause(),
                );
            }
        }
        if total > MAX_SIZE {
            errs.push(field::too_long(&Path::new(""), MAX_SIZE as i64).to_cause());
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        if old.get("immutable").and_then(Value::as_bool) == Some(true) {
            if new.get("immutable").and_then(Value::as_bool) != Some(true) {
                errs.push(
                    field::forbidden(
                        &Path::new("immutable"),
                        "field is immutable when `immutable` is set",
                    )
                    .to_cause(),
                );
            }
            if new.get("data") != old.get("data") {
                errs.push(
                    field::forbidden(
                        &Path::new("data"),
                        "field is immutable when `immutable` is set",
                    )
                    .to_cause(),
                );
            }
            if new.get("binaryData") != old.get("binaryData") {
                errs.push(
                    field::forbidden(
                        &Path::new("binaryData"),
                        "field is immutable when `immutable` is set",
                    )
                    .to_cause(),
                );
            }
        }
        errs.extend(self.validate(new));
        errs
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let n = keys(obj, "data").len() + keys(obj, "binaryData").len();
        vec![Value::from(n)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::Strategy as _;
    use serde_json::json;

    fn cm(data: Value) -> Value {
        json!({"metadata": {"name": "cm", "namespace": "default"}, "data": data})
    }

    #[test]
    fn keys_are_validated_like_upstream() {
        assert!(Strategy.validate(&cm(json!({"a.b_C-1": "x"}))).is_empty());
        let errs = Strategy.validate(&cm(json!({"bad key": "x"})));
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field.as_deref(), Some("data[bad key]"));
        assert!(is_config_map_key("..a").contains(&"must not start with '..'".to_owned()));
    }

    #[test]
    fn a_key_in_both_maps_is_reported_on_data() {
        let mut obj = cm(json!({"a": "x"}));
        obj["binaryData"] = json!({"a": "eA=="});
        let errs = Strategy.validate(&obj);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field.as_deref(), Some("data[a]"));
        assert_eq!(
            errs[0].message.as_deref(),
            Some("Invalid value: \"a\": duplicate of key present in binaryData")
        );
    }

    #[test]
    fn immutable_data_cannot_change() {
        let mut old = cm(json!({"a": "1"}));
        old["immutable"] = json!(true);
        let mut new = old.clone();
        new["data"] = json!({"a": "2"});
        let errs = Strategy.validate_update(&new, &old);
        assert_eq!(errs[0].field.as_deref(), Some("data"));
    }
}
