//! Logs (text or JSON) and traces (OTLP over gRPC when a tracing configuration names an
//! endpoint). Each hop's span and its W3C `traceparent` come from kas-filters' `trace`
//! (incoming) and kas-delegate's `trace` (outgoing).

use std::io::IsTerminal;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::options::{LoggingFormat, LoggingOptions, TracingConfiguration};
use crate::{Error, Result};

/// Keeps the tracer provider alive; flushes spans when dropped.
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
    }
}

/// Installs the global subscriber. Must run inside a tokio runtime when tracing is on.
pub fn init(
    logging: &LoggingOptions,
    tracing_config: Option<TracingConfiguration>,
    service_name: &'static str,
) -> Result<TelemetryGuard> {
    let filter =
        EnvFilter::try_from_env("KAS_LOG").unwrap_or_else(|_| EnvFilter::new(logging.filter()));
    let fmt = match logging.logging_format {
        LoggingFormat::Text => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .with_target(false)
            .boxed(),
        LoggingFormat::Json => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .json()
            .flatten_event(true)
            .boxed(),
    };
    let provider = match tracing_config {
        Some(config) => match config.grpc_endpoint() {
            Some(endpoint) => Some(tracer_provider(
                endpoint.map_err(Error::Telemetry)?,
                config.sampling_rate_per_million,
                service_name,
            )?),
            None => None,
        },
        None => None,
    };
    // Only our own request spans are exported; they are debug level so that, with tracing
    // off, they are disabled outright and cost nothing per request.
    let exported = tracing_subscriber::filter::Targets::new()
        .with_target("kas_server", tracing::Level::DEBUG)
        .with_target("kas_filters", tracing::Level::DEBUG)
        .with_target("kas_delegate", tracing::Level::DEBUG);
    let otel = provider.as_ref().map(|p| {
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer(service_name))
            .with_filter(exported)
            .boxed()
    });
    tracing_subscriber::registry()
        .with(fmt.with_filter(filter))
        .with(otel)
        .try_init()
        .map_err(|e| Error::Telemetry(e.to_string()))?;
    Ok(TelemetryGuard { provider })
}

/// `endpoint` is an `http://` URL: OTLP over plain gRPC, as upstream's exporter dials.
fn tracer_provider(
    endpoint: String,
    rate_per_million: Option<u32>,
    service_name: &'static str,
) -> Result<SdkTracerProvider> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .with_endpoint(endpoint)
        .build()
        .map_err(|e| Error::Telemetry(e.to_string()))?;
    // Upstream samples nothing by default unless a parent span was sampled.
    let ratio = f64::from(rate_per_million.unwrap_or(0)) / 1_000_000.0;
    let sampler = Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio)));
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(service_name)
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_sampler(sampler)
        .with_resource(resource)
        .build())
}
