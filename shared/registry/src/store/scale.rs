//! The `scale` subresource on the store, after upstream's `ScaleREST` of deployments,
//! replica sets and stateful sets and its counterpart for custom resources: an
//! autoscaling/v1 `Scale` view of an object's replica count, where the count and the
//! selector live being data (`ScaleSpec`, from the subresource table). A write checks the
//! Scale the client means and writes the count back into the object through the store's
//! update rules, so the resource's own strategy (generation, validation) still runs. The
//! HTTP side (bodies, patches, answers) is kas-endpoints'.

use std::sync::Mutex;

use kas_apimachinery::golang::fmt::{sprint_t, sprint_v};
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_nonnegative_field};
use kas_apimachinery::{Status, labels};
use serde_json::{Map, Value, json};

use super::{Store, Written};
use crate::ResourceDescriptor;
use crate::descriptor::{ScaleSelector, ScaleSpec};
use crate::error::{Error, Result};
use crate::rest::options::WriteOptions;
use crate::strategy::FieldErrors;

/// Upstream's stand-in for the replicas of a custom resource that has none: a patch that
/// leaves it in place is refused rather than written as a count.
const MISSING_REPLICAS: i64 = i32::MIN as i64;

/// A change of the Scale: the client's body (PUT) or its patch applied to the current one.
pub type ScaleChange<'a> = dyn Fn(Value) -> Result<Value> + Send + Sync + 'a;

impl Store {
    /// The Scale of an object, and the object's resourceVersion; an object without spec
    /// replicas has no Scale to show (upstream's 500).
    pub async fn get_scale(
        &self,
        spec: &ScaleSpec,
        namespace: &str,
        name: &str,
        resource_version: Option<String>,
    ) -> Result<(Value, u64)> {
        let obj = self.get(namespace, name, resource_version).await?;
        let (scale, found) = scale_from(spec, &obj.value()?)?;
        if !found {
            let missing = format!(
                "the spec replicas field {} does not exist",
                quote(spec.spec_replicas)
            );
            return Err(Status::internal_error(&missing).into());
        }
        Ok((scale, obj.resource_version))
    }

    /// Upstream's `scaleUpdatedObjectInfo`: the current object's Scale, changed by
    /// `change` (the client's body, or its patch applied), validated and written back as the
    /// object's replicas, with the Scale's resourceVersion as the update's precondition.
    /// Answers the Scale of what was (or, dry, would be) stored.
    pub async fn update_scale(
        &self,
        spec: &ScaleSpec,
        namespace: &str,
        name: &str,
        opts: &WriteOptions,
        change: &ScaleChange<'_>,
    ) -> Result<Value> {
        // A dry run stores nothing, so its answer carries the version it was checked against,
        // as upstream's does.
        let checked_rv = Mutex::new(String::new());
        let apply = |current: &Value| -> Result<Value> {
            let (mut old, found) = scale_from(spec, current)?;
            if !found && let Some(scale_spec) = old.get_mut("spec").and_then(Value::as_object_mut) {
                scale_spec.insert("replicas".into(), json!(MISSING_REPLICAS));
            }
            let new = change(old)?;
            let replicas = replicas(&new);
            if !found && replicas == MISSING_REPLICAS {
                let empty = format!(
                    "the spec replicas field {} cannot be empty",
                    quote(spec.spec_replicas)
                );
                return Err(Status::bad_request(&empty).into());
            }
            let errors = validate_scale(&new, self.descriptor.namespaced());
            if !errors.is_empty() {
                return Err(Status::invalid("autoscaling", "Scale", name, errors).into());
            }
            check_uid(self.descriptor, &new, current, name)?;
            let mut parent = current.clone();
            set_path(&mut parent, spec.spec_replicas, json!(replicas))?;
            // A Scale without a resourceVersion leaves the parent's: the update is
            // unconditional even for a custom resource, as upstream's
            // `scaleUpdatedObjectInfo` sets only a version the client gave.
            let rv = crate::meta::str_field(&new, "resourceVersion");
            if !rv.is_empty() {
                crate::meta::metadata_mut(&mut parent).insert("resourceVersion".into(), json!(rv));
            }
            let current_rv = crate::meta::str_field(current, "resourceVersion").to_owned();
            *checked_rv.lock().unwrap_or_else(|e| e.into_inner()) = current_rv;
            Ok(parent)
        };
        match self
            .patch_through(namespace, name, "scale", &apply, opts)
            .await?
        {
            Written::Stored(obj) => Ok(scale_from(spec, &obj.value()?)?.0),
            Written::DryRun(parent) => {
                let (mut scale, _) = scale_from(spec, &parent)?;
                let rv = checked_rv.into_inner().unwrap_or_default();
                crate::meta::metadata_mut(&mut scale).insert("resourceVersion".into(), json!(rv));
                Ok(scale)
            }
        }
    }
}

