//! A storage backend's health checks, as data the server registers: each check's name,
//! the health endpoints it belongs on, and what it runs. The backend knows nothing of HTTP;
//! the server knows nothing of etcd.

use std::sync::Arc;

use futures_util::future::BoxFuture;

/// Which of /healthz, /livez and /readyz a check is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// All three (upstream's `AddHealthChecks`: the `etcd` check).
    Everywhere,
    /// /healthz and /readyz (upstream's `addHealthChecksWithoutLivez`: `kms-providers`).
    WithoutLivez,
    /// /readyz only (upstream's `AddReadyzChecks`: `etcd-readiness`).
    Readyz,
}

type CheckFn = dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync;

/// One named check; `Err` says what is unhealthy.
#[derive(Clone)]
pub struct HealthCheck {
    pub name: &'static str,
    pub scope: Scope,
    check: Arc<CheckFn>,
}

impl HealthCheck {
    pub fn new<F>(name: &'static str, scope: Scope, check: F) -> Self
    where
        F: Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync + 'static,
    {
        HealthCheck {
            name,
            scope,
            check: Arc::new(check),
        }
    }

    pub fn run(&self) -> BoxFuture<'static, Result<(), String>> {
        (self.check)()
    }
}

impl std::fmt::Debug for HealthCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HealthCheck")
            .field("name", &self.name)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}
