//! `with_impersonation`: upstream's `WithImpersonation` (endpoints/filters/impersonation.go).
//!
//! A request that carries `Impersonate-User` (and optionally `Impersonate-Uid`,
//! `Impersonate-Group`s and `Impersonate-Extra-<key>`s) acts as that user once the
//! authenticated user may `impersonate` each part: `users` (or `serviceaccounts` in the
//! account's namespace for `system:serviceaccount:<ns>:<name>`) and `groups` in the core
//! group, `uids` and `userextras/<key>` in `authentication.k8s.io`. The new `UserInfo`
//! replaces the old one and the `Impersonate-*` headers leave the request. Groups, a uid or
//! extras without a user are upstream's plain-text 500; a refused part is the 403 Status of
//! `responsewriters.Forbidden`. The audit annotation is not written (no audit here yet).

use std::fmt;
use std::future::Future;

use futures_util::future::Either;
use http::{HeaderMap, Request, Response};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_namespace_name};
use kas_auth::UserInfo;
use kas_auth::authorization::{Attributes, Decision, DynAuthorizer};
use kas_auth::user::{ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS_USER};
use kas_endpoints::Body;
use kas_endpoints::url::unescape_path;

use crate::authorization::forbidden;
use crate::filter::{Inner, Next, NextFuture};
use crate::support::{internal_error, request_uri};

/// Upstream's `authenticationv1.Impersonate*Header`s, as the `http` crate spells them.
const IMPERSONATE_USER: &str = "impersonate-user";
const IMPERSONATE_UID: &str = "impersonate-uid";
const IMPERSONATE_GROUP: &str = "impersonate-group";
const IMPERSONATE_EXTRA_PREFIX: &str = "impersonate-extra-";

const AUTHENTICATION_GROUP: &str = "authentication.k8s.io";
const AUTHENTICATION_VERSION: &str = "v1";
const SERVICE_ACCOUNT_USERNAME_PREFIX: &str = "system:serviceaccount:";
const ALL_SERVICE_ACCOUNTS_GROUP: &str = "system:serviceaccounts";

pub fn with_impersonation<S: Inner>(
    authorizer: DynAuthorizer,
    req: Request<Body>,
    next: Next<S>,
) -> Either<NextFuture<S>, impl Future<Output = Response<Body>>> {
    let requests = build_impersonation_requests(req.headers());
    if matches!(&requests, Ok(r) if r.is_empty()) {
        return Either::Left(next.run(req));
    }
    Either::Right(async move {
        let requests = match requests {
            Ok(requests) => requests,
            Err(err) => {
                tracing::debug!("{err}");
                return internal_error(&request_uri(&req), &err);
            }
        };
        let uri = request_uri(&req);
        let Some(requestor) = req.extensions().get::<UserInfo>().cloned() else {
            return internal_error(&uri, "no user found for request");
        };
        // Groups given are the authority; without them a service account gets its own.
        let groups_specified = req.headers().contains_key(IMPERSONATE_GROUP);
        match impersonate(&authorizer, &requestor, groups_specified, requests).await {
            Ok(user) => next.run(impersonated(req, &requestor, user)).await,
            Err(attrs_and_reason) => {
                let (attrs, reason) = *attrs_and_reason;
                tracing::debug!(uri, reason, "Forbidden");
                forbidden(&attrs, &reason)
            }
        }
    })
}

/// One thing the request asks to act as: upstream's `ObjectReference`s of
/// `buildImpersonationRequests`.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Impersonation {
    ServiceAccount { namespace: String, name: String },
    User(String),
    Group(String),
    UserExtra { key: String, value: String },
    Uid(String),
}

/// "requested [...] without impersonating a user", the requests as Go's `%v` prints them.
#[derive(Debug)]
struct WithoutUser(Vec<Impersonation>);

impl fmt::Display for WithoutUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let refs: Vec<String> = self.0.iter().map(Impersonation::go_value).collect();
        write!(
            f,
            "requested [{}] without impersonating a user",
            refs.join(" ")
        )
    }
}

