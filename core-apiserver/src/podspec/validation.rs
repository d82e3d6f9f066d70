//! Upstream `ValidatePodSpec`, `ValidatePodTemplateSpec` and what they call, over the
//! defaulted v1 JSON of a pod spec, with the feature gates of a default 1.33 server.
//!
//! Left out: fields of features off by default in 1.33 (pod-level resources, resource
//! claims, image volumes, cluster trust bundles), which upstream drops before validating;
//! the PVC template of generic ephemeral volumes; the IQN/EUI/NAA formats of ISCSI; the
//! domain formats of Windows `runAsUserName`.

mod container;
mod containers;
mod downward;
pub(crate) mod json;
pub(crate) mod paths;
mod pod;
mod probes;
pub(crate) mod resources;
pub(crate) mod scheduling;
mod security;
pub(crate) mod sources;
mod volumes;

#[cfg(test)]
mod tests;

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::{
    name_is_dns_subdomain, validate_annotations, validate_labels,
};
use kas_apimachinery::validation::{inclusive_range_error, is_dns1123_label};
use serde_json::Value;

use json::{arr, has, int_of, invalid_each, obj, opt_bool, opt_str, str_map, str_of};

/// Upstream `ValidatePodSpec` (with `validatePodMetadataAndSpec`'s spec checks): `spec` is
/// the defaulted `spec` object, `path` its field path (`spec`, `template.spec`, ...).
pub fn validate_pod_spec(spec: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let grace = int_of(spec, "terminationGracePeriodSeconds");
    if grace.is_none() {
        errs.push(field::required(
            &path.child("terminationGracePeriodSeconds"),
            "",
        ));
    }
    let host_users = opt_bool(spec, "hostUsers") != Some(false);
    let (vols, verrs) = volumes::validate_volumes(arr(spec, "volumes"), &path.child("volumes"));
    errs.extend(verrs);
    let restart_policy = str_of(spec, "restartPolicy");
    let ctx = containers::Ctx {
        volumes: &vols,
        grace,
        restart_policy,
        host_users,
    };
    let ctrs = arr(spec, "containers");
    let inits = arr(spec, "initContainers");
    errs.extend(containers::validate_containers(
        ctrs,
        &ctx,
        &path.child("containers"),
    ));
    let init_path = path.child("initContainers");
    errs.extend(containers::validate_init_containers(
        inits, ctrs, &ctx, &init_path,
    ));
    let eph = arr(spec, "ephemeralContainers");
    let eph_path = path.child("ephemeralContainers");
    errs.extend(containers::validate_ephemeral_containers(
        eph, ctrs, inits, &ctx, &eph_path,
    ));
    errs.extend(pod::validate_host_network_deps(spec, path));
    errs.extend(pod::validate_restart_policy(
        restart_policy,
        &path.child("restartPolicy"),
    ));
    errs.extend(pod::validate_dns_policy(
        str_of(spec, "dnsPolicy"),
        &path.child("dnsPolicy"),
    ));
    errs.extend(validate_labels(
        &str_map(spec, "nodeSelector"),
        &path.child("nodeSelector"),
    ));
    let sc_path = path.child("securityContext");
    errs.extend(security::validate_pod_security_context(spec, &sc_path));
    errs.extend(scheduling::validate_affinity(spec, &path.child("affinity")));
    errs.extend(pod::validate_dns_config(spec, &path.child("dnsConfig")));
    let gates = arr(spec, "readinessGates");
    errs.extend(pod::validate_readiness_gates(
        gates,
        &path.child("readinessGates"),
    ));
    let gates = arr(spec, "schedulingGates");
    errs.extend(pod::validate_scheduling_gates(
        gates,
        &path.child("schedulingGates"),
    ));
    let tsc = arr(spec, "topologySpreadConstraints");
    let tsc_path = path.child("topologySpreadConstraints");
    errs.extend(scheduling::validate_topology_spread(tsc, &tsc_path));
    errs.extend(pod::validate_windows_host_process(spec, path));
    errs.extend(pod::validate_host_users(spec, path));
    errs.extend(validate_names(spec, path));
    if let Some(ads) = int_of(spec, "activeDeadlineSeconds")
        && !(1..=i64::from(i32::MAX)).contains(&ads)
    {
        let msg = inclusive_range_error(1, i64::from(i32::MAX));
        errs.push(field::invalid(
            &path.child("activeDeadlineSeconds"),
            ads,
            &msg,
        ));
    }
    for key in ["hostname", "subdomain"] {
        let v = str_of(spec, key);
        if !v.is_empty() {
            errs.extend(invalid_each(&path.child(key), v, is_dns1123_label(v)));
        }
    }
    let tolerations = arr(spec, "tolerations");
    errs.extend(scheduling::validate_tolerations(
        tolerations,
        &path.child("tolerations"),
    ));
    let aliases = arr(spec, "hostAliases");
    errs.extend(pod::validate_host_aliases(
        aliases,
        &path.child("hostAliases"),
    ));
    errs.extend(validate_class_names(spec, path));
    if let Some(overhead) = obj(spec, "overhead") {
        let requirements = serde_json::json!({ "limits": overhead });
        let p = path.child("overhead");
        errs.extend(resources::validate_resource_requirements(&requirements, &p));
    }
    errs.extend(pod::validate_os(spec, path));
    errs
}

