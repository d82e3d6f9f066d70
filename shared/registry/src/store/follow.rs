//! What a role keeps in memory of a resource (the webhook configurations, the labeled
//! namespaces, the CRDs) starts as upstream's reflector does: every object, then a watch of
//! all of them from the revision they were listed at.

use std::time::Duration;

use kas_storage::WatchStream;
use serde_json::Value;

use super::Store;
use crate::error::Result;
use crate::rest::options::ListOptions;

/// How long such a watch runs before the server ends it (the follower lists again).
const WATCH_FOR: Duration = Duration::from_secs(3600);

impl Store {
    /// Every object of the resource (from the watch cache: resourceVersion 0), and the
    /// watch of every change since.
    pub async fn list_then_watch(&self) -> Result<(Vec<Value>, WatchStream)> {
        let opts = ListOptions {
            resource_version: Some("0".into()),
            ..Default::default()
        };
        let listed = self.list("", &opts, Default::default()).await?;
        let objects = listed
            .items
            .iter()
            .map(|o| o.value())
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let watch = ListOptions {
            resource_version: Some(listed.resource_version.to_string()),
            watch: true,
            ..Default::default()
        };
        let deadline = tokio::time::Instant::now() + WATCH_FOR;
        let events = self
            .watch("", None, &watch, Default::default(), deadline)
            .await?;
        Ok((objects, events))
    }
}
