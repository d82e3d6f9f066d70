//! Upstream's `TestImpersonationFilter` table, and the answers' exact bodies.

use super::*;
use crate::filter::from_fn_with_state;
use crate::support::test_util::body_string;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_auth::authorization::Authorizer;
use kas_endpoints::{body, write_status};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use tower::{Layer, ServiceExt};

/// Upstream's `impersonateAuthorizer`; records every attributes it is asked about.
#[derive(Default)]
struct ImpersonateAuthorizer {
    seen: Mutex<Vec<Attributes>>,
}

impl Authorizer for ImpersonateAuthorizer {
    fn authorize<'a>(
        &'a self,
        attrs: &'a Attributes,
    ) -> BoxFuture<'a, kas_auth::Result<(Decision, String)>> {
        self.seen.lock().unwrap().push(attrs.clone());
        let answer = decide(attrs);
        async move { answer }.boxed()
    }
}

fn decide(a: &Attributes) -> kas_auth::Result<(Decision, String)> {
    match a.user.name.as_str() {
        "system:admin" => return Ok((Decision::Allow, String::new())),
        "tester" => {
            return Err(kas_auth::Error::InvalidCredentials(
                "works on my machine".into(),
            ));
        }
        "deny-me" => return Ok((Decision::NoOpinion, "denied".into())),
        _ => {}
    }
    let g0 = a.user.groups.first().map(String::as_str).unwrap_or("");
    let g1 = a.user.groups.get(1).map(String::as_str).unwrap_or("");
    let imp = a.verb == "impersonate";
    let (r, sub, name, group) = (
        a.resource.as_str(),
        a.subresource.as_str(),
        a.name.as_str(),
        a.api_group.as_str(),
    );
    let auth = group == AUTHENTICATION_GROUP;
    let allowed = (g0 == "wheel" && imp && r == "users")
        || (g0 == "sa-impersonater" && imp && r == "serviceaccounts")
        || (g0 == "regular-impersonater" && imp && r == "users")
        || (g1 == "group-impersonater" && imp && r == "groups")
        || (g1 == "extra-setter-scopes" && imp && r == "userextras" && sub == "scopes")
        || g1 == "escaped-scopes"
        || g1 == "almost-escaped-scopes"
        || (g1 == "extra-setter-particular-scopes"
            && imp
            && r == "userextras"
            && sub == "scopes"
            && name == "scope-a"
            && auth)
        || (g1 == "extra-setter-project" && imp && r == "userextras" && sub == "project" && auth)
        || (g0 == "everything-impersonater"
            && imp
            && ((r == "users" && group.is_empty())
                || (r == "uids" && name == "some-uid" && auth)
                || (r == "groups" && group.is_empty())
                || (r == "userextras" && sub == "scopes" && auth)));
    if allowed {
        Ok((Decision::Allow, String::new()))
    } else {
        Ok((Decision::NoOpinion, "deny by default".into()))
    }
}

/// What reached the inner service: the user, and whether any `Impersonate-*` header
/// was left on the request.
type Reached = Arc<Mutex<Option<(Option<UserInfo>, bool)>>>;

fn svc() -> (impl Inner, Reached, Arc<ImpersonateAuthorizer>) {
    let reached: Reached = Arc::default();
    let seen = reached.clone();
    let inner = tower::service_fn(move |req: Request<Body>| {
        let left = req
            .headers()
            .keys()
            .any(|k| k.as_str().starts_with("impersonate-"));
        let user = req.extensions().get::<UserInfo>().cloned();
        *seen.lock().unwrap() = Some((user, left));
        async { Ok::<_, Infallible>(Response::new(body::full("ok"))) }
    });
    let authorizer = Arc::new(ImpersonateAuthorizer::default());
    let filter = from_fn_with_state(authorizer.clone() as DynAuthorizer, with_impersonation);
    (filter.layer(inner), reached, authorizer)
}

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        ..UserInfo::default()
    }
}

