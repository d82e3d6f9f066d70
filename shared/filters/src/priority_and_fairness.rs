//! `with_priority_and_fairness`: upstream's `WithPriorityAndFairness`
//! (server/filters/priority-and-fairness.go) around kas-flowcontrol.
//!
//! Long-running requests other than watches pass. Others are classified, estimated and
//! started in their priority level; the answer carries the matched schema's and level's
//! UIDs (`X-Kubernetes-PF-FlowSchema-UID`, `X-Kubernetes-PF-PriorityLevel-UID`). A request
//! its level rejects (queue full, Reject type, or waited past a quarter of its timeout)
//! gets upstream's 429 with the `Retry-After` of its level's recent rejections.
//!
//! A request holds its seats until the server drops the response body, as with the
//! max-in-flight limiter; a watch holds its seat until its answer starts (upstream's
//! watch initialization signal) and stays registered for the mutating work estimate
//! until it ends.
//!
//! A request the delegating role already admitted (`kas_flowcontrol::handoff`) passes.

use std::future::Future;
use std::sync::Arc;

use futures_util::future::Either;
use http::header::{HeaderName, HeaderValue, RETRY_AFTER};
use http::{Request, Response, StatusCode};
use kas_auth::UserInfo;
use kas_endpoints::{Body, RequestInfo};
use kas_flowcontrol::handoff::{FlowControlled, HANDOFF_HEADER};
use kas_flowcontrol::rule::RequestDigest;
use kas_flowcontrol::{ApfRequest, PriorityAndFairness};

use crate::filter::{Inner, Next};
use crate::max_inflight::KindGauges;
use crate::metrics::{RequestLabels, RequestMetrics};
use crate::support::{GuardedBody, go_quote, http_error, request_uri};
use crate::timeout::RequestDeadline;

const TOO_MANY_REQUESTS_MESSAGE: &str = "Too many requests, please try again later.";
/// Upstream's `ResponseHeaderMatchedFlowSchemaUID` and `...PriorityLevelConfigurationUID`.
static FLOW_SCHEMA_UID: HeaderName = HeaderName::from_static("x-kubernetes-pf-flowschema-uid");
static PRIORITY_LEVEL_UID: HeaderName =
    HeaderName::from_static("x-kubernetes-pf-prioritylevel-uid");

