//! `with_max_in_flight_limit`: upstream's `WithMaxInFlightLimit`
//! (server/filters/maxinflight.go), the limiter used when API Priority and Fairness is off.
//!
//! Read-only requests (verbs get, list, watch) and all others ("mutating", as upstream: any
//! verb outside that set) each have a limit; 0 turns a limit off. Long-running requests are
//! not counted. When a limit is full the request gets upstream's 429, written with Go's
//! `http.Error` (plain text, `Retry-After: 1`), unless the user is in `system:masters`.
//!
//! Upstream holds the slot until the handler returns, i.e. until the whole response is
//! written. Here the slot travels with the response body and is released when the server
//! drops the body (after the last frame, or when the client goes away), which is the same
//! moment.

use std::future::Future;
use std::sync::Arc;

use http::header::{HeaderValue, RETRY_AFTER};
use http::{Request, Response, StatusCode};
use kas_auth::UserInfo;
use kas_auth::user::SYSTEM_PRIVILEGED_GROUP;
use kas_endpoints::{Body, RequestInfo};
use prometheus::{IntGauge, IntGaugeVec, Opts, Registry};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::filter::{Inner, Next};
use crate::metrics::{RequestLabels, RequestMetrics};
use crate::support::{GuardedBody, http_error, request_uri};

const TOO_MANY_REQUESTS_MESSAGE: &str = "Too many requests, please try again later.";
const READ_ONLY_KIND: &str = "readOnly";
const MUTATING_KIND: &str = "mutating";

/// How many requests of each kind hold a slot right now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InFlightCounts {
    pub read_only: usize,
    pub mutating: usize,
}

#[derive(Clone, Debug)]
struct Limit {
    semaphore: Arc<Semaphore>,
    max: usize,
    /// `apiserver_current_inflight_requests{request_kind=...}` when registered.
    gauge: Option<IntGauge>,
}

impl Limit {
    fn new(max: usize) -> Option<Limit> {
        (max > 0).then(|| Limit {
            semaphore: Arc::new(Semaphore::new(max)),
            max,
            gauge: None,
        })
    }

    fn in_use(&self) -> usize {
        self.max - self.semaphore.available_permits()
    }

    fn update_gauge(&self) {
        if let Some(gauge) = &self.gauge {
            gauge.set(i64::try_from(self.in_use()).unwrap_or(i64::MAX));
        }
    }
}

/// The limits [`with_max_in_flight_limit`] enforces, shared by every request.
#[derive(Clone, Debug)]
pub struct MaxInFlight {
    read_only: Option<Limit>,
    mutating: Option<Limit>,
    request_metrics: Option<(Arc<RequestMetrics>, &'static str)>,
}

impl MaxInFlight {
    /// Upstream's `--max-requests-inflight` and `--max-mutating-requests-inflight`; 0 disables
    /// that limit, both 0 disables the filter.
    pub fn new(max_requests_inflight: usize, max_mutating_requests_inflight: usize) -> Self {
        MaxInFlight {
            read_only: Limit::new(max_requests_inflight),
            mutating: Limit::new(max_mutating_requests_inflight),
            request_metrics: None,
        }
    }

    /// Registers `apiserver_current_inflight_requests`. Upstream reports the highest count
    /// of the last second, sampled by a background loop; this gauge is set to the current
    /// count whenever it changes.
    pub fn register_metrics(mut self, registry: &Registry) -> prometheus::Result<Self> {
        let gauge = inflight_gauge(registry)?;
        for (limit, kind) in [
            (&mut self.read_only, READ_ONLY_KIND),
            (&mut self.mutating, MUTATING_KIND),
        ] {
            let g = gauge.with_label_values(&[kind]);
            if let Some(limit) = limit {
                limit.gauge = Some(g);
                limit.update_gauge();
            }
        }
        Ok(self)
    }

    /// Counts rejected requests in `apiserver_request_total` with code 429, as upstream's
    /// `RecordDroppedRequest` does (the request never reaches the instrumented handler).
    pub fn with_request_metrics(
        mut self,
        metrics: Arc<RequestMetrics>,
        component: &'static str,
    ) -> Self {
        self.request_metrics = Some((metrics, component));
        self
    }

