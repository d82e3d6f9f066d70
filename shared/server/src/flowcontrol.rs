//! Starts API Priority and Fairness for a role (upstream's `BuildPriorityAndFairness`): the
//! controller sized by the max-in-flight flags (their sum is the server's concurrency
//! limit), its metrics, and the informer that follows the configuration in the role's
//! storage, synced before the role serves.

use std::sync::Arc;
use std::time::Duration;

use kas_flowcontrol::PriorityAndFairness;
use kas_flowcontrol::controller::Controller;
use kas_flowcontrol::informer::Informer;
use kas_flowcontrol::request::WorkEstimator;

use crate::{Config, Error, Result};

/// How long a role waits for the first list of the configuration before it fails to start.
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);

pub async fn start(config: &Config, source: FlowControlSource) -> Result<Arc<PriorityAndFairness>> {
    let server_limit = config.max_requests_inflight + config.max_mutating_requests_inflight;
    if server_limit == 0 {
        return Err(Error::FlowControl(
            "--max-requests-inflight plus --max-mutating-requests-inflight must be positive with API Priority and Fairness".to_owned(),
        ));
    }
    let metrics = Arc::new(kas_flowcontrol::metrics::Metrics::new()?);
    metrics.register(&config.registry)?;
    let controller = Arc::new(Controller::new(server_limit, Some(metrics)));
    let informer = Informer::follow(controller.clone(), source.storage);
    if !informer.wait_synced(SYNC_TIMEOUT).await {
        return Err(Error::FlowControl(format!(
            "the API Priority and Fairness configuration did not sync within {}s",
            SYNC_TIMEOUT.as_secs()
        )));
    }
    if let Some(writer) = source.status_writer {
        kas_flowcontrol::dangling::spawn_writer(&informer, writer);
    }
    let apf = PriorityAndFairness::new(
        controller,
        WorkEstimator::default(),
        kas_storage::counts::tracker(),
        config.request_timeout,
    );
    Ok(Arc::new(apf.following(informer)))
}

/// The storage holding the FlowSchemas and PriorityLevelConfigurations, and, in the role
/// that owns them, the writer of the schemas' `Dangling` conditions.
pub struct FlowControlSource {
    pub storage: Arc<dyn kas_storage::Storage>,
    pub status_writer: Option<Arc<dyn kas_flowcontrol::dangling::StatusWriter>>,
}

impl FlowControlSource {
    /// A role that only reads the configuration.
    pub fn reader(storage: Arc<dyn kas_storage::Storage>) -> Option<FlowControlSource> {
        Some(FlowControlSource {
            storage,
            status_writer: None,
        })
    }
}
