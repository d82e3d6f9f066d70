//! Upstream's `load.LoadFromData`: JSON or YAML, the group, version and kind checked as the
//! scheme checks them, strict (unknown and repeated fields are errors), then the versions'
//! defaults (`SetDefaults_WebhookConfiguration`: authorized TTL 5m, unauthorized TTL 30s).

use kas_apimachinery::golang::json::describe;
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::golang::time::{Duration, parse_duration};
use kas_apimachinery::runtime::serializer::{self, DecodeError};
use serde_json::{Map, Value};

use super::{
    API_VERSIONS, AuthorizationConfiguration, AuthorizerConfiguration, WebhookConfiguration,
    WebhookConnectionInfo, WebhookMatchCondition,
};

const GROUP: &str = "apiserver.config.k8s.io";
const KIND: &str = "AuthorizationConfiguration";
/// Where upstream's scheme was made, which its "not registered" errors name.
const SCHEME: &str = "k8s.io/apiserver/pkg/apis/apiserver/load/load.go:32";

/// The other kinds each version registers: decoded upstream, then refused by type.
const OTHER_KINDS: &[(&str, &[&str])] = &[
    ("v1", &["AdmissionConfiguration", "EncryptionConfiguration"]),
    (
        "v1beta1",
        &[
            "EgressSelectorConfiguration",
            "AuthenticationConfiguration",
            "TracingConfiguration",
        ],
    ),
    (
        "v1alpha1",
        &[
            "AdmissionConfiguration",
            "EgressSelectorConfiguration",
            "AuthenticationConfiguration",
            "TracingConfiguration",
        ],
    ),
];

const DEFAULT_AUTHORIZED_TTL: Duration = Duration(300_000_000_000);
const DEFAULT_UNAUTHORIZED_TTL: Duration = Duration(30_000_000_000);

/// `os.ReadFile` then [`load_from_data`]; the error of the read is Go's.
pub fn load_from_file(path: &std::path::Path) -> Result<AuthorizationConfiguration, String> {
    let data = read_file(path)?;
    load_from_data(&data)
}

/// Go's `os.ReadFile` error text.
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_owned(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
            std::io::ErrorKind::IsADirectory => "is a directory".to_owned(),
            _ => e.to_string(),
        };
        format!("open {}: {why}", path.display())
    })
}

/// Upstream's `LoadFromData`: empty data is the default (empty) configuration.
pub fn load_from_data(data: &[u8]) -> Result<AuthorizationConfiguration, String> {
    if data.is_empty() {
        return Ok(AuthorizationConfiguration::default());
    }
    let decoded = serializer::decode_yaml(data).map_err(|e| e.to_string())?;
    serializer::require_kind_and_version(&decoded.gvk, data).map_err(|e| e.to_string())?;
    let gvk = &decoded.gvk;
    let gv = match gvk.group.is_empty() {
        true => gvk.version.clone(),
        false => format!("{}/{}", gvk.group, gvk.version),
    };
    if gvk.kind != KIND || !API_VERSIONS.contains(&gv.as_str()) {
        let other = OTHER_KINDS.iter().any(|(v, kinds)| {
            gvk.group == GROUP && *v == gvk.version && kinds.contains(&&*gvk.kind)
        });
        return Err(match other {
            true => format!(
                "expected AuthorizationConfiguration, got *apiserver.{}",
                gvk.kind
            ),
            false => format!(
                "no kind {} is registered for version {} in scheme {}",
                quote(&gvk.kind),
                quote(&gv),
                quote(SCHEME)
            ),
        });
    }
    // The JSON serializer reads JSON (sigs.k8s.io/json's strict errors), the YAML one
    // the rest (goyaml's).
    let is_json = data.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let strict = match is_json {
        true => serializer::json_strict_error(data),
        false => serializer::yaml_strict_error(data),
    };
    if let Some(err) = strict {
        return Err(err.to_string());
    }
    let mut reader = Reader::default();
    let config = reader.configuration(&decoded.object);
    if let Some(err) = reader.type_error {
        return Err(err);
    }
    if !reader.unknown.is_empty() {
        return Err(DecodeError::Strict(reader.unknown).to_string());
    }
    Ok(config)
}

/// Reads the document as Go's strict decoder: the first type error, every unknown field.
#[derive(Default)]
struct Reader {
    type_error: Option<String>,
    unknown: Vec<String>,
}

