//! `audit.k8s.io/v1` `Event` and `EventList` (`k8s.io/apiserver/pkg/apis/audit/v1`), in
//! upstream's JSON field order and omissions. No generated source carries the audit API
//! (k8s-openapi and k8s-pb hold `k8s.io/api` only), so its few types are written here, as
//! kas-auth writes the configuration files' types.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

pub const API_VERSION: &str = "audit.k8s.io/v1";

/// `audit.Level`, ordered as upstream's `Less` orders them.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum Level {
    #[default]
    None,
    Metadata,
    Request,
    RequestResponse,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "None",
            Level::Metadata => "Metadata",
            Level::Request => "Request",
            Level::RequestResponse => "RequestResponse",
        }
    }

    /// The level a policy names; `None` for an unknown word.
    pub fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "None" => Level::None,
            "Metadata" => Level::Metadata,
            "Request" => Level::Request,
            "RequestResponse" => Level::RequestResponse,
            _ => return None,
        })
    }
}

/// `audit.Stage`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Stage {
    #[default]
    RequestReceived,
    ResponseStarted,
    ResponseComplete,
    Panic,
}

impl Stage {
    pub const ALL: [Stage; 4] = [
        Stage::RequestReceived,
        Stage::ResponseStarted,
        Stage::ResponseComplete,
        Stage::Panic,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::RequestReceived => "RequestReceived",
            Stage::ResponseStarted => "ResponseStarted",
            Stage::ResponseComplete => "ResponseComplete",
            Stage::Panic => "Panic",
        }
    }

    pub fn parse(s: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

/// `authentication/v1` `UserInfo` as the event writes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub username: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

impl From<&kas_auth::UserInfo> for UserInfo {
    fn from(u: &kas_auth::UserInfo) -> UserInfo {
        UserInfo {
            username: u.name.clone(),
            uid: u.uid.clone(),
            groups: u.groups.clone(),
            extra: u.extra.clone(),
        }
    }
}

/// `audit.ObjectReference`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

/// The bounded fields of a `metav1.Status` the event keeps (`LogResponseObject`), with
/// `metadata` written empty as Go writes a struct under `omitempty`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponseStatus {
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub code: i32,
}

fn is_zero(v: &i32) -> bool {
    *v == 0
}

/// `audit.k8s.io/v1` `Event`. Timestamps are `metav1.MicroTime` strings
/// (`kas_apimachinery::golang::time::format_rfc3339_micro`); request and response objects
/// are the JSON upstream's `runtime.Unknown` holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub kind: String,
    pub api_version: String,
    pub level: Level,
    #[serde(rename = "auditID")]
    pub audit_id: String,
    pub stage: Stage,
    #[serde(rename = "requestURI")]
    pub request_uri: String,
    pub verb: String,
    pub user: UserInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impersonated_user: Option<UserInfo>,
    #[serde(default, rename = "sourceIPs", skip_serializing_if = "Vec::is_empty")]
    pub source_ips: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub user_agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_ref: Option<ObjectReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_status: Option<ResponseStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_object: Option<Box<RawValue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_object: Option<Box<RawValue>>,
    pub request_received_timestamp: String,
    pub stage_timestamp: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl Event {
    /// An event with the type meta the backends write.
    pub fn new() -> Event {
        Event {
            kind: "Event".to_owned(),
            api_version: API_VERSION.to_owned(),
            ..Event::default()
        }
    }
}

impl Event {
    /// The bytes upstream's `audit.Codecs.LegacyCodec(audit.k8s.io/v1)` writes for the
    /// event, which the log backend writes and the truncate backend measures: Go's
    /// `json.Encoder` (HTML-escaped strings, request and response objects compacted) and
    /// its newline.
    pub fn encode_json_line(&self) -> serde_json::Result<Vec<u8>> {
        let mut out = kas_apimachinery::golang::json::to_vec(self)?;
        out.push(b'\n');
        Ok(out)
    }
}

