//! networking.k8s.io/v1 ServiceCIDR, after upstream's `pkg/registry/networking/servicecidr`,
//! `ValidateServiceCIDR`, `ValidateServiceCIDRUpdate` and `printServiceCIDR`, with its
//! `status`. The default one, `kubernetes`, holds `--service-cluster-ip-range`
//! (`default_service_cidr`, upstream's kubernetes-service-cidr-controller).

use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::is_valid_cidr;
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::{FieldErrors, causes};
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Value, json};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "networking.k8s.io",
    version: "v1",
    kind: "ServiceCIDR",
    list_kind: "ServiceCIDRList",
    plural: "servicecidrs",
    singular: "servicecidr",
    short_names: &[],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: &[TableColumn {
        name: "CIDRs",
        type_: "string",
        format: "",
        description: kas_api::networking::v1::SERVICE_CIDR_SPEC.doc("cidrs"),
        priority: 0,
    }],
    table_name_and_age: true,
    storage_resource: "servicecidrs",
    schema: Some(&kas_api::networking::v1::SERVICE_CIDR),
    list_schema: Some(&kas_api::networking::v1::SERVICE_CIDR_LIST),
};

/// Upstream `DefaultServiceCIDRName`.
pub const DEFAULT_NAME: &str = "kubernetes";
/// Upstream's default-ServiceCIDR controller's field manager.
pub const CONTROLLER_NAME: &str = "kubernetes-service-cidr-controller";

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn cidrs(obj: &Value) -> Vec<String> {
    obj.pointer("/spec/cidrs")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|c| c.as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// How a field error prints the internal spec (Go's `%#v`).
fn go_spec(list: &[String]) -> BadValue {
    let quoted: Vec<String> = list.iter().map(|c| format!("{c:?}")).collect();
    BadValue::Raw(format!(
        "networking.ServiceCIDRSpec{{CIDRs:[]string{{{}}}}}",
        quoted.join(", ")
    ))
}

/// Upstream `ValidateServiceCIDR`.
fn validate_service_cidr(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
    let path = Path::new("spec").child("cidrs");
    let list = cidrs(obj);
    let mut found = Vec::new();
    if list.is_empty() {
        found.push(field::required(&path, "at least one CIDR required"));
    } else if list.len() > 2 {
        found.push(field::invalid(
            &path,
            go_spec(&list),
            "may only hold up to 2 values",
        ));
    } else {
        let families: Vec<Option<bool>> = list
            .iter()
            .map(|c| kas_apimachinery::validation::parse_cidr_sloppy(c).map(|(ip, _)| ip.is_ipv4()))
            .collect();
        let dual =
            list.len() == 1 || (families.iter().all(Option::is_some) && families[0] != families[1]);
        if !dual {
            found.push(field::invalid(
                &path,
                go_spec(&list),
                "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
            ));
        } else {
            for (i, cidr) in list.iter().enumerate() {
                found.extend(is_valid_cidr(&path.index(i), cidr));
            }
        }
    }
    errs.extend(causes(found));
    errs
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's status strategy: `ResetObjectMetaForStatus`.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::reset_object_meta_for_status(new, old);
    }

    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    /// A new ServiceCIDR has no status.
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.remove("status");
        }
    }

    /// The status stays as it was.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::keep_status(new, old);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_service_cidr(obj)
    }

    /// `ValidateServiceCIDRUpdate`: the metadata, and the CIDRs unchanged.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        let (n, o) = (cidrs(new), cidrs(old));
        if n != o {
            errs.extend(causes(vec![field::invalid(
                &Path::new("spec").child("cidrs"),
                BadValue::Strings(Some(n)),
                "field is immutable",
            )]));
        }
        errs
    }

    /// `ValidateServiceCIDRStatusUpdate`: the metadata only.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        validate_object_meta_update(new, old)
    }

    /// Upstream `printServiceCIDR`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        vec![json!(cidrs(obj).join(","))]
    }
}

/// The default ServiceCIDR of `ranges` (`--service-cluster-ip-range`), as upstream's
/// controller creates it.
pub fn default_service_cidr(ranges: &[String]) -> Value {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
        "metadata": {"name": DEFAULT_NAME}, "spec": {"cidrs": ranges}})
}

/// The Ready condition upstream's controller applies once the object matches its ranges.
pub fn ready_condition(now: &str) -> Value {
    json!({"type": "Ready", "status": "True", "reason": "",
        "message": "Kubernetes default Service CIDR is ready", "lastTransitionTime": now})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn cidr(list: Value) -> Value {
        json!({"metadata": {"name": "c"}, "spec": {"cidrs": list}})
    }

    #[test]
    fn upstreams_cidr_rules() {
        assert!(
            Strategy
                .validate(&cidr(json!(["10.0.0.0/24", "fd00::/108"])))
                .is_empty()
        );
        assert_eq!(
            messages(&Strategy.validate(&cidr(json!([])))),
            ["spec.cidrs: Required value: at least one CIDR required"]
        );
        assert_eq!(
            messages(&Strategy.validate(&cidr(json!(["10.0.0.0/24", "10.1.0.0/24"])))),
            [
                "spec.cidrs: Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string{\"10.0.0.0/24\", \"10.1.0.0/24\"}}: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"
            ]
        );
        assert_eq!(
            messages(&Strategy.validate(&cidr(json!(["10.0.0.1/24"])))),
            [
                "spec.cidrs[0]: Invalid value: \"10.0.0.1/24\": must not have bits set beyond the prefix length"
            ]
        );
        assert_eq!(
            messages(&Strategy.validate(&cidr(json!(["fd00:0::/108"])))),
            [
                "spec.cidrs[0]: Invalid value: \"fd00:0::/108\": must be in canonical form (\"fd00::/108\")"
            ]
        );
        let old = cidr(json!(["10.0.0.0/24"]));
        let new = cidr(json!(["10.0.1.0/24"]));
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            ["spec.cidrs: Invalid value: []string{\"10.0.1.0/24\"}: field is immutable"]
        );
    }
}
