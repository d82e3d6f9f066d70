//! `with_authorization`: upstream's `WithAuthorization` (endpoints/filters/authorization.go)
//! with `responsewriters.Forbidden` (endpoints/handlers/responsewriters/errors.go).
//!
//! Attributes come from the `RequestInfo` and `UserInfo` extensions. Without a `RequestInfo`
//! the chain is wrong: upstream's plain-text 500. Without a `UserInfo` the user is empty, as
//! upstream (a nil user). Allow passes on; an authorizer error is upstream's plain-text 500;
//! anything else is the 403 Status whose message names the user, verb and resource.

use std::future::Future;

use http::{Request, Response};
use kas_apimachinery::Status;
use kas_auth::authorization::{Attributes, Decision, DynAuthorizer};
use kas_endpoints::{Body, write_status};

use crate::attributes::{give_back, lend_attributes};
use crate::filter::{Inner, Next};
use crate::support::{
    NOSNIFF, X_CONTENT_TYPE_OPTIONS, go_quote, internal_error, request_uri, sanitize,
};

/// Upstream's audit annotations of the decision.
pub const DECISION_ANNOTATION: &str = "authorization.k8s.io/decision";
pub const REASON_ANNOTATION: &str = "authorization.k8s.io/reason";
const DECISION_ALLOW: &str = "allow";
const DECISION_FORBID: &str = "forbid";
const REASON_ERROR: &str = "internal error";

pub fn with_authorization<S: Inner>(
    authorizer: DynAuthorizer,
    mut req: Request<Body>,
    next: Next<S>,
) -> impl Future<Output = Response<Body>> {
    let attrs = lend_attributes(&mut req);
    async move {
        let Some(attrs) = attrs else {
            let uri = request_uri(&req);
            let err = "no RequestInfo found in the context";
            tracing::error!(uri, "{err}");
            return internal_error(&uri, err);
        };
        // The entry role's decision stands in a handed-in event.
        let audit = crate::audit::context(&req)
            .filter(|c| !c.handed_in())
            .cloned();
        let annotate = |decision: Option<&str>, reason: &str| {
            if let Some(ctx) = &audit {
                if let Some(decision) = decision {
                    ctx.add_annotation(DECISION_ANNOTATION, decision);
                }
                ctx.add_annotation(REASON_ANNOTATION, reason);
            }
        };
        match authorizer.authorize(&attrs).await {
            // Upstream checks the decision before the error; our authorizers return one or
            // the other.
            Ok((Decision::Allow, reason)) => {
                annotate(Some(DECISION_ALLOW), &reason);
                give_back(&mut req, attrs);
                next.run(req).await
            }
            Ok((_, reason)) => {
                let uri = request_uri(&req);
                tracing::debug!(uri, reason, "Forbidden");
                annotate(Some(DECISION_FORBID), &reason);
                forbidden(&attrs, &reason)
            }
            Err(err) => {
                let uri = request_uri(&req);
                tracing::error!(uri, error = %err, "authorization failed");
                annotate(None, REASON_ERROR);
                internal_error(&uri, &err.to_string())
            }
        }
    }
}

/// Upstream's `responsewriters.Forbidden`.
pub(crate) fn forbidden(attrs: &Attributes, reason: &str) -> Response<Body> {
    let msg = sanitize(&forbidden_message(attrs));
    let err = if reason.is_empty() {
        msg
    } else {
        format!("{msg}: {reason}")
    };
    let mut resp = write_status(&Status::forbidden(
        &attrs.api_group,
        &attrs.resource,
        &attrs.name,
        &err,
    ));
    resp.headers_mut().insert(X_CONTENT_TYPE_OPTIONS, NOSNIFF);
    resp
}

