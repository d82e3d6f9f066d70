//! The audit filters: upstream's `WithAuditInit` (endpoints/filters/audit_init.go),
//! `WithAudit` (audit.go) and `WithFailedAuthenticationAudit` (authn_audit.go).
//!
//! [`with_audit_init`], outermost, gives every request its audit ID (the client's
//! `Audit-ID`, else a new UUID) and every answer its `Audit-Id` header. [`with_audit`],
//! after authentication, asks the policy for the request's level, starts the event, and
//! writes the stages: RequestReceived, ResponseStarted for long-running requests,
//! ResponseComplete when the answer's body ends (or is dropped), Panic on a panic.
//!
//! Across the roles (see `kas_audit::handoff`): a request that arrives with a trusted
//! hand-off goes on with the entry's event and says in its answer that it wrote it; a role
//! that passes requests to peers (`Auditor::delegates`) holds its RequestReceived until the
//! answer comes, and writes nothing when the peer wrote the events. The RequestReceived
//! event of a request such a role answers itself is therefore written when the answer
//! starts; its content, and its timestamp, are upstream's.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime};

use bytes::{Bytes, BytesMut};
use futures_util::FutureExt;
use futures_util::future::Either;
use http::{HeaderMap, HeaderValue, Request, Response};
use http_body::{Body as HttpBody, Frame, SizeHint};
use kas_audit::handoff::{AUDIT_ID_HEADER, AUDITED_HEADER, HANDOFF_HEADER};
use kas_audit::{
    AuditContext, AuditId, Event, HandOff, Level, ObjectReference, PolicyRuleEvaluator, Sink, Stage,
};
use kas_auth::UserInfo;
use kas_auth::authentication::Notes;
use kas_auth::authorization::Attributes;
use kas_endpoints::{Body, BoxError, RemoteAddr, RequestInfo, body};
use kas_storage::latency::{self, LatencyTrackers, Layer};

use crate::filter::{Inner, Next, NextFuture};
use crate::support::{internal_error, request_uri};

/// A response body kept for the event is cut off past this size (upstream keeps any; the
/// truncating backend bounds what is written).
const MAX_CAPTURED: usize = 16 << 20;

/// The start of a `Status` answer as our writers (and upstream's) encode it.
const STATUS_PREFIX: &[u8] = b"{\"kind\":\"Status\"";

/// What the audit filters of a role need: the policy and where events go.
pub struct Auditor {
    pub policy: Arc<dyn PolicyRuleEvaluator>,
    pub sink: Arc<dyn Sink>,
    /// Whether the role passes requests to kas peers (and holds RequestReceived until it
    /// knows whether the peer wrote the events).
    pub delegates: bool,
}

/// The request's audit context, as filters and handlers find it.
pub fn context<B>(req: &Request<B>) -> Option<&Arc<AuditContext>> {
    req.extensions().get::<Arc<AuditContext>>()
}

/// Upstream's `WithAuditInit`.
pub fn with_audit_init<S: Inner>(
    mut req: Request<Body>,
    next: Next<S>,
) -> impl Future<Output = Response<Body>> {
    let mut id = match req.headers().get(AUDIT_ID_HEADER) {
        Some(v) if !v.is_empty() => v.clone(),
        _ => new_audit_id(),
    };
    // A value that changes with every request: HPACK writes it literally instead of
    // filling the connection's table with it (and pushing the stable headers out).
    id.set_sensitive(true);
    req.extensions_mut().insert(AuditId(id.clone()));
    let answer = next.run(req);
    async move {
        let mut resp = answer.await;
        resp.headers_mut().entry(AUDIT_ID_HEADER).or_insert(id);
        resp
    }
}

fn new_audit_id() -> HeaderValue {
    let mut buf = uuid::Uuid::encode_buffer();
    let text = uuid::Uuid::new_v4().hyphenated().encode_lower(&mut buf);
    HeaderValue::from_str(text).unwrap_or(HeaderValue::from_static(""))
}

