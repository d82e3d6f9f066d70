//! Upstream `validateContainers`, `validateInitContainers`, `validateEphemeralContainers`.

use std::collections::BTreeSet;

use kas_apimachinery::validation::field::{self, Path};
use serde_json::Value;

use super::container::{check_host_port_conflicts, validate_container_common};
use super::json::{arr, has, obj, opt_str, str_of};
use super::probes::{ProbeKind, validate_lifecycle, validate_probe_of};
use super::volumes::Volumes;

/// What the container lists are checked against.
pub struct Ctx<'a> {
    pub volumes: &'a Volumes<'a>,
    pub grace: Option<i64>,
    pub restart_policy: &'a str,
    pub host_users: bool,
}

fn lifecycle_and_probes(ctr: &Value, ctx: &Ctx<'_>, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if let Some(l) = obj(ctr, "lifecycle") {
        errs.extend(validate_lifecycle(l, ctx.grace, &path.child("lifecycle")));
    }
    for kind in [
        ProbeKind::Liveness,
        ProbeKind::Readiness,
        ProbeKind::Startup,
    ] {
        errs.extend(validate_probe_of(ctr, kind, ctx.grace, path));
    }
    errs
}

/// Upstream `validateContainers`.
pub fn validate_containers(containers: &[Value], ctx: &Ctx<'_>, path: &Path) -> Vec<field::Error> {
    if containers.is_empty() {
        return vec![field::required(path, "")];
    }
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, ctr) in containers.iter().enumerate() {
        let p = path.index(i);
        errs.extend(validate_container_common(
            ctr,
            ctx.volumes,
            &p,
            ctx.restart_policy,
            ctx.host_users,
        ));
        let name = str_of(ctr, "name");
        if !names.insert(name) {
            errs.push(field::duplicate(&p.child("name"), name));
        }
        errs.extend(lifecycle_and_probes(ctr, ctx, &p));
        if has(ctr, "restartPolicy") {
            let msg = "may not be set for non-init containers";
            errs.push(field::forbidden(&p.child("restartPolicy"), msg));
        }
    }
    let all: Vec<&Value> = containers.iter().collect();
    errs.extend(check_host_port_conflicts(&all, path));
    errs
}

/// Upstream `validateInitContainers` (resize policies allowed: `InPlacePodVerticalScaling`
/// is on).
pub fn validate_init_containers(
    inits: &[Value],
    containers: &[Value],
    ctx: &Ctx<'_>,
    path: &Path,
) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut names: BTreeSet<&str> = containers.iter().map(|c| str_of(c, "name")).collect();
    for (i, ctr) in inits.iter().enumerate() {
        let p = path.index(i);
        errs.extend(validate_container_common(
            ctr,
            ctx.volumes,
            &p,
            ctx.restart_policy,
            ctx.host_users,
        ));
        let restart = opt_str(ctr, "restartPolicy");
        if let Some(rp) = restart.filter(|rp| *rp != "Always") {
            errs.push(field::not_supported(
                &p.child("restartPolicy"),
                rp,
                &["Always"],
            ));
        }
        let name = str_of(ctr, "name");
        if names.contains(name) {
            errs.push(field::duplicate(&p.child("name"), name));
        } else if !name.is_empty() {
            names.insert(name);
        }
        errs.extend(check_host_port_conflicts(&[ctr], path));
        if restart == Some("Always") {
            errs.extend(lifecycle_and_probes(ctr, ctx, &p));
        } else {
            for key in [
                "lifecycle",
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
            ] {
                if has(ctr, key) {
                    let msg = "may not be set for init containers without restartPolicy=Always";
                    errs.push(field::forbidden(&p.child(key), msg));
                }
            }
        }
    }
    errs
}

/// The fields of `EphemeralContainerCommon` an ephemeral container may not set, in
/// struct order.
const EPHEMERAL_FORBIDDEN: [&str; 8] = [
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
];

/// A field differs from its Go zero value.
fn is_set(ctr: &Value, key: &str) -> bool {
    match ctr.get(key) {
        None | Some(Value::Null) => false,
        Some(Value::Object(m)) if key == "resources" => m.values().any(|v| !v.is_null()),
        Some(_) => true,
    }
}

/// Upstream `validateContainerOnlyForPod`.
pub fn validate_container_only_for_pod(ctr: &Value, path: &Path) -> Vec<field::Error> {
    let image = str_of(ctr, "image");
    if image.len() != image.trim().len() {
        let msg = "must not have leading or trailing whitespace";
        return vec![field::invalid(&path.child("image"), image, msg)];
    }
    Vec::new()
}

/// Upstream `validateEphemeralContainers`.
pub fn validate_ephemeral_containers(
    ephemeral: &[Value],
    containers: &[Value],
    inits: &[Value],
    ctx: &Ctx<'_>,
    path: &Path,
) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let others: BTreeSet<&str> = containers
        .iter()
        .chain(inits)
        .map(|c| str_of(c, "name"))
        .collect();
    let mut all = others.clone();
    for (i, ec) in ephemeral.iter().enumerate() {
        let p = path.index(i);
        errs.extend(validate_container_common(
            ec,
            ctx.volumes,
            &p,
            ctx.restart_policy,
            ctx.host_users,
        ));
        errs.extend(validate_container_only_for_pod(ec, &p));
        let name = str_of(ec, "name");
        if !all.insert(name) {
            errs.push(field::duplicate(&p.child("name"), name));
        }
        let target = str_of(ec, "targetContainerName");
        if !target.is_empty() && !others.contains(target) {
            errs.push(field::not_found(&p.child("targetContainerName"), target));
        }
        for key in EPHEMERAL_FORBIDDEN {
            if is_set(ec, key) {
                let msg = "cannot be set for an Ephemeral Container";
                errs.push(field::forbidden(&p.child(key), msg));
            }
        }
        for (j, vm) in arr(ec, "volumeMounts").iter().enumerate() {
            for key in ["subPath", "subPathExpr"] {
                if !str_of(vm, key).is_empty() {
                    let vp = p.child("volumeMounts").index(j).child(key);
                    errs.push(field::forbidden(
                        &vp,
                        "cannot be set for an Ephemeral Container",
                    ));
                }
            }
        }
    }
    errs
}