    fn limit(&self, mutating: bool) -> Option<&Limit> {
        if mutating {
            self.mutating.as_ref()
        } else {
            self.read_only.as_ref()
        }
    }

    /// Requests holding a slot now (a disabled limit counts 0).
    pub fn in_flight(&self) -> InFlightCounts {
        InFlightCounts {
            read_only: self.read_only.as_ref().map_or(0, Limit::in_use),
            mutating: self.mutating.as_ref().map_or(0, Limit::in_use),
        }
    }
}

/// Registers `apiserver_current_inflight_requests{request_kind}`, which either limiter
/// keeps (APF counts the requests it lets execute).
pub fn inflight_gauge(registry: &Registry) -> prometheus::Result<IntGaugeVec> {
    let gauge = IntGaugeVec::new(
        Opts::new(
            "apiserver_current_inflight_requests",
            "[STABLE] Maximal number of currently used inflight request limit of this \
             apiserver per request kind in last second.",
        ),
        &["request_kind"],
    )?;
    registry.register(Box::new(gauge.clone()))?;
    Ok(gauge)
}

/// Registers `apiserver_current_inqueue_requests{request_kind}`, which APF keeps (the
/// requests waiting in its queues); both series start at 0.
pub fn inqueue_gauge(registry: &Registry) -> prometheus::Result<KindGauges> {
    let gauge = IntGaugeVec::new(
        Opts::new(
            "apiserver_current_inqueue_requests",
            "[ALPHA] Maximal number of queued requests in this apiserver per request kind in \
             last second.",
        ),
        &["request_kind"],
    )?;
    registry.register(Box::new(gauge.clone()))?;
    Ok(KindGauges::of(&gauge))
}

/// A gauge's two series, resolved once (no label lookup per request).
#[derive(Clone)]
pub struct KindGauges {
    read_only: prometheus::IntGauge,
    mutating: prometheus::IntGauge,
}

impl KindGauges {
    pub fn of(gauge: &IntGaugeVec) -> KindGauges {
        KindGauges {
            read_only: gauge.with_label_values(&[READ_ONLY_KIND]),
            mutating: gauge.with_label_values(&[MUTATING_KIND]),
        }
    }

    /// The series of `verb`'s request kind.
    pub fn of_verb(&self, verb: &str) -> &prometheus::IntGauge {
        if request_kind(verb) == MUTATING_KIND {
            &self.mutating
        } else {
            &self.read_only
        }
    }
}

/// The gauge's series of a request kind: `mutating` for any verb but get, list and watch.
pub fn request_kind(verb: &str) -> &'static str {
    if matches!(verb, "get" | "list" | "watch") {
        READ_ONLY_KIND
    } else {
        MUTATING_KIND
    }
}

/// A held slot; frees it and refreshes the gauge when dropped.
struct InFlightSlot {
    permit: Option<OwnedSemaphorePermit>,
    limits: Arc<MaxInFlight>,
    mutating: bool,
}

impl Drop for InFlightSlot {
    fn drop(&mut self) {
        drop(self.permit.take());
        if let Some(limit) = self.limits.limit(self.mutating) {
            limit.update_gauge();
        }
    }
}

pub fn with_max_in_flight_limit<S: Inner>(
    limits: Arc<MaxInFlight>,
    req: Request<Body>,
    next: Next<S>,
) -> impl Future<Output = Response<Body>> {
    let answer = match admit(limits, &req) {
        Admission::Slot(slot) => Ok((Some(slot), next.run(req))),
        Admission::Unlimited => Ok((None, next.run(req))),
        Admission::Refused(refused) => Err(refused),
    };
    async move {
        match answer {
            Ok((None, answer)) => answer.await,
            Ok((Some(slot), answer)) => answer.await.map(|b| GuardedBody::wrap(b, slot)),
            Err(refused) => refused,
        }
    }
}

enum Admission {
    /// A slot of its kind's limit, held until the response body is dropped.
    Slot(InFlightSlot),
    /// No limit for its kind, long-running, or `system:masters` while the limit is full.
    Unlimited,
    /// Upstream's 429, or a 500 for a chain without `RequestInfo`.
    Refused(Response<Body>),
}

