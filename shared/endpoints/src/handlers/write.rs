//! CREATE (POST), UPDATE (PUT) and PATCH.

use crate::Body;
use crate::handlers::RequestScope;
use crate::negotiation::{MediaTypeOptions, PatchType};
use crate::responsewriters::negotiated;
use http::{HeaderMap, Response, StatusCode};
use kas_apimachinery::Status;
use serde_json::Value;

use crate::handlers::{decode, options};
use crate::responsewriters::encode;
use crate::responsewriters::response;
use crate::responsewriters::table;
use kas_registry::error::Result;
use kas_registry::rest::options::WriteOptions;
use kas_registry::store::{Store, Written};

/// The written object in the negotiated media type (upstream negotiates write answers as
/// read answers, a Table of the one object included; `query` holds its options).
fn written(
    store: &Store,
    w: &Written,
    code: StatusCode,
    out: &MediaTypeOptions,
    query: Option<&str>,
) -> Result<Response<Body>> {
    if as_table(out) {
        let (value, meta) = match w {
            Written::Stored(obj) => (obj.value()?, encode::list_meta(obj.resource_version)),
            Written::DryRun(v) => {
                let rv = v.pointer("/metadata/resourceVersion").cloned();
                let mut meta = serde_json::Map::new();
                meta.extend(rv.map(|rv| ("resourceVersion".to_owned(), rv)));
                (v.clone(), meta)
            }
        };
        return table_answer(store, &value, meta, code, out, query);
    }
    let bytes = match w {
        Written::Stored(obj) => encode::object(store.descriptor, obj),
        Written::DryRun(v) => encode::value(store.descriptor, v),
    };
    negotiated::render_object(store.descriptor, out, code, bytes)
}

/// Whether the answer is asked for as a Table.
pub(crate) fn as_table(out: &MediaTypeOptions) -> bool {
    out.convert.as_ref().is_some_and(|gvk| gvk.kind == "Table")
}

/// One object's answer as a Table (upstream's `transformResponseObject` converts write
/// and delete answers as it converts reads), `meta` its resourceVersion.
pub(crate) fn table_answer(
    store: &Store,
    value: &Value,
    meta: serde_json::Map<String, Value>,
    code: StatusCode,
    out: &MediaTypeOptions,
    query: Option<&str>,
) -> Result<Response<Body>> {
    let include = crate::handlers::options::include_object(query)?;
    let bytes = table::table(
        store,
        std::iter::once(value),
        Value::Object(meta),
        include,
        true,
    );
    Ok(negotiated::render(out, code, bytes))
}

/// Who writes, for `metadata.managedFields`: `fieldManager`, else the User-Agent's prefix.
pub(crate) fn with_manager(mut opts: WriteOptions, headers: &HeaderMap) -> WriteOptions {
    let user_agent = headers
        .get(http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok());
    opts.manager =
        kas_apimachinery::managed_fields::manager(opts.field_manager.as_deref(), user_agent);
    opts
}

/// A create's or update's answer type, body and options, in upstream's order: an answer
/// the client cannot read is a 406 before anything else, then the body's type (415) and
/// size (413), then the options (400, 422).
pub(crate) async fn prepare(
    scope: &RequestScope<'_>,
    body: Body,
    parse: fn(Option<&str>) -> Result<WriteOptions>,
) -> Result<(MediaTypeOptions, decode::Input, WriteOptions)> {
    let out = negotiated::negotiate_media(scope.headers, scope.query, scope.table_convertor())?;
    let input = decode::read_input(scope.headers, body).await?;
    let mut opts = with_manager(parse(scope.query)?, scope.headers);
    opts.user = scope.user.cloned();
    opts.audit = kas_registry::rest::options::AuditAnnotations(scope.audit.cloned());
    Ok((out, input, opts))
}

pub async fn create(scope: &RequestScope<'_>, body: Body) -> Result<Response<Body>> {
    let (store, info) = (scope.store(), scope.info);
    let (out, input, opts) = prepare(scope, body, options::create_options).await?;
    let decoded = decode::decode_for(store, &input, &opts)?;
    scope.audit_request_object(store.descriptor, &decoded.value);
    let w = store.create(&info.namespace, decoded.value, &opts).await?;
    let mut resp = if store.strategy.create_answers_status() {
        created_status(&out)
    } else {
        written(store, &w, StatusCode::CREATED, &out, scope.query)?
    };
    response::add_warnings(&mut resp, &decoded.warnings);
    response::add_warnings(&mut resp, &opts.warnings.take());
    Ok(resp)
}

/// POST of a create subresource (a pod's `binding`): the body, of the subresource's own
/// kind, decoded as a create's and handed to the store; upstream answers a `Status` of
/// success with the create's 201.
pub async fn create_subresource(scope: &RequestScope<'_>, body: Body) -> Result<Response<Body>> {
    let (store, info) = (scope.store(), scope.info);
    let kind = scope
        .subresource
        .and_then(|s| s.kind)
        .ok_or_else(|| not_supported(scope))?;
    let d = kas_registry::ResourceDescriptor {
        group: kind.group,
        version: kind.version,
        kind: kind.kind,
        schema: Some(kind.schema),
        ..*store.descriptor
    };
    let (out, input, opts) = prepare(scope, body, options::create_options).await?;
    let decoded = decode::decode(&d, &input, &opts)?;
    scope.audit_request_object(&d, &decoded.value);
    let mut sent = decoded.value;
    kas_registry::rest::object_meta::check_type(&mut sent, &d)?;
    kas_registry::rest::object_meta::ensure_namespace(
        &mut sent,
        store.descriptor,
        &info.namespace,
    )?;
    store
        .create_subresource(&info.namespace, &info.name, &info.subresource, &sent, &opts)
        .await?;
    let mut resp = created_status(&out);
    response::add_warnings(&mut resp, &decoded.warnings);
    response::add_warnings(&mut resp, &opts.warnings.take());
    Ok(resp)
}