#[derive(Default)]
struct Case {
    name: &'static str,
    user: UserInfo,
    impersonate_user: &'static str,
    groups: &'static [&'static str],
    extras: &'static [(&'static str, &'static [&'static str])],
    uid: &'static str,
    /// The user that reaches the handler; `None`: the filter answers itself.
    expected: Option<UserInfo>,
    code: u16,
}

fn request(case: &Case) -> Request<Body> {
    let mut req = Request::get("/").body(body::empty()).unwrap();
    req.extensions_mut().insert(case.user.clone());
    let headers = req.headers_mut();
    if !case.impersonate_user.is_empty() {
        headers.append(IMPERSONATE_USER, case.impersonate_user.parse().unwrap());
    }
    for g in case.groups {
        headers.append(IMPERSONATE_GROUP, g.parse().unwrap());
    }
    for (key, values) in case.extras {
        let name: http::HeaderName = format!("Impersonate-Extra-{key}").parse().unwrap();
        for v in *values {
            headers.append(name.clone(), v.parse().unwrap());
        }
    }
    if !case.uid.is_empty() {
        headers.append(IMPERSONATE_UID, case.uid.parse().unwrap());
    }
    req
}

fn with(mut u: UserInfo, uid: &str, extra: &[(&str, &[&str])]) -> UserInfo {
    u.uid = uid.into();
    u.extra = extra
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.iter().map(|s| (*s).to_owned()).collect()))
        .collect::<BTreeMap<_, _>>();
    u
}