fn admit(limits: Arc<MaxInFlight>, req: &Request<Body>) -> Admission {
    if limits.read_only.is_none() && limits.mutating.is_none() {
        return Admission::Unlimited;
    }
    let Some(info) = req.extensions().get::<RequestInfo>() else {
        let err = "no RequestInfo found in context, handler chain must be wrong";
        tracing::error!("{err}");
        let msg = format!(
            "Internal Server Error: {}",
            crate::support::go_quote(&request_uri(req))
        );
        return Admission::Refused(http_error(StatusCode::INTERNAL_SERVER_ERROR, &msg));
    };
    if info.is_long_running() {
        return Admission::Unlimited;
    }
    let mutating = !matches!(info.verb.as_str(), "get" | "list" | "watch");
    let Some(limit) = limits.limit(mutating) else {
        return Admission::Unlimited;
    };
    match limit.semaphore.clone().try_acquire_owned() {
        Ok(permit) => {
            limit.update_gauge();
            Admission::Slot(InFlightSlot {
                permit: Some(permit),
                limits,
                mutating,
            })
        }
        Err(_) if is_privileged(req) => Admission::Unlimited,
        Err(_) => {
            if let Some((metrics, component)) = &limits.request_metrics {
                metrics.record_dropped(&RequestLabels::from_request(req), component);
            }
            Admission::Refused(too_many_requests())
        }
    }
}

/// `system:masters` always gets an answer: a super-admin or a loopback connection.
fn is_privileged(req: &Request<Body>) -> bool {
    req.extensions()
        .get::<UserInfo>()
        .is_some_and(|u| u.groups.iter().any(|g| g == SYSTEM_PRIVILEGED_GROUP))
}

