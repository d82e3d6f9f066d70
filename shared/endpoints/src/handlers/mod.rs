//! The verb handlers, after upstream's `pkg/endpoints/handlers`: get and list, watch,
//! create, update, patch (and server-side apply), delete and deletecollection, and the
//! generic subresources, each turning a request into store calls and an answer.

pub mod apply;
pub mod decode;
pub mod delete;
pub mod options;
pub mod patch;
pub mod read;
pub mod scale;
pub mod selection;
pub mod watch;
pub mod write;

use http::{Request, Response};
use kas_registry::Result;
use kas_registry::features::FeatureGates;

use crate::{Body, RequestInfo};

pub(crate) async fn serve(
    resource: &std::sync::Arc<crate::installer::Resource>,
    info: &RequestInfo,
    features: &FeatureGates,
    req: Request<Body>,
) -> Result<Response<Body>> {
    use kas_registry::Verb;
    let store = &resource.store;
    let (parts, body) = req.into_parts();
    let query = parts.uri.query();
    let verb = match info.verb.as_str() {
        "get" => Verb::Get,
        "list" => Verb::List,
        "watch" => Verb::Watch,
        "create" => Verb::Create,
        "update" => Verb::Update,
        "patch" => Verb::Patch,
        "delete" => Verb::Delete,
        "deletecollection" => Verb::DeleteCollection,
        _ => return Err(write::not_supported(info, store)),
    };
    if info.subresource == "scale" && scale::serves(store.descriptor) {
        return scale::serve(store, info, verb, query, &parts.headers, body).await;
    }
    if !info.subresource.is_empty() {
        return match verb {
            Verb::Update => {
                write::update_subresource(store, info, query, &parts.headers, body).await
            }
            Verb::Get if info.subresource == "status" => {
                read::get(store, info, query, &parts.headers).await
            }
            Verb::Patch
                if info.subresource == "status"
                    && store
                        .descriptor
                        .subresources
                        .contains(&kas_registry::Subresource::Status) =>
            {
                write::patch(store, info, query, &parts.headers, body).await
            }
            _ => Err(write::not_supported(info, store)),
        };
    }
    if !store.descriptor.allows(verb) {
        return Err(write::not_supported(info, store));
    }
    match verb {
        Verb::Get => read::get(store, info, query, &parts.headers).await,
        Verb::List | Verb::Watch => {
            let opts = options::list_options(query, verb == Verb::Watch, features)?;
            if opts.watch {
                watch::watch(resource, info, &opts, query, &parts.headers).await
            } else {
                read::list(store, info, &opts, query, &parts.headers).await
            }
        }
        Verb::Create => write::create(store, info, query, &parts.headers, body).await,
        Verb::Update => write::update(store, info, query, &parts.headers, body).await,
        Verb::Patch => write::patch(store, info, query, &parts.headers, body).await,
        Verb::Delete => delete::delete(store, info, query, &parts.headers, body).await,
        Verb::DeleteCollection => {
            delete::delete_collection(store, info, query, &parts.headers, body).await
        }
    }
}