fn cases() -> Vec<Case> {
    let tester = || user("tester", &[]);
    let scopes: &[(&str, &[&str])] = &[("scopes", &["scope-a", "scope-b"])];
    vec![
        Case {
            name: "not-impersonating",
            user: tester(),
            expected: Some(tester()),
            code: 200,
            ..Case::default()
        },
        Case {
            name: "impersonating-error",
            user: tester(),
            impersonate_user: "anyone",
            code: 403,
            ..Case::default()
        },
        Case {
            name: "impersonating-group-without-user",
            user: tester(),
            groups: &["some-group"],
            code: 500,
            ..Case::default()
        },
        Case {
            name: "impersonating-extra-without-user",
            user: tester(),
            extras: &[("scopes", &["scope-a"])],
            code: 500,
            ..Case::default()
        },
        Case {
            name: "impersonating-uid-without-user",
            user: tester(),
            uid: "some-uid",
            code: 500,
            ..Case::default()
        },
        Case {
            name: "disallowed-group",
            user: user("dev", &["wheel"]),
            impersonate_user: "system:admin",
            groups: &["some-group"],
            code: 403,
            ..Case::default()
        },
        Case {
            name: "allowed-group",
            user: user("dev", &["wheel", "group-impersonater"]),
            impersonate_user: "system:admin",
            groups: &["some-group"],
            expected: Some(user(
                "system:admin",
                &["some-group", "system:authenticated"],
            )),
            code: 200,
            ..Case::default()
        },
        Case {
            name: "disallowed-userextra-1",
            user: user("dev", &["wheel"]),
            impersonate_user: "system:admin",
            groups: &["some-group"],
            extras: &[("scopes", &["scope-a"])],
            code: 403,
            ..Case::default()
        },
        Case {
            name: "disallowed-userextra-2",
            user: user("dev", &["wheel", "extra-setter-project"]),
            impersonate_user: "system:admin",
            groups: &["some-group"],
            extras: &[("scopes", &["scope-a"])],
            code: 403,
            ..Case::default()
        },
        Case {
            name: "disallowed-userextra-3",
            user: user("dev", &["wheel", "extra-setter-particular-scopes"]),
            impersonate_user: "system:admin",
            groups: &["some-group"],
            extras: scopes,
            code: 403,
            ..Case::default()
        },
        Case {
            name: "allowed-userextras",
            user: user("dev", &["wheel", "extra-setter-scopes"]),
            impersonate_user: "system:admin",
            extras: scopes,
            expected: Some(with(
                user("system:admin", &["system:authenticated"]),
                "",
                scopes,
            )),
            code: 200,
            ..Case::default()
        },
        Case {
            name: "percent-escaped-userextras",
            user: user("dev", &["wheel", "escaped-scopes"]),
            impersonate_user: "system:admin",
            extras: &[(
                "example.com%2fescaped%e1%9b%84scopes",
                &["scope-a", "scope-b"],
            )],
            expected: Some(with(
                user("system:admin", &["system:authenticated"]),
                "",
                &[("example.com/escapedᛄscopes", &["scope-a", "scope-b"])],
            )),
            code: 200,
            ..Case::default()
        },
        Case {
            name: "almost-percent-escaped-userextras",
            user: user("dev", &["wheel", "almost-escaped-scopes"]),
            impersonate_user: "system:admin",
            extras: &[("almost%zzpercent%xxencoded", &["scope-a", "scope-b"])],
            expected: Some(with(
                user("system:admin", &["system:authenticated"]),
                "",
                &[("almost%zzpercent%xxencoded", &["scope-a", "scope-b"])],
            )),
            code: 200,
            ..Case::default()
        },
        Case {
            name: "allowed-users-impersonation",
            user: user("dev", &["regular-impersonater"]),
            impersonate_user: "tester",
            expected: Some(user("tester", &["system:authenticated"])),
            code: 200,
            ..Case::default()
        },
        Case {
            name: "disallowed-impersonating",
            user: user("dev", &["sa-impersonater"]),
            impersonate_user: "tester",
            code: 403,
            ..Case::default()
        },
        Case {
            name: "allowed-sa-impersonating",
            user: user("dev", &["sa-impersonater"]),
            impersonate_user: "system:serviceaccount:foo:default",
            expected: Some(user(
                "system:serviceaccount:foo:default",
                &[
                    "system:serviceaccounts",
                    "system:serviceaccounts:foo",
                    "system:authenticated",
                ],
            )),
            code: 200,
            ..Case::default()
        },
        Case {
            name: "anonymous-username-prevents-adding-authenticated-group",
            user: user("system:admin", &[]),
            impersonate_user: "system:anonymous",
            expected: Some(user("system:anonymous", &["system:unauthenticated"])),
            code: 200,
            ..Case::default()
        },
        Case {
            name: "unauthenticated-group-prevents-adding-authenticated-group",
            user: user("system:admin", &[]),
            impersonate_user: "unknown",
            groups: &["system:unauthenticated"],
            expected: Some(user("unknown", &["system:unauthenticated"])),
            code: 200,
            ..Case::default()
        },
        Case {
            name: "unauthenticated-group-prevents-double-adding-authenticated-group",
            user: user("system:admin", &[]),
            impersonate_user: "unknown",
            groups: &["system:authenticated"],
            expected: Some(user("unknown", &["system:authenticated"])),
            code: 200,
            ..Case::default()
        },
        Case {
            name: "specified-authenticated-group-prevents-double-adding-authenticated-group",
            user: user("dev", &["wheel", "group-impersonater"]),
            impersonate_user: "system:admin",
            groups: &["some-group", "system:authenticated"],
            expected: Some(user(
                "system:admin",
                &["some-group", "system:authenticated"],
            )),
            code: 200,
            ..Case::default()
        },
        Case {
            name: "anonymous-user-prevents-double-adding-unauthenticated-group",
            user: user("system:admin", &[]),
            impersonate_user: "system:anonymous",
            groups: &["system:unauthenticated"],
            expected: Some(user("system:anonymous", &["system:unauthenticated"])),
            code: 200,
            ..Case::default()
        },
        Case {
            name: "allowed-user-impersonation-with-uid",
            user: user("dev", &["everything-impersonater"]),
            impersonate_user: "tester",
            uid: "some-uid",
            expected: Some(with(
                user("tester", &["system:authenticated"]),
                "some-uid",
                &[],
            )),
            code: 200,
            ..Case::default()
        },
        Case {
            name: "disallowed-user-impersonation-with-uid",
            user: user("dev", &["everything-impersonater"]),
            impersonate_user: "tester",
            uid: "disallowed-uid",
            code: 403,
            ..Case::default()
        },
        Case {
            name: "allowed-impersonation-with-all-headers",
            user: user("dev", &["everything-impersonater"]),
            impersonate_user: "tester",
            uid: "some-uid",
            groups: &["system:authenticated"],
            extras: scopes,
            expected: Some(with(
                user("tester", &["system:authenticated"]),
                "some-uid",
                scopes,
            )),
            code: 200,
        },
    ]
}

