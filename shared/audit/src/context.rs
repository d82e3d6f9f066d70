//! Upstream's `AuditContext` (`k8s.io/apiserver/pkg/audit/context.go` and `request.go`):
//! one per request, made by the audit filter with the level the policy chose, shared by
//! the filters, handlers and admission plugins that add to its event, and written to the
//! sink once per stage.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use kas_apimachinery::golang::time::{Time, format_rfc3339_micro, parse_rfc3339};
use kas_storage::latency::{self, LatencyTrackers, Layer};

use crate::backend::Sink;
use crate::event::{Event, Level, ObjectReference, ResponseStatus, Stage, UserInfo};
use crate::handoff::HandOff;

/// What the policy decided for a request (upstream's `RequestAuditConfig`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestAuditConfig {
    pub level: Level,
    pub omit_stages: Vec<Stage>,
    pub omit_managed_fields: bool,
}

/// The parts of an event that change after RequestReceived: the object reference (which
/// the request object completes) and the annotations (authorization's, admission's); the
/// impersonated user, the objects and the status come later too, and are left out.
#[derive(Debug)]
struct Received {
    object_ref: Option<ObjectReference>,
    annotations: std::collections::BTreeMap<String, String>,
}

/// Upstream's user-agent bound in an event.
const MAX_USER_AGENT_LENGTH: usize = 1024;
const USER_AGENT_TRUNCATE_SUFFIX: &str = "...TRUNCATED";

/// A request's audit state, shared through the request's extensions (`Arc`).
pub struct AuditContext {
    config: RequestAuditConfig,
    sink: Option<Arc<dyn Sink>>,
    event: Mutex<Event>,
    /// What of the event the RequestReceived stage writes as it was when the request
    /// arrived, even when it is written later (see [`AuditContext::freeze_received`]).
    received: Mutex<Option<Received>>,
    /// Set when the request went to a kas peer with a hand-off (see `handoff`).
    handed_off: AtomicBool,
    /// Whether the event came from an entry role's hand-off.
    handed_in: bool,
    /// The request's latency trackers (see [`AuditContext::track_latency`]).
    latency: std::sync::OnceLock<Arc<LatencyTrackers>>,
}

impl std::fmt::Debug for AuditContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditContext")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// `metav1.NewMicroTime(t)` as an event writes it.
pub fn micro_time(t: SystemTime) -> String {
    format_rfc3339_micro(Time::from_system_time(t))
}

impl AuditContext {
    /// A context whose event starts as `event` (the request's metadata, see
    /// [`AuditContext::request_event`]), at the policy's level.
    pub fn new(config: RequestAuditConfig, sink: Option<Arc<dyn Sink>>, mut event: Event) -> Self {
        event.level = config.level;
        AuditContext {
            config,
            sink,
            event: Mutex::new(event),
            received: Mutex::new(None),
            handed_off: AtomicBool::new(false),
            handed_in: false,
            latency: std::sync::OnceLock::new(),
        }
    }

    /// The context a peer goes on with from an entry role's hand-off: `event` is the
    /// request as the peer sees it (URI, verb, object reference, user agent, and the user
    /// the entry asserted, which is the authenticated one unless the hand-off names
    /// another), the rest is the entry's. Its RequestReceived event is frozen with the entry's annotations of
    /// that stage; the later ones follow.
    pub fn from_handoff(handoff: HandOff, sink: Option<Arc<dyn Sink>>, mut event: Event) -> Self {
        if let Some(user) = handoff.user {
            event.user = user;
        }
        event.impersonated_user = handoff.impersonated_user;
        event.source_ips = handoff.source_ips;
        event.request_received_timestamp = handoff.received;
        event.annotations = handoff.received_annotations;
        let later = handoff.annotations;
        let apf_queue_wait = Duration::from_nanos(handoff.apf_queue_wait_nanos);
        let config = RequestAuditConfig {
            level: handoff.level,
            omit_stages: handoff.omit_stages,
            omit_managed_fields: handoff.omit_managed_fields,
        };
        let ctx = AuditContext {
            handed_in: true,
            ..AuditContext::new(config, sink, event)
        };
        ctx.freeze_received();
        for (k, v) in &later {
            ctx.add_annotation(k, v);
        }
        if !apf_queue_wait.is_zero() {
            ctx.track_latency()
                .record(Layer::ApfQueueWait, apf_queue_wait);
        }
        ctx
    }