/// The filter's state: APF, where to count rejections, and the requests executing
/// (`apiserver_current_inflight_requests`) and waiting (`apiserver_current_inqueue_requests`)
/// by request kind.
pub struct FlowControl {
    pub apf: Arc<PriorityAndFairness>,
    pub request_metrics: Option<(Arc<RequestMetrics>, &'static str)>,
    pub inflight: Option<KindGauges>,
    pub inqueue: Option<KindGauges>,
}

/// One request in a gauge of [`FlowControl`], until dropped.
struct Counted(Option<prometheus::IntGauge>);

impl Counted {
    fn new(gauges: Option<&KindGauges>, verb: &str) -> Counted {
        Counted(gauges.map(|g| {
            let gauge = g.of_verb(verb).clone();
            gauge.inc();
            gauge
        }))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        if let Some(gauge) = &self.0 {
            gauge.dec();
        }
    }
}

pub fn with_priority_and_fairness<S: Inner>(
    state: Arc<FlowControl>,
    mut req: Request<Body>,
    next: Next<S>,
) -> impl Future<Output = Response<Body>> {
    let handed_in = req.headers_mut().remove(HANDOFF_HEADER).is_some();
    let pass = match req.extensions().get::<RequestInfo>() {
        None => Some(Err(missing("no RequestInfo found in context", &req))),
        Some(info) if info.is_long_running() && info.verb != "watch" => Some(Ok(())),
        Some(_) if handed_in => Some(Ok(())),
        Some(_) if req.extensions().get::<UserInfo>().is_none() => {
            Some(Err(missing("no User found in context", &req)))
        }
        Some(_) => None,
    };
    match pass {
        Some(Ok(())) => {
            if handed_in {
                req.extensions_mut().insert(FlowControlled);
            }
            Either::Left(Either::Left(next.run(req)))
        }
        Some(Err(resp)) => Either::Left(Either::Right(std::future::ready(resp))),
        None => Either::Right(admit_and_run(state, req, next)),
    }
}

async fn admit_and_run<S: Inner>(
    state: Arc<FlowControl>,
    mut req: Request<Body>,
    next: Next<S>,
) -> Response<Body> {
    let (Some(info), Some(user)) = (
        req.extensions().get::<RequestInfo>(),
        req.extensions().get::<UserInfo>(),
    ) else {
        return missing("no RequestInfo found in context", &req);
    };
    let apf_req = ApfRequest {
        digest: RequestDigest {
            is_resource_request: info.is_resource_request,
            verb: &info.verb,
            api_group: &info.api_group,
            api_version: &info.api_version,
            resource: &info.resource,
            subresource: &info.subresource,
            namespace: &info.namespace,
            name: &info.name,
            path: &info.path,
            user,
        },
        query: req.uri().query().unwrap_or(""),
        field_selector: (!info.field_selector.is_empty()).then_some(info.field_selector.as_str()),
        deadline: req.extensions().get::<RequestDeadline>().map(|d| d.0),
    };
    let is_watch = info.verb == "watch";
    let waiting = Counted::new(state.inqueue.as_ref(), &info.verb);
    let decision = state.apf.admit(&apf_req).await;
    drop(waiting);
    let Some(decision) = decision else {
        return missing("no priority level for the request", &req);
    };
    match decision {
        Ok(admitted) => {
            let forget = is_watch
                .then(|| state.apf.register_watch(&apf_req))
                .flatten();
            let headers = uid_headers(&admitted.classification);
            let executing = Counted::new(state.inflight.as_ref(), &info.verb);
            req.extensions_mut().insert(FlowControlled);
            let mut resp = next.run(req).await;
            set_headers(&mut resp, headers);
            if is_watch {
                // Initialized: the seat is free; the registration lasts as long as the watch.
                drop((admitted, executing));
                match forget {
                    Some(forget) => resp.map(|b| GuardedBody::wrap(b, forget)),
                    None => resp,
                }
            } else {
                resp.map(|b| GuardedBody::wrap(b, (admitted, executing)))
            }
        }
        Err(rejected) => {
            if let Some((metrics, component)) = &state.request_metrics {
                metrics.record_dropped(&RequestLabels::from_request(&req), component);
            }
            let mut resp = http_error(StatusCode::TOO_MANY_REQUESTS, TOO_MANY_REQUESTS_MESSAGE);
            set_headers(&mut resp, uid_headers(&rejected.classification));
            if let Ok(v) = HeaderValue::from_str(&rejected.retry_after.to_string()) {
                resp.headers_mut().insert(RETRY_AFTER, v);
            }
            resp
        }
    }
}

fn uid_headers(
    classification: &kas_flowcontrol::controller::Classification,
) -> [(HeaderName, Option<HeaderValue>); 2] {
    let level_uid = classification.level.config().metadata.uid.clone();
    [
        (
            PRIORITY_LEVEL_UID.clone(),
            HeaderValue::from_str(&level_uid).ok(),
        ),
        (
            FLOW_SCHEMA_UID.clone(),
            HeaderValue::from_str(&classification.flow_schema.metadata.uid).ok(),
        ),
    ]
}

fn set_headers(resp: &mut Response<Body>, headers: [(HeaderName, Option<HeaderValue>); 2]) {
    for (name, value) in headers {
        if let Some(value) = value {
            resp.headers_mut().insert(name, value);
        }
    }
}

/// Upstream's `handleError`: a 500 naming the request.
fn missing(err: &str, req: &Request<Body>) -> Response<Body> {
    tracing::error!("{err}");
    let msg = format!("Internal Server Error: {}", go_quote(&request_uri(req)));
    http_error(StatusCode::INTERNAL_SERVER_ERROR, &msg)
}

/// The limiter a chain runs: APF, or upstream's max-in-flight limiter when
/// `--enable-priority-and-fairness=false`.
#[derive(Clone)]
pub enum ConcurrencyLimit {
    MaxInFlight(Arc<crate::MaxInFlight>),
    PriorityAndFairness(Arc<FlowControl>),
}

pub fn with_concurrency_limit<S: Inner>(
    limit: ConcurrencyLimit,
    req: Request<Body>,
    next: Next<S>,
) -> impl Future<Output = Response<Body>> {
    match limit {
        ConcurrencyLimit::MaxInFlight(limits) => {
            Either::Left(crate::with_max_in_flight_limit(limits, req, next))
        }
        ConcurrencyLimit::PriorityAndFairness(state) => {
            Either::Right(with_priority_and_fairness(state, req, next))
        }
    }
}
