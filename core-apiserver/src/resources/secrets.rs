//! core/v1 Secret, after upstream's `pkg/registry/core/secret`, `ValidateSecret`,
//! `ValidateSecretUpdate`, `SetDefaults_Secret` and the v1 conversion that folds the
//! write-only `stringData` into `data`.
//!
//! `data` values travel as base64 (Go's `[]byte` in JSON). Upstream fails a value that is
//! not base64 while decoding, with a 400 (`Secret in version "v1" cannot be handled as a
//! Secret: illegal base64 data at input byte N`); the registry's body decoding answers
//! that for every write. A strategy cannot answer 400, so this one still reports the same
//! text as an invalid `data[key]` for what reaches it otherwise, and `decode_error` gives
//! the 400 text.

use std::collections::BTreeMap;

use kas_apimachinery::golang::base64::STD_ENCODING;
use kas_apimachinery::golang::json;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Map, Value, json};

use super::configmaps::is_config_map_key;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "Secret",
    list_kind: "SecretList",
    plural: "secrets",
    singular: "secret",
    short_names: &[],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        TableColumn {
            name: "Type",
            type_: "string",
            format: "",
            description: "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
            priority: 0,
        },
        TableColumn {
            name: "Data",
            type_: "string",
            format: "",
            description: "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
            priority: 0,
        },
    ],
    table_name_and_age: true,
    storage_resource: "secrets",
    schema: Some(&kas_api::core::v1::SECRET),
    list_schema: Some(&kas_api::core::v1::SECRET_LIST),
};

/// Upstream `MaxSecretSize`.
const MAX_SECRET_SIZE: usize = 1024 * 1024;

pub const TYPE_OPAQUE: &str = "Opaque";
pub const TYPE_SERVICE_ACCOUNT_TOKEN: &str = "kubernetes.io/service-account-token";
pub const TYPE_DOCKERCFG: &str = "kubernetes.io/dockercfg";
pub const TYPE_DOCKER_CONFIG_JSON: &str = "kubernetes.io/dockerconfigjson";
pub const TYPE_BASIC_AUTH: &str = "kubernetes.io/basic-auth";
pub const TYPE_SSH_AUTH: &str = "kubernetes.io/ssh-auth";
pub const TYPE_TLS: &str = "kubernetes.io/tls";

const SERVICE_ACCOUNT_NAME_KEY: &str = "kubernetes.io/service-account.name";
const REDACTED: &str = "<secret contents redacted>";

/// How the role installs this resource.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// The 400 upstream's decoder answers for a `data` value that is not base64, if any.
pub fn decode_error(obj: &Value) -> Option<String> {
    let data = obj.get("data")?.as_object()?;
    data.values().find_map(|v| match v {
        Value::String(s) => STD_ENCODING
            .decode_string(s)
            .err()
            .map(|e| format!("Secret in version \"v1\" cannot be handled as a Secret: {e}")),
        _ => None,
    })
}

/// What decoding and defaulting do to every v1 Secret upstream: `stringData` is merged
/// into `data` (it wins) and dropped, valid `data` is re-encoded canonically, and an
/// empty `type` becomes Opaque.
fn normalize(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let string_data = map.remove("stringData");
    let string_data = string_data
        .as_ref()
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty());
    if let Some(string_data) = string_data {
        let data = map
            .entry("data")
            .or_insert_with(|| Value::Object(Map::new()));
        if !data.is_object() {
            *data = Value::Object(Map::new());
        }
        if let Some(data) = data.as_object_mut() {
            for (k, v) in string_data {
                data.insert(
                    k.clone(),
                    json!(STD_ENCODING.encode_to_string(v.as_str().unwrap_or("").as_bytes())),
                );
            }
        }
    }
    if let Some(data) = map.get_mut("data").and_then(Value::as_object_mut) {
        for v in data.values_mut() {
            if let Some(bytes) = v.as_str().and_then(|s| STD_ENCODING.decode_string(s).ok()) {
                *v = json!(STD_ENCODING.encode_to_string(&bytes));
            }
        }
    }
    if map
        .get("type")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        map.insert("type".into(), json!(TYPE_OPAQUE));
    }
}

/// Go's `json.Unmarshal(b, &map[string]interface{}{})` error text: the scanner's syntax
/// error, else the type error of a value that is not an object.
fn go_json_map_error(bytes: &[u8]) -> Option<String> {
    match json::unmarshal(bytes) {
        Ok(Value::Object(_) | Value::Null) => None,
        Ok(other) => Some(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json::describe(&other)
        )),
        Err(e) => Some(e),
    }
}

