//! Upstream's log backend (`plugin/pkg/audit/log/backend.go`): each event as one line,
//! `json` (the `audit.k8s.io/v1` encoding) or `legacy` ([`event_string`]), to stdout or
//! the rotating file of `--audit-log-path` ([`open`]).

use std::io::{self, Write as _};
use std::path::Path;

use crate::backend::rotate::{RotateConfig, RotatingFile, ensure_log_file};
use crate::backend::{Backend, Sink};
use crate::event::Event;
use crate::format::event_string;
use crate::metrics::handle_plugin_error;

/// The plugin name in errors and metrics.
pub const PLUGIN_NAME: &str = "log";

/// `--audit-log-format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// One-line text (`EventString`).
    Legacy,
    /// The `audit.k8s.io/v1` JSON of the event.
    #[default]
    Json,
}

impl Format {
    /// Upstream's `AllowedFormats`, in its order.
    pub const ALLOWED: [&'static str; 2] = ["legacy", "json"];

    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "legacy" => Some(Format::Legacy),
            "json" => Some(Format::Json),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Legacy => "legacy",
            Format::Json => "json",
        }
    }
}

pub use crate::backend::Writer;

/// The process's standard output (`--audit-log-path=-`).
pub struct Stdout;

impl Writer for Stdout {
    fn write_line(&self, line: &[u8]) -> io::Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(line).and_then(|()| out.flush()).map_err(|e| {
            let text = format!(
                "write /dev/stdout: {}",
                kas_apimachinery::golang::net::errno(&e)
            );
            io::Error::new(e.kind(), text)
        })
    }
}

