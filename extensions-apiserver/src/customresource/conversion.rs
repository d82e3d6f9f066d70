//! Conversion webhooks, after upstream's `webhookConverter`
//! (`pkg/apiserver/conversion/webhook_converter.go`): objects that are not in the desired
//! version are sent in one ConversionReview (the first of the CRD's
//! `conversionReviewVersions` this server speaks, `v1` or `v1beta1`) to the CRD's
//! `clientConfig` (a `url`, or a `service` as `https://<name>.<namespace>.svc:<port><path>`,
//! trusting its `caBundle`), and the answer is checked as upstream checks it: its uid, its
//! result, the count, each object's group, version, kind, name, namespace and uid; the
//! originals' metadata is kept but for labels and annotations. Failures are upstream's
//! texts, answered as upstream's handlers answer a plain error (500, no reason).
//!
//! Each served version other than the storage version reads and writes through a
//! [`storage::ConvertingStorage`], upstream's per-version storage codec: the strategy and
//! everything above it see the request's version. Updates convert inside the storage's
//! compare-and-swap loop, which is synchronous, so a call blocks its worker thread with
//! `block_in_place`, as a Go handler blocks its goroutine.

mod selection;
pub mod storage;

use std::sync::Arc;
use std::time::Duration;

use kas_apimachinery::Status;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::{validate_annotations, validate_labels};
use serde_json::{Map, Value, json};

/// Upstream's webhook client timeout for conversion (its REST client's default).
const TIMEOUT: Duration = Duration::from_secs(30);
const REVIEW_GROUP: &str = "apiextensions.k8s.io";

/// The conversion webhook of one CRD.
pub struct WebhookConverter {
    client: kas_webhook::Client,
    url: String,
    /// `v1` or `v1beta1`: the review version spoken; `None` when the CRD names none this
    /// server speaks (every conversion then fails as upstream's).
    review_version: Option<&'static str>,
    kind: &'static str,
}

impl WebhookConverter {
    /// The converter of `crd` when its conversion strategy is `Webhook`.
    pub fn for_crd(crd: &Value) -> Option<Result<Arc<WebhookConverter>, String>> {
        let conversion = crd.pointer("/spec/conversion")?;
        if conversion.get("strategy").and_then(Value::as_str) != Some("Webhook") {
            return None;
        }
        Some(Self::new(crd, conversion).map(Arc::new))
    }