/// `data` as upstream's `map[string][]byte`; values that are not base64 are `Err`.
fn decoded_data(obj: &Value) -> BTreeMap<String, Result<Vec<u8>, String>> {
    let Some(data) = obj.get("data").and_then(Value::as_object) else {
        return BTreeMap::new();
    };
    data.iter()
        .map(|(k, v)| {
            let bytes = match v {
                Value::Null => Ok(Vec::new()),
                Value::String(s) => STD_ENCODING.decode_string(s).map_err(|e| e.to_string()),
                _ => Err("must be a base64-encoded string".to_owned()),
            };
            (k.clone(), bytes)
        })
        .collect()
}

/// The type-specific rules of upstream `ValidateSecret`.
fn validate_type(
    obj: &Value,
    data: &BTreeMap<String, Result<Vec<u8>, String>>,
) -> Vec<field::Error> {
    let data_path = Path::new("data");
    let required = |key: &str| field::required(&data_path.key(key), "");
    let mut errs = Vec::new();
    let json_key = |errs: &mut Vec<field::Error>, key: &str| match data.get(key) {
        None => errs.push(required(key)),
        Some(bytes) => {
            let bytes = bytes.as_deref().unwrap_or_default();
            if let Some(msg) = go_json_map_error(bytes) {
                errs.push(field::invalid(&data_path.key(key), REDACTED, &msg));
            }
        }
    };
    match obj.get("type").and_then(Value::as_str).unwrap_or("") {
        TYPE_SERVICE_ACCOUNT_TOKEN => {
            let sa = obj
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(SERVICE_ACCOUNT_NAME_KEY))
                .and_then(Value::as_str)
                .unwrap_or("");
            if sa.is_empty() {
                let path = Path::new("metadata")
                    .child("annotations")
                    .key(SERVICE_ACCOUNT_NAME_KEY);
                errs.push(field::required(&path, ""));
            }
        }
        TYPE_DOCKERCFG => json_key(&mut errs, ".dockercfg"),
        TYPE_DOCKER_CONFIG_JSON => json_key(&mut errs, ".dockerconfigjson"),
        // Either may be empty, but one must be there.
        TYPE_BASIC_AUTH if !data.contains_key("username") && !data.contains_key("password") => {
            errs.push(required("username"));
            errs.push(required("password"));
        }
        TYPE_SSH_AUTH => {
            let empty = data
                .get("ssh-privatekey")
                .is_none_or(|b| b.as_ref().map_or(0, Vec::len) == 0);
            if empty {
                errs.push(required("ssh-privatekey"));
            }
        }
        TYPE_TLS => {
            for key in ["tls.crt", "tls.key"] {
                if !data.contains_key(key) {
                    errs.push(required(key));
                }
            }
        }
        _ => {}
    }
    errs
}

impl kas_registry::Strategy for Strategy {
    fn default(&self, obj: &mut Value) {
        normalize(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        normalize(obj);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        let data_path = Path::new("data");
        let data = decoded_data(obj);
        let mut fields = Vec::new();
        let mut total = 0;
        for (key, bytes) in &data {
            for msg in is_config_map_key(key) {
                fields.push(field::invalid(&data_path.key(key), key.as_str(), &msg));
            }
            match bytes {
                Ok(bytes) => total += bytes.len(),
                Err(msg) => fields.push(field::invalid(&data_path.key(key), REDACTED, msg)),
            }
        }
        if total > MAX_SECRET_SIZE {
            fields.push(field::too_long(&data_path, MAX_SECRET_SIZE as i64));
        }
        fields.extend(validate_type(obj, &data));
        errs.extend(fields.iter().map(field::Error::to_cause));
        errs
    }

    /// A patch is not decoded again here, so the decoding rules are applied to it too.
    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        normalize(new);
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        let new_type = new.get("type").and_then(Value::as_str).unwrap_or("");
        if new_type != old.get("type").and_then(Value::as_str).unwrap_or("") {
            errs.push(
                field::invalid(&Path::new("type"), new_type, "field is immutable").to_cause(),
            );
        }
        if old.get("immutable").and_then(Value::as_bool) == Some(true) {
            let msg = "field is immutable when `immutable` is set";
            if new.get("immutable").and_then(Value::as_bool) != Some(true) {
                errs.push(field::forbidden(&Path::new("immutable"), msg).to_cause());
            }
            if new.get("data") != old.get("data") {
                errs.push(field::forbidden(&Path::new("data"), msg).to_cause());
            }
        }
        errs.extend(self.validate(new));
        errs
    }

    /// Upstream registers a field label conversion function for this kind.
    fn field_label_conversion(&self) -> bool {
        true
    }