    /// The request's latency trackers, made on first use: the audit filter runs the
    /// request in their scope (`kas_storage::latency`), and the ResponseComplete event of
    /// a request slower than upstream's 500 ms carries them as annotations.
    pub fn track_latency(&self) -> &Arc<LatencyTrackers> {
        self.latency.get_or_init(LatencyTrackers::new)
    }

    /// Keeps the event as it is now for the RequestReceived stage, which a role that
    /// waits for its peer's answer writes later (upstream writes it before the request
    /// goes on: without the objects, status and later annotations).
    /// The first freeze stands.
    pub fn freeze_received(&self) {
        let mut received = self.received.lock().unwrap_or_else(|e| e.into_inner());
        if received.is_none() {
            let ev = self.event();
            *received = Some(Received {
                object_ref: ev.object_ref.clone(),
                annotations: ev.annotations.clone(),
            });
        }
    }

    /// Whether the event came from an entry role, which already wrote authentication's and
    /// authorization's annotations.
    pub fn handed_in(&self) -> bool {
        self.handed_in
    }

    /// The hand-off header for a kas peer, and the mark that the peer writes the events.
    pub fn hand_off(&self) -> Option<http::HeaderValue> {
        let value = {
            let ev = self.event();
            HandOff {
                level: self.config.level,
                omit_stages: self.config.omit_stages.clone(),
                omit_managed_fields: self.config.omit_managed_fields,
                user: ev.impersonated_user.as_ref().map(|_| ev.user.clone()),
                impersonated_user: ev.impersonated_user.clone(),
                source_ips: ev.source_ips.clone(),
                received: ev.request_received_timestamp.clone(),
                received_annotations: self
                    .received
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .as_ref()
                    .map(|e| e.annotations.clone())
                    .unwrap_or_default(),
                annotations: ev.annotations.clone(),
                apf_queue_wait_nanos: self.latency.get().map_or(0, |t| {
                    u64::try_from(t.get(Layer::ApfQueueWait).as_nanos()).unwrap_or(u64::MAX)
                }),
            }
            .encode()
        };
        self.handed_off.store(value.is_some(), Ordering::Release);
        value
    }

    /// Whether [`AuditContext::hand_off`] handed the request to a peer.
    pub fn handed_off(&self) -> bool {
        self.handed_off.load(Ordering::Acquire)
    }

    /// Upstream's `LogRequestMetadata`: the event of a request as the audit filter starts
    /// it. `user_agent` is cut at 1024 bytes (on a character boundary).
    // Upstream's function reads these eight from the request; the one caller, the audit
    // filter, has them as separate values.
    #[allow(clippy::too_many_arguments)]
    pub fn request_event(
        audit_id: String,
        request_uri: String,
        verb: String,
        user: Option<&kas_auth::UserInfo>,
        source_ips: Vec<String>,
        user_agent: &str,
        received: SystemTime,
        object_ref: Option<ObjectReference>,
    ) -> Event {
        let mut ev = Event::new();
        ev.audit_id = audit_id;
        ev.request_uri = request_uri;
        ev.verb = verb;
        if let Some(u) = user {
            ev.user = UserInfo::from(u);
        }
        ev.source_ips = source_ips;
        ev.user_agent = truncate_user_agent(user_agent);
        ev.request_received_timestamp = micro_time(received);
        ev.object_ref = object_ref;
        ev
    }

    fn event(&self) -> MutexGuard<'_, Event> {
        self.event.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn config(&self) -> &RequestAuditConfig {
        &self.config
    }

    pub fn level(&self) -> Level {
        self.config.level
    }

    /// Whether events are written for this request (a level above None).
    pub fn enabled(&self) -> bool {
        self.config.level != Level::None && self.sink.is_some()
    }

    pub fn audit_id(&self) -> String {
        self.event().audit_id.clone()
    }

    /// Upstream's `AddAuditAnnotation`: the first value of a key stands.
    pub fn add_annotation(&self, key: &str, value: &str) {
        let mut ev = self.event();
        match ev.annotations.get(key) {
            Some(v) if v != value => {
                tracing::warn!(
                    audit_id = ev.audit_id,
                    key,
                    value,
                    existing = v.as_str(),
                    "failed to set an audit annotation already set"
                );
            }
            _ => {
                ev.annotations.insert(key.to_owned(), value.to_owned());
            }
        }
    }