/// Why `--audit-log-path` cannot be written (upstream's `getWriter` error).
#[derive(Debug, thiserror::Error)]
#[error("ensureLogFile: {0}")]
pub struct OpenError(#[source] pub io::Error);

/// Upstream's `AuditLogOptions.getWriter`: stdout for `-`, else the file, its directory
/// made and the file created now, rotated as `config` says.
pub fn open(path: &str, config: RotateConfig) -> Result<Box<dyn Writer>, OpenError> {
    if path == "-" {
        return Ok(Box::new(Stdout));
    }
    ensure_log_file(Path::new(path)).map_err(OpenError)?;
    Ok(Box::new(RotatingFile::new(path, config)))
}

/// Upstream's log backend.
pub struct LogBackend {
    out: Box<dyn Writer>,
    format: Format,
    /// Behind batch mode's buffer: lines gathered until the buffer's thread flushes (when
    /// it drained the buffer) or [`COMBINE_LIMIT`] bytes are waiting, and the number of
    /// events they hold.
    combined: Option<std::sync::Mutex<(Vec<u8>, usize)>>,
}

/// The bytes of combined lines written at once at most.
const COMBINE_LIMIT: usize = 256 * 1024;

impl LogBackend {
    pub fn new(out: Box<dyn Writer>, format: Format) -> LogBackend {
        LogBackend {
            out,
            format,
            combined: None,
        }
    }

    /// A log backend behind batch mode's buffer, whose thread calls `flush` each time it
    /// drained the buffer: the lines of a burst of events reach the file in one write
    /// rather than one write each (each still whole, in order).
    pub fn combining(out: Box<dyn Writer>, format: Format) -> LogBackend {
        LogBackend {
            combined: Some(std::sync::Mutex::new((Vec::new(), 0))),
            ..LogBackend::new(out, format)
        }
    }

    fn write_combined(&self, pending: &mut (Vec<u8>, usize)) -> bool {
        let (bytes, events) = std::mem::take(pending);
        if bytes.is_empty() {
            return true;
        }
        match self.out.write_line(&bytes) {
            Ok(()) => true,
            Err(e) => {
                crate::metrics::plugin_errors(PLUGIN_NAME, &e, events);
                false
            }
        }
    }

    fn log_event(&self, ev: &Event) -> bool {
        let line = match self.format {
            Format::Legacy => {
                let mut line = event_string(ev);
                line.push('\n');
                line.into_bytes()
            }
            Format::Json => match ev.encode_json_line() {
                Ok(line) => line,
                Err(e) => {
                    handle_plugin_error(PLUGIN_NAME, &e, &[ev]);
                    return false;
                }
            },
        };
        if let Some(combined) = &self.combined {
            let mut pending = combined.lock().unwrap_or_else(|e| e.into_inner());
            pending.0.extend_from_slice(&line);
            pending.1 += 1;
            if pending.0.len() < COMBINE_LIMIT {
                return true;
            }
            return self.write_combined(&mut pending);
        }
        if let Err(e) = self.out.write_line(&line) {
            handle_plugin_error(PLUGIN_NAME, &e, &[ev]);
            return false;
        }
        true
    }
}

impl Sink for LogBackend {
    fn process_events(&self, events: &[Event]) -> bool {
        let mut ok = true;
        for ev in events {
            ok &= self.log_event(ev);
        }
        ok
    }
}

impl Backend for LogBackend {
    fn flush(&self) {
        if let Some(combined) = &self.combined {
            let mut pending = combined.lock().unwrap_or_else(|e| e.into_inner());
            self.write_combined(&mut pending);
        }
    }

    fn shutdown(&self) {
        self.flush();
        self.out.close();
    }

    fn name(&self) -> String {
        PLUGIN_NAME.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::backend::testing::event;
    use crate::metrics::error_total;

    /// Keeps what is written; fails when asked.
    #[derive(Clone, Default)]
    struct Memory {
        out: Arc<Mutex<Vec<u8>>>,
        fail: bool,
    }

    impl Writer for Memory {
        fn write_line(&self, line: &[u8]) -> io::Result<()> {
            if self.fail {
                return Err(io::Error::other(
                    "write /x/audit.log: no space left on device",
                ));
            }
            self.out.lock().unwrap().extend_from_slice(line);
            Ok(())
        }
    }

    fn written(m: &Memory) -> String {
        String::from_utf8(m.out.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn json_writes_one_encoded_event_a_line() {
        let m = Memory::default();
        let b = LogBackend::new(Box::new(m.clone()), Format::Json);
        let events = [event("a"), event("b")];
        assert!(b.process_events(&events));
        let expected: Vec<u8> = events
            .iter()
            .flat_map(|e| e.encode_json_line().unwrap())
            .collect();
        assert_eq!(written(&m).as_bytes(), expected.as_slice());
        assert!(written(&m).starts_with(
            "{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\",\"level\":\"None\",\"auditID\":\"a\","
        ));
        assert_eq!(written(&m).lines().count(), 2);
    }

    #[test]
    fn a_combining_log_writes_a_burst_when_flushed() {
        let m = Memory::default();
        let b = LogBackend::combining(Box::new(m.clone()), Format::Json);
        let events = [event("a"), event("b"), event("c")];
        for ev in &events {
            assert!(b.process_events(std::slice::from_ref(ev)));
        }
        assert_eq!(written(&m), "", "held until the buffer's thread flushes");
        b.flush();
        let expected: Vec<u8> = events
            .iter()
            .flat_map(|e| e.encode_json_line().unwrap())
            .collect();
        assert_eq!(written(&m).as_bytes(), expected.as_slice());
        b.flush();
        assert_eq!(
            written(&m).lines().count(),
            3,
            "a second flush writes nothing"
        );
    }

    #[test]
    fn legacy_writes_event_strings() {
        let m = Memory::default();
        let b = LogBackend::new(Box::new(m.clone()), Format::Legacy);
        assert!(b.process_events(&[event("a")]));
        assert_eq!(written(&m), event_string(&event("a")) + "\n");
    }

    #[test]
    fn a_failed_write_is_counted_and_reported() {
        let before = error_total(PLUGIN_NAME);
        let m = Memory {
            fail: true,
            ..Memory::default()
        };
        let b = LogBackend::new(Box::new(m), Format::Json);
        assert!(!b.process_events(&[event("a"), event("b")]));
        // No other test fails a log write.
        assert_eq!(error_total(PLUGIN_NAME), before + 2);
    }

    #[test]
    fn open_writes_to_the_rotating_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/audit.log");
        let w = open(path.to_str().unwrap(), RotateConfig::default()).unwrap();
        let b = LogBackend::new(w, Format::Legacy);
        assert!(b.process_events(&[event("a")]));
        b.shutdown();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            event_string(&event("a")) + "\n"
        );
        let err = open(path.join("x").to_str().unwrap(), RotateConfig::default())
            .err()
            .unwrap();
        assert!(
            err.to_string().starts_with("ensureLogFile: mkdir "),
            "{err}"
        );
        assert!(matches!(Format::parse("json"), Some(Format::Json)));
        assert_eq!(
            Format::ALLOWED.map(|f| Format::parse(f).unwrap().as_str()),
            Format::ALLOWED
        );
    }
}
