//! A two-version CRD whose conversion webhook (a TLS server in this test) converts between
//! `v1` (`spec.hostPort: "host:port"`) and `v2` (`spec.host`, `spec.port`): objects read,
//! written, listed, patched and watched through either version come out in that version;
//! a list is one review; objects stored in an earlier storage version are converted when
//! read; a webhook that cannot be reached fails the request with upstream's message.
//! Field selectors of a version select on that version's form (lists, pages, watches).
//! An object the cache could not convert after a storage-version switch is converted when
//! it is served, and fails the request while the webhook fails.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use kas_e2e::start_cluster;
use kas_e2e::tls_server::TlsServer;
use serde_json::{Value, json};

fn convert(obj: &Value, desired: &str) -> Value {
    let mut out = obj.clone();
    let spec = out["spec"].as_object_mut().cloned().unwrap_or_default();
    let mut new_spec = serde_json::Map::new();
    if desired.ends_with("/v2") {
        if let Some((host, port)) = spec
            .get("hostPort")
            .and_then(Value::as_str)
            .and_then(|hp| hp.split_once(':'))
        {
            new_spec.insert("host".into(), json!(host));
            new_spec.insert("port".into(), json!(port.parse::<i64>().unwrap_or(0)));
        }
    } else if let (Some(host), Some(port)) = (spec.get("host"), spec.get("port")) {
        new_spec.insert(
            "hostPort".into(),
            json!(format!("{}:{}", host.as_str().unwrap_or(""), port)),
        );
    }
    out["spec"] = Value::Object(new_spec);
    out["apiVersion"] = json!(desired);
    out
}

/// The webhook: converts every object it gets; counts reviews and objects.
fn webhook(reviews: Arc<AtomicUsize>, objects: Arc<AtomicUsize>) -> TlsServer {
    failing_webhook(reviews, objects, Arc::new(AtomicBool::new(false)))
}

/// The webhook, answering every review with a failure while `failing` holds.
fn failing_webhook(
    reviews: Arc<AtomicUsize>,
    objects: Arc<AtomicUsize>,
    failing: Arc<AtomicBool>,
) -> TlsServer {
    TlsServer::start(move |req| {
        let review: Value = serde_json::from_slice(req.body()).unwrap_or_default();
        let request = &review["request"];
        let desired = request["desiredAPIVersion"].as_str().unwrap_or_default();
        let items = request["objects"].as_array().cloned().unwrap_or_default();
        reviews.fetch_add(1, Ordering::SeqCst);
        objects.fetch_add(items.len(), Ordering::SeqCst);
        let converted: Vec<Value> = items.iter().map(|o| convert(o, desired)).collect();
        let result = if failing.load(Ordering::SeqCst) {
            json!({"status": "Failure", "message": "not now"})
        } else {
            json!({"status": "Success"})
        };
        let answer = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "response": {"uid": request["uid"], "result": result, "convertedObjects": converted},
        });
        http::Response::builder()
            .header("content-type", "application/json")
            .body(Bytes::from(serde_json::to_vec(&answer).unwrap()))
            .unwrap()
    })
}

fn crd(url: &str, ca_pem: &str, storage: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let (v1_storage, v2_storage) = (storage == "v1", storage == "v2");
    format!(
        r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: endpoints.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {{plural: endpoints, singular: endpoint, kind: Endpoint, listKind: EndpointList}}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig:
        url: {url}
        caBundle: {ca}
  versions:
  - name: v1
    served: true
    storage: {v1_storage}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              hostPort: {{type: string}}
    selectableFields: [{{jsonPath: .spec.hostPort}}]
  - name: v2
    served: true
    storage: {v2_storage}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              host: {{type: string}}
              port: {{type: integer}}
    selectableFields: [{{jsonPath: .spec.host}}]
"#
    )
}

fn retry<T>(what: &str, mut attempt: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match attempt() {
            Ok(v) => return v,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("{what}: {e}"),
        }
    }
}