    /// Several annotations at once, in order.
    pub fn add_annotations<'a>(&self, pairs: impl IntoIterator<Item = (&'a str, &'a str)>) {
        for (k, v) in pairs {
            self.add_annotation(k, v);
        }
    }

    /// The annotations so far (for the hand-off to a delegate).
    pub fn annotations(&self) -> std::collections::BTreeMap<String, String> {
        self.event().annotations.clone()
    }

    /// Upstream's `LogImpersonatedUser`.
    pub fn log_impersonated_user(&self, user: &kas_auth::UserInfo) {
        if self.config.level < Level::Metadata {
            return;
        }
        self.event().impersonated_user = Some(UserInfo::from(user));
    }

    /// Upstream's `LogRequestObject`: completes the object reference from the request
    /// object's metadata and, at Request and above, keeps the object (`json`: the object
    /// as the request's version encodes it; its `metadata.managedFields` are dropped when
    /// the policy omits them).
    pub fn log_request_object(
        &self,
        obj: &serde_json::Value,
        group: &str,
        version: &str,
        resource: &str,
        subresource: &str,
    ) {
        if self.config.level < Level::Metadata {
            return;
        }
        let raw = (self.config.level >= Level::Request)
            .then(|| self.encode(obj))
            .flatten();
        let mut ev = self.event();
        let r = ev.object_ref.get_or_insert_with(ObjectReference::default);
        if let Some(meta) = obj.get("metadata") {
            let field = |name: &str| {
                meta.get(name)
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("")
                    .to_owned()
            };
            if r.namespace.is_empty() {
                r.namespace = field("namespace");
            }
            if r.name.is_empty() {
                r.name = field("name");
            }
            if r.uid.is_empty() {
                r.uid = field("uid");
            }
            if r.resource_version.is_empty() {
                r.resource_version = field("resourceVersion");
            }
        }
        if r.api_version.is_empty() {
            r.api_group = group.to_owned();
            r.api_version = version.to_owned();
        }
        if r.resource.is_empty() {
            r.resource = resource.to_owned();
        }
        if r.subresource.is_empty() {
            r.subresource = subresource.to_owned();
        }
        if raw.is_some() {
            ev.request_object = raw;
        }
    }

    /// Upstream's `LogRequestPatch`: a patch body as the request object, at Request and
    /// above.
    pub fn log_request_patch(&self, patch: &[u8]) {
        if self.config.level < Level::Request {
            return;
        }
        let Ok(raw) =
            serde_json::value::RawValue::from_string(String::from_utf8_lossy(patch).into_owned())
        else {
            return;
        };
        self.event().request_object = Some(raw);
    }

    /// Upstream's `LogResponseObject`: a `Status` answer's bounded fields at Metadata and
    /// above, the object itself at RequestResponse.
    pub fn log_response_object(&self, obj: &serde_json::Value) {
        if self.config.level < Level::Metadata {
            return;
        }
        let status = (obj.get("kind").and_then(serde_json::Value::as_str) == Some("Status"))
            .then(|| response_status(obj));
        let raw = (self.config.level >= Level::RequestResponse)
            .then(|| self.encode(obj))
            .flatten();
        let mut ev = self.event();
        if let Some(status) = status {
            ev.response_status = Some(status);
        }
        if raw.is_some() {
            ev.response_object = raw;
        }
    }

    /// [`AuditContext::log_response_object`] of an answer's JSON bytes (the audit filter
    /// keeps a `Status` answer's at every level, any answer's at RequestResponse).
    pub fn log_response_json(&self, json: &[u8]) {
        if self.config.level < Level::Metadata {
            return;
        }
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(json) {
            self.log_response_object(&v);
        }
    }

    /// Upstream's `SetEventResponseStatusCode`: the code, in a status of its own if no
    /// answer set one.
    pub fn set_response_status_code(&self, code: u16) {
        let mut ev = self.event();
        let status = ev
            .response_status
            .get_or_insert_with(ResponseStatus::default);
        status.code = i32::from(code);
    }

    /// The response's status code so far (0 before one).
    pub fn response_status_code(&self) -> i32 {
        self.event().response_status.as_ref().map_or(0, |s| s.code)
    }

    /// Upstream's `ProcessEventStage`: the event at `stage`, to the sink, unless the
    /// policy omits the stage; false when the sink dropped it.
    pub fn process_stage(&self, stage: Stage) -> bool {
        let Some(sink) = &self.sink else {
            return true;
        };
        if self.config.level == Level::None || self.config.omit_stages.contains(&stage) {
            return true;
        }
        let frozen = match stage {
            Stage::RequestReceived => self
                .received
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
            _ => None,
        };
        crate::metrics::observe_event();
        if let Some(received) = frozen {
            let ev = self
                .event()
                .received_copy(received.object_ref, received.annotations);
            return sink.process_owned(vec![ev]);
        }
        let mut ev = self.event();
        ev.stage = stage;
        ev.stage_timestamp = if stage == Stage::RequestReceived {
            ev.request_received_timestamp.clone()
        } else {
            let now = SystemTime::now();
            if stage == Stage::ResponseComplete {
                self.annotate_latency(&mut ev, now);
            }
            micro_time(now)
        };
        match stage {
            // The request's last event: handed on, not copied.
            Stage::ResponseComplete | Stage::Panic => {
                sink.process_owned(vec![std::mem::take(&mut *ev)])
            }
            _ => sink.process_events(std::slice::from_ref(&*ev)),
        }
    }

    /// Upstream's `writeLatencyToAnnotation`: when the request took longer than 500 ms
    /// (from its arrival to `now`, both as the event writes them, to the microsecond), each
    /// layer's latency and the total, added as annotations are (the first value stands).
    fn annotate_latency(&self, ev: &mut Event, now: SystemTime) {
        let Some(trackers) = self.latency.get() else {
            return;
        };
        let Some(received) = parse_rfc3339(&ev.request_received_timestamp) else {
            return;
        };
        let now = Time::from_system_time(now);
        let micros = |t: &Time| i128::from(t.seconds) * 1_000_000 + i128::from(t.nanos / 1_000);
        let Ok(total) = u64::try_from(micros(&now) - micros(&received)) else {
            return;
        };
        let total = Duration::from_micros(total);
        if total <= latency::ANNOTATION_THRESHOLD {
            return;
        }
        let layers = trackers.audit_annotations();
        if layers.is_empty() {
            return;
        }
        let total = latency::go_duration(total);
        let all = layers
            .iter()
            .map(|(k, v)| (*k, v.as_str()))
            .chain(std::iter::once((latency::TOTAL_KEY, total.as_str())));
        for (key, value) in all {
            ev.annotations
                .entry(key.to_owned())
                .or_insert_with(|| value.to_owned());
        }
    }

    fn encode(&self, obj: &serde_json::Value) -> Option<Box<serde_json::value::RawValue>> {
        let text = if self.config.omit_managed_fields {
            let mut copy = obj.clone();
            remove_managed_fields(&mut copy);
            serde_json::to_string(&copy)
        } else {
            serde_json::to_string(obj)
        };
        text.ok()
            .and_then(|t| serde_json::value::RawValue::from_string(t).ok())
    }
}

