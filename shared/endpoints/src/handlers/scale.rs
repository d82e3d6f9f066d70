//! The `scale` subresource: an autoscaling/v1 `Scale` view of an object's replica count,
//! after upstream's `ScaleREST` of deployments, replica sets and stateful sets and its
//! counterpart for custom resources. Where the replicas and the selector live is data
//! (`ResourceDescriptor::scale`). A write validates the Scale the client sent (or the one
//! its patch made) and writes `spec.replicas` back into the object through the store's
//! update rules, so the resource's own strategy (generation, validation) still runs.

use std::sync::Mutex;

use crate::negotiation::MediaTypeOptions;
use crate::url::Query;
use crate::{Body, RequestInfo};
use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use kas_api::autoscaling::v1::{SCALE, SCALE_SPEC, SCALE_STATUS};
use kas_apimachinery::golang::fmt::{sprint_t, sprint_v};
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::patch::PatchSchema;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_nonnegative_field};
use kas_apimachinery::{Status, labels, protobuf};
use serde_json::{Map, Value, json};

use crate::handlers::decode;
use crate::handlers::read;
use crate::handlers::write;
use crate::responsewriters::encode;
use crate::responsewriters::response;
use crate::responsewriters::table::{self, IncludeObject};
use kas_registry::descriptor::{ScaleSelector, ScaleSpec};
use kas_registry::error::{Error, Result};
use kas_registry::rest::object_meta;
use kas_registry::rest::options::WriteOptions;
use kas_registry::store::{Store, Written};
use kas_registry::strategy::FieldErrors;
use kas_registry::{ResourceDescriptor, Scope, Subresource, Verb};

/// The Scale kind as the shared codecs see it: decoding, unknown-field checks, negotiation
/// and protobuf take a descriptor for the kind and its schema.
static SCALE_KIND: ResourceDescriptor = ResourceDescriptor {
    group: "autoscaling",
    version: "v1",
    kind: "Scale",
    list_kind: "",
    plural: "",
    singular: "",
    short_names: &[],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: &[],
    subresources: &[],
    table_columns: &[],
    table_name_and_age: true,
    storage_resource: "",
    schema: Some(&SCALE),
    list_schema: None,
    scale: None,
};

/// Upstream's stand-in for the replicas of a custom resource that has none: a patch that
/// leaves it in place is refused rather than written as a count.
const MISSING_REPLICAS: i64 = i32::MIN as i64;

/// A change of the Scale: the client's body (PUT) or its patch applied to the current one.
type Change<'a> = dyn Fn(Value) -> Result<Value> + Send + Sync + 'a;

/// Whether the resource serves `/scale`: declared, and told where its replicas live.
pub(crate) fn serves(d: &ResourceDescriptor) -> bool {
    scale_spec(d).is_some()
}

fn scale_spec(d: &ResourceDescriptor) -> Option<&ScaleSpec> {
    d.scale
        .as_ref()
        .filter(|_| d.subresources.contains(&Subresource::Scale))
}