impl Reader {
    fn object<'a>(
        &mut self,
        v: &'a Value,
        at: &str,
        known: &[&str],
    ) -> Option<&'a Map<String, Value>> {
        match v {
            Value::Object(map) => {
                for key in map.keys() {
                    if !known.contains(&key.as_str()) {
                        let path = if at.is_empty() {
                            key.clone()
                        } else {
                            format!("{at}.{key}")
                        };
                        self.unknown.push(format!("unknown field {}", quote(&path)));
                    }
                }
                Some(map)
            }
            Value::Null => None,
            other => {
                self.mismatch(other, at, "object");
                None
            }
        }
    }

    fn mismatch(&mut self, v: &Value, at: &str, go_type: &str) {
        if self.type_error.is_none() {
            self.type_error = Some(format!(
                "json: cannot unmarshal {} into Go struct field {KIND}.{at} of type {go_type}",
                describe(v)
            ));
        }
    }

    fn string(&mut self, map: &Map<String, Value>, key: &str, at: &str) -> Option<String> {
        match map.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => {
                self.mismatch(other, &join(at, key), "string");
                None
            }
        }
    }

    fn duration(&mut self, map: &Map<String, Value>, key: &str, at: &str) -> Duration {
        let Some(text) = self.string(map, key, at) else {
            return Duration(0);
        };
        match parse_duration(&text) {
            Ok(d) => d,
            Err(e) => {
                self.type_error.get_or_insert(e.to_string());
                Duration(0)
            }
        }
    }

    fn list<'a>(
        &mut self,
        map: &'a Map<String, Value>,
        key: &str,
        at: &str,
        go_type: &str,
    ) -> &'a [Value] {
        match map.get(key) {
            Some(Value::Array(items)) => items,
            None | Some(Value::Null) => &[],
            Some(other) => {
                self.mismatch(other, &join(at, key), go_type);
                &[]
            }
        }
    }

    fn configuration(&mut self, v: &Value) -> AuthorizationConfiguration {
        let Some(map) = self.object(v, "", &["apiVersion", "kind", "authorizers"]) else {
            return AuthorizationConfiguration::default();
        };
        let items = self.list(map, "authorizers", "", "[]v1.AuthorizerConfiguration");
        let authorizers = items
            .iter()
            .enumerate()
            .map(|(i, item)| self.authorizer(item, &format!("authorizers[{i}]")))
            .collect();
        AuthorizationConfiguration { authorizers }
    }

    fn authorizer(&mut self, v: &Value, at: &str) -> AuthorizerConfiguration {
        let Some(map) = self.object(v, at, &["type", "name", "webhook"]) else {
            return AuthorizerConfiguration::default();
        };
        let webhook = match map.get("webhook") {
            None | Some(Value::Null) => None,
            Some(w) => Some(self.webhook(w, &join(at, "webhook"))),
        };
        AuthorizerConfiguration {
            authorizer_type: self.string(map, "type", at).unwrap_or_default(),
            name: self.string(map, "name", at).unwrap_or_default(),
            webhook,
        }
    }

    fn webhook(&mut self, v: &Value, at: &str) -> WebhookConfiguration {
        const FIELDS: &[&str] = &[
            "authorizedTTL",
            "unauthorizedTTL",
            "timeout",
            "subjectAccessReviewVersion",
            "matchConditionSubjectAccessReviewVersion",
            "failurePolicy",
            "connectionInfo",
            "matchConditions",
        ];
        let mut w = WebhookConfiguration::default();
        if let Some(map) = self.object(v, at, FIELDS) {
            w.authorized_ttl = self.duration(map, "authorizedTTL", at);
            w.unauthorized_ttl = self.duration(map, "unauthorizedTTL", at);
            w.timeout = self.duration(map, "timeout", at);
            w.subject_access_review_version = self
                .string(map, "subjectAccessReviewVersion", at)
                .unwrap_or_default();
            w.match_condition_subject_access_review_version = self
                .string(map, "matchConditionSubjectAccessReviewVersion", at)
                .unwrap_or_default();
            w.failure_policy = self.string(map, "failurePolicy", at).unwrap_or_default();
            if let Some(info) = map.get("connectionInfo") {
                w.connection_info = self.connection_info(info, &join(at, "connectionInfo"));
            }
            let conditions = self.list(map, "matchConditions", at, "[]v1.WebhookMatchCondition");
            w.match_conditions = conditions
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let at = format!("{at}.matchConditions[{i}]");
                    let expression = self
                        .object(c, &at, &["expression"])
                        .and_then(|m| self.string(m, "expression", &at));
                    WebhookMatchCondition {
                        expression: expression.unwrap_or_default(),
                    }
                })
                .collect();
        }
        // SetDefaults_WebhookConfiguration.
        if w.authorized_ttl.0 == 0 {
            w.authorized_ttl = DEFAULT_AUTHORIZED_TTL;
        }
        if w.unauthorized_ttl.0 == 0 {
            w.unauthorized_ttl = DEFAULT_UNAUTHORIZED_TTL;
        }
        w
    }

    fn connection_info(&mut self, v: &Value, at: &str) -> WebhookConnectionInfo {
        let Some(map) = self.object(v, at, &["type", "kubeConfigFile"]) else {
            return WebhookConnectionInfo::default();
        };
        WebhookConnectionInfo {
            connection_type: self.string(map, "type", at).unwrap_or_default(),
            kube_config_file: self.string(map, "kubeConfigFile", at),
        }
    }
}

