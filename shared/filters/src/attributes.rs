//! Upstream's `GetAuthorizerAttributes` (endpoints/filters/authorization.go) over the
//! request's `RequestInfo` and `UserInfo`, lent rather than copied: the authorization and
//! audit filters read them, then give them back.

use http::Request;
use kas_auth::UserInfo;
use kas_auth::authorization::Attributes;
use kas_endpoints::{Body, RequestInfo};

/// Upstream's `GetAuthorizerAttributes`; `None` without a `RequestInfo`. The strings are
/// moved out of the request's `RequestInfo` and `UserInfo`, not copied (a dozen allocations
/// per request): [`give_back`] returns them before the request goes on.
pub(crate) fn lend_attributes(req: &mut Request<Body>) -> Option<Attributes> {
    let take = std::mem::take::<String>;
    let info = req.extensions_mut().get_mut::<RequestInfo>()?;
    let mut attrs = Attributes {
        user: UserInfo::default(),
        verb: take(&mut info.verb),
        is_resource_request: info.is_resource_request,
        path: take(&mut info.path),
        namespace: take(&mut info.namespace),
        api_group: take(&mut info.api_group),
        api_version: take(&mut info.api_version),
        resource: take(&mut info.resource),
        subresource: take(&mut info.subresource),
        name: take(&mut info.name),
        // RequestInfo holds them for list, watch and deletecollection only, as upstream.
        field_selector: take(&mut info.field_selector),
        label_selector: take(&mut info.label_selector),
    };
    if let Some(user) = req.extensions_mut().get_mut::<UserInfo>() {
        attrs.user = std::mem::take(user);
    }
    Some(attrs)
}

/// Puts back what [`lend_attributes`] took.
pub(crate) fn give_back(req: &mut Request<Body>, attrs: Attributes) {
    if let Some(user) = req.extensions_mut().get_mut::<UserInfo>() {
        *user = attrs.user;
    }
    if let Some(info) = req.extensions_mut().get_mut::<RequestInfo>() {
        info.verb = attrs.verb;
        info.path = attrs.path;
        info.namespace = attrs.namespace;
        info.api_group = attrs.api_group;
        info.api_version = attrs.api_version;
        info.resource = attrs.resource;
        info.subresource = attrs.subresource;
        info.name = attrs.name;
        info.field_selector = attrs.field_selector;
        info.label_selector = attrs.label_selector;
    }
}