fn truncate_user_agent(ua: &str) -> String {
    if ua.len() <= MAX_USER_AGENT_LENGTH {
        return ua.to_owned();
    }
    let mut end = MAX_USER_AGENT_LENGTH;
    while !ua.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{USER_AGENT_TRUNCATE_SUFFIX}", &ua[..end])
}

/// The bounded fields `LogResponseObject` copies from a `Status`.
fn response_status(obj: &serde_json::Value) -> ResponseStatus {
    let s = |k: &str| {
        obj.get(k)
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    ResponseStatus {
        metadata: serde_json::Map::new(),
        status: s("status"),
        message: s("message"),
        reason: s("reason"),
        details: obj.get("details").cloned(),
        code: obj
            .get("code")
            .and_then(serde_json::Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(0),
    }
}

/// `copyWithoutManagedFields`: an object's, a list's items' and a Table's rows' objects'.
fn remove_managed_fields(obj: &mut serde_json::Value) {
    if let Some(meta) = obj
        .get_mut("metadata")
        .and_then(serde_json::Value::as_object_mut)
    {
        meta.remove("managedFields");
    }
    if let Some(items) = obj
        .get_mut("items")
        .and_then(serde_json::Value::as_array_mut)
    {
        items.iter_mut().for_each(remove_managed_fields);
    }
    if let Some(rows) = obj
        .get_mut("rows")
        .and_then(serde_json::Value::as_array_mut)
    {
        for row in rows {
            if let Some(o) = row.get_mut("object") {
                remove_managed_fields(o);
            }
        }
    }
}

#[cfg(test)]
mod tests;
