//! Cases after upstream's requestinfo_test.go, plus the decoding and selector rules.

use super::*;

fn info(method: &str, url: &str) -> RequestInfo {
    let method = http::Method::from_bytes(method.as_bytes()).unwrap();
    let uri: http::Uri = url.parse().unwrap();
    RequestInfoFactory::default().new_request_info(&method, &uri)
}

struct Case {
    method: &'static str,
    url: &'static str,
    verb: &'static str,
    prefix: &'static str,
    group: &'static str,
    version: &'static str,
    namespace: &'static str,
    resource: &'static str,
    subresource: &'static str,
    name: &'static str,
    parts: &'static [&'static str],
}

#[rustfmt::skip]
const RESOURCE_CASES: &[Case] = &[
    // resource paths
    Case { method: "GET", url: "/api/v1/namespaces", verb: "list", prefix: "api", group: "", version: "v1", namespace: "", resource: "namespaces", subresource: "", name: "", parts: &["namespaces"] },
    Case { method: "GET", url: "/api/v1/namespaces/other", verb: "get", prefix: "api", group: "", version: "v1", namespace: "other", resource: "namespaces", subresource: "", name: "other", parts: &["namespaces", "other"] },
    Case { method: "GET", url: "/api/v1/namespaces/other/pods", verb: "list", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    Case { method: "GET", url: "/api/v1/namespaces/other/pods/foo", verb: "get", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "foo", parts: &["pods", "foo"] },
    Case { method: "HEAD", url: "/api/v1/namespaces/other/pods/foo", verb: "get", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "foo", parts: &["pods", "foo"] },
    Case { method: "GET", url: "/api/v1/pods", verb: "list", prefix: "api", group: "", version: "v1", namespace: "", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    Case { method: "HEAD", url: "/api/v1/pods", verb: "list", prefix: "api", group: "", version: "v1", namespace: "", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    Case { method: "PATCH", url: "/api/v1/namespaces/new-namespace", verb: "patch", prefix: "api", group: "", version: "v1", namespace: "new-namespace", resource: "namespaces", subresource: "", name: "new-namespace", parts: &["namespaces", "new-namespace"] },
    // special verbs
    Case { method: "GET", url: "/api/v1/proxy/namespaces/other/pods/foo", verb: "proxy", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "foo", parts: &["pods", "foo"] },
    Case { method: "GET", url: "/api/v1/proxy/namespaces/other/pods/foo/subpath/not/a/subresource", verb: "proxy", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "foo", parts: &["pods", "foo", "subpath", "not", "a", "subresource"] },
    Case { method: "GET", url: "/api/v1/watch/pods", verb: "watch", prefix: "api", group: "", version: "v1", namespace: "", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    Case { method: "GET", url: "/api/v1/pods?watch=true", verb: "watch", prefix: "api", group: "", version: "v1", namespace: "", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    Case { method: "GET", url: "/api/v1/pods?watch=false", verb: "list", prefix: "api", group: "", version: "v1", namespace: "", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    Case { method: "GET", url: "/api/v1/watch/namespaces/other/pods", verb: "watch", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    Case { method: "GET", url: "/api/v1/namespaces/other/pods?watch=1", verb: "watch", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    Case { method: "GET", url: "/api/v1/namespaces/other/pods?watch=0", verb: "list", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    // subresources
    Case { method: "GET", url: "/api/v1/namespaces/other/pods/foo/status", verb: "get", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "status", name: "foo", parts: &["pods", "foo", "status"] },
    Case { method: "GET", url: "/api/v1/namespaces/other/pods/foo/proxy/subpath", verb: "get", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "proxy", name: "foo", parts: &["pods", "foo", "proxy", "subpath"] },
    Case { method: "PUT", url: "/api/v1/namespaces/other/finalize", verb: "update", prefix: "api", group: "", version: "v1", namespace: "other", resource: "namespaces", subresource: "finalize", name: "other", parts: &["namespaces", "other", "finalize"] },
    Case { method: "PUT", url: "/api/v1/namespaces/other/status", verb: "update", prefix: "api", group: "", version: "v1", namespace: "other", resource: "namespaces", subresource: "status", name: "other", parts: &["namespaces", "other", "status"] },
    // verbs
    Case { method: "PATCH", url: "/api/v1/namespaces/other/pods/foo", verb: "patch", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "foo", parts: &["pods", "foo"] },
    Case { method: "DELETE", url: "/api/v1/namespaces/other/pods/foo", verb: "delete", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "foo", parts: &["pods", "foo"] },
    Case { method: "POST", url: "/api/v1/namespaces/other/pods", verb: "create", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    Case { method: "OPTIONS", url: "/api/v1/namespaces/other/pods", verb: "", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    // deletecollection
    Case { method: "DELETE", url: "/api/v1/nodes", verb: "deletecollection", prefix: "api", group: "", version: "v1", namespace: "", resource: "nodes", subresource: "", name: "", parts: &["nodes"] },
    Case { method: "DELETE", url: "/api/v1/namespaces", verb: "deletecollection", prefix: "api", group: "", version: "v1", namespace: "", resource: "namespaces", subresource: "", name: "", parts: &["namespaces"] },
    Case { method: "DELETE", url: "/api/v1/namespaces/other/pods", verb: "deletecollection", prefix: "api", group: "", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    Case { method: "DELETE", url: "/apis/extensions/v1/namespaces/other/pods", verb: "deletecollection", prefix: "apis", group: "extensions", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    // groups and versions
    Case { method: "POST", url: "/apis/extensions/v1/namespaces/other/pods", verb: "create", prefix: "apis", group: "extensions", version: "v1", namespace: "other", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    Case { method: "POST", url: "/apis/extensions/v1beta3/namespaces/other/pods", verb: "create", prefix: "apis", group: "extensions", version: "v1beta3", namespace: "other", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    Case { method: "GET", url: "/apis/apps/v1/deployments", verb: "list", prefix: "apis", group: "apps", version: "v1", namespace: "", resource: "deployments", subresource: "", name: "", parts: &["deployments"] },
    Case { method: "GET", url: "/apis/apps/v1/namespaces/ns/deployments/web/scale", verb: "get", prefix: "apis", group: "apps", version: "v1", namespace: "ns", resource: "deployments", subresource: "scale", name: "web", parts: &["deployments", "web", "scale"] },
    // trailing and doubled slashes are split as upstream splits them
    Case { method: "GET", url: "/api/v1/pods/", verb: "list", prefix: "api", group: "", version: "v1", namespace: "", resource: "pods", subresource: "", name: "", parts: &["pods"] },
    Case { method: "GET", url: "/api/v1//pods", verb: "get", prefix: "api", group: "", version: "v1", namespace: "", resource: "", subresource: "", name: "pods", parts: &["", "pods"] },
];

#[test]
fn resource_requests() {
    for c in RESOURCE_CASES {
        let got = info(c.method, c.url);
        let want = RequestInfo {
            is_resource_request: true,
            path: c.url.split('?').next().unwrap().to_owned(),
            verb: c.verb.into(),
            api_prefix: c.prefix.into(),
            api_group: c.group.into(),
            api_version: c.version.into(),
            namespace: c.namespace.into(),
            resource: c.resource.into(),
            subresource: c.subresource.into(),
            name: c.name.into(),
            parts: c.parts.iter().map(|p| p.to_string()).collect(),
            field_selector: String::new(),
            label_selector: String::new(),
        };
        assert_eq!(got, want, "{} {}", c.method, c.url);
    }
}

#[test]
fn non_resource_requests() {
    for url in [
        "/",
        "/api/version/",
        "/apis/group/version/",
        "/badprefix/version/resource",
        "/apis/version/resource",
        "/not-api/version/resource",
        "/apis/extensions/v1beta1",
        "/apis/extensions/v1beta1/",
        "/api/version",
        "/api",
        "/healthz",
        "/version",
        "/openapi/v2",
    ] {
        let got = info("GET", url);
        assert!(!got.is_resource_request, "{url}");
        assert_eq!(got.verb, "get", "{url}");
        assert_eq!(got.path, url);
        assert!(got.parts.is_empty() && got.resource.is_empty(), "{url}");
    }
    assert_eq!(info("POST", "/healthz").verb, "post");
    assert_eq!(info("PATCH", "/api").verb, "patch");
    // Non-standard methods are lowercased too.
    assert_eq!(info("PROPFIND", "/x").verb, "propfind");
}

#[test]
fn resource_detection_like_upstream() {
    for (url, want) in [
        ("/api/version/resource", true),
        ("/apis/group/version/resource/name/subresource", true),
        ("/api/version/resource/name/subresource", true),
        ("/apis/batch/v1/job", true),
        ("/apis/batch/v1/job/foo", true),
        ("/apis/batch/v1/job/foo/scale", true),
        ("/not-api/version/resource", false),
        ("/apis/extensions/v1beta1", false),
        ("/api/version", false),
    ] {
        assert_eq!(info("GET", url).is_resource_request, want, "{url}");
    }
}

#[test]
fn special_verb_without_resource_is_an_error() {
    let f = RequestInfoFactory::default();
    for url in ["/api/v1/watch", "/api/v1/proxy/", "/apis/apps/v1/watch?x=1"] {
        let uri: http::Uri = url.parse().unwrap();
        let err = f
            .try_new_request_info(&http::Method::GET, &uri)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("unable to determine kind and namespace from url, {url}")
        );
        // The info as far as upstream got: a resource request with the method's verb.
        let partial = f.new_request_info(&http::Method::GET, &uri);
        assert!(partial.is_resource_request);
        assert_eq!(partial.verb, "get");
        assert!(partial.resource.is_empty());
    }
    let uri: http::Uri = "/api/v1/pods".parse().unwrap();
    assert!(f.try_new_request_info(&http::Method::GET, &uri).is_ok());
}

#[test]
fn field_selector_names_the_object() {
    for (url, name, verb) in [
        ("/apis/group/version/resource", "", "list"),
        (
            "/apis/group/version/resource?fieldSelector=metadata.name=name1",
            "name1",
            "list",
        ),
        (
            "/apis/group/version/resource?watch=true&fieldSelector=metadata.name=name1",
            "name1",
            "watch",
        ),
        (
            "/apis/group/version/resource?fieldSelector=metadata.name%3D%3Dname1",
            "name1",
            "list",
        ),
        (
            "/apis/group/version/resource?fieldSelector=foo=bar",
            "",
            "list",
        ),
        (
            "/apis/group/version/resource?fieldSelector=metadata.name!=name1",
            "",
            "list",
        ),
        // invalid selectors keep the name empty but still honour watch
        (
            "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo",
            "",
            "list",
        ),
        (
            "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo&watch=true",
            "",
            "watch",
        ),
        (
            "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo&watch=false",
            "",
            "list",
        ),
        // a name that cannot be a path segment is ignored
        ("/api/v1/pods?fieldSelector=metadata.name=..", "", "list"),
        ("/api/v1/pods?fieldSelector=metadata.name=a%25b", "", "list"),
        // a failure elsewhere in ListOptions loses the name too
        (
            "/api/v1/pods?fieldSelector=metadata.name=a&limit=x",
            "",
            "list",
        ),
        (
            "/api/v1/pods?fieldSelector=metadata.name=a&timeoutSeconds=1.5&watch=1",
            "",
            "watch",
        ),
        (
            "/api/v1/pods?fieldSelector=metadata.name=a&limit=500&timeoutSeconds=-1",
            "a",
            "list",
        ),
        // the first value wins, as with Go's url.Values
        (
            "/api/v1/pods?fieldSelector=metadata.name=a&fieldSelector=metadata.name=b",
            "a",
            "list",
        ),
    ] {
        let got = info("GET", url);
        assert_eq!(
            (got.name.as_str(), got.verb.as_str()),
            (name, verb),
            "{url}"
        );
    }
    // A name from the selector turns a collection delete into... nothing: only GET reads it.
    let got = info("DELETE", "/api/v1/pods?fieldSelector=metadata.name=a");
    assert_eq!(
        (got.verb.as_str(), got.name.as_str()),
        ("deletecollection", "")
    );
}

#[test]
fn watch_param_values() {
    for (value, verb) in [
        ("true", "watch"),
        ("1", "watch"),
        ("TRUE", "watch"),
        ("", "watch"),
        ("yes", "watch"),
        ("false", "list"),
        ("False", "list"),
        ("0", "list"),
    ] {
        let got = info("GET", &format!("/api/v1/pods?watch={value}"));
        assert_eq!(got.verb, verb, "watch={value}");
    }
    // Only the first value counts; a name on the path means get regardless.
    assert_eq!(info("GET", "/api/v1/pods?watch=0&watch=1").verb, "list");
    assert_eq!(
        info("GET", "/api/v1/namespaces/a/pods/p?watch=1").verb,
        "get"
    );
}

#[test]
fn selectors_are_recorded_for_collection_verbs() {
    let got = info(
        "GET",
        "/api/v1/pods?labelSelector=app%3Dweb&fieldSelector=spec.nodeName%3Dn1",
    );
    assert_eq!(got.label_selector, "app=web");
    assert_eq!(got.field_selector, "spec.nodeName=n1");
    let got = info("DELETE", "/api/v1/namespaces/a/pods?labelSelector=x");
    assert_eq!(
        (got.verb.as_str(), got.label_selector.as_str()),
        ("deletecollection", "x")
    );
    let got = info("GET", "/api/v1/pods?watch=1&labelSelector=a+b");
    assert_eq!(got.label_selector, "a b");
    // Not for single objects, and not for the deprecated /watch/ paths.
    let got = info("GET", "/api/v1/namespaces/a/pods/p?labelSelector=x");
    assert!(got.label_selector.is_empty());
    let got = info(
        "GET",
        "/api/v1/watch/pods?labelSelector=x&fieldSelector=y=z",
    );
    assert_eq!(got.verb, "watch");
    assert!(got.label_selector.is_empty() && got.field_selector.is_empty());
}

#[test]
fn paths_are_percent_decoded_like_go() {
    let got = info("GET", "/api/v1/namespaces/a%20b/pods/c%2Bd");
    assert_eq!(got.path, "/api/v1/namespaces/a b/pods/c+d");
    assert_eq!((got.namespace.as_str(), got.name.as_str()), ("a b", "c+d"));
    // An escaped slash splits, because Go splits the decoded path.
    let got = info("GET", "/api/v1/namespaces/a/pods/x%2Fstatus");
    assert_eq!(
        (got.name.as_str(), got.subresource.as_str()),
        ("x", "status")
    );
    // A bad escape leaves the raw path.
    assert_eq!(info("GET", "/api/v1/pods/%zz").name, "%zz");
}

#[test]
fn custom_prefixes() {
    let f = RequestInfoFactory {
        api_prefixes: vec!["api".into(), "apis".into(), "custom".into()],
        grouped_api_prefixes: vec!["apis".into(), "custom".into()],
    };
    let uri: http::Uri = "/custom/g/v1/things/t".parse().unwrap();
    let got = f.new_request_info(&http::Method::GET, &uri);
    assert_eq!(
        (
            got.api_prefix.as_str(),
            got.api_group.as_str(),
            got.resource.as_str(),
            got.name.as_str()
        ),
        ("custom", "g", "things", "t")
    );
}

#[test]
fn long_running() {
    for (method, url, want) in [
        ("GET", "/api/v1/pods?watch=true", true),
        ("GET", "/api/v1/watch/pods", true),
        ("GET", "/api/v1/proxy/namespaces/a/pods/p", true),
        ("POST", "/api/v1/namespaces/a/pods/p/exec", true),
        ("GET", "/api/v1/namespaces/a/pods/p/attach", true),
        ("GET", "/api/v1/namespaces/a/pods/p/log", true),
        ("POST", "/api/v1/namespaces/a/pods/p/portforward", true),
        ("GET", "/api/v1/namespaces/a/services/s/proxy/x", true),
        ("GET", "/debug/pprof/profile", true),
        ("GET", "/api/v1/pods", false),
        ("GET", "/api/v1/namespaces/a/pods/p/status", false),
        ("GET", "/debug/pprof", false),
        ("GET", "/healthz", false),
        ("GET", "/log", false),
    ] {
        assert_eq!(info(method, url).is_long_running(), want, "{method} {url}");
    }
}
