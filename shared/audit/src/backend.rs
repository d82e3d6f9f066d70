//! Upstream's `audit.Sink` and `audit.Backend` (`k8s.io/apiserver/pkg/audit/types.go`)
//! and the union of several (`union.go`).

use crate::event::Event;

/// Where a request's stage events go (upstream's `Sink`).
pub trait Sink: Send + Sync {
    /// Hands the events on; false when one was dropped (the caller counts nothing more:
    /// the backend counted its own error).
    fn process_events(&self, events: &[Event]) -> bool;
}

/// A sink that runs until shut down (upstream's `Backend`).
pub trait Backend: Sink {
    /// Flushes what is buffered and stops; events processed after it may be dropped.
    fn shutdown(&self);

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

    fn name(&self) -> String {
        let names: Vec<String> = self.0.iter().map(|b| b.name()).collect();
        format!("union[{}]", names.join(","))
    }
}
