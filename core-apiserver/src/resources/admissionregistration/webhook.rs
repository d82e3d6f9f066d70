//! Shared defaulting and validation of webhooks, after upstream's
//! `SetDefaults_ValidatingWebhook`/`SetDefaults_MutatingWebhook` and `validateWebhook`
//! (`pkg/apis/admissionregistration/validation`). CEL match conditions are not compiled.

use std::collections::HashSet;

use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::{is_dns1035_label, is_dns1123_subdomain};
use serde_json::{Value, json};

fn set_if_absent(obj: &mut serde_json::Map<String, Value>, key: &str, v: Value) {
    if obj.get(key).is_none_or(Value::is_null) {
        obj.insert(key.into(), v);
    }
}

/// Defaults every webhook in `webhooks`; `mutating` adds `reinvocationPolicy: Never`.
pub fn default_webhooks(obj: &mut Value, mutating: bool) {
    let Some(hooks) = obj.get_mut("webhooks").and_then(Value::as_array_mut) else {
        return;
    };
    for hook in hooks.iter_mut().filter_map(Value::as_object_mut) {
        set_if_absent(hook, "failurePolicy", json!("Fail"));
        set_if_absent(hook, "matchPolicy", json!("Equivalent"));
        set_if_absent(hook, "namespaceSelector", json!({}));
        set_if_absent(hook, "objectSelector", json!({}));
        set_if_absent(hook, "timeoutSeconds", json!(10));
        if mutating {
            set_if_absent(hook, "reinvocationPolicy", json!("Never"));
        }
        if let Some(rules) = hook.get_mut("rules").and_then(Value::as_array_mut) {
            for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                set_if_absent(rule, "scope", json!("*"));
            }
        }
        if let Some(port) = hook
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
        {
            set_if_absent(port, "port", json!(443));
        }
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn check_enum(errs: &mut Vec<field::Error>, hook: &Value, path: &Path, key: &str, ok: &[&str]) {
    if let Some(v) = str_of(hook, key)
        && !ok.contains(&v)
    {
        errs.push(field::not_supported(&path.child(key), v, ok));
    }
}

/// Upstream `webhook.ValidateWebhookURL(path, url, forceHttps=true)`, over a simplified
/// parse of `scheme://[user@]host[/path][?query][#fragment]`.
fn validate_url(url: &str, p: &Path) -> Vec<field::Error> {
    const FORM: &str = "; desired format: https://host[/path]";
    let mut errs = Vec::new();
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (s, Some(r)),
        None => ("", None),
    };
    let rest = rest.unwrap_or("");
    let (before_frag, fragment) = rest.split_once('#').unwrap_or((rest, ""));
    let (before_query, query) = before_frag.split_once('?').unwrap_or((before_frag, ""));
    let authority = before_query.split('/').next().unwrap_or("");
    let (user, host) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    if scheme != "https" {
        errs.push(field::invalid(
            p,
            scheme,
            &format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if host.is_empty() {
        errs.push(field::invalid(
            p,
            host,
            &format!("host must be specified{FORM}"),
        ));
    }
    if let Some(user) = user {
        errs.push(field::invalid(
            p,
            user,
            "user information is not permitted in the URL",
        ));
    }
    if !fragment.is_empty() {
        errs.push(field::invalid(
            p,
            fragment,
            "fragments are not permitted in the URL",
        ));
    }
    if !query.is_empty() {
        errs.push(field::invalid(
            p,
            query,
            "query parameters are not permitted in the URL",
        ));
    }
    errs
}

/// Upstream `webhook.ValidateWebhookService`.
fn validate_service(svc: &Value, p: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for key in ["name", "namespace"] {
        if str_of(svc, key).unwrap_or("").is_empty() {
            errs.push(field::required(&p.child(key), ""));
        }
    }
    let port = svc.get("port").and_then(Value::as_i64).unwrap_or(443);
    if !(1..=65535).contains(&port) {
        errs.push(field::invalid(
            &p.child("port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(url_path) = str_of(svc, "path") else {
        return errs;
    };
    let pp = p.child("path");
    if url_path.is_empty() || url_path == "/" {
        return errs;
    }
    if url_path == "//" {
        errs.push(field::invalid(&pp, url_path, "segment[0] may not be empty"));
        return errs;
    }
    if !url_path.starts_with('/') {
        errs.push(field::invalid(&pp, url_path, "must start with a '/'"));
    }
    let check = url_path.get(1..).unwrap_or("");
    let check = check.strip_suffix('/').unwrap_or(check);
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            errs.push(field::invalid(
                &pp,
                url_path,
                &format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for msg in is_dns1123_subdomain(step) {
            errs.push(field::invalid(
                &pp,
                url_path,
                &format!("segment[{i}]: {msg}"),
            ));
        }
    }
    errs
}

fn validate_client_config(cc: Option<&Value>, path: &Path) -> Vec<field::Error> {
    let url = cc.and_then(|c| str_of(c, "url"));
    let service = cc.and_then(|c| c.get("service")).filter(|s| !s.is_null());
    match (url, service) {
        (Some(url), None) => validate_url(url, &path.child("url")),
        (None, Some(svc)) => validate_service(svc, &path.child("service")),
        _ => vec![field::required(
            path,
            "exactly one of url or service is required",
        )],
    }
}

/// Upstream `utilvalidation.IsFullyQualifiedName`.
fn is_fully_qualified_name(path: &Path, name: &str) -> Vec<field::Error> {
    if name.is_empty() {
        return vec![field::required(path, "")];
    }
    let errs = is_dns1123_subdomain(name);
    if !errs.is_empty() {
        return vec![field::invalid(path, name, &errs.join(","))];
    }
    if name.split('.').count() < 3 {
        return vec![field::invalid(
            path,
            name,
            "should be a domain with at least three segments separated by dots",
        )];
    }
    Vec::new()
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Go's `%#v` of a typed string slice (`[]string` renders through `BadValue::Strings`).
fn list_value(go_type: &str, items: &[String]) -> BadValue {
    if go_type == "string" {
        return BadValue::Strings(Some(items.to_vec()));
    }
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    BadValue::Raw(format!("[]{go_type}{{{}}}", quoted.join(", ")))
}

/// Upstream `validateRuleWithOperations` and (partly) `validateRule`.
fn validate_rule(rule: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let ops = strings(rule, "operations");
    let p = path.child("operations");
    if ops.is_empty() {
        errs.push(field::required(&p, ""));
    }
    if ops.len() > 1 && ops.iter().any(|o| o == "*") {
        errs.push(field::invalid(
            &p,
            list_value("admissionregistration.OperationType", &ops),
            "if '*' is present, must not specify other operations",
        ));
    }
    const OPS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
    for (i, op) in ops.iter().enumerate() {
        if !OPS.contains(&op.as_str()) {
            errs.push(field::not_supported(&p.index(i), op.as_str(), OPS));
        }
    }
    for (key, what) in [("apiGroups", "API groups"), ("apiVersions", "API versions")] {
        let items = strings(rule, key);
        let p = path.child(key);
        if items.is_empty() {
            errs.push(field::required(&p, ""));
        }
        if items.len() > 1 && items.iter().any(|g| g == "*") {
            errs.push(field::invalid(
                &p,
                list_value("string", &items),
                &format!("if '*' is present, must not specify other {what}"),
            ));
        }
        if key == "apiVersions" {
            for (i, v) in items.iter().enumerate() {
                if v.is_empty() {
                    errs.push(field::required(&p.index(i), ""));
                }
            }
        }
    }
    let resources = strings(rule, "resources");
    let p = path.child("resources");
    if resources.is_empty() {
        errs.push(field::required(&p, ""));
    }
    for (i, r) in resources.iter().enumerate() {
        if r.is_empty() {
            errs.push(field::required(&p.index(i), ""));
        }
    }
    const SCOPES: &[&str] = &["*", "Cluster", "Namespaced"];
    if let Some(scope) = str_of(rule, "scope")
        && !SCOPES.contains(&scope)
    {
        errs.push(field::not_supported(&path.child("scope"), scope, SCOPES));
    }
    errs
}

/// Upstream `validateValidatingWebhook`/`validateMutatingWebhook` for one v1 webhook.
fn validate_webhook(hook: &Value, path: &Path, mutating: bool) -> Vec<field::Error> {
    let mut errs = is_fully_qualified_name(&path.child("name"), str_of(hook, "name").unwrap_or(""));
    for (i, rule) in hook
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        errs.extend(validate_rule(rule, &path.child("rules").index(i)));
    }
    check_enum(&mut errs, hook, path, "failurePolicy", &["Fail", "Ignore"]);
    check_enum(
        &mut errs,
        hook,
        path,
        "matchPolicy",
        &["Equivalent", "Exact"],
    );
    const NO_SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun"];
    match str_of(hook, "sideEffects") {
        None => errs.push(field::required(
            &path.child("sideEffects"),
            "must specify one of None, NoneOnDryRun",
        )),
        Some(s) if !NO_SIDE_EFFECTS.contains(&s) => {
            errs.push(field::not_supported(
                &path.child("sideEffects"),
                s,
                NO_SIDE_EFFECTS,
            ));
        }
        Some(_) => {}
    }
    if let Some(t) = hook.get("timeoutSeconds").and_then(Value::as_i64)
        && !(1..=30).contains(&t)
    {
        errs.push(field::invalid(
            &path.child("timeoutSeconds"),
            t,
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    if mutating {
        check_enum(
            &mut errs,
            hook,
            path,
            "reinvocationPolicy",
            &["IfNeeded", "Never"],
        );
    }
    errs.extend(validate_client_config(
        hook.get("clientConfig"),
        &path.child("clientConfig"),
    ));
    errs
}

/// Upstream `validateAdmissionReviewVersions` (a recognised version required).
fn validate_review_versions(versions: &[String], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if versions.is_empty() {
        errs.push(field::required(path, "must specify one of v1, v1beta1"));
        return errs;
    }
    let mut seen = HashSet::new();
    for (i, v) in versions.iter().enumerate() {
        if !seen.insert(v.as_str()) {
            errs.push(field::invalid(
                &path.index(i),
                v.as_str(),
                "duplicate version",
            ));
            continue;
        }
        for msg in is_dns1035_label(v) {
            errs.push(field::invalid(&path.index(i), v.as_str(), &msg));
        }
    }
    if !versions.iter().any(|v| v == "v1" || v == "v1beta1") {
        errs.push(field::invalid(
            path,
            list_value("string", versions),
            "must include at least one of v1, v1beta1",
        ));
    }
    errs
}

/// Upstream `validateValidatingWebhookConfiguration`/`validateMutatingWebhookConfiguration`
/// for the `webhooks` list: unique names, then each webhook.
pub fn validate_webhooks(obj: &Value, mutating: bool) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut seen = HashSet::new();
    let path = Path::new("webhooks");
    for (i, hook) in obj
        .get("webhooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = path.index(i);
        errs.extend(validate_webhook(hook, &p, mutating));
        errs.extend(validate_review_versions(
            &strings(hook, "admissionReviewVersions"),
            &p.child("admissionReviewVersions"),
        ));
        let name = str_of(hook, "name").unwrap_or("");
        if !name.is_empty() && !seen.insert(name.to_owned()) {
            errs.push(field::duplicate(&p.child("name"), name));
        }
    }
    errs
}

/// The `Webhooks` column of both configurations' printers.
pub const WEBHOOKS_COLUMN: kas_registry::TableColumn = kas_registry::TableColumn {
    name: "Webhooks",
    type_: "integer",
    format: "",
    description: "Webhooks indicates the number of webhooks registered in this configuration",
    priority: 0,
};

/// The strategy of Validating- and MutatingWebhookConfigurations, which differ only in
/// the mutating webhooks' `reinvocationPolicy`.
pub struct WebhookConfigurationStrategy {
    pub mutating: bool,
}

impl kas_registry::Strategy for WebhookConfigurationStrategy {
    fn default(&self, obj: &mut Value) {
        default_webhooks(obj, self.mutating);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        kas_registry::meta::first_generation(obj);
    }

    /// Generation bumps when `webhooks` changes.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = new.get("webhooks") != old.get("webhooks");
        kas_registry::meta::next_generation(new, old, changed);
    }

    fn validate(&self, obj: &Value) -> kas_registry::strategy::FieldErrors {
        let mut errs = kas_registry::validation::validate_object_meta(
            obj,
            false,
            kas_apimachinery::validation::meta::name_is_dns_subdomain,
        );
        errs.extend(kas_registry::strategy::causes(validate_webhooks(
            obj,
            self.mutating,
        )));
        errs
    }

    /// Upstream's strategy refuses updates without a resourceVersion.
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn validate_update(&self, new: &Value, old: &Value) -> kas_registry::strategy::FieldErrors {
        let mut errs = kas_registry::validation::validate_object_meta_update(new, old);
        errs.extend(kas_registry::strategy::causes(validate_webhooks(
            new,
            self.mutating,
        )));
        errs
    }

    /// Upstream `printValidatingWebhook` / `printMutatingWebhook`: the number of webhooks.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let count = obj
            .get("webhooks")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        vec![Value::from(count)]
    }
}
