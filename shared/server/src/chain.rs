//! The filter chain, built in one place, in request order (upstream's
//! `DefaultBuildHandlerChain`, read from the outside in).

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
        // Before the limits, so rejected (429) and timed-out (504) requests are counted.
        .layer(RequestMetricsLayer::new(metrics, "apiserver"))
        .layer(MaxInFlightLayer::new(
            config.max_requests_inflight,
            config.max_mutating_requests_inflight,
        ))
        .layer(TimeoutLayer::new(config.request_timeout))
        .layer(AuthenticationLayer::new(config.authenticator.clone()))
        .layer(AuthorizationLayer::new(config.authorizer.clone()))
        .service(handler);
    Ok(Handler::new(chain))
}
