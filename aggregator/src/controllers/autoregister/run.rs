//! The controller's loop: names queued by the wanted set, by changes of the stored
//! APIServices and by retries, each checked (`check`) and the write made.

use std::collections::HashSet;
use std::time::Duration;

use futures_util::future::BoxFuture;
use kas_registry::store::Store;
use kas_registry::store::informer::Objects;
use kas_storage::Preconditions;
use tokio::sync::{mpsc, watch};

use super::check::{self, Action};
use super::{AutoRegistration, MANAGE_CONTINUOUSLY};
use crate::controllers::queue::{Queue, sleep_until};

/// How long a write that a fresh read did not confirm waits before it is checked again.
const UNCONFIRMED_RETRY: Duration = Duration::from_secs(1);

struct Controller {
    store: Store,
    api_services: watch::Receiver<Objects>,
    registration: AutoRegistration,
    /// Names synced successfully by this process (upstream's `syncedSuccessfully`).
    synced: HashSet<String>,
    /// Names stored when the controller started (upstream's `apiServicesAtStart`).
    at_start: HashSet<String>,
}

/// What became of one check.
enum Outcome {
    Synced,
    Failed,
    /// A fresh read disagreed with this replica's view: check again later.
    Unconfirmed,
}

/// Runs the controller over `store` and its informer `api_services` (a receiver that has
/// not seen the first list yet), for the names `registration` queues on `names`, once
/// `ready` (the CRDs' and the built-ins' first registrations) resolves.
pub fn start(
    store: Store,
    api_services: watch::Receiver<Objects>,
    registration: AutoRegistration,
    names: mpsc::UnboundedReceiver<String>,
    ready: BoxFuture<'static, ()>,
) {
    let controller = Controller {
        store,
        api_services,
        registration,
        synced: HashSet::new(),
        at_start: HashSet::new(),
    };
    tokio::spawn(controller.run(names, ready));
}

impl Controller {
    async fn run(mut self, mut names: mpsc::UnboundedReceiver<String>, ready: BoxFuture<'_, ()>) {
        if crate::controllers::informer_synced(&mut self.api_services)
            .await
            .is_err()
        {
            return;
        }
        ready.await;
        let mut last = self.api_services.borrow_and_update().clone();
        self.at_start = last.keys().cloned().collect();
        let mut queue = Queue::default();
        last.keys().cloned().for_each(|n| queue.add(n));
        loop {
            while let Ok(name) = names.try_recv() {
                queue.add(name);
            }
            for name in queue.take_ready() {
                match self.sync(&name).await {
                    Outcome::Synced => queue.done(name, true),
                    Outcome::Failed => queue.done(name, false),
                    Outcome::Unconfirmed => queue.add_after(name, UNCONFIRMED_RETRY),
                }
            }
            tokio::select! {
                changed = self.api_services.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    let now = self.api_services.borrow_and_update().clone();
                    for name in last.keys().chain(now.keys()) {
                        if last.get(name) != now.get(name) {
                            queue.add(name.clone());
                        }
                    }
                    last = now;
                }
                name = names.recv() => match name {
                    Some(name) => queue.add(name),
                    None => return,
                },
                () = sleep_until(queue.next_retry()) => {}
            }
        }
    }

    /// Upstream's `checkAPIService` and its write.
    async fn sync(&mut self, name: &str) -> Outcome {
        let desired = self.registration.get(name);
        let current = self.api_services.borrow().get(name).cloned();
        let has_synced = self.synced.contains(name);
        let action = check::check(
            desired.as_ref(),
            current.as_ref(),
            has_synced,
            self.at_start.contains(name),
        );
        match self.write(name, action).await {
            Ok(true) => {
                self.synced.insert(name.to_owned());
                Outcome::Synced
            }
            Ok(false) => Outcome::Unconfirmed,
            Err(e) => {
                tracing::warn!(apiservice = name, error = %e, "autoregister failed");
                Outcome::Failed
            }
        }
    }

    /// Makes the write; `Ok(false)` when a fresh read did not confirm it. A conflict, an
    /// object created or deleted meanwhile is success: its event queues the name again.
    async fn write(&self, name: &str, action: Action) -> Result<bool, String> {
        let opts = crate::controllers::write_options();
        let result = match action {
            Action::Nothing => return Ok(true),
            Action::Create(desired) => {
                if check::managed_type(Some(&desired)) == MANAGE_CONTINUOUSLY
                    && !self.confirmed(name, true).await?
                {
                    return Ok(false);
                }
                self.store.create("", desired, &opts).await.map(drop)
            }
            Action::Update(updated) => self.store.update("", name, updated, &opts).await.map(drop),
            Action::Delete { uid } => {
                let current = self.api_services.borrow().get(name).cloned();
                if check::managed_type(current.as_ref()) == MANAGE_CONTINUOUSLY
                    && !self.confirmed(name, false).await?
                {
                    return Ok(false);
                }
                let preconditions = Preconditions {
                    uid: Some(uid),
                    ..Preconditions::default()
                };
                self.store
                    .delete("", name, &preconditions, &opts)
                    .await
                    .map(drop)
            }
        };
        match result {
            Ok(()) => Ok(true),
            Err(e) => {
                let status = e.to_status();
                match status.code {
                    404 | 409 => Ok(true),
                    _ => Err(status.message.unwrap_or_default()),
                }
            }
        }
    }

    /// Whether a fresh read agrees that `name` is `wanted`.
    async fn confirmed(&self, name: &str, wanted: bool) -> Result<bool, String> {
        match &self.registration.confirm {
            Some(confirm) => Ok(confirm(name.to_owned()).await? == wanted),
            None => Ok(true),
        }
    }
}
