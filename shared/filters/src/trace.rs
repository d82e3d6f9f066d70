//! `with_tracing`: upstream's `WithTracing` (endpoints/filters/traces.go): a span per request
//! whose parent is the incoming W3C `traceparent`, so that one trace shows every role a
//! request crossed. Outermost after panic recovery.
//!
//! The span is at debug level: with tracing off it is disabled and costs nothing.

use http::{HeaderMap, HeaderName, Request};
use kas_endpoints::Body;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::Instrument;
use tracing::instrument::Instrumented;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::filter::{Inner, Next, NextFuture};

const TRACEPARENT: &str = "traceparent";

/// `component` names the role in the span: aggregator, core-apiserver, ...
pub fn with_tracing<S: Inner>(
    component: &'static str,
    req: Request<Body>,
    next: Next<S>,
) -> Instrumented<NextFuture<S>> {
    let span = tracing::debug_span!(
        "HTTP",
        component,
        method = %req.method(),
        path = req.uri().path(),
    );
    set_parent_from_headers(&span, req.headers());
    // The rest of the chain starts here, and goes on in the answer's future: both in the span.
    let answer = span.in_scope(|| next.run(req));
    answer.instrument(span)
}

struct HeaderExtractor<'a>(&'a HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(HeaderName::as_str).collect()
    }
}

/// Makes the incoming `traceparent` the parent of `span`.
fn set_parent_from_headers(span: &tracing::Span, headers: &HeaderMap) {
    if headers.contains_key(TRACEPARENT) {
        let cx = TraceContextPropagator::new().extract(&HeaderExtractor(headers));
        let _ = span.set_parent(cx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::from_fn_with_state;
    use crate::support::test_util::body_string;
    use http::Response;
    use kas_endpoints::body;
    use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use std::convert::Infallible;
    use tower::{Layer, ServiceExt};
    use tracing_subscriber::layer::SubscriberExt;

    /// Answers with the trace id of the span it runs in ("none" outside any trace).
    fn trace_id_echo() -> impl Inner {
        tower::service_fn(|_req: Request<Body>| async {
            let cx = tracing::Span::current().context();
            let span = cx.span();
            let ctx = span.span_context();
            let text = if ctx.is_valid() {
                ctx.trace_id().to_string()
            } else {
                "none".into()
            };
            Ok::<_, Infallible>(Response::new(body::full(text)))
        })
    }

    async fn trace_id(req: Request<Body>) -> String {
        let provider = SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        let _default = tracing::subscriber::set_default(subscriber);
        let svc = from_fn_with_state("aggregator", with_tracing).layer(trace_id_echo());
        body_string(svc.oneshot(req).await.unwrap()).await
    }

    #[tokio::test]
    async fn the_incoming_traceparent_is_the_parent() {
        let req = Request::get("/api/v1/pods")
            .header(
                TRACEPARENT,
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            )
            .body(body::empty())
            .unwrap();
        assert_eq!(trace_id(req).await, "0af7651916cd43dd8448eb211c80319c");
    }

    #[tokio::test]
    async fn without_traceparent_the_request_starts_a_trace() {
        let req = Request::get("/api/v1/pods").body(body::empty()).unwrap();
        let id = trace_id(req).await;
        assert_eq!(id.len(), 32, "{id}");
        assert_ne!(id, "0af7651916cd43dd8448eb211c80319c");
    }
}