/// Upstream's `WithAudit`.
pub fn with_audit<S: Inner>(
    auditor: Option<Arc<Auditor>>,
    mut req: Request<Body>,
    next: Next<S>,
) -> Either<NextFuture<S>, impl Future<Output = Response<Body>>> {
    let Some(auditor) = auditor else {
        return Either::Left(next.run(req));
    };
    let ctx = Arc::new(start(&auditor, &mut req));
    req.extensions_mut().insert(ctx.clone());
    if !ctx.enabled() {
        return Either::Left(next.run(req));
    }
    let info = req.extensions().get::<RequestInfo>();
    let long_running = info.is_some_and(RequestInfo::is_long_running);
    // Upstream's `WithLatencyTrackers`: every request but a watch.
    let trackers = info
        .is_none_or(|i| i.verb != "watch")
        .then(|| ctx.track_latency().clone());
    Either::Right(async move {
        let held = auditor.delegates;
        if held {
            ctx.freeze_received();
        } else if !ctx.process_stage(Stage::RequestReceived) {
            kas_audit::metrics::observe_request_rejected();
            return internal_error(&request_uri(&req), "failed to store audit event");
        }
        let mut pending = Pending {
            ctx: ctx.clone(),
            received_held: held,
            armed: true,
        };
        let answer = match catch_unwind(AssertUnwindSafe(|| next.run(req))) {
            Ok(answer) => match trackers.clone() {
                Some(t) => {
                    AssertUnwindSafe(latency::scope(t, answer))
                        .catch_unwind()
                        .await
                }
                None => AssertUnwindSafe(answer).catch_unwind().await,
            },
            Err(payload) => Err(payload),
        };
        let mut resp = match answer {
            Ok(resp) => resp,
            Err(payload) => {
                pending.panicked(payload.as_ref());
                resume_unwind(payload)
            }
        };
        let peer_wrote = resp.headers_mut().remove(AUDITED_HEADER).is_some();
        // Whoever handed the request here learns that its events are written.
        if ctx.handed_in() {
            resp.headers_mut()
                .insert(AUDITED_HEADER, HeaderValue::from_static("true"));
        }
        if ctx.handed_off() && peer_wrote {
            pending.armed = false;
            return resp;
        }
        pending.started(resp.status().as_u16(), long_running);
        let capture = Capture::for_response(ctx.level(), long_running, resp.headers());
        resp.map(|inner| {
            body::boxed(AuditedBody {
                inner,
                capture,
                pending,
                trackers,
            })
        })
    })
}

/// The request's context: the hand-off's when a trusted peer sent one (the authentication
/// filter drops the header from anyone else), else the policy's decision.
fn start(auditor: &Auditor, req: &mut Request<Body>) -> AuditContext {
    let sink = Some(auditor.sink.clone());
    if let Some(handoff) = req
        .headers_mut()
        .remove(HANDOFF_HEADER)
        .as_ref()
        .and_then(HandOff::decode)
    {
        // The peer's user is the one the entry asserted (the front-proxy headers).
        let event = request_event(req, req.extensions().get::<UserInfo>());
        return AuditContext::from_handoff(handoff, sink, event);
    }
    let config = evaluate(auditor, req);
    if config.level == Level::None {
        return AuditContext::new(config, sink, Event::default());
    }
    let mut event = request_event(req, req.extensions().get::<UserInfo>());
    event.source_ips = source_ips(req);
    if let Some(notes) = req.extensions().get::<Notes>() {
        annotate(&mut event, notes);
    }
    AuditContext::new(config, sink, event)
}

/// Authentication's annotations, which upstream's authenticators add to the audit context
/// before the audit filter starts the event (the first value of a key stands).
fn annotate(event: &mut Event, notes: &Notes) {
    for (key, value) in &notes.audit_annotations {
        event
            .annotations
            .entry((*key).to_owned())
            .or_insert_with(|| value.clone());
    }
}

