//! certificates.k8s.io/v1 CertificateSigningRequest, after upstream's
//! `pkg/registry/certificates/certificates` (the strategy and its `status` and `approval`
//! strategies), `pkg/apis/certificates/validation` and `printCertificateSigningRequest`.
//!
//! The `status` and `approval` subresources are served as strategy updates, so that each
//! takes only its part of the written object as upstream's `csrStatusStrategy` and
//! `csrApprovalStrategy` do: `status` the certificate and the conditions other than
//! Approved and Denied, `approval` the conditions; both fill in missing condition
//! timestamps (`populateConditionTimestamps`).
//!
//! `spec.username`, `uid`, `groups` and `extra` are the creating user's, as the handler
//! passes it in the write options.

pub(crate) mod pem;
#[cfg(test)]
mod tests;
mod validation;

use std::collections::BTreeMap;

use kas_api::certificates::v1::{
    CERTIFICATE_SIGNING_REQUEST_SPEC as SPEC, CERTIFICATE_SIGNING_REQUEST_STATUS as STATUS,
};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::descriptor::SubresourceHandler;
use kas_registry::strategy::FieldErrors;
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Map, Value, json};

const fn column(name: &'static str, description: &'static str) -> TableColumn {
    TableColumn {
        name,
        type_: "string",
        format: "",
        description,
        priority: 0,
    }
}

/// `status` and `approval`: get, update and patch, each keeping what is not its own.
const fn subresource(name: &'static str) -> Subresource {
    Subresource {
        name,
        verbs: &[Verb::Get, Verb::Patch, Verb::Update],
        kind: None,
        handler: SubresourceHandler::StrategyUpdate,
    }
}

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "certificates.k8s.io",
    version: "v1",
    kind: "CertificateSigningRequest",
    list_kind: "CertificateSigningRequestList",
    plural: "certificatesigningrequests",
    singular: "certificatesigningrequest",
    short_names: &["csr"],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[subresource("approval"), subresource("status")],
    table_columns: &[
        NAME_COLUMN,
        AGE_COLUMN,
        column("SignerName", SPEC.doc("signerName")),
        column("Requestor", SPEC.doc("request")),
        column("RequestedDuration", SPEC.doc("expirationSeconds")),
        column("Condition", STATUS.doc("conditions")),
    ],
    table_name_and_age: false,
    storage_resource: "certificatesigningrequests",
    schema: Some(&kas_api::certificates::v1::CERTIFICATE_SIGNING_REQUEST),
    list_schema: Some(&kas_api::certificates::v1::CERTIFICATE_SIGNING_REQUEST_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn conditions_mut(csr: &mut Value) -> Option<&mut Vec<Value>> {
    csr.pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn status_mut(csr: &mut Value) -> &mut Map<String, Value> {
    if !csr.get("status").is_some_and(Value::is_object) {
        csr["status"] = json!({});
    }
    csr["status"].as_object_mut().expect("status is an object")
}

/// Upstream `preserveConditionInstances`: when `new` has as many conditions of `ty` as
/// `old`, they are `old`'s.
fn preserve_conditions(new: &mut Value, old: &Value, ty: &str) {
    let olds: Vec<Value> = old
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| str_of(c, "type") == ty)
        .cloned()
        .collect();
    let Some(news) = conditions_mut(new) else {
        return;
    };
    let at: Vec<usize> = (0..news.len())
        .filter(|&i| str_of(&news[i], "type") == ty)
        .collect();
    if at.len() == olds.len() {
        for (i, c) in at.into_iter().zip(olds) {
            news[i] = c;
        }
    }
}

/// Upstream `populateConditionTimestamps`: a condition without `lastUpdateTime` gets now;
/// one without `lastTransitionTime` gets that of a stored condition of the same type and
/// status, else now.
pub(crate) fn populate_timestamps(new: &mut Value, old: &Value, now: &str) {
    let olds = old
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let Some(news) = conditions_mut(new) else {
        return;
    };
    for c in news.iter_mut().filter(|c| c.is_object()) {
        if str_of(c, "lastUpdateTime").is_empty() {
            c["lastUpdateTime"] = json!(now);
        }
        if str_of(c, "lastTransitionTime").is_empty() {
            let kept = olds.iter().find(|o| {
                str_of(o, "type") == str_of(c, "type")
                    && str_of(o, "status") == str_of(c, "status")
                    && !str_of(o, "lastTransitionTime").is_empty()
            });
            let t = kept.map_or(now, |o| str_of(o, "lastTransitionTime"));
            c["lastTransitionTime"] = json!(t);
        }
    }
}

fn now() -> String {
    kas_registry::meta::rfc3339(std::time::SystemTime::now())
}

/// Upstream `extractCSRStatus`.
fn condition_cell(csr: &Value) -> String {
    let types: Vec<&str> = csr
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| str_of(c, "type"))
        .collect();
    let mut cell = if types.contains(&"Denied") {
        "Denied"
    } else if types.contains(&"Approved") {
        "Approved"
    } else {
        "Pending"
    }
    .to_owned();
    if types.contains(&"Failed") {
        cell.push_str(",Failed");
    }
    let cert = csr.pointer("/status/certificate").and_then(Value::as_str);
    if cert.is_some_and(|c| !c.is_empty()) {
        cell.push_str(",Issued");
    }
    cell
}

