//! How one request stays one audit record across the roles.
//!
//! The role a client reaches (the entry) evaluates the policy and starts the event; when it
//! passes the request to a kas peer (`kas_delegate`), it writes what only it knows into the
//! [`HANDOFF_HEADER`] of the forwarded request: the policy's decision, the user as
//! authenticated (before impersonation) and the impersonated one, the source IPs, the time
//! the request arrived and the annotations so far (authentication's and authorization's).
//! The peer, which trusts the header only from a front proxy it authenticated, goes on with
//! that event and writes every stage itself, and says so in the [`AUDITED_HEADER`] of its
//! answer; the entry then writes nothing. An answer without it (no peer reached, or a peer
//! without an audit backend) is written by the entry.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use crate::event::{Level, Stage, UserInfo};

/// The request header of the hand-off (base64url of its JSON).
pub const HANDOFF_HEADER: &str = "kas-audit-handoff";
/// The answer's header by which a peer says it wrote the request's events.
pub const AUDITED_HEADER: &str = "kas-audited";
/// Upstream's `Audit-ID` request header and `Audit-Id` response header.
pub const AUDIT_ID_HEADER: &str = "audit-id";

/// The request's audit ID (upstream's `audit.WithAuditID`), a request extension set by the
/// outermost filter on every request, audited or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditId(pub http::HeaderValue);

/// What the entry role hands its peer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandOff {
    pub level: Level,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omit_stages: Vec<Stage>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub omit_managed_fields: bool,
    /// The user as authenticated, when the request is impersonated; otherwise the user
    /// the entry asserts to the peer (the front-proxy headers) is that user, and the peer
    /// takes it from there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<UserInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impersonated_user: Option<UserInfo>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_ips: Vec<String>,
    pub received: String,
    /// The annotations the RequestReceived event had (authentication's).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub received_annotations: BTreeMap<String, String>,
    /// Every annotation so far (authorization's too).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// How long the request waited in the entry's APF queue, in nanoseconds (the peer's
    /// `apiserver.latency.k8s.io/apf-queue-wait`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub apf_queue_wait_nanos: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl HandOff {
    /// The header value: base64url (no padding) of the JSON, so any user name fits. It
    /// differs for every request, so it is marked sensitive: HPACK writes it literally
    /// instead of filling the connection's table with it, where it would push out the
    /// headers every request repeats.
    pub fn encode(&self) -> Option<http::HeaderValue> {
        let json = serde_json::to_vec(self).ok()?;
        let mut value = http::HeaderValue::from_str(&URL_SAFE_NO_PAD.encode(json)).ok()?;
        value.set_sensitive(true);
        Some(value)
    }

    /// The hand-off a header carries; `None` for anything malformed (the request is then
    /// audited as if it came straight from a client).
    pub fn decode(value: &http::HeaderValue) -> Option<HandOff> {
        let json = URL_SAFE_NO_PAD.decode(value.as_bytes()).ok()?;
        serde_json::from_slice(&json).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_any_user() {
        let h = HandOff {
            level: Level::RequestResponse,
            omit_stages: vec![Stage::RequestReceived],
            omit_managed_fields: true,
            user: Some(UserInfo {
                username: "ünïcode user\n".into(),
                groups: vec!["system:authenticated".into()],
                ..UserInfo::default()
            }),
            impersonated_user: Some(UserInfo {
                username: "bob".into(),
                ..UserInfo::default()
            }),
            source_ips: vec!["10.0.0.1".into(), "127.0.0.1".into()],
            received: "2026-11-29T06:00:00.123456Z".into(),
            received_annotations: BTreeMap::new(),
            annotations: BTreeMap::from([("authorization.k8s.io/decision".into(), "allow".into())]),
            apf_queue_wait_nanos: 1_500,
        };
        let v = h.encode().expect("encodes");
        assert!(v.is_sensitive());
        assert_eq!(HandOff::decode(&v), Some(h));
    }

    #[test]
    fn garbage_is_none() {
        for bad in ["", "!!!", "bm90IGpzb24"] {
            assert_eq!(
                HandOff::decode(&http::HeaderValue::from_static(bad)),
                None,
                "{bad}"
            );
        }
    }
}