fn too_many_requests() -> Response<Body> {
    let mut resp = http_error(StatusCode::TOO_MANY_REQUESTS, TOO_MANY_REQUESTS_MESSAGE);
    resp.headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::from_fn_with_state;
    use crate::support::test_util::body_string;
    use kas_endpoints::body;
    use std::convert::Infallible;
    use tokio::sync::oneshot;
    use tower::{Layer, ServiceExt};

    fn info(verb: &str) -> RequestInfo {
        RequestInfo {
            is_resource_request: true,
            path: "/api/v1/namespaces/default/pods".into(),
            verb: verb.into(),
            api_prefix: "api".into(),
            api_version: "v1".into(),
            namespace: "default".into(),
            resource: "pods".into(),
            parts: vec!["namespaces".into(), "default".into(), "pods".into()],
            ..Default::default()
        }
    }

    fn req(verb: &str) -> Request<Body> {
        let mut req = Request::get("/api/v1/namespaces/default/pods")
            .body(body::empty())
            .unwrap();
        req.extensions_mut().insert(info(verb));
        req
    }

    fn limited(limits: &Arc<MaxInFlight>, inner: impl Inner) -> impl Inner {
        from_fn_with_state(limits.clone(), with_max_in_flight_limit).layer(inner)
    }

    fn ok_svc() -> impl Inner {
        tower::service_fn(|_req: Request<Body>| async {
            Ok::<_, Infallible>(Response::new(body::full("ok")))
        })
    }

    async fn assert_429(resp: Response<Body>) {
        assert_eq!(resp.status(), 429);
        assert_eq!(resp.headers()["retry-after"], "1");
        assert_eq!(resp.headers()["content-type"], "text/plain; charset=utf-8");
        assert_eq!(
            body_string(resp).await,
            "Too many requests, please try again later.\n"
        );
    }

    #[tokio::test]
    async fn rejects_when_full_and_frees_with_the_body() {
        let limits = Arc::new(MaxInFlight::new(1, 1));
        let svc = limited(&limits, ok_svc());
        let held = svc.clone().oneshot(req("list")).await.unwrap();
        assert_eq!(
            limits.in_flight(),
            InFlightCounts {
                read_only: 1,
                mutating: 0
            }
        );
        assert_429(svc.clone().oneshot(req("get")).await.unwrap()).await;
        // The mutating limit is separate.
        let created = svc.clone().oneshot(req("create")).await.unwrap();
        assert_eq!(created.status(), 200);
        assert_eq!(
            limits.in_flight(),
            InFlightCounts {
                read_only: 1,
                mutating: 1
            }
        );
        assert_429(svc.clone().oneshot(req("delete")).await.unwrap()).await;
        // Finishing a body frees its slot.
        assert_eq!(body_string(held).await, "ok");
        drop(created);
        assert_eq!(limits.in_flight(), InFlightCounts::default());
        assert_eq!(svc.oneshot(req("watch")).await.unwrap().status(), 200);
    }

    #[tokio::test]
    async fn holds_slot_while_handler_runs() {
        let (tx, rx) = oneshot::channel::<()>();
        let rx = Arc::new(tokio::sync::Mutex::new(Some(rx)));
        let limits = Arc::new(MaxInFlight::new(0, 1));
        let svc = limited(
            &limits,
            tower::service_fn(move |_req: Request<Body>| {
                let rx = rx.clone();
                async move {
                    let first = rx.lock().await.take();
                    if let Some(rx) = first {
                        let _ = rx.await;
                    }
                    Ok::<_, Infallible>(Response::new(body::empty()))
                }
            }),
        );
        let first = tokio::spawn(svc.clone().oneshot(req("update")));
        while limits.in_flight().mutating == 0 {
            tokio::task::yield_now().await;
        }
        assert_429(svc.clone().oneshot(req("patch")).await.unwrap()).await;
        // Read-only requests are unlimited here (limit 0).
        assert_eq!(svc.clone().oneshot(req("get")).await.unwrap().status(), 200);
        tx.send(()).unwrap();
        drop(first.await.unwrap().unwrap());
        assert_eq!(svc.oneshot(req("patch")).await.unwrap().status(), 200);
    }

    #[tokio::test]
    async fn long_running_and_privileged_requests_pass() {
        let limits = Arc::new(MaxInFlight::new(1, 1));
        let svc = limited(&limits, ok_svc());
        let _held = svc.clone().oneshot(req("get")).await.unwrap();
        // A watch is long-running: exempt and not counted.
        let watch = svc.clone().oneshot(req("watch")).await.unwrap();
        assert_eq!(watch.status(), 200);
        assert_eq!(limits.in_flight().read_only, 1);
        let mut admin = req("list");
        admin.extensions_mut().insert(UserInfo {
            name: "admin".into(),
            groups: vec![SYSTEM_PRIVILEGED_GROUP.into()],
            ..Default::default()
        });
        assert_eq!(svc.oneshot(admin).await.unwrap().status(), 200);
    }

    #[tokio::test]
    async fn missing_request_info_is_500_unless_disabled() {
        let svc = limited(&Arc::new(MaxInFlight::new(1, 1)), ok_svc());
        let req = Request::get("/api/v1/pods?limit=1")
            .body(body::empty())
            .unwrap();
        let resp = svc.oneshot(req).await.unwrap();
        assert_eq!(resp.status(), 500);
        assert_eq!(
            body_string(resp).await,
            "Internal Server Error: \"/api/v1/pods?limit=1\"\n"
        );

        let svc = limited(&Arc::new(MaxInFlight::new(0, 0)), ok_svc());
        let req = Request::get("/api/v1/pods").body(body::empty()).unwrap();
        assert_eq!(svc.oneshot(req).await.unwrap().status(), 200);
    }

    #[tokio::test]
    async fn reports_gauge_and_dropped_requests() {
        let registry = Registry::new();
        let metrics = RequestMetrics::new(&registry).unwrap();
        let limits = MaxInFlight::new(1, 1)
            .register_metrics(&registry)
            .unwrap()
            .with_request_metrics(metrics.clone(), "apiserver");
        let svc = limited(&Arc::new(limits), ok_svc());
        let held = svc.clone().oneshot(req("list")).await.unwrap();
        assert_429(svc.clone().oneshot(req("list")).await.unwrap()).await;
        let text = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .unwrap();
        assert!(
            text.contains("apiserver_current_inflight_requests{request_kind=\"readOnly\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("apiserver_current_inflight_requests{request_kind=\"mutating\"} 0"),
            "{text}"
        );
        assert!(
            text.contains(
                "apiserver_request_total{code=\"429\",component=\"apiserver\",dry_run=\"\",group=\"\",\
                 resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 1"
            ),
            "{text}"
        );
        drop(held);
        let text = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .unwrap();
        assert!(
            text.contains("apiserver_current_inflight_requests{request_kind=\"readOnly\"} 0"),
            "{text}"
        );
    }
}
