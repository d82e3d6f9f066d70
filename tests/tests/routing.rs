//! Route matching through the aggregator, as kube-apiserver's go-restful container does it:
//! a path that names no route is a JSON 404 under a served group version and Go's plain
//! `404 page not found` elsewhere; a method the path's routes do not take is a 405; a PATCH
//! body type the route does not consume is a 415; an `Accept` the route cannot produce is a
//! 406. Each is upstream's `NewGenericServerResponse`: go-restful's text, `details: {}`.

use http::Method;
use kas_e2e::{NOT_FOUND_BODY, start_cluster};
use serde_json::{Value, json};

fn generic(code: u16, reason: &str, message: &str) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": {},
        "code": code,
    })
}

fn not_found() -> Value {
    generic(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

fn not_allowed() -> Value {
    generic(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
}

#[tokio::test]
async fn paths_and_methods_follow_upstreams_routes() {
    let c = start_cluster(|_| {});
    let client = &c;
    let json_body = [("content-type", "application/json")];
    let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"}}"#;
    let a = client
        .send(
            Method::POST,
            "/api/v1/namespaces/default/configmaps",
            &json_body,
            cm,
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.text());

    // A cluster-scoped resource has no namespaced path: nothing is created.
    let ns = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"sneaky"}}"#;
    let a = client
        .send(
            Method::POST,
            "/api/v1/namespaces/default/namespaces",
            &json_body,
            ns,
        )
        .await;
    assert_eq!(
        (a.status.as_u16(), a.json()),
        (404, not_found()),
        "{}",
        a.text()
    );
    let a = client
        .send(Method::GET, "/api/v1/namespaces/sneaky", &[], "")
        .await;
    assert_eq!(a.status, 404, "the namespace must not exist: {}", a.text());

    // A namespaced resource has no cluster-wide item path, and its cluster-wide
    // collection only lists.
    let a = client
        .send(Method::GET, "/api/v1/configmaps/c1", &[], "")
        .await;
    assert_eq!((a.status.as_u16(), a.json()), (404, not_found()));
    let a = client
        .send(Method::POST, "/api/v1/configmaps", &json_body, cm)
        .await;
    assert_eq!((a.status.as_u16(), a.json()), (405, not_allowed()));

    // POST only on the collection; PUT, PATCH and DELETE of one object only on its path.
    let item = "/api/v1/namespaces/default/configmaps/c1";
    let collection = "/api/v1/namespaces/default/configmaps";
    let merge = [("content-type", "application/merge-patch+json")];
    for (method, path, headers) in [
        (Method::POST, item, &json_body[..]),
        (Method::PUT, collection, &json_body[..]),
        (Method::PATCH, collection, &merge[..]),
        (Method::POST, "/api/v1", &json_body[..]),
        (Method::DELETE, "/api/v1", &[][..]),
        (Method::PUT, "/api", &json_body[..]),
        // Upstream serves no deletecollection for namespaces.
        (Method::DELETE, "/api/v1/namespaces", &[][..]),
        // A namespace's status takes get, patch and update; finalize only update.
        (Method::DELETE, "/api/v1/namespaces/default/status", &[][..]),
        (Method::GET, "/api/v1/namespaces/default/finalize", &[][..]),
        // The deprecated watch paths are GET only.
        (
            Method::POST,
            "/api/v1/watch/namespaces/default/configmaps",
            &json_body[..],
        ),
    ] {
        let a = client.send(method.clone(), path, headers, "{}").await;
        assert_eq!(
            (a.status.as_u16(), a.json()),
            (405, not_allowed()),
            "{method} {path}: {}",
            a.text()
        );
    }
    // The object is untouched by all of that.
    let a = client.send(Method::GET, item, &[], "").await;
    assert_eq!(a.status, 200);
    assert_eq!(a.json()["metadata"]["name"], "c1");

    // Unknown resources and subresources under a served group version are JSON 404s ...
    for path in [
        "/api/v1/nothings",
        "/api/v1/namespaces/default/nothings",
        "/api/v1/namespaces/default/configmaps/c1/status",
        "/api/v1/namespaces/default/configmaps/c1/a/b",
        "/api/v2",
        "/apis/coordination.k8s.io/v2",
    ] {
        let a = client.send(Method::GET, path, &[], "").await;
        assert_eq!((a.status.as_u16(), a.json()), (404, not_found()), "{path}");
    }
    // ... and paths no role serves get Go's plain-text 404.
    for path in [
        "/apis/nothing.example.com/v1",
        "/apis/nothing.example.com",
        "/nothing",
    ] {
        let a = client.send(Method::GET, path, &[], "").await;
        assert_eq!(a.status, 404, "{path}");
        assert_eq!(a.text(), NOT_FOUND_BODY, "{path}");
        assert_eq!(a.headers["content-type"], "text/plain; charset=utf-8");
    }

    // Upstream's aggregator serves /apis and /apis/<group> whatever the method.
    let a = client
        .send(Method::POST, "/apis/coordination.k8s.io", &json_body, "{}")
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["kind"], "APIGroup");
}