/// The Scale of `obj` (upstream's `scaleFromDeployment` / `scaleFromCustomResource`) and
/// whether `obj` has spec replicas at all. Metadata is the parent's name, namespace, uid,
/// resourceVersion and creationTimestamp, nothing else.
pub fn scale_from(spec: &ScaleSpec, obj: &Value) -> Result<(Value, bool)> {
    let spec_replicas = int_at(obj, spec.spec_replicas)?;
    let status_replicas = int_at(obj, spec.status_replicas)?.unwrap_or(0);
    let selector = match spec.label_selector {
        None => String::new(),
        Some(ScaleSelector::String(path)) => match at(obj, path) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => return Err(wrong_type(path, other, "string")),
        },
        Some(ScaleSelector::LabelSelector(path)) => {
            let selector = at(obj, path).unwrap_or(&Value::Null);
            labels::from_label_selector(selector)
                .map_err(|e| Error::from(Status::bad_request(&e.to_string())))?
                .to_string()
        }
        Some(ScaleSelector::Set(path)) => {
            let set = at(obj, path)
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                .collect();
            labels::selector_from_set(&set).to_string()
        }
    };
    let mut meta = Map::new();
    let parent = crate::meta::metadata(obj);
    for key in ["name", "namespace", "uid", "resourceVersion"] {
        if let Some(v) = parent.and_then(|m| m.get(key)).filter(|v| !is_empty(v)) {
            meta.insert(key.into(), v.clone());
        }
    }
    let created = parent.and_then(|m| m.get("creationTimestamp")).cloned();
    meta.insert("creationTimestamp".into(), created.unwrap_or(Value::Null));
    // Go's int32 conversion of the count, and `omitempty` on `spec.replicas`.
    let mut scale_spec = Map::new();
    if let Some(r) = spec_replicas
        .map(|r| i64::from(r as i32))
        .filter(|r| *r != 0)
    {
        scale_spec.insert("replicas".into(), json!(r));
    }
    let mut status = json!({"replicas": i64::from(status_replicas as i32)});
    if !selector.is_empty() {
        status["selector"] = json!(selector);
    }
    let scale = json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": meta,
        "spec": scale_spec,
        "status": status,
    });
    Ok((scale, spec_replicas.is_some()))
}

/// Upstream's `ValidateScale`. It requires a namespace; a cluster-scoped custom resource's
/// Scale has none to give, so the parent's scope decides here.
pub fn validate_scale(scale: &Value, namespaced: bool) -> FieldErrors {
    let mut errors =
        crate::validation::validate_object_meta(scale, namespaced, name_is_dns_subdomain);
    let path = Path::new("spec").child("replicas");
    errors.extend(
        validate_nonnegative_field(replicas(scale), &path)
            .iter()
            .map(field::Error::to_cause),
    );
    errors
}

/// The Scale's `spec.replicas`; absent is Go's zero. Its type was checked on decode.
pub fn replicas(scale: &Value) -> i64 {
    scale
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// A Scale naming a uid is a precondition on the parent's.
fn check_uid(d: &ResourceDescriptor, scale: &Value, parent: &Value, name: &str) -> Result<()> {
    let (sent, have) = (
        crate::meta::str_field(scale, "uid"),
        crate::meta::str_field(parent, "uid"),
    );
    if sent.is_empty() || sent == have {
        return Ok(());
    }
    let message =
        format!("Precondition failed: UID in precondition: {sent}, UID in object meta: {have}");
    let resource = format!("{}/scale", d.plural);
    Err(Status::conflict(d.group, &resource, name, &message).into())
}

/// A JSON path's segments: `.spec.replicas` → `spec`, `replicas` (upstream ignores the
/// leading period).
fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.strip_prefix('.').unwrap_or(path).split('.')
}