impl kas_registry::Strategy for Strategy {
    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec", "status.conditions"],
            "approval" => &["spec", "status.certificate"],
            _ => &["spec", "status"],
        }
    }

    /// The user fields are the server's (`prepare_for_create_by` sets them), and nobody
    /// creates a request already approved.
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            for key in ["username", "uid", "groups", "extra"] {
                spec.remove(key);
            }
        }
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), json!({}));
        }
    }

    /// Upstream's `PrepareForCreate`: the requestor is the user who creates.
    fn prepare_for_create_by(&self, obj: &mut Value, user: Option<&kas_auth::UserInfo>) {
        let (Some(user), Some(spec)) = (user, obj.get_mut("spec").and_then(Value::as_object_mut))
        else {
            return;
        };
        // Both are `omitempty`.
        for (key, value) in [("username", &user.name), ("uid", &user.uid)] {
            if !value.is_empty() {
                spec.insert(key.into(), json!(value));
            }
        }
        if !user.groups.is_empty() {
            spec.insert("groups".into(), json!(user.groups));
        }
        if !user.extra.is_empty() {
            spec.insert("extra".into(), json!(user.extra));
        }
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validation::validate(obj, &validation::options(obj, None))
    }

    /// A request is immutable but through its subresources.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if let Some(map) = new.as_object_mut() {
            match old.get("spec") {
                Some(spec) => map.insert("spec".into(), spec.clone()),
                None => map.remove("spec"),
            };
        }
        kas_registry::meta::keep_status(new, old);
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        validation::validate_update(new, old, &validation::options(new, Some(old)))
    }

    /// Upstream's `csrStatusStrategy` and `csrApprovalStrategy`: the request as sent (its
    /// metadata changes kept) with the stored spec; `status` keeps the stored Approved
    /// and Denied conditions, `approval` changes only the conditions.
    fn subresource_update(&self, subresource: &str, new: &Value, old: &Value) -> Option<Value> {
        let mut merged = new.clone();
        match subresource {
            "status" => {
                preserve_conditions(&mut merged, old, "Approved");
                preserve_conditions(&mut merged, old, "Denied");
                populate_timestamps(&mut merged, old, &now());
            }
            "approval" => {
                populate_timestamps(&mut merged, old, &now());
                let conditions = merged.pointer("/status/conditions").cloned();
                match old.get("status") {
                    Some(s) => merged["status"] = s.clone(),
                    None => {
                        merged.as_object_mut()?.remove("status");
                    }
                }
                let status = status_mut(&mut merged);
                match conditions {
                    Some(c) => status.insert("conditions".into(), c),
                    None => status.remove("conditions"),
                };
            }
            _ => return None,
        }
        match old.get("spec") {
            Some(spec) => merged["spec"] = spec.clone(),
            None => {
                merged.as_object_mut()?.remove("spec");
            }
        }
        Some(merged)
    }

    fn validate_subresource_update(
        &self,
        subresource: &str,
        new: &Value,
        old: &Value,
    ) -> FieldErrors {
        let mut opts = validation::options(new, Some(old));
        match subresource {
            "status" => opts.allow_setting_certificate = true,
            _ => opts.allow_setting_approval_conditions = true,
        }
        validation::validate_update(new, old, &opts)
    }

    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        BTreeMap::from([
            (
                "metadata.name".to_owned(),
                kas_registry::meta::name(obj).to_owned(),
            ),
            (
                "spec.signerName".to_owned(),
                obj.pointer("/spec/signerName")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            ),
        ])
    }

    fn field_label_conversion(&self) -> bool {
        true
    }

    /// Upstream `printCertificateSigningRequest`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let signer = Some(str_of(spec, "signerName")).filter(|s| !s.is_empty());
        let duration = spec
            .get("expirationSeconds")
            .and_then(Value::as_i64)
            .map_or(
                "<none>".to_owned(),
                kas_apimachinery::duration::human_duration,
            );
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
            json!(signer.unwrap_or("<none>")),
            json!(str_of(spec, "username")),
            json!(duration),
            json!(condition_cell(obj)),
        ]
    }
}