impl Event {
    /// The RequestReceived event of this one: what it was when the request arrived
    /// (`object_ref`, `annotations`), without what came after (the impersonated user, the
    /// objects, the response status).
    pub fn received_copy(
        &self,
        object_ref: Option<ObjectReference>,
        annotations: BTreeMap<String, String>,
    ) -> Event {
        Event {
            kind: self.kind.clone(),
            api_version: self.api_version.clone(),
            level: self.level,
            audit_id: self.audit_id.clone(),
            stage: Stage::RequestReceived,
            request_uri: self.request_uri.clone(),
            verb: self.verb.clone(),
            user: self.user.clone(),
            impersonated_user: None,
            source_ips: self.source_ips.clone(),
            user_agent: self.user_agent.clone(),
            object_ref,
            response_status: None,
            request_object: None,
            response_object: None,
            request_received_timestamp: self.request_received_timestamp.clone(),
            stage_timestamp: self.request_received_timestamp.clone(),
            annotations,
        }
    }
}

/// `audit.k8s.io/v1` `EventList`, as the webhook backend posts it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventList<'a> {
    pub kind: &'static str,
    pub api_version: &'static str,
    pub metadata: serde_json::Map<String, serde_json::Value>,
    pub items: &'a [Event],
}

impl<'a> EventList<'a> {
    pub fn new(items: &'a [Event]) -> EventList<'a> {
        EventList {
            kind: "EventList",
            api_version: API_VERSION,
            metadata: serde_json::Map::new(),
            items,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_line_is_what_the_v1_codec_writes() {
        let mut ev = Event::new();
        ev.level = Level::RequestResponse;
        ev.audit_id = "id1".to_owned();
        ev.stage = Stage::ResponseComplete;
        ev.request_uri = "/api/v1/namespaces/default/configmaps".to_owned();
        ev.verb = "create".to_owned();
        ev.user = UserInfo {
            username: "admin".to_owned(),
            groups: vec!["system:masters".to_owned()],
            ..UserInfo::default()
        };
        ev.source_ips = vec!["10.0.0.1".to_owned()];
        ev.user_agent = "kubectl".to_owned();
        ev.object_ref = Some(ObjectReference {
            resource: "configmaps".to_owned(),
            namespace: "default".to_owned(),
            name: "cm".to_owned(),
            api_version: "v1".to_owned(),
            ..ObjectReference::default()
        });
        ev.response_status = Some(ResponseStatus {
            code: 201,
            ..ResponseStatus::default()
        });
        // A request body as it came (a patch): Go compacts and HTML-escapes it.
        ev.request_object = Some(
            RawValue::from_string(
                "{ \"kind\": \"ConfigMap\",\n \"data\": {\"a\": \"<b>\"} }".into(),
            )
            .unwrap(),
        );
        ev.request_received_timestamp = "2024-01-02T03:04:05.120000Z".to_owned();
        ev.stage_timestamp = "2024-01-02T03:04:05.130000Z".to_owned();
        ev.annotations.insert(
            "authorization.k8s.io/decision".to_owned(),
            "allow".to_owned(),
        );
        let line = String::from_utf8(ev.encode_json_line().unwrap()).unwrap();
        assert_eq!(
            line,
            concat!(
                r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","#,
                r#""auditID":"id1","stage":"ResponseComplete","#,
                r#""requestURI":"/api/v1/namespaces/default/configmaps","verb":"create","#,
                r#""user":{"username":"admin","groups":["system:masters"]},"#,
                r#""sourceIPs":["10.0.0.1"],"userAgent":"kubectl","#,
                r#""objectRef":{"resource":"configmaps","namespace":"default","name":"cm","apiVersion":"v1"},"#,
                r#""responseStatus":{"metadata":{},"code":201},"#,
                r#""requestObject":{"kind":"ConfigMap","data":{"a":"\u003cb\u003e"}},"#,
                r#""requestReceivedTimestamp":"2024-01-02T03:04:05.120000Z","#,
                r#""stageTimestamp":"2024-01-02T03:04:05.130000Z","#,
                r#""annotations":{"authorization.k8s.io/decision":"allow"}}"#,
                "\n"
            )
        );
    }
}