/// The policy's decision for the request, over its own strings (lent and given back, as
/// the authorization filter reads them); a request without a `RequestInfo`, which the
/// chain always sets, is matched as one without attributes.
fn evaluate(auditor: &Auditor, req: &mut Request<Body>) -> kas_audit::RequestAuditConfig {
    let config = match crate::attributes::lend_attributes(req) {
        Some(attrs) => {
            let config = auditor.policy.evaluate_policy_rule(&attrs);
            crate::attributes::give_back(req, attrs);
            config
        }
        None => auditor.policy.evaluate_policy_rule(&Attributes::default()),
    };
    kas_audit::metrics::observe_policy_level(config.level);
    config
}

/// Upstream's `LogRequestMetadata` (the user and source IPs are the caller's to set).
fn request_event(req: &Request<Body>, user: Option<&UserInfo>) -> Event {
    let info = req.extensions().get::<RequestInfo>();
    let object_ref = info
        .filter(|i| i.is_resource_request)
        .map(|i| ObjectReference {
            namespace: i.namespace.clone(),
            name: i.name.clone(),
            resource: i.resource.clone(),
            subresource: i.subresource.clone(),
            api_group: i.api_group.clone(),
            api_version: i.api_version.clone(),
            ..ObjectReference::default()
        });
    let audit_id = req
        .extensions()
        .get::<AuditId>()
        .and_then(|id| id.0.to_str().ok())
        .unwrap_or("")
        .to_owned();
    AuditContext::request_event(
        audit_id,
        request_uri(req),
        info.map(|i| i.verb.clone()).unwrap_or_default(),
        user,
        Vec::new(),
        req.headers()
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or(""),
        SystemTime::now(),
        object_ref,
    )
}

/// Upstream's `utilnet.SourceIPs`: `X-Forwarded-For`, then `X-Real-Ip` if new, then the
/// connection's address unless it is the last one already.
fn source_ips(req: &Request<Body>) -> Vec<String> {
    let headers = req.headers();
    let mut ips: Vec<std::net::IpAddr> = Vec::new();
    if let Some(xff) = first(headers, "x-forwarded-for") {
        ips.extend(
            xff.split(',')
                .filter_map(|p| p.trim().parse::<std::net::IpAddr>().ok()),
        );
    }
    if let Some(ip) = first(headers, "x-real-ip").and_then(|v| v.trim().parse().ok())
        && !ips.contains(&ip)
    {
        ips.push(ip);
    }
    if let Some(RemoteAddr(addr)) = req.extensions().get::<RemoteAddr>() {
        let remote = addr.ip().to_canonical();
        if ips.last() != Some(&remote) {
            ips.push(remote);
        }
    }
    ips.iter().map(ToString::to_string).collect()
}

fn first<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
}

/// Upstream's `WithFailedAuthenticationAudit`: a 401 is one event, at ResponseStarted,
/// with the `Unauthorized` status (the only stage upstream's failure handler writes).
pub fn failed_authentication(
    auditor: &Auditor,
    req: &mut Request<Body>,
    status: &serde_json::Value,
    notes: &Notes,
) {
    let config = evaluate(auditor, req);
    if config.level == Level::None {
        return;
    }
    let mut event = request_event(req, None);
    event.source_ips = source_ips(req);
    annotate(&mut event, notes);
    let ctx = AuditContext::new(config, Some(auditor.sink.clone()), event);
    ctx.log_response_object(status);
    ctx.set_response_status_code(401);
    ctx.process_stage(Stage::ResponseStarted);
}

/// The stages still to write, written by whoever sees the request end: the answer's body
/// when it ends or is dropped, or this guard when the request is dropped before an answer
/// (upstream's "Connection closed early").
struct Pending {
    ctx: Arc<AuditContext>,
    received_held: bool,
    armed: bool,
}

impl Pending {
    fn received(&mut self) {
        if std::mem::take(&mut self.received_held) {
            self.ctx.process_stage(Stage::RequestReceived);
        }
    }

