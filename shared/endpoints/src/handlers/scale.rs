//! The `scale` subresource's HTTP side: the Scale a client sends (decoded and checked as
//! upstream's update handler decodes it) or the patch it applies to the current Scale, the
//! answer in the negotiated form, and upstream's Scale printer for Tables. The Scale view
//! itself and its write-back are the store's (`kas_registry::store::scale`, upstream's
//! `ScaleREST`).

use crate::responsewriters::negotiated;
use std::sync::Mutex;

use crate::negotiation::MediaTypeOptions;
use crate::{Body, RequestInfo};
use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use kas_api::autoscaling::v1::{SCALE, SCALE_SPEC, SCALE_STATUS};
use kas_apimachinery::patch::PatchSchema;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::{Status, protobuf};
use serde_json::{Value, json};

use crate::handlers::RequestScope;
use crate::handlers::decode;
use crate::handlers::write;
use crate::installer::actions::Action;
use crate::responsewriters::encode;
use crate::responsewriters::response;
use crate::responsewriters::table::{self, IncludeObject};
use kas_registry::descriptor::ScaleSpec;
use kas_registry::error::{Error, Result};
use kas_registry::rest::object_meta;
use kas_registry::store::Store;
use kas_registry::{ResourceDescriptor, Scope};

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
};

/// GET, PUT and PATCH of `<name>/scale` (the routes of the subresource table's `scale`
/// entry, upstream's `ScaleREST`).
pub(crate) async fn serve(
    scope: &RequestScope<'_>,
    spec: &ScaleSpec,
    action: Action,
    body: Body,
) -> Result<Response<Body>> {
    let (store, info, query, headers) = (scope.store(), scope.info, scope.query, scope.headers);
    match action {
        Action::Get => get(store, spec, info, query, headers).await,
        Action::Put => update(scope, spec, body).await,
        Action::Patch => patch(scope, spec, body).await,
        _ => Err(write::not_supported(scope)),
    }
}

async fn get(
    store: &Store,
    spec: &ScaleSpec,
    info: &RequestInfo,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Result<Response<Body>> {
    let (out, as_table) = negotiated::negotiate(headers, query)?;
    let rv = crate::handlers::options::get_options(query);
    let (scale, resource_version) = store
        .get_scale(spec, &info.namespace, &info.name, rv)
        .await?;
    if as_table {
        let bytes = scale_table(
            &scale,
            crate::handlers::options::include_object(query)?,
            resource_version,
        );
        return Ok(negotiated::render(&out, StatusCode::OK, bytes));
    }
    render(&out, &scale)
}

async fn update(scope: &RequestScope<'_>, spec: &ScaleSpec, body: Body) -> Result<Response<Body>> {
    let (store, info, query, headers) = (scope.store(), scope.info, scope.query, scope.headers);
    let (out, _) = negotiated::negotiate(headers, query)?;
    let input = decode::read_input(headers, body).await?;
    let opts = write::with_manager(crate::handlers::options::update_options(query)?, headers);
    let decoded = decode::decode(&SCALE_KIND, &input, &opts)?;
    scope.audit_request_object(&SCALE_KIND, &decoded.value);
    let mut sent = decoded.value;
    object_meta::check_type(&mut sent, &SCALE_KIND)?;
    decodes(&sent).map_err(|e| {
        let message = format!("Scale in version \"v1\" cannot be handled as a Scale: {e}");
        Error::from(Status::bad_request(&message))
    })?;
    object_meta::ensure_namespace(&mut sent, store.descriptor, &info.namespace)?;
    check_name(&sent, &info.name)?;
    let scale = store
        .update_scale(spec, &info.namespace, &info.name, &opts, &|_| {
            Ok(sent.clone())
        })
        .await?;
    let mut resp = render(&out, &scale)?;
    response::add_warnings(&mut resp, &decoded.warnings);
    Ok(resp)
}

async fn patch(scope: &RequestScope<'_>, spec: &ScaleSpec, body: Body) -> Result<Response<Body>> {
    let (store, info, query, headers) = (scope.store(), scope.info, scope.query, scope.headers);
    // Strategic merge is served where the parent serves it (built-ins, not custom
    // resources), with the Scale's own patch metadata.
    let schema = store.patch_schema().map(|_| &SCALE);
    let patch_type = decode::patch_type(headers, schema.is_none())?;
    let (out, _) = negotiated::negotiate(headers, query)?;
    let patch = decode::read(body).await?;
    scope.audit_request_patch(&patch);
    let applying = matches!(
        patch_type,
        crate::negotiation::PatchType::ApplyYaml | crate::negotiation::PatchType::ApplyCbor
    );
    let opts = write::with_manager(
        crate::handlers::options::patch_options(query, applying)?,
        headers,
    );
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
    let scale = store
        .update_scale(spec, &info.namespace, &info.name, &opts, &change)
        .await?;
    let mut resp = render(&out, &scale)?;
    response::add_warnings(&mut resp, &warnings.into_inner().unwrap_or_default());
    Ok(resp)
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

fn render(out: &MediaTypeOptions, scale: &Value) -> Result<Response<Body>> {
    negotiated::render_object(
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
        json!(kas_registry::store::scale::replicas(scale)),
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
    fn the_table_is_upstreams_scale_printer() {
        let scale = json!({
            "kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": "web", "namespace": "prod", "uid": "u-1",
                "creationTimestamp": "2024-01-02T03:04:05Z"},
            "spec": {"replicas": 3},
            "status": {"replicas": 2, "selector": "app=web"},
        });
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