/// Upstream's `forbiddenMessage`.
fn forbidden_message(attrs: &Attributes) -> String {
    let user = go_quote(&attrs.user.name);
    if !attrs.is_resource_request {
        return format!(
            "User {user} cannot {} path {}",
            attrs.verb,
            go_quote(&attrs.path)
        );
    }
    let mut resource = attrs.resource.clone();
    if !attrs.subresource.is_empty() {
        resource = format!("{resource}/{}", attrs.subresource);
    }
    let (verb, resource, group) = (&attrs.verb, go_quote(&resource), go_quote(&attrs.api_group));
    if !attrs.namespace.is_empty() {
        let ns = go_quote(&attrs.namespace);
        return format!(
            "User {user} cannot {verb} resource {resource} in API group {group} in the namespace {ns}"
        );
    }
    format!(
        "User {user} cannot {verb} resource {resource} in API group {group} at the cluster scope"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::from_fn_with_state;
    use crate::support::test_util::body_string;
    use futures_util::FutureExt;
    use futures_util::future::BoxFuture;
    use kas_auth::UserInfo;
    use kas_auth::authorization::Authorizer;
    use kas_endpoints::{RequestInfo, body};
    use std::convert::Infallible;
    use std::sync::{Arc, Mutex};
    use tower::{Layer, ServiceExt};

    /// Allows bob to get; denies others with `reason`; errors for user "error".
    struct Policy {
        reason: String,
        seen: Mutex<Option<Attributes>>,
    }

    impl Authorizer for Policy {
        fn authorize<'a>(
            &'a self,
            attrs: &'a Attributes,
        ) -> BoxFuture<'a, kas_auth::Result<(Decision, String)>> {
            *self.seen.lock().unwrap() = Some(attrs.clone());
            async move {
                if attrs.user.name == "error" {
                    return Err(kas_auth::Error::InvalidCredentials("webhook down".into()));
                }
                if attrs.user.name == "bob" && attrs.verb == "get" {
                    return Ok((Decision::Allow, String::new()));
                }
                Ok((Decision::NoOpinion, self.reason.clone()))
            }
            .boxed()
        }
    }

    fn svc(reason: &str) -> (impl Inner, Arc<Policy>) {
        let policy = Arc::new(Policy {
            reason: reason.into(),
            seen: Mutex::new(None),
        });
        let inner = tower::service_fn(|_req: Request<Body>| async {
            Ok::<_, Infallible>(Response::new(body::full("allowed")))
        });
        let filter = from_fn_with_state(policy.clone() as DynAuthorizer, with_authorization);
        (filter.layer(inner), policy)
    }

    fn resource(
        verb: &str,
        namespace: &str,
        group: &str,
        resource: &str,
        sub: &str,
        name: &str,
    ) -> RequestInfo {
        RequestInfo {
            is_resource_request: true,
            path: "/p".into(),
            verb: verb.into(),
            api_group: group.into(),
            api_version: "v1".into(),
            namespace: namespace.into(),
            resource: resource.into(),
            subresource: sub.into(),
            name: name.into(),
            ..Default::default()
        }
    }

    fn request(info: Option<RequestInfo>, user: Option<&str>) -> Request<Body> {
        let mut req = Request::get("/p?a=1&b=2").body(body::empty()).unwrap();
        if let Some(info) = info {
            req.extensions_mut().insert(info);
        }
        if let Some(name) = user {
            req.extensions_mut().insert(UserInfo {
                name: name.into(),
                ..Default::default()
            });
        }
        req
    }

    fn attrs(info: RequestInfo, user: &str) -> Attributes {
        lend_attributes(&mut request(Some(info), Some(user))).unwrap()
    }

    #[test]
    fn forbidden_messages_match_upstream() {
        let m = forbidden_message(&attrs(
            resource("list", "default", "", "configmaps", "", ""),
            "bob",
        ));
        assert_eq!(
            m,
            r#"User "bob" cannot list resource "configmaps" in API group "" in the namespace "default""#
        );
        let m = forbidden_message(&attrs(
            resource("get", "", "apps", "deployments", "scale", "d"),
            "bob",
        ));
        assert_eq!(
            m,
            r#"User "bob" cannot get resource "deployments/scale" in API group "apps" at the cluster scope"#
        );
        let info = RequestInfo {
            verb: "get".into(),
            path: "/foo".into(),
            ..Default::default()
        };
        assert_eq!(
            forbidden_message(&attrs(info, "bob")),
            r#"User "bob" cannot get path "/foo""#
        );
    }

    #[tokio::test]
    async fn allow_passes_with_attributes_from_extensions() {
        let (svc, policy) = svc("");
        let info = resource("get", "ns", "apps", "deployments", "status", "d1");
        let resp = svc.oneshot(request(Some(info), Some("bob"))).await.unwrap();
        assert_eq!(body_string(resp).await, "allowed");
        let seen = policy.seen.lock().unwrap().clone().unwrap();
        assert_eq!(
            seen,
            Attributes {
                user: UserInfo {
                    name: "bob".into(),
                    ..Default::default()
                },
                verb: "get".into(),
                is_resource_request: true,
                path: "/p".into(),
                namespace: "ns".into(),
                api_group: "apps".into(),
                api_version: "v1".into(),
                resource: "deployments".into(),
                subresource: "status".into(),
                name: "d1".into(),
                field_selector: String::new(),
                label_selector: String::new(),
            }
        );
    }

    #[tokio::test]
    async fn allowed_requests_keep_their_user_and_request_info() {
        let info = resource("get", "ns", "apps", "deployments", "status", "d1");
        let req = request(Some(info.clone()), Some("bob"));
        let user = req.extensions().get::<UserInfo>().cloned().unwrap();
        let policy = Arc::new(Policy {
            reason: String::new(),
            seen: Mutex::new(None),
        });
        let inner = tower::service_fn(move |req: Request<Body>| {
            let same = req.extensions().get::<RequestInfo>() == Some(&info)
                && req.extensions().get::<UserInfo>() == Some(&user);
            async move { Ok::<_, Infallible>(Response::new(body::full(same.to_string()))) }
        });
        let svc = from_fn_with_state(policy as DynAuthorizer, with_authorization).layer(inner);
        let resp = svc.oneshot(req).await.unwrap();
        assert_eq!(body_string(resp).await, "true");
    }

    async fn assert_forbidden(resp: Response<Body>, expected: Status, message: &str) {
        assert_eq!(expected.message.as_deref(), Some(message));
        let expected = write_status(&expected);
        assert_eq!(resp.status(), 403);
        assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
        assert_eq!(
            resp.headers().get("content-type"),
            expected.headers().get("content-type")
        );
        assert_eq!(body_string(resp).await, body_string(expected).await);
    }

    #[tokio::test]
    async fn deny_is_403_with_upstream_message() {
        let (svc, _) = svc("");
        let info = resource("list", "default", "", "configmaps", "", "");
        let resp = svc.oneshot(request(Some(info), Some("bob"))).await.unwrap();
        let msg = r#"User "bob" cannot list resource "configmaps" in API group "" in the namespace "default""#;
        let full = format!("configmaps is forbidden: {msg}");
        assert_forbidden(resp, Status::forbidden("", "configmaps", "", msg), &full).await;
    }

    #[tokio::test]
    async fn reason_is_appended_and_names_kept() {
        let (svc, _) = svc("RBAC: <no> role");
        let info = resource("delete", "ns", "apps", "deployments", "", "web");
        let resp = svc.oneshot(request(Some(info), Some("bob"))).await.unwrap();
        // The sanitizer applies to upstream's message, not to the authorizer's reason.
        let msg = r#"User "bob" cannot delete resource "deployments" in API group "apps" in the namespace "ns": RBAC: <no> role"#;
        let full = format!("deployments.apps \"web\" is forbidden: {msg}");
        assert_forbidden(
            resp,
            Status::forbidden("apps", "deployments", "web", msg),
            &full,
        )
        .await;
    }

    #[tokio::test]
    async fn non_resource_deny_and_missing_user() {
        let (svc, _) = svc("");
        let info = RequestInfo {
            verb: "post".into(),
            path: "/<foo>".into(),
            ..Default::default()
        };
        let resp = svc.oneshot(request(Some(info), None)).await.unwrap();
        let msg = r#"User "" cannot post path "/&lt;foo&gt;""#;
        let full = format!("forbidden: {msg}");
        assert_forbidden(resp, Status::forbidden("", "", "", msg), &full).await;
    }

    #[tokio::test]
    async fn missing_request_info_and_errors_are_500() {
        let (svc, _) = svc("");
        let resp = svc
            .clone()
            .oneshot(request(None, Some("bob")))
            .await
            .unwrap();
        assert_eq!(resp.status(), 500);
        // 1.33's `responsewriters.InternalError` writes with `http.Error`: charset, newline.
        assert_eq!(resp.headers()["content-type"], "text/plain; charset=utf-8");
        assert_eq!(
            body_string(resp).await,
            "Internal Server Error: \"/p?a=1&amp;b=2\": no RequestInfo found in the context\n"
        );

        let info = resource("get", "ns", "", "pods", "", "p");
        let resp = svc
            .oneshot(request(Some(info), Some("error")))
            .await
            .unwrap();
        assert_eq!(resp.status(), 500);
        assert_eq!(
            body_string(resp).await,
            "Internal Server Error: \"/p?a=1&amp;b=2\": webhook down\n"
        );
    }
}