#[tokio::test]
async fn upstream_table() {
    for case in cases() {
        let (svc, reached, _) = svc();
        let resp = svc.oneshot(request(&case)).await.unwrap();
        assert_eq!(resp.status(), case.code, "{}", case.name);
        let reached = reached.lock().unwrap().take();
        match &case.expected {
            None => assert!(reached.is_none(), "{}: reached the handler", case.name),
            Some(expected) => {
                let (user, left) = reached.unwrap();
                assert_eq!(user.as_ref(), Some(expected), "{}", case.name);
                assert!(!left, "{}: impersonation headers left", case.name);
            }
        }
    }
}

async fn assert_forbidden(case: Case, status: Status, message: &str) {
    assert_eq!(status.message.as_deref(), Some(message));
    let (svc, _, _) = svc();
    let resp = svc.oneshot(request(&case)).await.unwrap();
    assert_eq!(resp.status(), 403, "{}", case.name);
    assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
    assert_eq!(
        body_string(resp).await,
        body_string(write_status(&status)).await
    );
}

#[tokio::test]
async fn forbidden_bodies_name_what_was_refused() {
    let case = Case {
        user: user("tester", &[]),
        impersonate_user: "anyone",
        ..Case::default()
    };
    // An authorizer error: no reason after the message.
    let msg =
        r#"User "tester" cannot impersonate resource "users" in API group "" at the cluster scope"#;
    let full = format!(r#"users "anyone" is forbidden: {msg}"#);
    assert_forbidden(case, Status::forbidden("", "users", "anyone", msg), &full).await;

    let case = Case {
        user: user("dev", &["wheel"]),
        impersonate_user: "system:serviceaccount:foo:default",
        ..Case::default()
    };
    let msg = r#"User "dev" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "foo": deny by default"#;
    let full = format!(r#"serviceaccounts "default" is forbidden: {msg}"#);
    let status = Status::forbidden("", "serviceaccounts", "default", msg);
    assert_forbidden(case, status, &full).await;

    let case = Case {
        user: user("dev", &["wheel", "group-impersonater"]),
        impersonate_user: "system:admin",
        groups: &["g"],
        extras: &[("scopes", &["scope-a"])],
        ..Case::default()
    };
    let msg = r#"User "dev" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope: deny by default"#;
    let full = format!(r#"userextras.authentication.k8s.io "scope-a" is forbidden: {msg}"#);
    let status = Status::forbidden(AUTHENTICATION_GROUP, "userextras", "scope-a", msg);
    assert_forbidden(case, status, &full).await;

    let case = Case {
        user: user("dev", &["everything-impersonater"]),
        impersonate_user: "tester",
        uid: "other",
        ..Case::default()
    };
    let msg = r#"User "dev" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope: deny by default"#;
    let full = format!(r#"uids.authentication.k8s.io "other" is forbidden: {msg}"#);
    let status = Status::forbidden(AUTHENTICATION_GROUP, "uids", "other", msg);
    assert_forbidden(case, status, &full).await;
}

async fn assert_500(case: Case, text: &str) {
    let (svc, reached, _) = svc();
    let resp = svc.oneshot(request(&case)).await.unwrap();
    assert_eq!(resp.status(), 500);
    assert_eq!(resp.headers()["content-type"], "text/plain; charset=utf-8");
    assert_eq!(
        body_string(resp).await,
        format!("Internal Server Error: \"/\": {text}\n")
    );
    assert!(reached.lock().unwrap().is_none());
}

#[tokio::test]
async fn parts_without_a_user_are_500_naming_the_requests() {
    let tester = || user("tester", &[]);
    let case = Case {
        user: tester(),
        groups: &["a", "b"],
        ..Case::default()
    };
    let text = "requested [{Group  a    } {Group  b    }] without impersonating a user";
    assert_500(case, text).await;
    let case = Case {
        user: tester(),
        extras: &[("Scopes", &["scope-a"])],
        uid: "some-uid",
        ..Case::default()
    };
    let text = "requested [{UserExtra  scope-a  authentication.k8s.io/v1  scopes} \
                {UID  some-uid  authentication.k8s.io/v1  }] without impersonating a user";
    assert_500(case, text).await;
}

#[tokio::test]
async fn no_user_is_500() {
    let (svc, _, _) = svc();
    let mut req = Request::get("/api?a=1&b=2").body(body::empty()).unwrap();
    req.headers_mut()
        .insert(IMPERSONATE_USER, "bob".parse().unwrap());
    let resp = svc.oneshot(req).await.unwrap();
    assert_eq!(resp.status(), 500);
    assert_eq!(
        body_string(resp).await,
        "Internal Server Error: \"/api?a=1&amp;b=2\": no user found for request\n"
    );
}

#[tokio::test]
async fn attributes_as_upstream_builds_them() {
    let (svc, _, authorizer) = svc();
    let case = Case {
        user: user("system:admin", &[]),
        impersonate_user: "system:serviceaccount:foo:default",
        groups: &["g"],
        extras: &[("Scopes", &["s"])],
        uid: "u",
        ..Case::default()
    };
    let resp = svc.oneshot(request(&case)).await.unwrap();
    assert_eq!(resp.status(), 200);
    let seen = authorizer.seen.lock().unwrap().clone();
    let attrs =
        |ns: &str, group: &str, version: &str, res: &str, sub: &str, name: &str| Attributes {
            user: user("system:admin", &[]),
            verb: "impersonate".into(),
            is_resource_request: true,
            path: String::new(),
            namespace: ns.into(),
            api_group: group.into(),
            api_version: version.into(),
            resource: res.into(),
            subresource: sub.into(),
            name: name.into(),
            field_selector: String::new(),
            label_selector: String::new(),
        };
    let auth = AUTHENTICATION_GROUP;
    assert_eq!(
        seen,
        vec![
            attrs("foo", "", "", "serviceaccounts", "", "default"),
            attrs("", "", "", "groups", "", "g"),
            attrs("", auth, "v1", "userextras", "scopes", "s"),
            attrs("", auth, "v1", "uids", "", "u"),
        ]
    );
}

#[tokio::test]
async fn service_account_groups_given_are_the_authority() {
    let (svc, reached, _) = svc();
    let case = Case {
        user: user("system:admin", &[]),
        impersonate_user: "system:serviceaccount:foo:default",
        groups: &["g"],
        ..Case::default()
    };
    svc.oneshot(request(&case)).await.unwrap();
    let (got, _) = reached.lock().unwrap().take().unwrap();
    let expected = user(
        "system:serviceaccount:foo:default",
        &["g", "system:authenticated"],
    );
    assert_eq!(got, Some(expected));
}

#[test]
fn only_valid_service_account_names_split() {
    let split = split_service_account_username;
    assert_eq!(
        split("system:serviceaccount:ns:sa.name"),
        Some(("ns".into(), "sa.name".into()))
    );
    for not_sa in [
        "system:serviceaccount:ns",
        "system:serviceaccount:ns:a:b",
        "system:serviceaccount::sa",
        "system:serviceaccount:ns.dot:sa",
        "system:serviceaccount:ns:Upper",
        "system:serviceaccounts:ns:sa",
    ] {
        assert_eq!(split(not_sa), None, "{not_sa}");
    }
}
