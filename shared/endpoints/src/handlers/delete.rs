//! DELETE of one object and DELETECOLLECTION.

use crate::Body;
use crate::handlers::RequestScope;
use crate::negotiation::MediaTypeOptions;
use crate::responsewriters::negotiated;
use http::{HeaderMap, Response, StatusCode};
use kas_apimachinery::Status;
use kas_storage::Preconditions;
use serde_json::{Value, json};

use crate::handlers::decode;
use crate::handlers::selection;
use crate::responsewriters::encode;
use kas_registry::error::Result;
use kas_registry::rest::options::WriteOptions;
use kas_registry::store::{Deleted, Store};

/// `DeleteOptions`: from the body when there is one, else from the query.
async fn delete_options(
    query: Option<&str>,
    headers: &HeaderMap,
    body: Body,
) -> Result<(Preconditions, WriteOptions)> {
    let bytes = decode::read(body).await?;
    let body = if bytes.is_empty() {
        None
    } else {
        Some(decode::decode_options(headers, &bytes)?)
    };
    crate::handlers::options::delete_options(query, body.as_ref())
}

fn success(
    store: &Store,
    name: &str,
    uid: Option<&str>,
    code: StatusCode,
    out: &MediaTypeOptions,
) -> Response<Body> {
    let mut details = json!({"name": name, "kind": store.descriptor.plural});
    if !store.descriptor.group.is_empty() {
        details["group"] = json!(store.descriptor.group);
    }
    if let Some(uid) = uid {
        details["uid"] = json!(uid);
    }
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    });
    negotiated::status(code, &status, out)
}

pub async fn delete(scope: &RequestScope<'_>, body: Body) -> Result<Response<Body>> {
    let (store, info, query, headers) = (scope.store(), scope.info, scope.query, scope.headers);
    let (out, _) = negotiated::negotiate(headers, query)?;
    let (pre, mut opts) = delete_options(query, headers, body).await?;
    opts.user = scope.user.cloned();
    opts.audit = kas_registry::rest::options::AuditAnnotations(scope.audit.cloned());
    let deleted = store
        .delete(&info.namespace, &info.name, &pre, &opts)
        .await?;
    // Upstream answers 202 for an object left in place when the client asked for
    // cascading deletion the deprecated way (`orphanDependents: false`).
    let code = if !deleted.deleted() && opts.orphan_dependents == Some(false) {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    let mut resp = answer(scope, &out, deleted, code)?;
    // The strategy's and admission's warnings (a Job's default policy).
    crate::responsewriters::response::add_warnings(&mut resp, &opts.warnings.take());
    Ok(resp)
}

/// What a delete answers, as upstream's `finalizeDelete` and delete handler do: the
/// object's last state or a `Status` naming it when it is gone, the object otherwise.
fn answer(
    scope: &RequestScope<'_>,
    out: &MediaTypeOptions,
    deleted: Deleted,
    code: StatusCode,
) -> Result<Response<Body>> {
    let (store, info, query) = (scope.store(), scope.info, scope.query);
    let obj = match deleted {
        Deleted::Gone(obj) | Deleted::Unchanged(obj) if !store.strategy.return_deleted_object() => {
            let value = obj.value()?;
            let uid = value.pointer("/metadata/uid").and_then(Value::as_str);
            return Ok(success(store, &info.name, uid, code, out));
        }
        Deleted::Gone(obj)
        | Deleted::Pending(obj)
        | Deleted::Unchanged(obj)
        | Deleted::DryRun(obj) => obj,
    };
    if crate::handlers::write::as_table(out) {
        let meta = encode::list_meta(obj.resource_version);
        return crate::handlers::write::table_answer(store, &obj.value()?, meta, code, out, query);
    }
    negotiated::render_object(
        store.descriptor,
        out,
        code,
        encode::object(store.descriptor, &obj),
    )
}

/// DELETECOLLECTION: every object the options select is deleted (see
/// `Store::delete_collection`), and the answer is the list as it was listed, as
/// upstream's `DeleteCollection` answers.
pub async fn delete_collection(scope: &RequestScope<'_>, body: Body) -> Result<Response<Body>> {
    let (store, info, query, headers) = (scope.store(), scope.info, scope.query, scope.headers);
    // Not a watch: no feature gate applies.
    let list_opts = crate::handlers::options::list_options(query, false, &Default::default())?;
    if list_opts.watch {
        return Err(Status::bad_request("watch is not supported for deletecollection").into());
    }
    let (out, _) = negotiated::negotiate(headers, query)?;
    let (pre, mut opts) = delete_options(query, headers, body).await?;
    opts.user = scope.user.cloned();
    opts.audit = kas_registry::rest::options::AuditAnnotations(scope.audit.cloned());
    let predicate = selection::predicate(store, &list_opts)?;
    let listed = store
        .delete_collection(&info.namespace, &list_opts, predicate, &pre, &opts)
        .await?;
    let mut resp = negotiated::render_list(store.descriptor, &out, listed)?;
    crate::responsewriters::response::add_warnings(&mut resp, &opts.warnings.take());
    Ok(resp)
}