impl Impersonation {
    /// The `ObjectReference` as Go's `%v` prints it: its seven fields (kind, namespace,
    /// name, uid, apiVersion, resourceVersion, fieldPath) between braces.
    fn go_value(&self) -> String {
        let api_version = format!("{AUTHENTICATION_GROUP}/{AUTHENTICATION_VERSION}");
        let (kind, namespace, name, api_version, field_path) = match self {
            Impersonation::ServiceAccount { namespace, name } => {
                ("ServiceAccount", namespace.as_str(), name.as_str(), "", "")
            }
            Impersonation::User(name) => ("User", "", name.as_str(), "", ""),
            Impersonation::Group(name) => ("Group", "", name.as_str(), "", ""),
            Impersonation::UserExtra { key, value } => (
                "UserExtra",
                "",
                value.as_str(),
                api_version.as_str(),
                key.as_str(),
            ),
            Impersonation::Uid(uid) => ("UID", "", uid.as_str(), api_version.as_str(), ""),
        };
        format!("{{{kind} {namespace} {name}  {api_version}  {field_path}}}")
    }
}

/// Upstream's `buildImpersonationRequests`: the user first, then the groups, the extras (a
/// request per value) and the uid. Without a user, any of the others is an error.
fn build_impersonation_requests(headers: &HeaderMap) -> Result<Vec<Impersonation>, WithoutUser> {
    let mut requests = Vec::new();
    let user = first_value(headers, IMPERSONATE_USER);
    let has_user = !user.is_empty();
    if has_user {
        requests.push(match split_service_account_username(&user) {
            Some((namespace, name)) => Impersonation::ServiceAccount { namespace, name },
            None => Impersonation::User(user),
        });
    }
    let groups: Vec<_> = headers.get_all(IMPERSONATE_GROUP).iter().collect();
    let has_groups = !groups.is_empty();
    requests.extend(groups.into_iter().map(|v| Impersonation::Group(lossy(v))));
    let mut has_extra = false;
    for name in headers.keys() {
        let Some(encoded) = name.as_str().strip_prefix(IMPERSONATE_EXTRA_PREFIX) else {
            continue;
        };
        has_extra = true;
        // Header names are lowercase already, as upstream lowercases the key before decoding.
        let key = unescape_path(encoded).unwrap_or_else(|_| encoded.to_owned());
        for value in headers.get_all(name) {
            requests.push(Impersonation::UserExtra {
                key: key.clone(),
                value: lossy(value),
            });
        }
    }
    let uid = first_value(headers, IMPERSONATE_UID);
    let has_uid = !uid.is_empty();
    if has_uid {
        requests.push(Impersonation::Uid(uid));
    }
    if (has_groups || has_extra || has_uid) && !has_user {
        return Err(WithoutUser(requests));
    }
    Ok(requests)
}

/// Go's `Header.Get`: the first value, `""` when there is none.
fn first_value(headers: &HeaderMap, name: &str) -> String {
    headers.get(name).map(lossy).unwrap_or_default()
}

/// A header value as Go's string of its bytes (here: bytes that are not UTF-8 as U+FFFD).
fn lossy(value: &http::HeaderValue) -> String {
    String::from_utf8_lossy(value.as_bytes()).into_owned()
}

/// Upstream's `serviceaccount.SplitUsername`: `system:serviceaccount:<ns>:<name>` with a
/// valid namespace and service account name.
fn split_service_account_username(username: &str) -> Option<(String, String)> {
    let rest = username.strip_prefix(SERVICE_ACCOUNT_USERNAME_PREFIX)?;
    let (namespace, name) = rest.split_once(':')?;
    if name.contains(':')
        || !validate_namespace_name(namespace, false).is_empty()
        || !name_is_dns_subdomain(name, false).is_empty()
    {
        return None;
    }
    Some((namespace.to_owned(), name.to_owned()))
}

