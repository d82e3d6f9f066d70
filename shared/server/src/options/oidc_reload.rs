//! `--authentication-config` reloaded when the file changes, as kube-apiserver 1.33
//! reloads its structured authentication configuration: a changed file is loaded and
//! validated, and its JWT authenticators replace the ones in place (one union, as
//! upstream's swaps its); while the file is invalid, or an authenticator cannot be built,
//! the ones in place stay and the error is logged. The `anonymous` section is read at
//! start only. Upstream watches the file with inotify and polls it each minute; here it
//! is polled each second, as the authorization configuration is (a read of a small file,
//! compared with the last bytes read).

use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures_util::future::BoxFuture;
use kas_auth::authentication::union::Union;
use kas_auth::authentication::{AuthRequest, Authenticator, DynAuthenticator, Response};
use tokio::task::JoinHandle;

use super::OidcOptions;

/// How often the file is read for changes.
const RELOAD_INTERVAL: Duration = Duration::from_secs(1);

/// The JWT authenticators of a configuration file, replaced when it changes.
pub struct ReloadableJwt {
    options: OidcOptions,
    disallowed_issuers: Vec<String>,
    /// The bytes the authenticators in place were built from.
    last: Mutex<Vec<u8>>,
    current: RwLock<Arc<Built>>,
}

/// Authenticators built from one configuration, and their initializing tasks (stopped
/// when they are replaced).
struct Built {
    union: Union,
    tasks: Vec<JoinHandle<()>>,
}

impl Built {
    fn new((authenticators, tasks): (Vec<DynAuthenticator>, Vec<JoinHandle<()>>)) -> Built {
        Built {
            union: Union::new(authenticators),
            tasks,
        }
    }
}

impl Drop for Built {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl ReloadableJwt {
    /// The authenticators of the file `options` name, built now; call [`Self::run_reload`]
    /// within the runtime to follow the file.
    pub fn new(options: &OidcOptions, disallowed_issuers: &[String]) -> Result<Arc<Self>, String> {
        let path = options
            .authentication_config
            .clone()
            .ok_or("no --authentication-config")?;
        let data = std::fs::read(&path).unwrap_or_default();
        let built = Built::new(options.build_jwt(options.configuration()?, disallowed_issuers)?);
        Ok(Arc::new(ReloadableJwt {
            options: options.clone(),
            disallowed_issuers: disallowed_issuers.to_vec(),
            last: Mutex::new(data),
            current: RwLock::new(Arc::new(built)),
        }))
    }

    /// Reads the file, and replaces the authenticators if it changed and is valid.
    pub fn check_file(&self) {
        let Some(path) = &self.options.authentication_config else {
            return;
        };
        let data = match std::fs::read(path) {
            Ok(data) => data,
            Err(e) => {
                tracing::error!(error = %e, "reloading authentication config");
                return;
            }
        };
        {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            if *last == data {
                return;
            }
            *last = data;
        }
        match self.reload() {
            Ok(()) => tracing::info!(file = %path.display(), "reloaded authentication config"),
            Err(e) => tracing::error!(error = %e, "reloading authentication config"),
        }
    }

    fn reload(&self) -> Result<(), String> {
        let config = self.options.configuration()?;
        let errs = kas_auth::authentication::oidc::validate_authentication_configuration(
            &config,
            &self.disallowed_issuers,
        );
        if let Some(msg) = kas_apimachinery::validation::field::aggregate_message(&errs) {
            return Err(format!("invalid authentication configuration: {msg}"));
        }
        let built = Built::new(self.options.build_jwt(config, &self.disallowed_issuers)?);
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(built);
        Ok(())
    }

    /// Polls the file for as long as the process runs.
    pub fn run_reload(self: &Arc<Self>) {
        let this = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(RELOAD_INTERVAL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(this) = this.upgrade() else {
                    return;
                };
                tokio::task::block_in_place(|| this.check_file());
            }
        });
    }
}

impl Authenticator for ReloadableJwt {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, kas_auth::Result<Option<Response>>> {
        let built = self
            .current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        Box::pin(async move { built.union.authenticate(req).await })
    }
}
