//! Upstream's probe and lifecycle checks: `validateProbe` and its liveness/readiness/
//! startup variants, `validateHandler`, `validateLifecycle`.

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::validate_nonnegative_field;
use kas_apimachinery::validation::{is_http_header_name, is_valid_port_name, is_valid_port_num};
use serde_json::Value;

use super::json::{arr, int_of, int0, invalid_each, obj, str_of};

/// Upstream `ValidatePortNumOrName` over an `IntOrString` in JSON.
pub fn validate_port_num_or_name(port: Option<&Value>, path: &Path) -> Vec<field::Error> {
    match port {
        Some(Value::String(s)) => invalid_each(path, s, is_valid_port_name(s)),
        other => {
            let n = other.and_then(Value::as_i64).unwrap_or(0);
            is_valid_port_num(n)
                .iter()
                .map(|m| field::invalid(path, n, m))
                .collect()
        }
    }
}

fn http_get(h: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if str_of(h, "path").is_empty() {
        errs.push(field::required(&path.child("path"), ""));
    }
    errs.extend(validate_port_num_or_name(
        h.get("port"),
        &path.child("port"),
    ));
    let scheme = str_of(h, "scheme");
    if !["HTTP", "HTTPS"].contains(&scheme) {
        errs.push(field::not_supported(
            &path.child("scheme"),
            scheme,
            &["HTTP", "HTTPS"],
        ));
    }
    for header in arr(h, "httpHeaders") {
        let name = str_of(header, "name");
        errs.extend(invalid_each(
            &path.child("httpHeaders"),
            name,
            is_http_header_name(name),
        ));
    }
    errs
}

fn sleep(s: &Value, grace: Option<i64>, path: &Path) -> Vec<field::Error> {
    let seconds = int0(s, "seconds");
    match grace {
        Some(g) if seconds < 0 || seconds > g => {
            let msg =
                format!("must be non-negative and less than terminationGracePeriodSeconds ({g})");
            vec![field::invalid(path, seconds, &msg)]
        }
        _ => Vec::new(),
    }
}

/// Upstream `validateHandler`; `kinds` are the handler fields the type has, in order.
fn validate_handler(
    handler: &Value,
    kinds: &[&str],
    grace: Option<i64>,
    path: &Path,
) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut num = 0;
    for kind in kinds {
        let Some(h) = obj(handler, kind) else {
            continue;
        };
        let p = path.child(kind);
        if num > 0 {
            errs.push(field::forbidden(
                &p,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        num += 1;
        match *kind {
            "exec" if arr(h, "command").is_empty() => {
                errs.push(field::required(&p.child("command"), ""));
            }
            "httpGet" => errs.extend(http_get(h, &p)),
            "tcpSocket" => errs.extend(validate_port_num_or_name(h.get("port"), &p.child("port"))),
            "grpc" => {
                let port = Value::from(int0(h, "port"));
                errs.extend(validate_port_num_or_name(Some(&port), &p.child("port")));
            }
            "sleep" => errs.extend(sleep(h, grace, &p)),
            _ => {}
        }
    }
    if num == 0 {
        errs.push(field::required(path, "must specify a handler type"));
    }
    errs
}

/// Upstream `validateLifecycle`.
pub fn validate_lifecycle(lifecycle: &Value, grace: Option<i64>, path: &Path) -> Vec<field::Error> {
    let kinds = ["exec", "httpGet", "tcpSocket", "sleep"];
    let mut errs = Vec::new();
    for hook in ["postStart", "preStop"] {
        if let Some(h) = obj(lifecycle, hook) {
            errs.extend(validate_handler(h, &kinds, grace, &path.child(hook)));
        }
    }
    errs
}

/// Upstream `validateProbe`.
fn validate_probe(probe: &Value, grace: Option<i64>, path: &Path) -> Vec<field::Error> {
    let kinds = ["exec", "httpGet", "tcpSocket", "grpc"];
    let mut errs = validate_handler(probe, &kinds, grace, path);
    for key in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        errs.extend(validate_nonnegative_field(
            int0(probe, key),
            &path.child(key),
        ));
    }
    if let Some(t) = int_of(probe, "terminationGracePeriodSeconds").filter(|t| *t <= 0) {
        let p = path.child("terminationGracePeriodSeconds");
        errs.push(field::invalid(&p, t, "must be greater than 0"));
    }
    errs
}

/// Which probe of a container: liveness and startup need `successThreshold` 1, readiness
/// may not set `terminationGracePeriodSeconds`.
#[derive(Clone, Copy, PartialEq)]
pub enum ProbeKind {
    Liveness,
    Readiness,
    Startup,
}

/// Upstream `validateLivenessProbe`, `validateReadinessProbe`, `validateStartupProbe`.
pub fn validate_probe_of(
    ctr: &Value,
    kind: ProbeKind,
    grace: Option<i64>,
    path: &Path,
) -> Vec<field::Error> {
    let key = match kind {
        ProbeKind::Liveness => "livenessProbe",
        ProbeKind::Readiness => "readinessProbe",
        ProbeKind::Startup => "startupProbe",
    };
    let Some(probe) = obj(ctr, key) else {
        return Vec::new();
    };
    let path = path.child(key);
    let mut errs = validate_probe(probe, grace, &path);
    if kind == ProbeKind::Readiness {
        if let Some(t) = int_of(probe, "terminationGracePeriodSeconds") {
            let p = path.child("terminationGracePeriodSeconds");
            errs.push(field::invalid(&p, t, "must not be set for readinessProbes"));
        }
    } else {
        let st = int0(probe, "successThreshold");
        if st != 1 {
            errs.push(field::invalid(
                &path.child("successThreshold"),
                st,
                "must be 1",
            ));
        }
    }
    errs
}
