//! `with_request_metrics`: upstream's per-request metrics (endpoints/metrics/metrics.go,
//! `MonitorRequest`) as a filter: `apiserver_request_total` and
//! `apiserver_request_duration_seconds`, with upstream's names, help texts, labels, buckets
//! and label cleaning (verb, scope, dry_run).
//!
//! Upstream records in the REST handler, so requests that filters reject (401, 403) are not
//! counted there; place this filter innermost, after authorization, to match. 429s from the
//! max-in-flight filter are counted by that filter through [`RequestMetrics::record_dropped`].
//!
//! The request is recorded when the inner service returns its response. For a watch that
//! is when the headers are ready, not when the watch ends as upstream does, so watch
//! durations here are time-to-first-byte.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::header::CONTENT_TYPE;
use http::{HeaderMap, Method, Request, Response, Uri};
use kas_endpoints::{Body, RequestInfo};
use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};

use crate::filter::{Inner, Next};

/// `apiserver_request_duration_seconds` buckets, as upstream.
const DURATION_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// Verbs reported as themselves; anything else is reported as "other".
const VALID_REQUEST_METHODS: [&str; 14] = [
    "APPLY",
    "CONNECT",
    "CREATE",
    "DELETE",
    "DELETECOLLECTION",
    "GET",
    "LIST",
    "PATCH",
    "POST",
    "PROXY",
    "PUT",
    "UPDATE",
    "WATCH",
    "WATCHLIST",
];

/// Subresources whose requests are reported as CONNECT.
const VALID_CONNECT_REQUESTS: [&str; 5] = ["log", "exec", "portforward", "attach", "proxy"];

const APPLY_PATCH_CONTENT_TYPE: &str = "application/apply-patch+yaml";

/// The registered request metrics; share one per registry.
#[derive(Debug)]
pub struct RequestMetrics {
    requests: IntCounterVec,
    durations: HistogramVec,
}

impl RequestMetrics {
    /// Registers `apiserver_request_total` and `apiserver_request_duration_seconds`.
    pub fn new(registry: &Registry) -> prometheus::Result<Arc<RequestMetrics>> {
        let requests = IntCounterVec::new(
            Opts::new(
                "apiserver_request_total",
                "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, \
                 group, version, resource, scope, component, and HTTP response code.",
            ),
            &[
                "verb",
                "dry_run",
                "group",
                "version",
                "resource",
                "subresource",
                "scope",
                "component",
                "code",
            ],
        )?;
        let durations = HistogramVec::new(
            HistogramOpts::new(
                "apiserver_request_duration_seconds",
                "[STABLE] Response latency distribution in seconds for each verb, dry run value, \
                 group, version, resource, subresource, scope and component.",
            )
            .buckets(DURATION_BUCKETS.to_vec()),
            &[
                "verb",
                "dry_run",
                "group",
                "version",
                "resource",
                "subresource",
                "scope",
                "component",
            ],
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(durations.clone()))?;
        Ok(Arc::new(RequestMetrics {
            requests,
            durations,
        }))
    }

    /// Upstream's `MonitorRequest`: one request served with `code` after `elapsed`.
    pub fn record(&self, labels: &RequestLabels, component: &str, code: u16, elapsed: Duration) {
        let code = code.to_string();
        let l = labels;
        self.requests
            .with_label_values(&[
                &l.verb,
                &l.dry_run,
                &l.group,
                &l.version,
                &l.resource,
                &l.subresource,
                &l.scope,
                component,
                &code,
            ])
            .inc();
        self.durations
            .with_label_values(&[
                &l.verb,
                &l.dry_run,
                &l.group,
                &l.version,
                &l.resource,
                &l.subresource,
                &l.scope,
                component,
            ])
            .observe(elapsed.as_secs_f64());
    }

    /// Upstream's `RecordDroppedRequest`: a 429 counted, no latency observed.
    pub fn record_dropped(&self, labels: &RequestLabels, component: &str) {
        let l = labels;
        self.requests
            .with_label_values(&[
                &l.verb,
                &l.dry_run,
                &l.group,
                &l.version,
                &l.resource,
                &l.subresource,
                &l.scope,
                component,
                "429",
            ])
            .inc();
    }
}

