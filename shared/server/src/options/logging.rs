//! `--logging-format`, `-v`, and `--tracing-config-file` (upstream's TracingConfiguration:
//! spans go out over OTLP when a file names an endpoint; off by default).

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde::Deserialize;

use crate::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LoggingFormat {
    Text,
    Json,
}

#[derive(Args, Clone, Debug)]
pub struct LoggingOptions {
    /// Sets the log format. Permitted formats: "json", "text".
    #[arg(long, value_enum, default_value = "text")]
    pub logging_format: LoggingFormat,
    /// Number for the log level verbosity (0 info, 4 debug, 6 and more trace).
    #[arg(short = 'v', long = "v", default_value_t = 0)]
    pub verbosity: u8,
}

#[derive(Args, Clone, Debug)]
pub struct TracingOptions {
    /// File with apiserver tracing configuration (apiserver.config.k8s.io TracingConfiguration:
    /// `endpoint`, `samplingRatePerMillion`).
    #[arg(long)]
    pub tracing_config_file: Option<PathBuf>,
}

/// Upstream's `TracingConfiguration`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TracingConfiguration {
    #[serde(default)]
    pub endpoint: Option<String>,
    #[serde(default)]
    pub sampling_rate_per_million: Option<u32>,
}

impl TracingOptions {
    pub fn load(&self) -> Result<Option<TracingConfiguration>> {
        let Some(path) = &self.tracing_config_file else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(path).map_err(|source| Error::ReadFile {
            path: path.clone(),
            source,
        })?;
        let config: TracingConfiguration =
            serde_saphyr::from_str(&text).map_err(|e| Error::InvalidFile {
                path: path.clone(),
                message: e.to_string(),
            })?;
        let errs = config.validate();
        if !errs.is_empty() {
            return Err(Error::InvalidFile {
                path: path.clone(),
                message: format!("invalid tracing configuration: {}", errs.join(", ")),
            });
        }
        Ok(Some(config))
    }
}

/// Upstream's `maxSamplingRatePerMillion`.
const MAX_SAMPLING_RATE_PER_MILLION: u32 = 1_000_000;

impl TracingConfiguration {
    /// Upstream's `ValidateTracingConfiguration`, every problem at once.
    pub fn validate(&self) -> Vec<String> {
        let mut errs = Vec::new();
        if let Some(rate) = self.sampling_rate_per_million
            && rate > MAX_SAMPLING_RATE_PER_MILLION
        {
            errs.push(format!(
                "samplingRatePerMillion: Invalid value: {rate}: sampling rate per million must be less than or equal to one million"
            ));
        }
        if let Some(Err(e)) = self.grpc_endpoint() {
            errs.push(e);
        }
        errs
    }

    /// Where the OTLP exporter connects, as a URL for tonic; upstream's `NewProvider`
    /// dials `endpoint` over gRPC without TLS (`WithEndpoint` + `WithInsecure`).
    /// Upstream's forms are gRPC names: `host:port` (no scheme means `dns`) and
    /// `dns://[authority]/host:port`. `http://host:port`, which upstream's validation
    /// refuses, is taken too: kas took it before, and it names the same connection.
    pub fn grpc_endpoint(&self) -> Option<Result<String, String>> {
        let endpoint = self.endpoint.as_deref()?;
        let invalid = |why: &str| Err(format!("endpoint: Invalid value: {endpoint:?}: {why}"));
        if endpoint.is_empty() {
            return Some(invalid("missing host:port"));
        }
        // Upstream reads anything without "//" as a dns name.
        if !endpoint.contains("//") {
            return Some(Ok(format!("http://{endpoint}")));
        }
        let scheme = endpoint.split_once("://").map_or("", |(scheme, _)| scheme);
        Some(match scheme {
            // `dns://[authority]/host:port`: the authority (a DNS server) is not ours to pick.
            "dns" => match endpoint["dns://".len()..].split_once('/') {
                Some((_, target)) if !target.is_empty() => Ok(format!("http://{target}")),
                _ => invalid("missing host:port after dns://[authority]/"),
            },
            "http" => Ok(endpoint.to_owned()),
            "unix" | "unix-abstract" => invalid("unix socket endpoints are not supported"),
            other => invalid(&format!(
                "unsupported scheme: {other}.  Options are none, dns, unix, or unix-abstract."
            )),
        })
    }
}

impl LoggingOptions {
    pub fn filter(&self) -> &'static str {
        match self.verbosity {
            0..=3 => "info",
            4..=5 => "debug",
            _ => "trace",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(endpoint: &str) -> TracingConfiguration {
        TracingConfiguration {
            endpoint: Some(endpoint.to_owned()),
            sampling_rate_per_million: None,
        }
    }

    #[test]
    fn upstreams_endpoint_forms_dial_plain_grpc() {
        for (endpoint, target) in [
            ("127.0.0.1:4317", "http://127.0.0.1:4317"),
            ("collector.example:4317", "http://collector.example:4317"),
            (
                "dns:///collector.example:4317",
                "http://collector.example:4317",
            ),
            (
                "dns://8.8.8.8/collector.example:4317",
                "http://collector.example:4317",
            ),
            ("http://127.0.0.1:4317", "http://127.0.0.1:4317"),
        ] {
            assert_eq!(
                config(endpoint).grpc_endpoint(),
                Some(Ok(target.to_owned())),
                "{endpoint}"
            );
            assert!(config(endpoint).validate().is_empty());
        }
        assert_eq!(TracingConfiguration::default().grpc_endpoint(), None);
    }

    #[test]
    fn other_forms_are_refused_at_start() {
        for (endpoint, why) in [
            ("https://collector:4317", "unsupported scheme: https."),
            (
                "unix:///run/otel.sock",
                "unix socket endpoints are not supported",
            ),
            ("dns:///", "missing host:port"),
            ("", "missing host:port"),
            ("host//x", "unsupported scheme: .  Options are"),
        ] {
            let errs = config(endpoint).validate();
            assert_eq!(errs.len(), 1, "{endpoint}: {errs:?}");
            assert!(
                errs[0].starts_with(&format!("endpoint: Invalid value: {endpoint:?}: ")),
                "{}",
                errs[0]
            );
            assert!(errs[0].contains(why), "{}", errs[0]);
        }
        let too_often = TracingConfiguration {
            endpoint: None,
            sampling_rate_per_million: Some(1_000_001),
        };
        assert_eq!(
            too_often.validate(),
            [
                "samplingRatePerMillion: Invalid value: 1000001: sampling rate per million must be less than or equal to one million"
            ]
        );
    }

    #[test]
    fn load_reads_upstreams_file_and_refuses_invalid_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tracing.yaml");
        std::fs::write(
            &path,
            "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:4317\nsamplingRatePerMillion: 100\n",
        )
        .unwrap();
        let options = TracingOptions {
            tracing_config_file: Some(path.clone()),
        };
        let loaded = options.load().unwrap().unwrap();
        assert_eq!(loaded.endpoint.as_deref(), Some("127.0.0.1:4317"));
        assert_eq!(loaded.sampling_rate_per_million, Some(100));

        std::fs::write(&path, "endpoint: https://127.0.0.1:4317\n").unwrap();
        let err = options.load().unwrap_err().to_string();
        assert!(
            err.contains("invalid tracing configuration: endpoint: Invalid value"),
            "{err}"
        );
    }
}
