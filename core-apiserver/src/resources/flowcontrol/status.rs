//! The writer of the FlowSchemas' `Dangling` conditions (`kas_flowcontrol::dangling`
//! decides them): a forced server-side apply of the condition to the `status` subresource
//! under upstream's field manager, as upstream's configuration consumer writes it.

use std::sync::Arc;

use kas_flowcontrol::dangling::{FIELD_MANAGER, StatusWriter, Update};
use kas_registry::rest::options::WriteOptions;
use kas_registry::store::Store;

const GROUP: &str = "flowcontrol.apiserver.k8s.io";

struct DanglingWriter {
    store: Store,
}

/// The writer over the FlowSchemas' store, when it is served.
pub fn writer(stores: &[Store]) -> Option<Arc<dyn StatusWriter>> {
    let store = crate::admission::store(stores, GROUP, "flowschemas")?;
    Some(Arc::new(DanglingWriter { store }))
}

impl StatusWriter for DanglingWriter {
    fn apply<'a>(
        &'a self,
        update: &'a Update,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>> + Send + 'a>> {
        Box::pin(async move {
            let now = kas_registry::meta::rfc3339(std::time::SystemTime::now());
            let opts = WriteOptions {
                manager: FIELD_MANAGER.to_owned(),
                force: Some(true),
                applying: true,
                ..Default::default()
            };
            let config = update.apply_configuration(&now);
            match self
                .store
                .apply_subresource("", &update.flow_schema, "status", config, &opts)
                .await
            {
                Ok(_) => Ok(()),
                // Deleted meanwhile: nothing more to do.
                Err(e) if e.to_status().code == 404 => Ok(()),
                Err(e) => Err(e.to_status().message.unwrap_or_default()),
            }
        })
    }
}