#[test]
fn a_conversion_webhook_converts_both_ways_on_read_write_list_and_watch() {
    let c = start_cluster(|_| {});
    let (reviews, objects) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let server = webhook(reviews.clone(), objects.clone());
    let url = server.url("/convert");
    let ok = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    ok(c.kubectl_stdin(&["apply"], &crd(&url, &server.ca_pem, "v1")));
    let get = |resource: &str, name: &str| -> Result<Value, String> {
        let out = c.kubectl(&["get", resource, name, "-o", "json"]);
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
    };

    // Written through v1, read through v2 (and v1 as stored).
    retry("create through v1", || {
        let out = c.kubectl_stdin(
            &["create"],
            "apiVersion: example.com/v1\nkind: Endpoint\nmetadata: {name: one}\nspec: {hostPort: \"a.example:80\"}\n",
        );
        out.status
            .success()
            .then_some(())
            .ok_or_else(|| String::from_utf8_lossy(&out.stderr).into_owned())
    });
    let v2 = retry("read through v2", || get("endpoints.v2.example.com", "one"));
    assert_eq!(v2["apiVersion"], "example.com/v2");
    assert_eq!(v2["spec"], json!({"host": "a.example", "port": 80}));
    let v1 = get("endpoints.v1.example.com", "one").unwrap();
    assert_eq!(v1["spec"], json!({"hostPort": "a.example:80"}));
    assert_eq!(v1["metadata"]["uid"], v2["metadata"]["uid"]);

    // Written through v2: stored as v1, answered as v2.
    let created = ok(c.kubectl_stdin(
        &["create", "-o", "json"],
        "apiVersion: example.com/v2\nkind: Endpoint\nmetadata: {name: two}\nspec: {host: b.example, port: 443}\n",
    ));
    let created: Value = serde_json::from_str(&created).unwrap();
    assert_eq!(created["spec"], json!({"host": "b.example", "port": 443}));
    assert_eq!(
        get("endpoints.v1.example.com", "two").unwrap()["spec"],
        json!({"hostPort": "b.example:443"})
    );

    // A list through v2 is one review of both objects.
    let before = reviews.load(Ordering::SeqCst);
    let list: Value = serde_json::from_str(&ok(c.kubectl(&[
        "get",
        "endpoints.v2.example.com",
        "-o",
        "json",
    ])))
    .unwrap();
    let specs: Vec<&Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["spec"])
        .collect();
    assert_eq!(
        specs,
        [
            &json!({"host": "a.example", "port": 80}),
            &json!({"host": "b.example", "port": 443})
        ]
    );
    assert_eq!(
        reviews.load(Ordering::SeqCst) - before,
        1,
        "one review for the list"
    );

    // A merge patch through v2 applies to the v2 form.
    ok(c.kubectl(&[
        "patch",
        "endpoints.v2.example.com",
        "two",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"port":8443}}"#,
    ]));
    assert_eq!(
        get("endpoints.v1.example.com", "two").unwrap()["spec"],
        json!({"hostPort": "b.example:8443"})
    );

    // A watch through v2 sees a change made through v1 in the v2 form.
    let mut watch = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(c.kubeconfig_path())
        .args([
            "get",
            "endpoints.v2.example.com",
            "one",
            "-w",
            "-o",
            "json",
            "--output-watch-events",
            "--request-timeout=4s",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl");
    std::thread::sleep(Duration::from_millis(700));
    ok(c.kubectl(&[
        "patch",
        "endpoints.v1.example.com",
        "one",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"hostPort":"a.example:81"}}"#,
    ]));
    std::thread::sleep(Duration::from_millis(700));
    let _ = watch.kill();
    let out = watch.wait_with_output().expect("kubectl -w");
    let text = String::from_utf8_lossy(&out.stdout);
    let events: Vec<Value> = serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .filter_map(Result::ok)
        .collect();
    let modified = events
        .iter()
        .find(|e| e["type"] == "MODIFIED")
        .unwrap_or_else(|| panic!("no MODIFIED event: {text}"));
    assert_eq!(modified["object"]["apiVersion"], "example.com/v2");
    assert_eq!(
        modified["object"]["spec"],
        json!({"host": "a.example", "port": 81})
    );

    // The storage version becomes v2: objects stored as v1 read through either version.
    ok(c.kubectl_stdin(&["apply"], &crd(&url, &server.ca_pem, "v2")));
    // Created through v2 once v2 is stored: no review (before extensions has seen the
    // switch, the create converts it to v1; then it goes again).
    retry("a create through v2 stored as v2", || {
        let before = reviews.load(Ordering::SeqCst);
        ok(c.kubectl_stdin(
            &["create"],
            "apiVersion: example.com/v2\nkind: Endpoint\nmetadata: {name: three}\nspec: {host: c.example, port: 1}\n",
        ));
        if reviews.load(Ordering::SeqCst) == before {
            return Ok(());
        }
        ok(c.kubectl(&["delete", "endpoints.v2.example.com", "three"]));
        Err("converted to v1".to_owned())
    });
    retry("old objects through v2 after the switch", || {
        let one = get("endpoints.v2.example.com", "one")?;
        (one["spec"] == json!({"host": "a.example", "port": 81}))
            .then_some(())
            .ok_or(one.to_string())
    });
    assert_eq!(
        get("endpoints.v1.example.com", "three").unwrap()["spec"],
        json!({"hostPort": "c.example:1"})
    );
    let crd_now = c.kubectl_json(&["get", "crd", "endpoints.example.com"]);
    assert_eq!(crd_now["status"]["storedVersions"], json!(["v1", "v2"]));

    // Without the webhook, reads that need it fail with upstream's message.
    let addr = server.addr;
    drop(server);
    let out = c.kubectl(&["get", "endpoints.v1.example.com", "three"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim_end(),
        format!(
            "Error from server: conversion webhook for example.com/v2, Kind=Endpoint failed: Post \"https://{addr}/convert\": dial tcp {addr}: connect: connection refused"
        )
    );
    // What needs no conversion still reads.
    assert_eq!(
        get("endpoints.v2.example.com", "three").unwrap()["spec"],
        json!({"host": "c.example", "port": 1})
    );
}