    /// The answer's head is out.
    fn started(&mut self, code: u16, long_running: bool) {
        self.received();
        self.ctx.set_response_status_code(code);
        if long_running {
            self.ctx.process_stage(Stage::ResponseStarted);
        }
    }

    fn panicked(&mut self, payload: &(dyn std::any::Any + Send)) {
        self.received();
        let text = payload
            .downcast_ref::<&'static str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("<non-string panic payload>");
        self.ctx.log_response_object(&serde_json::json!({
            "kind": "Status",
            "status": "Failure",
            "message": format!("APIServer panic'd: {text}"),
            "reason": "InternalError",
            "code": 500,
        }));
        self.ctx.process_stage(Stage::Panic);
        self.armed = false;
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.received();
        if self.ctx.response_status_code() == 0 {
            // Upstream's fakedSuccessStatus.
            self.ctx.log_response_object(&serde_json::json!({
                "kind": "Status",
                "status": "Success",
                "message": "Connection closed early",
                "code": 200,
            }));
        }
        self.ctx.process_stage(Stage::ResponseComplete);
    }
}

/// What of the answer's body the event keeps.
enum Capture {
    Nothing,
    /// Every JSON answer, for RequestResponse.
    All(BytesMut),
    /// A `Status` answer only (its bounded fields are kept at every level).
    IfStatus(Option<BytesMut>),
}

impl Capture {
    fn for_response(level: Level, long_running: bool, headers: &HeaderMap) -> Capture {
        let json = headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("application/json"));
        match (json, long_running, level) {
            (false, _, _) | (_, true, _) => Capture::Nothing,
            (true, false, Level::RequestResponse) => Capture::All(BytesMut::new()),
            (true, false, _) => Capture::IfStatus(None),
        }
    }

    fn take(&mut self, data: &Bytes) {
        let buf = match self {
            Capture::Nothing => return,
            Capture::All(buf) => buf,
            Capture::IfStatus(slot) => match slot {
                Some(buf) => buf,
                None if data.starts_with(STATUS_PREFIX) => slot.insert(BytesMut::new()),
                None => {
                    *self = Capture::Nothing;
                    return;
                }
            },
        };
        if buf.len() + data.len() > MAX_CAPTURED {
            *self = Capture::Nothing;
            return;
        }
        buf.extend_from_slice(data);
    }

    fn captured(&mut self) -> Option<BytesMut> {
        match std::mem::replace(self, Capture::Nothing) {
            Capture::All(buf) | Capture::IfStatus(Some(buf)) => Some(buf),
            _ => None,
        }
    }
}

/// The answer's body, which ends the request's event when it ends. Producing its frames
/// is the request's response-write latency (upstream times its writes to the connection),
/// in the request's tracking scope.
struct AuditedBody {
    inner: Body,
    capture: Capture,
    pending: Pending,
    trackers: Option<Arc<LatencyTrackers>>,
}

impl AuditedBody {
    fn finish(&mut self) {
        if let Some(bytes) = self.capture.captured() {
            self.pending.ctx.log_response_json(&bytes);
        }
        if self.pending.armed {
            self.pending.armed = false;
            self.pending.ctx.process_stage(Stage::ResponseComplete);
        }
    }
}

impl HttpBody for AuditedBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        let inner = Pin::new(&mut this.inner);
        let frame = std::task::ready!(match &this.trackers {
            Some(t) => {
                let start = Instant::now();
                let polled = latency::sync_scope(t.clone(), || inner.poll_frame(cx));
                t.record(Layer::ResponseWrite, start.elapsed());
                polled
            }
            None => inner.poll_frame(cx),
        });
        match &frame {
            Some(Ok(f)) => {
                if let Some(data) = f.data_ref() {
                    this.capture.take(data);
                }
            }
            _ => this.finish(),
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for AuditedBody {
    fn drop(&mut self) {
        self.finish();
    }
}
