//! One role's etcd client, shared by its store, lease manager and compactor, and replaced
//! when the files of `--etcd-cafile`, `--etcd-certfile` and `--etcd-keyfile` change.
//! Upstream's client reads the certificate at every new connection; here a new client is
//! connected with the new files and takes the requests from then on, while watches open
//! on the old one run on until they end, as upstream's open connections keep their
//! certificate.

use std::sync::{Arc, RwLock};

use etcd_client::Client;

#[derive(Clone)]
pub(crate) struct SharedClient(Arc<RwLock<Client>>);

impl SharedClient {
    pub(crate) fn new(client: Client) -> Self {
        SharedClient(Arc::new(RwLock::new(client)))
    }

    /// The client requests go out on now.
    pub(crate) fn get(&self) -> Client {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn replace(&self, client: Client) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = client;
    }
}