/// The events `kubectl get -w` printed (`--output-watch-events -o json`) while `act` ran.
fn watch_events(c: &kas_e2e::TestCluster, args: &[&str], act: impl FnOnce()) -> Vec<Value> {
    let mut watch = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(c.kubeconfig_path())
        .args([
            "get",
            "-w",
            "-o",
            "json",
            "--output-watch-events",
            "--request-timeout=4s",
        ])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl");
    std::thread::sleep(Duration::from_millis(700));
    act();
    std::thread::sleep(Duration::from_millis(700));
    let _ = watch.kill();
    let out = watch.wait_with_output().expect("kubectl -w");
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .filter_map(Result::ok)
        .collect()
}

#[test]
fn field_selectors_select_on_the_requested_versions_form() {
    let c = start_cluster(|_| {});
    let (reviews, objects) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let server = webhook(reviews, objects);
    c.kubectl_stdin(
        &["apply"],
        &crd(&server.url("/convert"), &server.ca_pem, "v1"),
    );
    let create = |name: &str, host_port: &str| {
        let manifest = format!(
            "apiVersion: example.com/v1\nkind: Endpoint\nmetadata: {{name: {name}}}\nspec: {{hostPort: \"{host_port}\"}}\n"
        );
        retry("create through v1", || {
            let out = c.kubectl_stdin(&["create"], &manifest);
            out.status
                .success()
                .then_some(())
                .ok_or_else(|| String::from_utf8_lossy(&out.stderr).into_owned())
        })
    };
    create("a", "a.example:80");
    create("b", "b.example:443");
    create("c", "a.example:81");
    let names = |args: &[&str]| -> String {
        let mut all = vec!["get", "-o", "name"];
        all.extend_from_slice(args);
        c.kubectl_ok(&all)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };

    // v2's field, which the stored v1 form does not have, selects through v2.
    let v2 = "endpoints.v2.example.com";
    let selected = "endpoint.example.com/a endpoint.example.com/c";
    assert_eq!(
        names(&[v2, "--field-selector", "spec.host=a.example"]),
        selected
    );
    // Pages count the selected objects: two pages of one, then the end.
    let page: Value = serde_json::from_str(&c.kubectl_ok(&[
        "get",
        "--raw",
        "/apis/example.com/v2/namespaces/default/endpoints?fieldSelector=spec.host%3Da.example&limit=1",
    ]))
    .unwrap();
    assert_eq!(page["items"].as_array().map(Vec::len), Some(1));
    assert_eq!(page["items"][0]["metadata"]["name"], "a");
    let token = page["metadata"]["continue"]
        .as_str()
        .expect("a continue token");
    let next: Value = serde_json::from_str(&c.kubectl_ok(&[
        "get",
        "--raw",
        &format!(
            "/apis/example.com/v2/namespaces/default/endpoints?fieldSelector=spec.host%3Da.example&limit=1&continue={token}"
        ),
    ]))
    .unwrap();
    assert_eq!(next["items"][0]["metadata"]["name"], "c");
    // The last page's continue is empty, as an unstructured list's always is.
    assert_eq!(next["metadata"]["continue"], "", "{next}");
    assert_eq!(
        names(&[
            v2,
            "--field-selector",
            "spec.host!=a.example",
            "--chunk-size=1"
        ]),
        "endpoint.example.com/b"
    );
    // v1's field selects through v1 (the stored form).
    assert_eq!(
        names(&[
            "endpoints.v1.example.com",
            "--field-selector",
            "spec.hostPort=b.example:443"
        ]),
        "endpoint.example.com/b"
    );

    // A watch through v2 from the listed state: an object moving out of the selection is
    // DELETED (its previous state), one moving in is ADDED.
    let patch = |name: &str, host_port: &str| {
        c.kubectl_ok(&[
            "patch",
            "endpoints.v1.example.com",
            name,
            "--type",
            "merge",
            "-p",
            &format!(r#"{{"spec":{{"hostPort":"{host_port}"}}}}"#),
        ]);
    };
    let events = watch_events(&c, &[v2, "--field-selector", "spec.host=b.example"], || {
        patch("b", "z.example:443");
        patch("a", "b.example:80");
    });
    let seen: Vec<(String, String, String)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_owned(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                e["object"]["spec"]["host"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    let ev = |t: &str, n: &str, h: &str| (t.to_owned(), n.to_owned(), h.to_owned());
    assert_eq!(
        seen,
        [
            ev("ADDED", "b", "b.example"),
            ev("DELETED", "b", "b.example"),
            ev("ADDED", "a", "b.example"),
        ],
        "{events:?}"
    );
    assert_eq!(events[1]["object"]["apiVersion"], "example.com/v2");
}

#[test]
fn an_object_the_cache_could_not_convert_is_converted_when_served() {
    let c = start_cluster(|_| {});
    let failing = Arc::new(AtomicBool::new(false));
    let (reviews, objects) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let server = failing_webhook(reviews, objects, failing.clone());
    let url = server.url("/convert");
    c.kubectl_stdin(&["apply"], &crd(&url, &server.ca_pem, "v1"));
    retry("create through v1", || {
        let out = c.kubectl_stdin(
            &["create"],
            "apiVersion: example.com/v1\nkind: Endpoint\nmetadata: {name: a}\nspec: {hostPort: \"a.example:80\"}\n",
        );
        out.status
            .success()
            .then_some(())
            .ok_or_else(|| String::from_utf8_lossy(&out.stderr).into_owned())
    });

    // The storage version becomes v2 while the webhook fails: the cache cannot convert `a`.
    failing.store(true, Ordering::SeqCst);
    c.kubectl_stdin(&["apply"], &crd(&url, &server.ca_pem, "v2"));
    retry("a create through v2 needing no conversion", || {
        let out = c.kubectl_stdin(
            &["create"],
            "apiVersion: example.com/v2\nkind: Endpoint\nmetadata: {name: b}\nspec: {host: b.example, port: 1}\n",
        );
        out.status
            .success()
            .then_some(())
            .ok_or_else(|| String::from_utf8_lossy(&out.stderr).into_owned())
    });
    let v2 = "endpoints.v2.example.com";
    let failure =
        "Error from server: conversion webhook for example.com/v1, Kind=Endpoint failed: not now";
    let err = c.kubectl_fails(&["get", v2, "a"]);
    assert_eq!(err.trim_end(), failure);
    let err = c.kubectl_fails(&["get", v2]);
    assert_eq!(err.trim_end(), failure);
    assert_eq!(
        c.kubectl_json(&["get", v2, "b"])["spec"],
        json!({"host": "b.example", "port": 1})
    );

    // The webhook recovers: `a` is converted when served.
    failing.store(false, Ordering::SeqCst);
    let a = c.kubectl_json(&["get", v2, "a"]);
    assert_eq!(a["apiVersion"], "example.com/v2");
    assert_eq!(a["spec"], json!({"host": "a.example", "port": 80}));
    let list = c.kubectl_json(&["get", v2]);
    let specs: Vec<&Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["spec"])
        .collect();
    assert_eq!(
        specs,
        [
            &json!({"host": "a.example", "port": 80}),
            &json!({"host": "b.example", "port": 1})
        ]
    );
    // Updated through v2, it is stored as v2.
    c.kubectl_ok(&["label", v2, "a", "x=y"]);
    failing.store(true, Ordering::SeqCst);
    assert_eq!(
        c.kubectl_json(&["get", v2, "a"])["metadata"]["labels"]["x"],
        "y"
    );
}