fn at<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    segments(path).try_fold(obj, |v, seg| v.get(seg))
}

/// An integer at `path`, upstream's `NestedInt64`: absent or null is `None`, any other
/// type an error.
fn int_at(obj: &Value, path: &str) -> Result<Option<i64>> {
    match at(obj, path) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .map(Some)
            .ok_or_else(|| wrong_type(path, v, "int64")),
    }
}

/// Upstream's accessor error, which prints the path with its leading period and the value
/// as Go's `%v` does.
fn wrong_type(path: &str, value: &Value, want: &str) -> Error {
    let path = segments(path).collect::<Vec<_>>().join(".");
    Status::internal_error(&format!(
        ".{path} accessor error: {} is of the type {}, expected {want}",
        sprint_v(value),
        sprint_t(value)
    ))
    .into()
}

/// Upstream's `SetNestedField`: missing maps on the way are made; anything else on the
/// way fails.
fn set_path(obj: &mut Value, path: &str, value: Value) -> Result<()> {
    let segments: Vec<&str> = segments(path).collect();
    let Some((last, parents)) = segments.split_last() else {
        return Ok(());
    };
    let mut here = obj;
    for (i, seg) in parents.iter().enumerate() {
        let not_a_map = || {
            let at = segments[..=i].join(".");
            Status::internal_error(&format!(
                "value cannot be set because .{at} is not a map[string]interface {{}}"
            ))
        };
        let map = here.as_object_mut().ok_or_else(not_a_map)?;
        here = map.entry(*seg).or_insert_with(|| json!({}));
        if !here.is_object() {
            return Err(not_a_map().into());
        }
    }
    let Some(map) = here.as_object_mut() else {
        return Err(Status::internal_error("the object is not a JSON object").into());
    };
    map.insert((*last).to_owned(), value);
    Ok(())
}

