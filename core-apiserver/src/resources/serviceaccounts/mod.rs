//! core/v1 ServiceAccount, after upstream's `pkg/registry/core/serviceaccount` and
//! `ValidateServiceAccount`, with its `token` subresource (`token`) when a signing key is
//! configured.

pub mod legacy_token_tracking;
pub mod lookup;
pub mod token;

use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

pub static DESCRIPTOR: ResourceDescriptor = BASE;

/// The descriptor when `--service-account-signing-key-file` is given: with `token`.
pub static DESCRIPTOR_WITH_TOKEN: ResourceDescriptor = ResourceDescriptor {
    subresources: &[token::TOKEN],
    ..BASE
};

const BASE: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "ServiceAccount",
    list_kind: "ServiceAccountList",
    plural: "serviceaccounts",
    singular: "serviceaccount",
    short_names: &["sa"],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[TableColumn {
        name: "Secrets",
        type_: "string",
        format: "",
        description: SECRETS_DESCRIPTION,
        priority: 0,
    }],
    table_name_and_age: true,
    storage_resource: "serviceaccounts",
    schema: Some(&kas_api::core::v1::SERVICE_ACCOUNT),
    list_schema: Some(&kas_api::core::v1::SERVICE_ACCOUNT_LIST),
};

/// `ServiceAccount{}.SwaggerDoc()["secrets"]` (k8s.io/api v0.33).
const SECRETS_DESCRIPTION: &str = "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The \"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret";

/// Upstream's `EnforceMountableSecretsAnnotation`, deprecated in 1.32.
const ENFORCE_MOUNTABLE_SECRETS: &str = "kubernetes.io/enforce-mountable-secrets";

/// How the role installs this resource.
pub fn install(options: &super::ResourceOptions) -> super::Install {
    let descriptor = match options.service_account_token {
        Some(_) => &DESCRIPTOR_WITH_TOKEN,
        None => &DESCRIPTOR,
    };
    super::Install::cached(descriptor, Strategy)
}

pub struct Strategy;

/// Upstream `cleanSecretReferences`: a secret reference keeps only its name.
fn clean_secret_references(obj: &mut Value) {
    let Some(secrets) = obj.get_mut("secrets").and_then(Value::as_array_mut) else {
        return;
    };
    for secret in secrets {
        *secret = match secret.get("name").and_then(Value::as_str) {
            Some(name) if !name.is_empty() => json!({ "name": name }),
            _ => json!({}),
        };
    }
}

fn has_enforce_annotation(obj: &Value) -> bool {
    obj.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(ENFORCE_MOUNTABLE_SECRETS))
}

fn enforce_warning() -> String {
    format!(
        "metadata.annotations[{ENFORCE_MOUNTABLE_SECRETS}]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets"
    )
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's store sets `ReturnDeletedObject`.
    fn return_deleted_object(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        clean_secret_references(obj);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        // Upstream `ValidateServiceAccountName` is `NameIsDNSSubdomain`.
        validate_object_meta(obj, true, name_is_dns_subdomain)
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        if has_enforce_annotation(obj) {
            vec![enforce_warning()]
        } else {
            Vec::new()
        }
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        clean_secret_references(new);
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(self.validate(new));
        errs
    }

    /// Only a request that newly sets the annotation is warned.
    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        if has_enforce_annotation(new) && !has_enforce_annotation(old) {
            vec![enforce_warning()]
        } else {
            Vec::new()
        }
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let n = obj
            .get("secrets")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        vec![Value::from(n)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::Strategy as _;

    fn sa(name: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "default"}})
    }

    #[test]
    fn names_are_dns_subdomains() {
        assert!(Strategy.validate(&sa("build-bot.v2")).is_empty());
        let errs = Strategy.validate(&sa("Build_Bot"));
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field.as_deref(), Some("metadata.name"));
    }

    #[test]
    fn secret_references_keep_only_the_name() {
        let mut obj = sa("a");
        obj["secrets"] = json!([{"name": "tok", "namespace": "x", "uid": "u"}, {"kind": "Secret"}]);
        obj["imagePullSecrets"] = json!([{"name": "reg"}]);
        Strategy.prepare_for_create(&mut obj);
        assert_eq!(obj["secrets"], json!([{"name": "tok"}, {}]));
        assert_eq!(obj["imagePullSecrets"], json!([{"name": "reg"}]));
        assert_eq!(Strategy.table_cells(&obj), vec![json!(2)]);
    }

    #[test]
    fn enforce_mountable_secrets_is_deprecated() {
        let plain = sa("a");
        let mut annotated = sa("a");
        annotated["metadata"]["annotations"] = json!({ENFORCE_MOUNTABLE_SECRETS: "true"});
        assert!(Strategy.warnings_on_create(&plain).is_empty());
        assert_eq!(
            Strategy.warnings_on_create(&annotated),
            vec![
                "metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets"
            ]
        );
        assert_eq!(Strategy.warnings_on_update(&annotated, &plain).len(), 1);
        assert!(
            Strategy
                .warnings_on_update(&annotated, &annotated)
                .is_empty()
        );
    }

    #[test]
    fn name_is_immutable() {
        let errs = Strategy.validate_update(&sa("b"), &sa("a"));
        assert_eq!(errs[0].field.as_deref(), Some("metadata.name"));
    }
}