/// Checks each request with the authorizer as the authenticated user and builds the user
/// to act as; on refusal, the attributes refused and the reason.
async fn impersonate(
    authorizer: &DynAuthorizer,
    requestor: &UserInfo,
    groups_specified: bool,
    requests: Vec<Impersonation>,
) -> Result<UserInfo, Box<(Attributes, String)>> {
    let mut user = UserInfo::default();
    for request in requests {
        let attrs = acting_as(requestor, &request);
        match request {
            Impersonation::ServiceAccount { namespace, name } => {
                user.name = format!("{SERVICE_ACCOUNT_USERNAME_PREFIX}{namespace}:{name}");
                if !groups_specified {
                    user.groups = vec![
                        ALL_SERVICE_ACCOUNTS_GROUP.to_owned(),
                        format!("{ALL_SERVICE_ACCOUNTS_GROUP}:{namespace}"),
                    ];
                }
            }
            Impersonation::User(name) => user.name = name,
            Impersonation::Group(group) => user.groups.push(group),
            Impersonation::UserExtra { key, value } => {
                user.extra.entry(key).or_default().push(value);
            }
            Impersonation::Uid(uid) => user.uid = uid,
        }
        // An authorizer error is a 403 as well, with no reason, as upstream.
        let (decision, reason) = match authorizer.authorize(&attrs).await {
            Ok(answer) => answer,
            Err(err) => {
                tracing::debug!(error = %err, "impersonation check failed");
                (Decision::NoOpinion, String::new())
            }
        };
        if decision != Decision::Allow {
            return Err(Box::new((attrs, reason)));
        }
    }
    add_virtual_group(&mut user);
    Ok(user)
}

/// Upstream's `actingAsAttributes` for one request.
fn acting_as(requestor: &UserInfo, request: &Impersonation) -> Attributes {
    let mut attrs = Attributes {
        user: requestor.clone(),
        verb: "impersonate".to_owned(),
        is_resource_request: true,
        ..Attributes::default()
    };
    let (resource, name) = match request {
        Impersonation::ServiceAccount { namespace, name } => {
            attrs.namespace = namespace.clone();
            ("serviceaccounts", name)
        }
        Impersonation::User(name) => ("users", name),
        Impersonation::Group(name) => ("groups", name),
        Impersonation::UserExtra { key, value } => {
            attrs.subresource = key.clone();
            ("userextras", value)
        }
        Impersonation::Uid(uid) => ("uids", uid),
    };
    if matches!(
        request,
        Impersonation::UserExtra { .. } | Impersonation::Uid(_)
    ) {
        attrs.api_group = AUTHENTICATION_GROUP.to_owned();
        attrs.api_version = AUTHENTICATION_VERSION.to_owned();
    }
    attrs.resource = resource.to_owned();
    attrs.name = name.clone();
    attrs
}

/// `system:authenticated` for anyone but `system:anonymous`, unless either virtual group
/// was asked for; `system:unauthenticated` for `system:anonymous`, unless asked for.
fn add_virtual_group(user: &mut UserInfo) {
    let has = |g: &str| user.groups.iter().any(|x| x == g);
    if user.name != ANONYMOUS_USER {
        if !has(ALL_AUTHENTICATED) && !has(ALL_UNAUTHENTICATED) {
            user.groups.push(ALL_AUTHENTICATED.to_owned());
        }
    } else if !has(ALL_UNAUTHENTICATED) {
        user.groups.push(ALL_UNAUTHENTICATED.to_owned());
    }
}

/// The request as it travels on: the new user in, the `Impersonate-*` headers out.
fn impersonated(mut req: Request<Body>, old: &UserInfo, user: UserInfo) -> Request<Body> {
    tracing::debug!(
        "{} is impersonating {}",
        user_string(old),
        user_string(&user)
    );
    let headers = req.headers_mut();
    headers.remove(IMPERSONATE_USER);
    headers.remove(IMPERSONATE_GROUP);
    headers.remove(IMPERSONATE_UID);
    let extras: Vec<_> = headers
        .keys()
        .filter(|k| k.as_str().starts_with(IMPERSONATE_EXTRA_PREFIX))
        .cloned()
        .collect();
    for name in extras {
        headers.remove(name);
    }
    if let Some(ctx) = crate::audit::context(&req) {
        ctx.log_impersonated_user(&user);
    }
    req.extensions_mut().insert(user);
    req
}

/// Upstream's `userString`, for the log line.
fn user_string(user: &UserInfo) -> String {
    let name = if user.name.is_empty() {
        "<empty>"
    } else {
        &user.name
    };
    if user.groups.is_empty() {
        return name.to_owned();
    }
    format!("{name}[{}]", user.groups.join(","))
}

#[cfg(test)]
mod tests;