/// The labels of one request, cleaned as upstream cleans them (all but component and code).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestLabels {
    pub verb: String,
    pub dry_run: String,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    pub scope: String,
}

impl RequestLabels {
    /// From the request and its `RequestInfo` extension; without one the method is the verb
    /// and the other labels are empty.
    pub fn from_request<B>(req: &Request<B>) -> RequestLabels {
        RequestLabels::from_parts(
            req.method(),
            req.uri(),
            req.headers(),
            req.extensions().get(),
        )
    }

    pub fn from_parts(
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        info: Option<&RequestInfo>,
    ) -> RequestLabels {
        let fallback;
        let info = match info {
            Some(info) => info,
            None => {
                fallback = RequestInfo {
                    verb: method.as_str().to_string(),
                    path: uri.path().to_string(),
                    ..Default::default()
                };
                &fallback
            }
        };
        let scope = clean_scope(info);
        let canonical = canonical_verb(&method.as_str().to_ascii_uppercase(), scope);
        // Upstream's installer passes WATCH for watch routes (including the legacy
        // `/watch/` paths); RequestInfo's verb says the same.
        let suggested = if info.verb == "watch" { "WATCH" } else { "" };
        let verb = clean_verb(&canonical, suggested, method, uri, headers, info);
        let (group, version, resource, subresource) = if info.is_resource_request {
            (
                &*info.api_group,
                &*info.api_version,
                &*info.resource,
                &*info.subresource,
            )
        } else {
            ("", "", "", "")
        };
        RequestLabels {
            verb,
            dry_run: clean_dry_run(uri),
            group: group.to_string(),
            version: version.to_string(),
            resource: resource.to_string(),
            subresource: subresource.to_string(),
            scope: scope.to_string(),
        }
    }
}

/// Upstream's `CleanScope`.
fn clean_scope(info: &RequestInfo) -> &'static str {
    if !info.name.is_empty() || info.verb == "create" {
        "resource"
    } else if !info.namespace.is_empty() {
        "namespace"
    } else if info.is_resource_request {
        "cluster"
    } else {
        ""
    }
}

/// Upstream's `CanonicalVerb`: GET and HEAD of a collection are LIST.
fn canonical_verb(upper_method: &str, scope: &str) -> String {
    match upper_method {
        "GET" | "HEAD" if scope != "resource" && !scope.is_empty() => "LIST".into(),
        "GET" | "HEAD" => "GET".into(),
        other => other.into(),
    }
}

/// Upstream's `cleanVerb` and `CleanVerb`.
fn clean_verb(
    verb: &str,
    suggested: &str,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    info: &RequestInfo,
) -> String {
    if suggested == "WATCH" || suggested == "WATCHLIST" {
        return "WATCH".into();
    }
    let mut reported = verb;
    if is_watch_query(method, uri) || verb == "WATCHLIST" {
        reported = "WATCH";
    }
    let content_type = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok());
    if verb == "PATCH" && content_type == Some(APPLY_PATCH_CONTENT_TYPE) {
        reported = "APPLY";
    }
    if info.is_resource_request && VALID_CONNECT_REQUESTS.contains(&info.subresource.as_str()) {
        reported = "CONNECT";
    }
    if VALID_REQUEST_METHODS.contains(&reported) {
        reported.into()
    } else {
        "other".into()
    }
}

/// Upstream's `getVerbIfWatch`: a GET whose first `watch` parameter is not 0 or false.
fn is_watch_query(method: &Method, uri: &Uri) -> bool {
    if !method.as_str().eq_ignore_ascii_case("GET") && !method.as_str().eq_ignore_ascii_case("LIST")
    {
        return false;
    }
    query_values(uri, "watch")
        .next()
        .is_some_and(|v| !matches!(v.to_lowercase().as_str(), "0" | "false"))
}

/// Upstream's `cleanDryRun`: "" without dryRun, "invalid" for values other than "All",
/// otherwise the sorted, deduplicated values joined by commas.
fn clean_dry_run(uri: &Uri) -> String {
    if !uri.query().is_some_and(|q| q.contains("dryRun")) {
        return String::new();
    }
    let mut values: Vec<String> = query_values(uri, "dryRun").collect();
    if values.iter().any(|v| v != "All") {
        return "invalid".into();
    }
    values.sort();
    values.dedup();
    values.join(",")
}

