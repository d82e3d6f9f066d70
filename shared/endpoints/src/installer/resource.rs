//! One installed resource: its store, and what its handlers share across requests.

use kas_registry::store::Store;

use crate::responsewriters::watch::FrameMemo;

pub struct Resource {
    pub store: Store,
    /// Protobuf watch frames shared by this resource's watchers.
    pub(crate) watch_frames: FrameMemo,
}