    /// Upstream's v1 field labels: `type` besides name and namespace.
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        let mut set = kas_registry::meta::default_field_set(obj);
        set.insert(
            "type".to_owned(),
            obj.get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        );
        set
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
        let n = obj
            .get("data")
            .and_then(Value::as_object)
            .map_or(0, Map::len);
        vec![json!(ty), json!(n)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn secret(ty: &str, data: Value) -> Value {
        json!({"metadata": {"name": "s", "namespace": "default"}, "type": ty, "data": data})
    }

    #[test]
    fn string_data_is_merged_and_type_defaulted() {
        let mut obj = json!({
            "metadata": {"name": "s", "namespace": "default"},
            "data": {"a": "b2xk", "keep": "eA=="},
            "stringData": {"a": "new", "b": "hi"},
        });
        Strategy.default(&mut obj);
        assert!(obj.get("stringData").is_none());
        assert_eq!(obj["type"], json!("Opaque"));
        assert_eq!(
            obj["data"],
            json!({"a": "bmV3", "b": "aGk=", "keep": "eA=="})
        );
        assert!(Strategy.validate(&obj).is_empty());
        assert_eq!(Strategy.table_cells(&obj), vec![json!("Opaque"), json!(3)]);
    }

    #[test]
    fn data_must_be_base64_with_config_map_keys() {
        let obj = secret("Opaque", json!({"bad key": "eA==", "k": "YQ"}));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            vec![
                "data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                "data[k]: Invalid value: \"<secret contents redacted>\": illegal base64 data at input byte 0",
            ]
        );
        assert_eq!(
            decode_error(&obj).as_deref(),
            Some(
                "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 0"
            )
        );
    }

    #[test]
    fn total_size_is_bounded() {
        let big = STD_ENCODING.encode_to_string(&vec![b'x'; MAX_SECRET_SIZE + 1]);
        let errs = Strategy.validate(&secret("Opaque", json!({ "big": big })));
        assert_eq!(
            messages(&errs),
            vec!["data: Too long: may not be more than 1048576 bytes"]
        );
    }

    #[test]
    fn typed_secrets_need_their_keys() {
        let cases = [
            (
                TYPE_TLS,
                json!({}),
                vec![
                    "data[tls.crt]: Required value",
                    "data[tls.key]: Required value",
                ],
            ),
            (
                TYPE_BASIC_AUTH,
                json!({}),
                vec![
                    "data[username]: Required value",
                    "data[password]: Required value",
                ],
            ),
            (TYPE_BASIC_AUTH, json!({"password": ""}), vec![]),
            (
                TYPE_SSH_AUTH,
                json!({"ssh-privatekey": ""}),
                vec!["data[ssh-privatekey]: Required value"],
            ),
            (
                TYPE_DOCKERCFG,
                json!({}),
                vec!["data[.dockercfg]: Required value"],
            ),
            (
                TYPE_SERVICE_ACCOUNT_TOKEN,
                json!({}),
                vec!["metadata.annotations[kubernetes.io/service-account.name]: Required value"],
            ),
            ("example.com/custom", json!({}), vec![]),
        ];
        for (ty, data, want) in cases {
            assert_eq!(
                messages(&Strategy.validate(&secret(ty, data))),
                want,
                "{ty}"
            );
        }
    }

    #[test]
    fn docker_config_must_be_a_json_object() {
        let check = |raw: &str| {
            let obj = secret(
                TYPE_DOCKER_CONFIG_JSON,
                json!({ ".dockerconfigjson": STD_ENCODING.encode_to_string(raw.as_bytes()) }),
            );
            messages(&Strategy.validate(&obj))
        };
        assert!(check(r#"{"auths": {}}"#).is_empty());
        assert_eq!(
            check("not json"),
            vec![
                "data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": invalid character 'o' in literal null (expecting 'u')"
            ]
        );
        assert_eq!(
            check(r#"{"a" 1}"#),
            vec![
                "data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": invalid character '1' after object key"
            ]
        );
        assert_eq!(
            check("[1]"),
            vec![
                "data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": json: cannot unmarshal array into Go value of type map[string]interface {}"
            ]
        );
        assert_eq!(
            check("{"),
            vec![
                "data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": unexpected end of JSON input"
            ]
        );
        assert_eq!(
            check("x"),
            vec![
                "data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": invalid character 'x' looking for beginning of value"
            ]
        );
    }

    #[test]
    fn type_and_immutable_data_cannot_change() {
        let mut old = secret("Opaque", json!({"a": "eA=="}));
        old["immutable"] = json!(true);
        let mut new = secret(TYPE_TLS, json!({"a": "eQ==", "tls.crt": "", "tls.key": ""}));
        new["immutable"] = json!(true);
        Strategy.prepare_for_update(&mut new, &old);
        let fields: Vec<String> = Strategy
            .validate_update(&new, &old)
            .iter()
            .filter_map(|c| c.field.clone())
            .collect();
        assert_eq!(fields, vec!["type", "data"]);
        // A patch that drops `type` is defaulted to Opaque, as upstream's decoder does.
        let mut patched = secret("Opaque", json!({"a": "eA=="}));
        patched.as_object_mut().unwrap().remove("type");
        patched["immutable"] = json!(true);
        Strategy.prepare_for_update(&mut patched, &old);
        assert!(Strategy.validate_update(&patched, &old).is_empty());
    }
}