/// GET, PUT and PATCH of `<name>/scale`; any other verb is 405, as upstream's `ScaleREST`
/// implements only those.
pub(crate) async fn serve(
    store: &Store,
    info: &RequestInfo,
    verb: Verb,
    query: Option<&str>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response<Body>> {
    let Some(spec) = scale_spec(store.descriptor) else {
        return Err(write::not_supported(info, store));
    };
    match verb {
        Verb::Get => get(store, spec, info, query, headers).await,
        Verb::Update => update(store, spec, info, query, headers, body).await,
        Verb::Patch => patch(store, spec, info, query, headers, body).await,
        _ => Err(write::not_supported(info, store)),
    }
}

async fn get(
    store: &Store,
    spec: &ScaleSpec,
    info: &RequestInfo,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Result<Response<Body>> {
    let (out, as_table) = read::negotiate(headers, query)?;
    let rv = Query::parse(query.unwrap_or(""))
        .first("resourceVersion")
        .filter(|v| !v.is_empty())
        .map(str::to_owned);
    let obj = store.get(&info.namespace, &info.name, rv).await?;
    let (scale, found) = scale_from(spec, &obj.value()?)?;
    if !found {
        let missing = format!(
            "the spec replicas field {} does not exist",
            quote(spec.spec_replicas)
        );
        return Err(Status::internal_error(&missing).into());
    }
    if as_table {
        let bytes = scale_table(
            &scale,
            IncludeObject::from_query(query),
            obj.resource_version,
        );
        return Ok(read::render(&out, StatusCode::OK, bytes));
    }
    render(&out, &scale)
}

async fn update(
    store: &Store,
    spec: &ScaleSpec,
    info: &RequestInfo,
    query: Option<&str>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response<Body>> {
    let (opts, out) = write::options(headers, query, "UpdateOptions")?;
    let decoded = decode::decode(&SCALE_KIND, headers, body, &opts).await?;
    let mut sent = decoded.value;
    object_meta::check_type(&mut sent, &SCALE_KIND)?;
    decodes(&sent).map_err(|e| {
        let message = format!("Scale in version \"v1\" cannot be handled as a Scale: {e}");
        Error::from(Status::bad_request(&message))
    })?;
    object_meta::ensure_namespace(&mut sent, store.descriptor, &info.namespace)?;
    check_name(&sent, &info.name)?;
    let scale = write_scale(store, spec, info, &opts, &|_| Ok(sent.clone())).await?;
    let mut resp = render(&out, &scale)?;
    response::add_warnings(&mut resp, &decoded.warnings);
    Ok(resp)
}

async fn patch(
    store: &Store,
    spec: &ScaleSpec,
    info: &RequestInfo,
    query: Option<&str>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response<Body>> {
    let (opts, out) = write::options(headers, query, "PatchOptions")?;
    // Strategic merge is served where the parent serves it (built-ins, not custom
    // resources), with the Scale's own patch metadata.
    let schema = store.strategy.patch_schema().map(|_| &SCALE);
    let patch_type = decode::patch_type(headers, schema.is_none())?;
    let patch = decode::read(body).await?;
    // The patch may be applied several times (conflicts); the last run's warnings stand.
    let warnings = Mutex::new(Vec::new());
    let change = |old: Value| -> Result<Value> {
        let patched = crate::handlers::patch::apply_typed(
            patch_type,
            &old,
            &patch,
            schema.map(|m| m as &dyn PatchSchema),
        )?;
        decodes(&patched).map_err(|e| invalid_patch(&patched, &e))?;
        let (mut patched, found) = decode::check_fields(&SCALE_KIND, patched, &opts)?;
        *warnings.lock().unwrap_or_else(|e| e.into_inner()) = found;
        object_meta::check_type(&mut patched, &SCALE_KIND)?;
        object_meta::ensure_namespace(&mut patched, store.descriptor, &info.namespace)?;
        check_name(&patched, &info.name)?;
        Ok(patched)
    };
    let scale = write_scale(store, spec, info, &opts, &change).await?;
    let mut resp = render(&out, &scale)?;
    response::add_warnings(&mut resp, &warnings.into_inner().unwrap_or_default());
    Ok(resp)
}

/// Upstream's `scaleUpdatedObjectInfo`: the current object's Scale, changed, validated
/// and written back as the object's replicas, with the Scale's resourceVersion as the
/// update's precondition. Answers the Scale of what was (or, dry, would be) stored.
async fn write_scale(
    store: &Store,
    spec: &ScaleSpec,
    info: &RequestInfo,
    opts: &WriteOptions,
    change: &Change<'_>,
) -> Result<Value> {
    let name = info.name.as_str();
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
        let errors = validate_scale(&new, store.descriptor.namespaced());
        if !errors.is_empty() {
            return Err(Status::invalid("autoscaling", "Scale", name, errors).into());
        }
        check_uid(store.descriptor, &new, current, name)?;
        let mut parent = current.clone();
        set_path(&mut parent, spec.spec_replicas, json!(replicas))?;
        let meta = kas_registry::meta::metadata_mut(&mut parent);
        match kas_registry::meta::str_field(&new, "resourceVersion") {
            "" => meta.remove("resourceVersion"),
            rv => meta.insert("resourceVersion".into(), json!(rv)),
        };
        let current_rv = kas_registry::meta::str_field(current, "resourceVersion").to_owned();
        *checked_rv.lock().unwrap_or_else(|e| e.into_inner()) = current_rv;
        Ok(parent)
    };
    match store.patch(&info.namespace, name, &apply, opts).await? {
        Written::Stored(obj) => Ok(scale_from(spec, &obj.value()?)?.0),
        Written::DryRun(parent) => {
            let (mut scale, _) = scale_from(spec, &parent)?;
            let rv = checked_rv.into_inner().unwrap_or_default();
            kas_registry::meta::metadata_mut(&mut scale)
                .insert("resourceVersion".into(), json!(rv));
            Ok(scale)
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
    };
    let mut meta = Map::new();
    let parent = kas_registry::meta::metadata(obj);
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
        kas_registry::validation::validate_object_meta(scale, namespaced, name_is_dns_subdomain);
    let path = Path::new("spec").child("replicas");
    errors.extend(
        validate_nonnegative_field(replicas(scale), &path)
            .iter()
            .map(field::Error::to_cause),
    );
    errors
}

/// The Scale's `spec.replicas`; absent is Go's zero. Its type was checked on decode.
fn replicas(scale: &Value) -> i64 {
    scale
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// Whether the Scale decodes into upstream's Go type, which is what the protobuf encoder
/// walks: `encoding/json`'s error when a field has the wrong type.
fn decodes(scale: &Value) -> std::result::Result<(), protobuf::Error> {
    protobuf::encode(scale, &SCALE, &mut Vec::new())
}

/// A patched Scale that does not decode: upstream's patcher answers 422 on the `patch`
/// field, with the patched document as the value.
fn invalid_patch(patched: &Value, err: &protobuf::Error) -> Error {
    let document = serde_json::to_string(patched).unwrap_or_default();
    let cause = field::invalid(&Path::new("patch"), document, &err.to_string()).to_cause();
    Status::invalid("", "", "", vec![cause]).into()
}

/// Upstream's `checkName` of update and patch handlers.
fn check_name(scale: &Value, url_name: &str) -> Result<()> {
    let name = kas_registry::meta::name(scale);
    if name == url_name {
        return Ok(());
    }
    Err(Status::bad_request(&format!(
        "the name of the object ({name}) does not match the name on the URL ({url_name})"
    ))
    .into())
}

/// A Scale naming a uid is a precondition on the parent's.
fn check_uid(d: &ResourceDescriptor, scale: &Value, parent: &Value, name: &str) -> Result<()> {
    let (sent, have) = (
        kas_registry::meta::str_field(scale, "uid"),
        kas_registry::meta::str_field(parent, "uid"),
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

fn render(out: &MediaTypeOptions, scale: &Value) -> Result<Response<Body>> {
    read::render_object(
        &SCALE_KIND,
        out,
        StatusCode::OK,
        encode::value(&SCALE_KIND, scale),
    )
}

/// Upstream's Scale printer (`kubectl get <resource> <name> --subresource=scale`): Name,
/// Desired, Available, Age; the Name column has no `name` format there.
fn scale_table(scale: &Value, include: IncludeObject, resource_version: u64) -> Bytes {
    let describe =
        |m: &kas_apimachinery::schema::Message| m.field("replicas").map_or("", |f| f.description);
    let column = |name: &str, type_: &str, description: &str| json!({"name": name, "type": type_, "format": "", "description": description, "priority": 0});
    let columns = json!([
        column("Name", "string", table::NAME_DESCRIPTION),
        column("Desired", "integer", describe(&SCALE_SPEC)),
        column("Available", "integer", describe(&SCALE_STATUS)),
        column("Age", "string", table::AGE_DESCRIPTION),
    ]);
    let created = kas_registry::meta::str_field(scale, "creationTimestamp");
    let cells = vec![
        json!(kas_registry::meta::name(scale)),
        json!(replicas(scale)),
        scale
            .pointer("/status/replicas")
            .cloned()
            .unwrap_or(json!(0)),
        json!(table::age(created)),
    ];
    let row = table::row_of(cells, include, scale, || scale.clone());
    let t = json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version.to_string()},
        "columnDefinitions": columns,
        "rows": [row],
    });
    Bytes::from(serde_json::to_vec(&t).unwrap_or_default())
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
    fn wrong_types_fail_as_go_decoding_does() {
        let scale = json!({"metadata": {"name": "web"}, "spec": {"replicas": "3"}});
        assert_eq!(
            decodes(&scale).unwrap_err().to_string(),
            "json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32"
        );
        let status = invalid_patch(&scale, &decodes(&scale).unwrap_err()).to_status();
        assert_eq!(status.code, 422);
        assert!(
            status
                .message
                .unwrap()
                .starts_with(" \"\" is invalid: patch: Invalid value: ")
        );
        assert!(decodes(&json!({"spec": {"replicas": 3}})).is_ok());
    }

    #[test]
    fn a_uid_precondition_names_the_scale_subresource() {
        let d = ResourceDescriptor {
            group: "apps",
            plural: "deployments",
            ..SCALE_KIND
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

    #[test]
    fn the_table_is_upstreams_scale_printer() {
        let (scale, _) = scale_from(&DEPLOYMENT_SCALE, &deployment()).unwrap();
        let t: Value =
            serde_json::from_slice(&scale_table(&scale, IncludeObject::Metadata, 42)).unwrap();
        let names: Vec<_> = t["columnDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Name", "Desired", "Available", "Age"]);
        assert_eq!(
            t["rows"][0]["cells"].as_array().unwrap()[..3],
            [json!("web"), json!(3), json!(2)]
        );
        assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(t["rows"][0]["object"]["metadata"]["uid"], "u-1");
        assert_eq!(t["metadata"]["resourceVersion"], "42");
    }
}
