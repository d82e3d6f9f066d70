//! The AdmissionReview a webhook is sent and the checks of its answer, after upstream's
//! `plugin/webhook/request/admissionreview.go` (`CreateAdmissionObjects`,
//! `CreateV1AdmissionReview`, `VerifyAdmissionResponse`).

use serde_json::{Map, Value, json};

use super::Request;

/// The first of a webhook's `admissionReviewVersions` this server speaks.
pub fn review_version(versions: &[String]) -> Result<&'static str, String> {
    versions
        .iter()
        .find_map(|v| match v.as_str() {
            "v1" => Some("v1"),
            "v1beta1" => Some("v1beta1"),
            _ => None,
        })
        .ok_or_else(|| {
            "webhook does not accept known AdmissionReview versions (v1, v1beta1)".to_owned()
        })
}

/// `obj` with `apiVersion` and `kind` first, as the webhook receives it.
pub fn with_type(obj: &Value, api_version: &str, kind: &str) -> Value {
    let mut out = Map::new();
    out.insert("apiVersion".into(), api_version.into());
    out.insert("kind".into(), kind.into());
    if let Some(fields) = obj.as_object() {
        for (k, v) in fields {
            if k != "apiVersion" && k != "kind" {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// The operation's options object (upstream's `GetOperationOptions`).
fn options(request: &Request<'_>) -> Value {
    let kind = match request.operation {
        "CREATE" => "CreateOptions",
        "UPDATE" => "UpdateOptions",
        _ => "DeleteOptions",
    };
    let mut options = json!({"kind": kind, "apiVersion": "meta.k8s.io/v1"});
    if request.dry_run {
        options["dryRun"] = json!(["All"]);
    }
    options
}

/// The AdmissionReview of `version` (`admission.k8s.io/<version>`) for `request`, with
/// `uid` and the object in its current state (`object`, for a mutating webhook after the
/// webhooks before it).
pub fn body(version: &str, uid: &str, request: &Request<'_>, object: Option<&Value>) -> Value {
    let d = request.descriptor;
    let (kind_group, kind_version, kind) = request.kind;
    let typed = |o: &Value| with_type(o, &api_version_of(kind_group, kind_version), kind);
    let (user, uid_of_user, groups, extra) = match request.user {
        Some(u) => (u.name.as_str(), u.uid.as_str(), u.groups.clone(), &u.extra),
        None => ("", "", Vec::new(), &Default::default()),
    };
    let mut user_info = json!({});
    if !user.is_empty() {
        user_info["username"] = json!(user);
    }
    if !uid_of_user.is_empty() {
        user_info["uid"] = json!(uid_of_user);
    }
    if !groups.is_empty() {
        user_info["groups"] = json!(groups);
    }
    if !extra.is_empty() {
        user_info["extra"] = json!(extra);
    }
    // An update's new state is stored without a resourceVersion; upstream's carries the
    // one it was written against.
    let mut object = object.map(typed);
    if let (Some(object), Some(old)) = (object.as_mut(), request.old_object)
        && request.operation == "UPDATE"
        && object.pointer("/metadata/resourceVersion").is_none()
        && let (Some(rv), Some(meta)) = (
            old.pointer("/metadata/resourceVersion"),
            object.get_mut("metadata").and_then(Value::as_object_mut),
        )
    {
        meta.insert("resourceVersion".into(), rv.clone());
    }
    let gvk = json!({"group": kind_group, "version": kind_version, "kind": kind});
    let gvr = json!({"group": d.group, "version": d.version, "resource": d.plural});
    let mut req = json!({
        "uid": uid,
        "kind": gvk,
        "resource": gvr,
        "requestKind": gvk,
        "requestResource": gvr,
        "name": request.name,
        "operation": request.operation,
        "userInfo": user_info,
        "object": object,
        "oldObject": request.old_object.map(typed),
        "dryRun": request.dry_run,
        "options": options(request),
    });
    if !request.subresource.is_empty() {
        req["subResource"] = json!(request.subresource);
        req["requestSubResource"] = json!(request.subresource);
    }
    if !request.namespace.is_empty() {
        req["namespace"] = json!(request.namespace);
    }
    if request.name.is_empty()
        && let Some(map) = req.as_object_mut()
    {
        map.remove("name");
    }
    json!({
        "kind": "AdmissionReview",
        "apiVersion": format!("admission.k8s.io/{version}"),
        "request": req,
    })
}

fn api_version_of(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// The AdmissionRequest `matchConditions` see as `request` (upstream
/// `CreateAdmissionRequest`: no uid, objects or options; every string field present).
pub fn condition_request(request: &Request<'_>) -> Value {
    let mut review = body("v1", "", request, None);
    let mut req = review["request"].take();
    if let Some(map) = req.as_object_mut() {
        for gone in ["uid", "object", "oldObject", "options"] {
            map.remove(gone);
        }
        for present in ["name", "namespace", "subResource", "requestSubResource"] {
            map.entry(present).or_insert_with(|| json!(""));
        }
    }
    req
}

/// A webhook's verified answer (upstream `AdmissionResponse`).
#[derive(Debug, Default, PartialEq)]
pub struct Response {
    pub allowed: bool,
    /// The JSONPatch, decoded from base64.
    pub patch: Vec<u8>,
    /// `JSONPatch`, or empty without a patch.
    pub patch_type: String,
    /// `response.status`: why the webhook refused.
    pub result: Option<Value>,
    pub warnings: Vec<String>,
    /// `auditAnnotations`, in key order.
    pub audit_annotations: std::collections::BTreeMap<String, String>,
}

/// Upstream `VerifyAdmissionResponse` over the decoded answer to a review of `version`
/// with `uid`.
pub fn verify(
    version: &str,
    uid: &str,
    mutating: bool,
    answer: &Value,
) -> Result<Response, String> {
    let Some(response) = answer.get("response").filter(|r| !r.is_null()) else {
        return Err("webhook response was absent".to_owned());
    };
    let text = |k: &str| response.get(k).and_then(Value::as_str).unwrap_or("");
    let patch = match response.get("patch").and_then(Value::as_str) {
        Some(b64) if !b64.is_empty() => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|e| format!("illegal base64 data in response.patch: {e}"))?
        }
        _ => Vec::new(),
    };
    let patch_type = response.get("patchType").filter(|p| !p.is_null());
    let mut verified = Response {
        allowed: response.get("allowed").and_then(Value::as_bool) == Some(true),
        // Upstream's `Result` field, written `status`.
        result: response.get("status").filter(|r| !r.is_null()).cloned(),
        warnings: response
            .get("warnings")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        audit_annotations: response
            .get("auditAnnotations")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect(),
        ..Response::default()
    };
    if version == "v1beta1" {
        if mutating && !patch.is_empty() {
            verified.patch = patch;
            verified.patch_type = "JSONPatch".to_owned();
        }
        return Ok(verified);
    }
    if text("uid") != uid {
        return Err(format!(
            "expected response.uid={}, got {}",
            quote(uid),
            quote(text("uid"))
        ));
    }
    let api_version = answer
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = answer.get("kind").and_then(Value::as_str).unwrap_or("");
    if api_version != "admission.k8s.io/v1" || kind != "AdmissionReview" {
        return Err(format!(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {}",
            gvk_string(api_version, kind)
        ));
    }
    if mutating {
        if !patch.is_empty() && patch_type.is_none() {
            return Err("webhook returned response.patch but not response.patchType".to_owned());
        }
        if patch.is_empty() && patch_type.is_some() {
            return Err("webhook returned response.patchType but not response.patch".to_owned());
        }
        if let Some(t) = patch_type {
            let t = t.as_str().unwrap_or("");
            if t.is_empty() {
                return Err(format!(
                    "webhook returned invalid response.patchType of {}",
                    quote(t)
                ));
            }
            verified.patch_type = t.to_owned();
        }
        verified.patch = patch;
    } else {
        if !patch.is_empty() {
            return Err("validating webhook may not return response.patch".to_owned());
        }
        if patch_type.is_some() {
            return Err("validating webhook may not return response.patchType".to_owned());
        }
    }
    Ok(verified)
}

fn quote(s: &str) -> String {
    kas_apimachinery::golang::strconv::quote(s)
}

/// Go's `GroupVersionKind.String()` of an `apiVersion` and `kind`.
fn gvk_string(api_version: &str, kind: &str) -> String {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={kind}")
}