#[tokio::test]
async fn media_types_the_route_cannot_take_or_give_are_406_and_415() {
    let c = start_cluster(|_| {});
    let client = &c;
    let representations = "application/json, application/yaml, application/vnd.kubernetes.protobuf";
    let item = "/api/v1/namespaces/default";
    for accept in ["text/html", "application/*", "text/plain, image/png"] {
        let a = client
            .send(Method::GET, item, &[("accept", accept)], "")
            .await;
        let message =
            format!("406: Not Acceptable\n\nAvailable representations: {representations}");
        assert_eq!(
            (a.status.as_u16(), a.json()),
            (406, generic(406, "NotAcceptable", &message)),
            "{accept}"
        );
    }
    // A list route also produces the watch stream types.
    let a = client
        .send(
            Method::GET,
            "/api/v1/namespaces",
            &[("accept", "text/html")],
            "",
        )
        .await;
    let message = format!(
        "406: Not Acceptable\n\nAvailable representations: {representations}, \
         application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
    );
    assert_eq!(a.json(), generic(406, "NotAcceptable", &message));
    // Parameters are not compared, and anything the route produces or */* is fine.
    for accept in [
        "application/json;as=Table;v=v1;g=meta.k8s.io",
        "text/html, */*;q=0.1",
        "application/yaml",
    ] {
        let a = client
            .send(Method::GET, item, &[("accept", accept)], "")
            .await;
        assert_eq!(a.status, 200, "{accept}: {}", a.text());
    }

    // Table options are validated when a Table is asked for.
    let table = [("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")];
    let a = client
        .send(
            Method::GET,
            &format!("{item}?includeObject=All"),
            &table,
            "",
        )
        .await;
    assert_eq!(a.status, 400, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        "Unable to convert to Table as requested: includeObject: Invalid value: \"All\": must be 'Metadata', 'Object', 'None', or empty"
    );
    let a = client
        .send(Method::GET, &format!("{item}?includeObject=All"), &[], "")
        .await;
    assert_eq!(a.status, 200, "ignored without a Table: {}", a.text());

    // A PATCH whose Content-Type is not a patch type.
    let a = client
        .send(
            Method::PATCH,
            item,
            &[("content-type", "application/json")],
            r#"{"metadata":{"labels":{"a":"b"}}}"#,
        )
        .await;
    assert_eq!(
        (a.status.as_u16(), a.json()),
        (
            415,
            generic(415, "UnsupportedMediaType", "415: Unsupported Media Type")
        ),
        "{}",
        a.text()
    );
    let a = client.send(Method::GET, item, &[], "").await;
    assert!(
        a.json()["metadata"]["labels"].get("a").is_none(),
        "nothing was patched"
    );
    // Parameters of the Content-Type are ignored.
    let a = client
        .send(
            Method::PATCH,
            item,
            &[(
                "content-type",
                "application/merge-patch+json; charset=utf-8",
            )],
            r#"{"metadata":{"labels":{"a":"b"}}}"#,
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
}