fn query_values<'a>(uri: &'a Uri, key: &'a str) -> impl Iterator<Item = String> + 'a {
    form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
        .filter(move |(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

/// Records the request into `metrics` with upstream's `component` label ("apiserver" for
/// the API servers).
pub fn with_request_metrics<S: Inner>(
    (metrics, component): (Arc<RequestMetrics>, &'static str),
    req: Request<Body>,
    next: Next<S>,
) -> impl Future<Output = Response<Body>> {
    let started = Instant::now();
    let labels = RequestLabels::from_request(&req);
    let answer = next.run(req);
    async move {
        let resp = answer.await;
        let code = resp.status().as_u16();
        metrics.record(&labels, component, code, started.elapsed());
        resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::from_fn_with_state;
    use http::StatusCode;
    use kas_endpoints::body;
    use std::convert::Infallible;
    use tower::{Layer, ServiceExt};

    fn resource_info(verb: &str, namespace: &str, name: &str, subresource: &str) -> RequestInfo {
        RequestInfo {
            is_resource_request: true,
            verb: verb.into(),
            api_prefix: "apis".into(),
            api_group: "apps".into(),
            api_version: "v1".into(),
            namespace: namespace.into(),
            resource: "deployments".into(),
            subresource: subresource.into(),
            name: name.into(),
            ..Default::default()
        }
    }

    fn labels(method: &str, uri: &str, info: Option<RequestInfo>) -> RequestLabels {
        labels_with(method, uri, info, HeaderMap::new())
    }

    fn labels_with(
        method: &str,
        uri: &str,
        info: Option<RequestInfo>,
        headers: HeaderMap,
    ) -> RequestLabels {
        let method: Method = method.parse().unwrap();
        let uri: Uri = uri.parse().unwrap();
        RequestLabels::from_parts(&method, &uri, &headers, info.as_ref())
    }

    #[test]
    fn verbs_are_cleaned_as_upstream() {
        let list = labels(
            "GET",
            "/apis/apps/v1/deployments",
            Some(resource_info("list", "", "", "")),
        );
        assert_eq!(
            (list.verb.as_str(), list.scope.as_str()),
            ("LIST", "cluster")
        );
        let get = labels("GET", "/x", Some(resource_info("get", "ns", "d", "")));
        assert_eq!((get.verb.as_str(), get.scope.as_str()), ("GET", "resource"));
        let watch = labels(
            "GET",
            "/x?watch=true",
            Some(resource_info("watch", "ns", "", "")),
        );
        assert_eq!(
            (watch.verb.as_str(), watch.scope.as_str()),
            ("WATCH", "namespace")
        );
        let watch_false = labels(
            "GET",
            "/x?watch=false",
            Some(resource_info("list", "ns", "", "")),
        );
        assert_eq!(watch_false.verb, "LIST");
        let watch_one = labels(
            "GET",
            "/x?watch=1",
            Some(resource_info("list", "ns", "", "")),
        );
        assert_eq!(watch_one.verb, "WATCH");
        let create = labels("POST", "/x", Some(resource_info("create", "ns", "", "")));
        assert_eq!(
            (create.verb.as_str(), create.scope.as_str()),
            ("POST", "resource")
        );
        let update = labels("PUT", "/x", Some(resource_info("update", "ns", "d", "")));
        assert_eq!(update.verb, "PUT");
        let delete_all = labels(
            "DELETE",
            "/x",
            Some(resource_info("deletecollection", "ns", "", "")),
        );
        assert_eq!(
            (delete_all.verb.as_str(), delete_all.scope.as_str()),
            ("DELETE", "namespace")
        );
        let mut apply_headers = HeaderMap::new();
        apply_headers.insert(CONTENT_TYPE, APPLY_PATCH_CONTENT_TYPE.parse().unwrap());
        let apply = labels_with(
            "PATCH",
            "/x",
            Some(resource_info("patch", "ns", "d", "")),
            apply_headers,
        );
        assert_eq!(apply.verb, "APPLY");
        let patch = labels("PATCH", "/x", Some(resource_info("patch", "ns", "d", "")));
        assert_eq!(patch.verb, "PATCH");
        let exec = labels(
            "POST",
            "/x",
            Some(resource_info("create", "ns", "p", "exec")),
        );
        assert_eq!(
            (exec.verb.as_str(), exec.subresource.as_str()),
            ("CONNECT", "exec")
        );
        let scale = labels(
            "PUT",
            "/x",
            Some(resource_info("update", "ns", "d", "scale")),
        );
        assert_eq!(scale.verb, "PUT");
        let head = labels("HEAD", "/x", Some(resource_info("get", "ns", "d", "")));
        assert_eq!(head.verb, "GET");
        let options = labels(
            "OPTIONS",
            "/x",
            Some(resource_info("options", "ns", "d", "")),
        );
        assert_eq!(options.verb, "other");
    }

    #[test]
    fn non_resource_and_missing_info() {
        let info = RequestInfo {
            verb: "get".into(),
            path: "/healthz".into(),
            ..Default::default()
        };
        let l = labels("GET", "/healthz", Some(info));
        assert_eq!(
            l,
            RequestLabels {
                verb: "GET".into(),
                ..Default::default()
            }
        );
        let l = labels("POST", "/foo", None);
        assert_eq!(
            l,
            RequestLabels {
                verb: "POST".into(),
                ..Default::default()
            }
        );
        let l = labels("BREW", "/foo", None);
        assert_eq!(l.verb, "other");
    }

    #[test]
    fn dry_run_is_cleaned() {
        let dry = |q: &str| clean_dry_run(&q.parse().unwrap());
        assert_eq!(dry("/x"), "");
        assert_eq!(dry("/x?limit=1"), "");
        assert_eq!(dry("/x?dryRun=All"), "All");
        assert_eq!(dry("/x?dryRun=All&dryRun=All"), "All");
        assert_eq!(dry("/x?dryRun=Some"), "invalid");
        assert_eq!(dry("/x?dryRun="), "invalid");
        assert_eq!(dry("/x?dryRunX=1"), "");
    }

    #[tokio::test]
    async fn records_requests_after_the_response() {
        let registry = Registry::new();
        let metrics = RequestMetrics::new(&registry).unwrap();
        let svc = from_fn_with_state((metrics.clone(), "apiserver"), with_request_metrics).layer(
            tower::service_fn(|_req: Request<Body>| async {
                let mut resp = Response::new(body::empty());
                *resp.status_mut() = StatusCode::CREATED;
                Ok::<_, Infallible>(resp)
            }),
        );
        let mut req = Request::post("/apis/apps/v1/namespaces/ns/deployments?dryRun=All")
            .body(body::empty())
            .unwrap();
        req.extensions_mut()
            .insert(resource_info("create", "ns", "", ""));
        assert_eq!(svc.oneshot(req).await.unwrap().status(), 201);

        let values = [
            "POST",
            "All",
            "apps",
            "v1",
            "deployments",
            "",
            "resource",
            "apiserver",
        ];
        let code: Vec<&str> = values.iter().copied().chain(["201"]).collect();
        assert_eq!(metrics.requests.with_label_values(&code).get(), 1);
        assert_eq!(
            metrics
                .durations
                .with_label_values(&values)
                .get_sample_count(),
            1
        );

        let text = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .unwrap();
        assert!(text.contains(
            "# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for \
             each verb, dry run value, group, version, resource, scope, component, and HTTP \
             response code.\n# TYPE apiserver_request_total counter\n"
        ));
        assert!(text.contains(
            "# HELP apiserver_request_duration_seconds [STABLE] Response latency distribution in \
             seconds for each verb, dry run value, group, version, resource, subresource, scope \
             and component.\n"
        ));
        assert!(text.contains("le=\"0.005\""));
        assert!(text.contains("le=\"60\""));
    }

    #[test]
    fn registering_twice_fails() {
        let registry = Registry::new();
        RequestMetrics::new(&registry).unwrap();
        assert!(RequestMetrics::new(&registry).is_err());
    }
}