fn is_empty(v: &Value) -> bool {
    v.is_null() || v.as_str() == Some("")
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEPLOYMENT_SCALE: ScaleSpec = ScaleSpec {
        spec_replicas: ".spec.replicas",
        status_replicas: ".status.replicas",
        label_selector: Some(ScaleSelector::LabelSelector(".spec.selector")),
    };

    fn deployment() -> Value {
        json!({
            "metadata": {
                "name": "web", "namespace": "prod", "uid": "u-1", "resourceVersion": "42",
                "creationTimestamp": "2024-01-02T03:04:05Z", "generation": 3,
                "labels": {"app": "web"}, "annotations": {"a": "b"},
            },
            "spec": {
                "replicas": 3,
                "selector": {
                    "matchLabels": {"tier": "front", "app": "web"},
                    "matchExpressions": [{"key": "env", "operator": "In", "values": ["b", "a"]}],
                },
            },
            "status": {"replicas": 2},
        })
    }

    #[test]
    fn a_scale_shows_replicas_selector_and_only_identifying_metadata() {
        let (scale, found) = scale_from(&DEPLOYMENT_SCALE, &deployment()).unwrap();
        assert!(found);
        assert_eq!(
            scale,
            json!({
                "kind": "Scale",
                "apiVersion": "autoscaling/v1",
                "metadata": {
                    "name": "web", "namespace": "prod", "uid": "u-1", "resourceVersion": "42",
                    "creationTimestamp": "2024-01-02T03:04:05Z",
                },
                "spec": {"replicas": 3},
                "status": {"replicas": 2, "selector": "app=web,env in (a,b),tier=front"},
            })
        );
    }

    #[test]
    fn zero_and_missing_counts_follow_go() {
        let mut d = deployment();
        d["spec"]["replicas"] = json!(0);
        d.as_object_mut().unwrap().remove("status");
        d["spec"]["selector"] = json!({});
        let (scale, found) = scale_from(&DEPLOYMENT_SCALE, &d).unwrap();
        assert!(found);
        // `omitempty` on spec.replicas, always status.replicas, no empty selector.
        assert_eq!(scale["spec"], json!({}));
        assert_eq!(scale["status"], json!({"replicas": 0}));
        d["spec"].as_object_mut().unwrap().remove("replicas");
        assert!(!scale_from(&DEPLOYMENT_SCALE, &d).unwrap().1);
    }

    #[test]
    fn a_custom_resource_selector_is_shown_as_it_is() {
        let spec = ScaleSpec {
            spec_replicas: ".spec.size",
            status_replicas: ".status.ready",
            label_selector: Some(ScaleSelector::String(".status.selector")),
        };
        let cr = json!({"metadata": {"name": "c"}, "spec": {"size": 5},
            "status": {"ready": 4, "selector": "x in (1)"}});
        let (scale, _) = scale_from(&spec, &cr).unwrap();
        assert_eq!(scale["spec"]["replicas"], 5);
        assert_eq!(
            scale["status"],
            json!({"replicas": 4, "selector": "x in (1)"})
        );
        assert_eq!(scale["metadata"]["creationTimestamp"], Value::Null);
        let bad = json!({"spec": {"size": "5"}});
        let err = scale_from(&spec, &bad).unwrap_err().to_status();
        assert_eq!(err.code, 500);
        assert_eq!(
            err.message.as_deref(),
            Some(
                "Internal error occurred: .spec.size accessor error: 5 is of the type string, expected int64"
            )
        );
    }

    #[test]
    fn an_invalid_selector_is_a_bad_request() {
        let mut d = deployment();
        d["spec"]["selector"] = json!({"matchExpressions": [{"key": "a", "operator": "Near"}]});
        let err = scale_from(&DEPLOYMENT_SCALE, &d).unwrap_err().to_status();
        assert_eq!(err.code, 400);
    }

    #[test]
    fn replicas_are_written_back_at_their_path() {
        let mut d = deployment();
        set_path(&mut d, DEPLOYMENT_SCALE.spec_replicas, json!(7)).unwrap();
        assert_eq!(d["spec"]["replicas"], 7);
        assert_eq!(d["spec"]["selector"]["matchLabels"]["app"], "web");
        let mut bare = json!({"metadata": {"name": "c"}});
        set_path(&mut bare, ".spec.scale.count", json!(2)).unwrap();
        assert_eq!(bare["spec"]["scale"]["count"], 2);
        let mut blocked = json!({"spec": "nope"});
        let err = set_path(&mut blocked, ".spec.replicas", json!(1)).unwrap_err();
        assert_eq!(
            err.to_status().message.as_deref(),
            Some(
                "Internal error occurred: value cannot be set because .spec is not a map[string]interface {}"
            )
        );
    }

    #[test]
    fn negative_replicas_are_invalid_with_upstreams_message() {
        let (mut scale, _) = scale_from(&DEPLOYMENT_SCALE, &deployment()).unwrap();
        scale["spec"]["replicas"] = json!(-1);
        let errors = validate_scale(&scale, true);
        let status = Status::invalid("autoscaling", "Scale", "web", errors);
        assert_eq!(status.code, 422);
        assert_eq!(
            status.message.as_deref(),
            Some(
                "Scale.autoscaling \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
            )
        );
        let cause = &status.details.unwrap().causes[0];
        assert_eq!(cause.field.as_deref(), Some("spec.replicas"));
        assert_eq!(cause.reason.as_deref(), Some("FieldValueInvalid"));
        scale["spec"]["replicas"] = json!(0);
        assert!(validate_scale(&scale, true).is_empty());
        // Upstream requires the namespace a namespaced parent always gives.
        scale["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("namespace");
        assert_eq!(
            validate_scale(&scale, true)[0].field.as_deref(),
            Some("metadata.namespace")
        );
    }

    #[test]
    fn a_uid_precondition_names_the_scale_subresource() {
        let d = ResourceDescriptor {
            group: "apps",
            plural: "deployments",
            ..crate::descriptor::fixtures::LEASE
        };
        let parent = deployment();
        let ok = json!({"metadata": {"uid": "u-1"}});
        check_uid(&d, &ok, &parent, "web").unwrap();
        let stale = json!({"metadata": {"uid": "u-0"}});
        let status = check_uid(&d, &stale, &parent, "web")
            .unwrap_err()
            .to_status();
        assert_eq!(status.code, 409);
        assert_eq!(
            status.message.as_deref(),
            Some(
                "Operation cannot be fulfilled on deployments/scale.apps \"web\": Precondition failed: UID in precondition: u-0, UID in object meta: u-1"
            )
        );
    }
}
