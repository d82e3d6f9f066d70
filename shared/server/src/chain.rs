//! The filter chain, built in one place, in request order (upstream's
//! `DefaultBuildHandlerChain`, read from the outside in): panic recovery → tracing →
//! request info → timeout → authentication → max in-flight → authorization → metrics →
//! the role's routes. Max in-flight sits after authentication, as upstream's does, because
//! `system:masters` is exempt from it.

use kas_filters::{
    AuthenticationLayer, AuthorizationLayer, MaxInFlightLayer, PanicRecoveryLayer,
    RequestInfoLayer, RequestMetrics, RequestMetricsLayer, TimeoutLayer,
};
use tower::ServiceBuilder;

use crate::config::CompletedConfig;
use crate::trace::TraceLayer;
use crate::{Handler, Result};

pub fn build_handler_chain(config: &CompletedConfig, handler: Handler) -> Result<Handler> {
    let metrics = RequestMetrics::new(&config.registry)?;
    let chain = ServiceBuilder::new()
        // Outermost, so that a panic anywhere below becomes a 500 and not a dropped stream.
        .layer(PanicRecoveryLayer::new())
        .layer(TraceLayer::new(config.component))
        .layer(RequestInfoLayer::new(config.request_info_factory.clone()))
        // Upstream's order: the deadline covers authentication and everything after it.
        .layer(TimeoutLayer::new(config.request_timeout))
        .layer(AuthenticationLayer::new(config.authenticator.clone()))
        // After authentication: system:masters is exempt from the limits, as upstream.
        // Rejections (429) are counted in apiserver_request_total as upstream counts them.
        .layer(
            MaxInFlightLayer::new(
                config.max_requests_inflight,
                config.max_mutating_requests_inflight,
            )
            .register_metrics(&config.registry)?
            .with_request_metrics(metrics.clone(), "apiserver"),
        )
        .layer(AuthorizationLayer::new(config.authorizer.clone()))
        // Innermost, as upstream counts in the handler: 401s and 403s are not counted.
        .layer(RequestMetricsLayer::new(metrics, "apiserver"))
        .service(handler);
    Ok(Handler::new(chain))
}
