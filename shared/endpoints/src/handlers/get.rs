//! GET of one object and LIST of a collection (upstream's `GetResource` and
//! `ListResource`), answered in the negotiated form (`responsewriters::negotiated`).

use crate::Body;
use crate::handlers::RequestScope;
use crate::negotiation::MediaType;
use crate::responsewriters::negotiated;
use http::{Response, StatusCode};
use serde_json::{Value, json};

use crate::handlers::selection;
use crate::responsewriters::encode;
use crate::responsewriters::partial::Partial;
use crate::responsewriters::protobuf as proto;
use crate::responsewriters::table::{self};
use kas_registry::error::Result;
use kas_registry::rest::options::ListOptions;

pub async fn get(scope: &RequestScope<'_>) -> Result<Response<Body>> {
    let (store, info, query, headers) = (scope.store(), scope.info, scope.query, scope.headers);
    let (opts, as_table) = negotiated::negotiate(headers, query)?;
    let rv = crate::handlers::options::get_options(query);
    let obj = store.get(&info.namespace, &info.name, rv).await?;
    if let Some(p) = Partial::from_options(&opts) {
        let bytes = p.object(store.descriptor, opts.accepted, &obj.json)?;
        return Ok(negotiated::encoded(&opts, StatusCode::OK, bytes));
    }
    let bytes = if as_table {
        let meta = Value::Object(encode::list_meta(obj.resource_version));
        table::table(
            store,
            std::iter::once(&obj.value()?),
            meta,
            crate::handlers::options::include_object(query)?,
            true,
        )
    } else if opts.accepted == MediaType::Protobuf {
        return Ok(negotiated::protobuf(
            StatusCode::OK,
            proto::stored(store.descriptor, &obj)?,
        ));
    } else {
        encode::object(store.descriptor, &obj)
    };
    Ok(negotiated::render(&opts, StatusCode::OK, bytes))
}

pub async fn list(scope: &RequestScope<'_>, list_opts: &ListOptions) -> Result<Response<Body>> {
    let (store, info, query, headers) = (scope.store(), scope.info, scope.query, scope.headers);
    let (opts, as_table) = negotiated::negotiate(headers, query)?;
    let predicate = selection::predicate(store, list_opts)?;
    let result = store.list(&info.namespace, list_opts, predicate).await?;
    if !as_table {
        return negotiated::render_list(store.descriptor, &opts, result);
    }
    let mut meta = Value::Object(encode::list_meta(result.resource_version));
    if let Some(c) = &result.continue_token {
        meta["continue"] = json!(c);
    }
    if let Some(n) = result.remaining_item_count {
        meta["remainingItemCount"] = json!(n);
    }
    let values = result
        .items
        .iter()
        .map(|o| o.value())
        .collect::<Result<Vec<_>, _>>()?;
    let bytes = table::table(
        store,
        values.iter(),
        meta,
        crate::handlers::options::include_object(query)?,
        true,
    );
    Ok(negotiated::render(&opts, StatusCode::OK, bytes))
}
