//! The filter chain, built in one place, in request order (upstream's
//! `DefaultBuildHandlerChain`, read from the outside in): panic recovery → tracing →
//! request info → timeout → authentication → impersonation → priority and fairness (or max
//! in-flight) → authorization
//! → metrics → the role's routes. Each filter is one rule from kas-filters; they talk through request
//! extensions, so a filter that reads one sits after the filter that sets it. Filters marked
//! `inline` keep their future in the next outer one's instead of a box of their own; the
//! chain is type-erased once, in the middle.

use kas_filters::max_inflight::{KindGauges, inflight_gauge, inqueue_gauge};
use std::sync::Arc;

use kas_filters::{
    ConcurrencyLimit, EraseLayer, FlowControl, MaxInFlight, RequestMetrics, from_fn,
    from_fn_with_state, with_audit, with_audit_init, with_authentication, with_authorization,
    with_concurrency_limit, with_impersonation, with_panic_recovery, with_request_deadline,
    with_request_info, with_request_metrics, with_tracing,
};
use tower::ServiceBuilder;

use crate::config::CompletedConfig;
use crate::{Handler, Result};

/// Upstream's `component` label of the request metrics.
const METRICS_COMPONENT: &str = "apiserver";

pub fn build_handler_chain(config: &CompletedConfig, handler: Handler) -> Result<Handler> {
    let metrics = RequestMetrics::new(&config.registry)?;
    // Rejections (429) are counted in apiserver_request_total as upstream counts them.
    let limit = match &config.flow_control {
        Some(apf) => ConcurrencyLimit::PriorityAndFairness(Arc::new(FlowControl {
            apf: apf.clone(),
            request_metrics: Some((metrics.clone(), METRICS_COMPONENT)),
            inflight: Some(KindGauges::of(&inflight_gauge(&config.registry)?)),
            inqueue: Some(inqueue_gauge(&config.registry)?),
        })),
        None => ConcurrencyLimit::MaxInFlight(Arc::new(
            MaxInFlight::new(
                config.max_requests_inflight,
                config.max_mutating_requests_inflight,
            )
            .register_metrics(&config.registry)?
            .with_request_metrics(metrics.clone(), METRICS_COMPONENT),
        )),
    };
    let request_info = Arc::new(config.request_info_factory.clone());
    let chain = ServiceBuilder::new()
        // Outermost, so that a panic anywhere below becomes a 500 and not a dropped stream.
        // Inline: `Handler` boxes the chain's future.
        // Outermost, as upstream's WithAuditInit: every answer has its Audit-Id.
        .layer(from_fn(with_audit_init).inline())
        .layer(from_fn(with_panic_recovery).inline())
        .layer(from_fn_with_state(config.component, with_tracing).inline())
        // Before every filter that reads the RequestInfo: all the ones below.
        .layer(from_fn_with_state(request_info, with_request_info).inline())
        // Upstream's order: the deadline covers authentication and everything after it.
        .layer(from_fn_with_state(
            config.request_timeout,
            with_request_deadline,
        ))
        .layer(from_fn_with_state(
            (config.authenticator.clone(), config.auditor.clone()),
            with_authentication,
        ))
        // The chain's type stops growing here (kas_filters::Erased): without it every
        // binary's debug info carries 20 MB type names.
        .layer(EraseLayer)
        // After authentication, whose user the policy matches; before impersonation, which
        // the event records, as upstream's WithAudit.
        .layer(from_fn_with_state(config.auditor.clone(), with_audit))
        // After authentication, whose user it may replace; before max in-flight and
        // authorization, which see the impersonated user, as upstream.
        .layer(from_fn_with_state(
            config.authorizer.clone(),
            with_impersonation,
        ))
        // After impersonation, whose user the flow schemas match (max in-flight exempts
        // system:masters), as upstream.
        .layer(from_fn_with_state(limit, with_concurrency_limit))
        // After authentication, whose UserInfo it authorizes.
        .layer(from_fn_with_state(
            config.authorizer.clone(),
            with_authorization,
        ))
        // Innermost, as upstream counts in the handler: 401s and 403s are not counted.
        .layer(from_fn_with_state(
            (metrics, METRICS_COMPONENT),
            with_request_metrics,
        ))
        .service(handler);
    Ok(Handler::new(chain))
}