    fn new(crd: &Value, conversion: &Value) -> Result<WebhookConverter, String> {
        let config = conversion
            .pointer("/webhook/clientConfig")
            .unwrap_or(&Value::Null);
        let (url, tls) = kas_webhook::client_config::endpoint(config);
        let tls = tls?;
        let client = kas_webhook::Client::new(&tls, TIMEOUT).map_err(|e| e.to_string())?;
        let review_version = conversion
            .pointer("/webhook/conversionReviewVersions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find_map(|v| match v {
                "v1" => Some("v1"),
                "v1beta1" => Some("v1beta1"),
                _ => None,
            });
        Ok(WebhookConverter {
            client,
            url,
            review_version,
            kind: super::intern(super::str_at(crd, "/spec/names/kind")),
        })
    }

    /// `objects` (each with its `apiVersion` and `kind`) in `desired` (`group/version`),
    /// in order; those already there are not sent. `list` says whether they are a list's
    /// items (upstream words a list's failures by index).
    pub fn convert(
        &self,
        objects: Vec<Value>,
        desired: &str,
        list: bool,
    ) -> Result<Vec<Value>, String> {
        let from = objects
            .first()
            .and_then(|o| o.get("apiVersion"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let gvk = format!("{from}, Kind={}", self.kind);
        let pending: Vec<usize> = (0..objects.len())
            .filter(|&i| objects[i].get("apiVersion").and_then(Value::as_str) != Some(desired))
            .collect();
        if pending.is_empty() || (!list && is_empty_object(&objects[0])) {
            return Ok(objects);
        }
        let Some(review_version) = self.review_version else {
            return Err("no supported conversion review versions".to_owned());
        };
        let uid = uuid::Uuid::new_v4().to_string();
        let request = json!({
            "kind": "ConversionReview",
            "apiVersion": format!("{REVIEW_GROUP}/{review_version}"),
            "request": {
                "uid": uid,
                "desiredAPIVersion": desired,
                "objects": pending.iter().map(|&i| &objects[i]).collect::<Vec<_>>(),
            },
            "response": {"uid": "", "convertedObjects": null, "result": {"metadata": {}}},
        });
        let failed = |e: String| format!("conversion webhook for {gvk} failed: {e}");
        let body = serde_json::to_vec(&request).map_err(|e| failed(e.to_string()))?;
        let answer = kas_webhook::block_on(self.client.post_json(&self.url, body, None))
            .map_err(failed)?
            .map_err(|e| failed(e.to_string()))?;
        let review = decode_answer(&answer).map_err(failed)?;
        let converted = converted_objects(&review, review_version, &uid).map_err(failed)?;
        if converted.len() != pending.len() {
            return Err(format!(
                "conversion webhook for {gvk} returned {} objects, expected {}",
                converted.len(),
                pending.len()
            ));
        }
        let mut out = objects;
        for (index, (i, converted)) in pending.into_iter().zip(converted).enumerate() {
            let original = &out[i];
            let restored = self
                .checked(original, converted, desired)
                .map_err(|(what, e)| match (list, what) {
                    (true, Check::Object) => format!(
                        "conversion webhook for {gvk} returned invalid converted object at index {index}: {e}"
                    ),
                    (true, Check::Meta) => format!(
                        "conversion webhook for {gvk} returned invalid metadata in object at index {index}: {e}"
                    ),
                    (false, Check::Object) if e.starts_with("must ") => {
                        format!("conversion webhook for {gvk} returned invalid object: {e}")
                    }
                    (false, Check::Object) => format!(
                        "conversion webhook for {gvk} returned invalid object at index 0: {e}"
                    ),
                    (false, Check::Meta) => {
                        format!("conversion webhook for {gvk} returned invalid metadata: {e}")
                    }
                })?;
            out[i] = restored;
        }
        Ok(out)
    }

    /// Upstream's checks of one converted object, and `restoreObjectMeta`.
    fn checked(
        &self,
        original: &Value,
        converted: Value,
        desired: &str,
    ) -> Result<Value, (Check, String)> {
        let object = |e: String| (Check::Object, e);
        let Value::Object(mut converted) = converted else {
            return Err(object("invalid type, expected=Unstructured".to_owned()));
        };
        let got = converted
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        if got != desired {
            return Err(object(format!(
                "invalid groupVersion (expected {desired}, received {got})"
            )));
        }
        // A string at `path` ("" when absent), read in place.
        let text = |o: &Map<String, Value>, path: &[&str]| -> String {
            let mut v = o.get(path[0]);
            for key in &path[1..] {
                v = v.and_then(|v| v.get(key));
            }
            v.and_then(Value::as_str).unwrap_or("").to_owned()
        };
        let empty = Map::new();
        let original_map = original.as_object().unwrap_or(&empty);
        let (want_kind, got_kind) = (text(original_map, &["kind"]), text(&converted, &["kind"]));
        if want_kind != got_kind {
            return Err(object(format!(
                "invalid kind (expected {want_kind}, received {got_kind})"
            )));
        }
        for (what, field) in [("name", "name"), ("namespace", "namespace"), ("UID", "uid")] {
            let path = ["metadata", field];
            let (e, a) = (text(original_map, &path), text(&converted, &path));
            if e != a {
                return Err(object(format!("must have the same {what}: {e} != {a}")));
            }
        }
        restore_object_meta(original, &mut converted).map_err(|e| (Check::Meta, e))?;
        Ok(Value::Object(converted))
    }
}

enum Check {
    Object,
    Meta,
}

/// Upstream's `isEmptyUnstructuredObject`: nothing but `apiVersion` and `kind`.
fn is_empty_object(obj: &Value) -> bool {
    obj.as_object()
        .is_some_and(|m| m.len() == 2 && m.contains_key("kind") && m.contains_key("apiVersion"))
}

/// The review the webhook answered, as client-go's REST client reads an answer: a
/// non-2xx status is its generic error, an empty body an error of its own.
fn decode_answer(answer: &kas_webhook::Response) -> Result<Value, String> {
    let code = answer.status.as_u16();
    if !(200..300).contains(&code) {
        if let Ok(status) = serde_json::from_slice::<Value>(&answer.body)
            && status.get("kind").and_then(Value::as_str) == Some("Status")
            && let Some(message) = status.get("message").and_then(Value::as_str)
        {
            return Err(message.to_owned());
        }
        let text = answer
            .headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("text/"));
        let message = if text {
            String::from_utf8_lossy(&answer.body).trim().to_owned()
        } else {
            "unknown".to_owned()
        };
        let status = Status::generic_server_response(code, &message);
        return Err(status.message.unwrap_or_default());
    }
    if answer.body.is_empty() {
        let content_type = answer
            .headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        return Err(format!(
            "0-length response with status code: {code} and content type: {content_type}"
        ));
    }
    serde_json::from_slice(&answer.body).map_err(|e| e.to_string())
}

