//! What every request handler shares: the served group-version, the authenticator's
//! configuration, the objects, the precomputed documents and the discovery failure mode.

use std::sync::atomic::{AtomicU8, Ordering};

use bytes::Bytes;

use super::DiscoveryFailure;
use super::api::GroupVersion;
use super::auth::RequestHeaderConfig;
use super::store::Store;
use super::{discovery, openapi};

/// A document served whole, with its ETag (and hash, for OpenAPI v3).
pub struct Document {
    pub body: Bytes,
    pub hash: String,
}

impl Document {
    pub fn new(value: &serde_json::Value) -> Document {
        let body = Bytes::from(serde_json::to_vec(value).unwrap_or_default());
        let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA512, &body);
        let hash = digest.as_ref().iter().map(|b| format!("{b:02X}")).collect();
        Document { body, hash }
    }

    /// The quoted ETag.
    pub fn etag(&self) -> String {
        format!("\"{}\"", self.hash)
    }
}

pub struct Documents {
    pub aggregated_v2: Document,
    pub aggregated_v2beta1: Document,
    pub openapi_v2: Document,
    pub openapi_v3: Document,
    pub openapi_v3_index: Document,
}

pub struct State {
    pub gv: GroupVersion,
    pub auth: RequestHeaderConfig,
    pub store: Store,
    pub docs: Documents,
    /// `--legacy-discovery-only`.
    pub legacy_discovery_only: bool,
    failure: AtomicU8,
}

impl State {
    pub fn new(gv: GroupVersion, auth: RequestHeaderConfig, failure: DiscoveryFailure) -> State {
        let v3 = Document::new(&openapi::v3(&gv));
        let docs = Documents {
            aggregated_v2: Document::new(&discovery::aggregated(&gv, "v2")),
            aggregated_v2beta1: Document::new(&discovery::aggregated(&gv, "v2beta1")),
            openapi_v2: Document::new(&openapi::v2(&gv)),
            openapi_v3_index: Document::new(&openapi::v3_index(&gv, &v3.hash)),
            openapi_v3: v3,
        };
        let state = State {
            gv,
            auth,
            store: Store::new(),
            docs,
            legacy_discovery_only: false,
            failure: AtomicU8::new(0),
        };
        state.set_discovery_failure(failure);
        state
    }

    pub fn discovery_failure(&self) -> DiscoveryFailure {
        match self.failure.load(Ordering::Relaxed) {
            1 => DiscoveryFailure::Error,
            2 => DiscoveryFailure::Hang,
            _ => DiscoveryFailure::None,
        }
    }

    pub fn set_discovery_failure(&self, failure: DiscoveryFailure) {
        let v = match failure {
            DiscoveryFailure::None => 0,
            DiscoveryFailure::Error => 1,
            DiscoveryFailure::Hang => 2,
        };
        self.failure.store(v, Ordering::Relaxed);
    }
}