fn join(at: &str, key: &str) -> String {
    match at.is_empty() {
        true => key.to_owned(),
        false => format!("{at}.{key}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn webhook_defaults() -> WebhookConfiguration {
        WebhookConfiguration {
            authorized_ttl: DEFAULT_AUTHORIZED_TTL,
            unauthorized_ttl: DEFAULT_UNAUTHORIZED_TTL,
            ..WebhookConfiguration::default()
        }
    }

    #[test]
    fn every_version_decodes_json_and_yaml_with_defaults() {
        for version in ["v1", "v1beta1", "v1alpha1"] {
            let json = format!(
                r#"{{"apiVersion":"apiserver.config.k8s.io/{version}","kind":"AuthorizationConfiguration","authorizers":[{{"type":"Webhook","name":"default","webhook":{{}}}}]}}"#
            );
            let config = load_from_data(json.as_bytes()).unwrap();
            assert_eq!(
                config.authorizers,
                [AuthorizerConfiguration {
                    authorizer_type: "Webhook".into(),
                    name: "default".into(),
                    webhook: Some(webhook_defaults()),
                }]
            );
            let yaml = format!(
                "\napiVersion: apiserver.config.k8s.io/{version}\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Webhook\n"
            );
            let config = load_from_data(yaml.as_bytes()).unwrap();
            assert_eq!(config.authorizers[0].authorizer_type, "Webhook");
            assert_eq!(config.authorizers[0].webhook, None);
        }
        assert_eq!(
            load_from_data(b"").unwrap(),
            AuthorizationConfiguration::default()
        );
    }

    #[test]
    fn every_field_is_read() {
        let yaml = b"apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: w
  webhook:
    timeout: 3s
    authorizedTTL: 1m
    unauthorizedTTL: 1ms
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: /k
    matchConditions:
    - expression: has(request.resourceAttributes)
";
        let w = load_from_data(yaml).unwrap().authorizers[0]
            .webhook
            .clone()
            .unwrap();
        assert_eq!(
            w,
            WebhookConfiguration {
                authorized_ttl: Duration(60_000_000_000),
                unauthorized_ttl: Duration(1_000_000),
                timeout: Duration(3_000_000_000),
                subject_access_review_version: "v1".into(),
                match_condition_subject_access_review_version: "v1".into(),
                failure_policy: "Deny".into(),
                connection_info: WebhookConnectionInfo {
                    connection_type: "KubeConfigFile".into(),
                    kube_config_file: Some("/k".into()),
                },
                match_conditions: vec![WebhookMatchCondition {
                    expression: "has(request.resourceAttributes)".into()
                }],
            }
        );
    }

    #[test]
    fn upstreams_load_errors() {
        let err = |data: &str| load_from_data(data.as_bytes()).unwrap_err();
        assert_eq!(
            err(r#"{"kind":"AuthorizationConfiguration"}"#),
            r#"Object 'apiVersion' is missing in '{"kind":"AuthorizationConfiguration"}'"#
        );
        assert!(
            err(r#"{"apiVersion":"apiserver.config.k8s.io/v1alpha1"}"#)
                .contains("'Kind' is missing")
        );
        assert_eq!(
            err(r#"{"apiVersion":"apps/v1alpha1","kind":"AuthorizationConfiguration"}"#),
            "no kind \"AuthorizationConfiguration\" is registered for version \"apps/v1alpha1\" in scheme \"k8s.io/apiserver/pkg/apis/apiserver/load/load.go:32\""
        );
        assert!(err(r#"{"apiVersion":"apiserver.config.k8s.io/v99","kind":"AuthorizationConfiguration"}"#)
            .contains("apiserver.config.k8s.io/v99"));
        assert!(
            err(r#"{"apiVersion":"apiserver.config.k8s.io/v1alpha1","kind":"SomeConfiguration"}"#)
                .contains("SomeConfiguration")
        );
        assert_eq!(
            err(
                r#"{"apiVersion":"apiserver.config.k8s.io/v1alpha1","kind":"AuthorizationConfiguration","authorzers":[{"type":"Webhook"}]}"#
            ),
            "strict decoding error: unknown field \"authorzers\""
        );
        assert_eq!(
            err(
                "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Webhook\n  webhook:\n    cacheAuthorizedRequests: true\n"
            ),
            "strict decoding error: unknown field \"authorizers[0].webhook.cacheAuthorizedRequests\""
        );
        assert_eq!(
            err(
                "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Webhook\n  webhook:\n    timeout: 5\n"
            ),
            "json: cannot unmarshal number into Go struct field AuthorizationConfiguration.authorizers[0].webhook.timeout of type string"
        );
        assert_eq!(
            err(
                "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Webhook\n  webhook:\n    timeout: 5x\n"
            ),
            "time: unknown unit \"x\" in duration \"5x\""
        );
        assert!(err("apiVersion: apiserver.config.k8s.io").contains("Object 'Kind' is missing"));
        assert_eq!(
            err(
                r#"{"apiVersion":"apiserver.config.k8s.io/v1","kind":"AuthorizationConfiguration","authorizers":[{"type":"A","type":"B"}]}"#
            ),
            "strict decoding error: duplicate field \"authorizers[0].type\""
        );
        assert_eq!(
            err(
                "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers: []\nauthorizers: []\n"
            ),
            "strict decoding error: error converting YAML to JSON: yaml: unmarshal errors:\n  line 4: key \"authorizers\" already set in map"
        );
    }
}