/// The name checks of `ValidatePodSpec`: service account and node.
fn validate_names(spec: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for key in ["serviceAccountName", "nodeName"] {
        let v = str_of(spec, key);
        if !v.is_empty() {
            errs.extend(invalid_each(
                &path.child(key),
                v,
                name_is_dns_subdomain(v, false),
            ));
        }
    }
    errs
}

/// Priority class, runtime class and preemption policy.
fn validate_class_names(spec: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let pc = str_of(spec, "priorityClassName");
    if !pc.is_empty() {
        let p = path.child("priorityClassName");
        errs.extend(invalid_each(&p, pc, name_is_dns_subdomain(pc, false)));
    }
    if let Some(rc) = opt_str(spec, "runtimeClassName") {
        let p = path.child("runtimeClassName");
        errs.extend(invalid_each(&p, rc, name_is_dns_subdomain(rc, false)));
    }
    if let Some(pp) = opt_str(spec, "preemptionPolicy") {
        let p = path.child("preemptionPolicy");
        match pp {
            "PreemptLowerPriority" | "Never" => {}
            "" => errs.push(field::required(&p, "")),
            _ => errs.push(field::not_supported(
                &p,
                pp,
                &["PreemptLowerPriority", "Never"],
            )),
        }
    }
    errs
}

/// The checks `validatePodMetadataAndSpec` makes of a Pod's spec only (not of templates):
/// projected service account tokens need a service account, and images may not be padded.
pub fn validate_pod_spec_only_for_pod(spec: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if str_of(spec, "serviceAccountName").is_empty() {
        for (vi, vol) in arr(spec, "volumes").iter().enumerate() {
            let Some(proj) = obj(vol, "projected") else {
                continue;
            };
            let p = path.child("volumes").index(vi).child("projected");
            for (si, src) in arr(proj, "sources").iter().enumerate() {
                if has(src, "serviceAccountToken") {
                    let sp = p.child("sources").index(si).child("serviceAccountToken");
                    let msg = "must not be specified when serviceAccountName is not set";
                    errs.push(field::forbidden(&sp, msg));
                }
            }
        }
    }
    for key in ["containers", "initContainers"] {
        for (i, ctr) in arr(spec, key).iter().enumerate() {
            let p = path.child(key).index(i);
            errs.extend(containers::validate_container_only_for_pod(ctr, &p));
        }
    }
    errs
}

/// Upstream `ValidatePodTemplateSpec`: `path` is the template's (`template`); upstream
/// names its labels and annotations `<path>.labels` / `<path>.annotations`.
pub fn validate_pod_template_spec(template: &Value, path: &Path) -> Vec<field::Error> {
    let meta = obj(template, "metadata").cloned().unwrap_or(Value::Null);
    let mut errs = validate_labels(&str_map(&meta, "labels"), &path.child("labels"));
    let annotations = str_map(&meta, "annotations");
    errs.extend(validate_annotations(
        &annotations,
        &path.child("annotations"),
    ));
    let spec = obj(template, "spec").cloned().unwrap_or(Value::Null);
    errs.extend(validate_pod_spec(&spec, &path.child("spec")));
    if !arr(&spec, "ephemeralContainers").is_empty() {
        let p = path.child("spec").child("ephemeralContainers");
        errs.push(field::forbidden(
            &p,
            "ephemeral containers not allowed in pod template",
        ));
    }
    errs
}