/// The `Status` of success upstream's binding endpoints answer a create with.
fn created_status(out: &MediaTypeOptions) -> Response<Body> {
    let status = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    });
    negotiated::status(StatusCode::CREATED, &status, out)
}

pub async fn update(scope: &RequestScope<'_>, body: Body) -> Result<Response<Body>> {
    let (store, info) = (scope.store(), scope.info);
    let (out, input, opts) = prepare(scope, body, options::update_options).await?;
    let decoded = decode::decode_for(store, &input, &opts)?;
    scope.audit_request_object(store.descriptor, &decoded.value);
    let (w, created) = store
        .update(&info.namespace, &info.name, decoded.value, &opts)
        .await?;
    let code = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let mut resp = written(store, &w, code, &out, scope.query)?;
    response::add_warnings(&mut resp, &decoded.warnings);
    response::add_warnings(&mut resp, &opts.warnings.take());
    Ok(resp)
}

pub async fn patch(scope: &RequestScope<'_>, body: Body) -> Result<Response<Body>> {
    let (store, info, query, headers) = (scope.store(), scope.info, scope.query, scope.headers);
    // Upstream's order: the patch type (415), the answer type (406), the body (413), the
    // options (400, 422).
    let patch_type = decode::patch_type(headers, store.patch_schema().is_none())?;
    let applying = matches!(patch_type, PatchType::ApplyYaml | PatchType::ApplyCbor);
    let out = negotiated::negotiate_media(headers, query, scope.table_convertor())?;
    let patch = decode::read(body).await?;
    scope.audit_request_patch(&patch);
    let mut opts = with_manager(options::patch_options(query, applying)?, headers);
    opts.user = scope.user.cloned();
    opts.audit = kas_registry::rest::options::AuditAnnotations(scope.audit.cloned());
    if applying {
        opts.applying = true;
        let config = crate::handlers::apply::decode(&patch)?;
        crate::handlers::apply::check(store.descriptor, store.fields_schema(), &config)?;
        let warnings = crate::handlers::apply::strict(&patch, &opts)?;
        let (w, created) = if info.subresource.is_empty() {
            store
                .apply(&info.namespace, &info.name, config, &opts)
                .await?
        } else {
            let w = store
                .apply_subresource(
                    &info.namespace,
                    &info.name,
                    &info.subresource,
                    config,
                    &opts,
                )
                .await?;
            (w, false)
        };
        let code = if created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        let mut resp = written(store, &w, code, &out, query)?;
        response::add_warnings(&mut resp, &warnings);
        response::add_warnings(&mut resp, &opts.warnings.take());
        return Ok(resp);
    }
    // The patch may be applied several times (conflicts); the last run's warnings stand.
    let warnings = std::sync::Mutex::new(Vec::new());
    let apply = |current: &Value| -> Result<Value> {
        let patched = crate::handlers::patch::apply(store, patch_type, current, &patch)?;
        let (patched, found) = decode::check_fields_for(store, patched, &opts)?;
        *warnings.lock().unwrap_or_else(|e| e.into_inner()) = found;
        Ok(patched)
    };
    let w = if info.subresource.is_empty() {
        store
            .patch(&info.namespace, &info.name, &apply, &opts)
            .await?
    } else {
        store
            .patch_subresource(
                &info.namespace,
                &info.name,
                &info.subresource,
                &apply,
                &opts,
            )
            .await?
    };
    let mut resp = written(store, &w, StatusCode::OK, &out, query)?;
    response::add_warnings(&mut resp, &warnings.into_inner().unwrap_or_default());
    response::add_warnings(&mut resp, &opts.warnings.take());
    Ok(resp)
}

/// PUT of a subresource (`status`, a namespace's `finalize`).
pub async fn update_subresource(scope: &RequestScope<'_>, body: Body) -> Result<Response<Body>> {
    let (store, info) = (scope.store(), scope.info);
    let (out, input, opts) = prepare(scope, body, options::update_options).await?;
    let decoded = decode::decode_for(store, &input, &opts)?;
    scope.audit_request_object(store.descriptor, &decoded.value);
    let w = store
        .update_subresource(
            &info.namespace,
            &info.name,
            &info.subresource,
            decoded.value,
            &opts,
        )
        .await?;
    written(store, &w, StatusCode::OK, &out, scope.query)
}

/// Upstream's `NewMethodNotSupported` for a verb the route exists for but the resource
/// does not serve (`?watch=true` on a resource without watch).
pub(crate) fn not_supported(scope: &RequestScope<'_>) -> kas_registry::Error {
    let d = scope.store().descriptor;
    Status::method_not_supported(d.group, d.plural, &scope.info.verb).into()
}
