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
        Ok(Some(config))
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