/// Upstream's `getConvertedObjectsFromResponse`.
fn converted_objects(review: &Value, version: &str, uid: &str) -> Result<Vec<Value>, String> {
    if version == "v1" {
        let api_version = review
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let kind = review.get("kind").and_then(Value::as_str).unwrap_or("");
        if api_version != "apiextensions.k8s.io/v1" || kind != "ConversionReview" {
            return Err(format!(
                "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {api_version}, Kind={kind}"
            ));
        }
    }
    let Some(response) = review.get("response").filter(|r| r.is_object()) else {
        return Err("no response provided".to_owned());
    };
    if version == "v1" {
        let got = response.get("uid").and_then(Value::as_str).unwrap_or("");
        if got != uid {
            return Err(format!("expected response.uid={uid:?}, got {got:?}"));
        }
    }
    let result = response.get("result").unwrap_or(&Value::Null);
    let status = result.get("status").and_then(Value::as_str).unwrap_or("");
    if status != "Success" {
        return match result.get("message").and_then(Value::as_str) {
            Some(m) if !m.is_empty() => Err(m.to_owned()),
            _ => Err(format!(
                "response.result.status was '{status}', not 'Success'"
            )),
        };
    }
    Ok(response
        .get("convertedObjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// Upstream's `restoreObjectMeta`: the original's metadata, with the converted object's
/// labels and annotations (validated when they changed).
fn restore_object_meta(original: &Value, converted: &mut Map<String, Value>) -> Result<(), String> {
    let response_meta = match converted.get("metadata") {
        None => return Err("missing metadata in converted object".to_owned()),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in converted object",
                kas_apimachinery::golang::fmt::sprint_t(other)
            ));
        }
    };
    let mut meta = original
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for fld in ["labels", "annotations"] {
        let response_field = match response_meta.get(fld) {
            None | Some(Value::Null) => {
                meta.remove(fld);
                continue;
            }
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{fld} of type {} in converted object",
                    kas_apimachinery::golang::fmt::sprint_t(other)
                ));
            }
        };
        let original_field = meta.get(fld).and_then(Value::as_object);
        let mut changed = original_field.map_or(0, Map::len) != response_field.len();
        let mut strings = std::collections::BTreeMap::new();
        for (k, v) in response_field {
            let Some(s) = v.as_str() else {
                return Err(format!(
                    "metadata.{fld}[{k}] must be a string, but is {} in converted object",
                    kas_apimachinery::golang::fmt::sprint_t(v)
                ));
            };
            if original_field.and_then(|o| o.get(k)) != Some(v) {
                changed = true;
            }
            strings.insert(k.clone(), s.to_owned());
        }
        if changed {
            let errs = if fld == "labels" {
                validate_labels(&strings, &Path::new("metadata").child("labels"))
            } else {
                validate_annotations(&strings, &Path::new("metadata").child("annotation"))
            };
            if let Some(message) = field::aggregate_message(&errs) {
                return Err(message);
            }
        }
        meta.insert(fld.to_owned(), Value::Object(response_field.clone()));
    }
    converted.insert("metadata".to_owned(), Value::Object(meta));
    Ok(())
}

/// `obj` with `apiVersion` and `kind` first, as the webhook receives it.
pub fn with_type(obj: Value, api_version: &str, kind: &str) -> Value {
    let mut out = Map::new();
    out.insert(
        "apiVersion".to_owned(),
        Value::String(api_version.to_owned()),
    );
    out.insert("kind".to_owned(), Value::String(kind.to_owned()));
    if let Value::Object(map) = obj {
        for (k, v) in map {
            if k != "apiVersion" && k != "kind" {
                out.insert(k, v);
            }
        }
    }
    Value::Object(out)
}

/// `obj` without `apiVersion` and `kind`, as objects are stored and served here.
pub fn without_type(mut obj: Value) -> Value {
    if let Some(map) = obj.as_object_mut() {
        map.remove("apiVersion");
        map.remove("kind");
    }
    obj
}

#[cfg(test)]
mod tests;
