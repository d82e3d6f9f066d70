//! Upstream's `audit.Sink` and `audit.Backend` (`k8s.io/apiserver/pkg/audit/types.go`),
//! the union of several (`union.go`), and the backends of `plugin/pkg/audit`: the log
//! backend ([`log`]) writing to stdout or a rotating file ([`rotate`]), the buffered
//! backend of batch mode ([`buffered`]) and the truncating backend ([`truncate`]).
//!
//! The options code composes them as upstream's `AuditLogOptions.newBackend`:
//! `truncate(mode.wrap(log(writer)))`, with [`Mode::wrap`] for the batch options.

pub mod buffered;
pub mod log;
pub mod rotate;
pub mod truncate;

use std::io;

use crate::event::Event;

/// Where the log backend writes (upstream's `io.Writer`), a file
/// that rotates (`rotate`) or standard output.
pub trait Writer: Send + Sync {
    /// Writes one event's line in one piece, as upstream's one `Fprint` per event. The
    /// error's text is what upstream's writer would report.
    fn write_line(&self, line: &[u8]) -> io::Result<()>;

    /// Closes what is open, at shutdown.
    fn close(&self) {}
}

/// Where a request's stage events go (upstream's `Sink`).
pub trait Sink: Send + Sync {
    /// Hands the events on; false when one was dropped (the caller counts nothing more:
    /// the backend counted its own error).
    fn process_events(&self, events: &[Event]) -> bool;

    /// [`Sink::process_events`] of events the caller no longer needs, which a buffering
    /// sink keeps without copying.
    fn process_owned(&self, events: Vec<Event>) -> bool {
        self.process_events(&events)
    }
}

/// A sink that runs until shut down (upstream's `Backend`).
pub trait Backend: Sink {
    /// Flushes what is buffered and stops; events processed after it may be dropped.
    fn shutdown(&self);

    /// Writes out what the backend holds back to write at once (the combining log
    /// backend); called by the buffer's thread whenever it drained the buffer.
    fn flush(&self) {}

    /// The plugin name, as upstream's `String()` (`log`, `webhook`, `buffered<log>`).
    fn name(&self) -> String;
}

/// Upstream's `union`: every backend gets every event.
pub struct Union(pub Vec<Box<dyn Backend>>);

impl Sink for Union {
    fn process_events(&self, events: &[Event]) -> bool {
        let mut ok = true;
        for b in &self.0 {
            ok &= b.process_events(events);
        }
        ok
    }
}

impl Backend for Union {
    fn shutdown(&self) {
        for b in &self.0 {
            b.shutdown();
        }
    }

    fn flush(&self) {
        for b in &self.0 {
            b.flush();
        }
    }

    fn name(&self) -> String {
        let names: Vec<String> = self.0.iter().map(|b| b.name()).collect();
        format!("union[{}]", names.join(","))
    }
}

/// Upstream's `ignoreErrorsBackend` (server/options/audit.go): blocking mode, where a
/// failed write is counted and logged by the backend but does not fail the request.
pub struct IgnoreErrors(pub Box<dyn Backend>);

impl Sink for IgnoreErrors {
    fn process_events(&self, events: &[Event]) -> bool {
        self.0.process_events(events);
        true
    }

    fn process_owned(&self, events: Vec<Event>) -> bool {
        self.0.process_owned(events);
        true
    }
}

impl Backend for IgnoreErrors {
    fn shutdown(&self) {
        self.0.shutdown();
    }

    fn flush(&self) {
        self.0.flush();
    }

    fn name(&self) -> String {
        format!("ignoreErrors<{}>", self.0.name())
    }
}

/// `--audit-<plugin>-mode`: how a backend's writes meet the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Buffered and written by a thread of its own; a full buffer drops events.
    Batch,
    /// Written in the request's thread; a failed write is only counted.
    Blocking,
    /// Written in the request's thread; a failed write of the RequestReceived stage fails
    /// the request (the audit filter answers 500 `failed to store audit event`).
    BlockingStrict,
}

impl Mode {
    /// Upstream's `AllowedModes`, in its order.
    pub const ALLOWED: [&'static str; 3] = ["batch", "blocking", "blocking-strict"];

    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "batch" => Mode::Batch,
            "blocking" => Mode::Blocking,
            "blocking-strict" => Mode::BlockingStrict,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Batch => "batch",
            Mode::Blocking => "blocking",
            Mode::BlockingStrict => "blocking-strict",
        }
    }

    /// Upstream's `AuditBatchOptions.wrapBackend`: blocking-strict is the backend itself,
    /// blocking ignores its errors, batch buffers it with `config`.
    pub fn wrap(
        self,
        delegate: Box<dyn Backend>,
        config: buffered::BatchConfig,
    ) -> Box<dyn Backend> {
        match self {
            Mode::BlockingStrict => delegate,
            Mode::Blocking => Box::new(IgnoreErrors(delegate)),
            Mode::Batch => Box::new(buffered::Buffered::new(delegate, config)),
        }
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A backend that keeps what it is given, for the wrapping backends' tests.

    use std::sync::{Arc, Mutex};

    use super::{Backend, Sink};
    use crate::event::Event;

    /// Keeps each batch's audit IDs; answers `ok`.
    #[derive(Clone, Default)]
    pub struct Recorder {
        pub batches: Arc<Mutex<Vec<Vec<Event>>>>,
        pub fail: bool,
        pub shut_down: Arc<Mutex<bool>>,
    }

    impl Recorder {
        pub fn ids(&self) -> Vec<Vec<String>> {
            let batches = self.batches.lock().unwrap();
            batches
                .iter()
                .map(|b| b.iter().map(|e| e.audit_id.clone()).collect())
                .collect()
        }
    }

    impl Sink for Recorder {
        fn process_events(&self, events: &[Event]) -> bool {
            self.batches.lock().unwrap().push(events.to_vec());
            !self.fail
        }
    }

    impl Backend for Recorder {
        fn shutdown(&self) {
            *self.shut_down.lock().unwrap() = true;
        }

        fn name(&self) -> String {
            "recorder".to_owned()
        }
    }

    pub fn event(id: &str) -> Event {
        let mut ev = Event::new();
        ev.audit_id = id.to_owned();
        ev
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{Recorder, event};
    use super::*;

    #[test]
    fn modes_wrap_as_upstream() {
        let failing = || {
            Box::new(Recorder {
                fail: true,
                ..Recorder::default()
            })
        };
        let strict = Mode::BlockingStrict.wrap(failing(), buffered::BatchConfig::log_default());
        assert!(!strict.process_events(&[event("a")]));
        assert_eq!(strict.name(), "recorder");
        let blocking = Mode::Blocking.wrap(failing(), buffered::BatchConfig::log_default());
        assert!(blocking.process_events(&[event("a")]));
        assert_eq!(blocking.name(), "ignoreErrors<recorder>");
        let batch = Mode::Batch.wrap(failing(), buffered::BatchConfig::log_default());
        assert_eq!(batch.name(), "buffered<recorder>");
        batch.shutdown();
        for m in Mode::ALLOWED {
            assert_eq!(Mode::parse(m).map(Mode::as_str), Some(m));
        }
    }
}
