//! The claims of bound service-account tokens, after upstream's `claims.go`: what a
//! TokenRequest puts in a token (`Claims`) and how a presented token is checked
//! (`validator.Validate`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::lookup::{ServiceAccountLookup, not_found};
use super::{ServiceAccountInfo, credential_id_for_jti, make_username};
use crate::authentication::Notes;

/// go-jose's `DefaultLeeway`.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);
/// What a token bound to a deleted or missing object gets.
pub const ERR_INVALIDATED: &str = "service account token has been invalidated";

/// A name and UID (upstream's `ref`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ObjectRef {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    #[serde(deserialize_with = "nullable")]
    pub uid: String,
}

/// The object a token is bound to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoundObject {
    /// A pod, and the node it runs on when known (its UID may be empty when the node
    /// object is missing, as upstream embeds the name alone then).
    Pod {
        pod: ObjectRef,
        node: Option<ObjectRef>,
    },
    Secret(ObjectRef),
    Node(ObjectRef),
}

/// The claims of a token before the generator adds `iss`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenClaims {
    pub subject: String,
    pub audiences: Vec<String>,
    pub issued_at: i64,
    pub not_before: i64,
    pub expiry: i64,
    pub id: String,
    /// The `kubernetes.io` private claim.
    pub private: Value,
}

fn unix(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn ref_json(r: &ObjectRef) -> Value {
    let mut m = Map::new();
    if !r.name.is_empty() {
        m.insert("name".into(), r.name.clone().into());
    }
    if !r.uid.is_empty() {
        m.insert("uid".into(), r.uid.clone().into());
    }
    Value::Object(m)
}

/// Upstream's `Claims`: a token for `sa` in `namespace`, bound to `bound`, expiring after
/// `expiration_seconds`; `warnafter` (seconds) is set for extended projected tokens. The
/// JWT ID is a fresh UUID (ServiceAccountTokenJTI, on in 1.33).
pub fn claims(
    namespace: &str,
    sa: &ObjectRef,
    bound: Option<&BoundObject>,
    expiration_seconds: i64,
    warnafter: i64,
    audiences: &[String],
    now: SystemTime,
) -> TokenClaims {
    let now = unix(now);
    // Keys in go-jose's order, sorted, whatever serde_json's map keeps.
    let mut k = Map::new();
    if !namespace.is_empty() {
        k.insert("namespace".into(), namespace.into());
    }
    match bound {
        Some(BoundObject::Pod { pod, node }) => {
            if let Some(node) = node {
                k.insert("node".into(), ref_json(node));
            }
            k.insert("pod".into(), ref_json(pod));
        }
        Some(BoundObject::Secret(secret)) => {
            k.insert("secret".into(), ref_json(secret));
        }
        Some(BoundObject::Node(node)) => {
            k.insert("node".into(), ref_json(node));
        }
        None => {}
    }
    k.insert("serviceaccount".into(), ref_json(sa));
    if warnafter != 0 {
        k.insert("warnafter".into(), (now + warnafter).into());
    }
    TokenClaims {
        subject: make_username(namespace, &sa.name),
        audiences: audiences.to_vec(),
        issued_at: now,
        not_before: now,
        expiry: now + expiration_seconds,
        id: uuid::Uuid::new_v4().to_string(),
        private: Value::Object(k),
    }
}

impl TokenClaims {
    /// The JWT payload with `iss`, keys sorted as go-jose writes them.
    pub fn payload(&self, issuer: &str) -> Vec<u8> {
        let mut m = Map::new();
        if !self.audiences.is_empty() {
            m.insert("aud".into(), self.audiences.clone().into());
        }
        m.insert("exp".into(), self.expiry.into());
        m.insert("iat".into(), self.issued_at.into());
        if !issuer.is_empty() {
            m.insert("iss".into(), issuer.into());
        }
        if !self.id.is_empty() {
            m.insert("jti".into(), self.id.clone().into());
        }
        m.insert("kubernetes.io".into(), self.private.clone());
        m.insert("nbf".into(), self.not_before.into());
        m.insert("sub".into(), self.subject.clone().into());
        serde_json::to_vec(&Value::Object(m)).unwrap_or_default()
    }
}

/// A JSON `null` is Go's zero value.
pub(super) fn nullable<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// go-jose's `NumericDate`: a JSON number, truncated to whole seconds.
fn numeric_date<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.map(|f| f as i64))
}

/// go-jose's `Audience`: one string or a list of them.
fn audience<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Aud {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<Aud>::deserialize(d)? {
        None => Vec::new(),
        Some(Aud::One(s)) => vec![s],
        Some(Aud::Many(v)) => v,
    })
}

/// go-jose's `jwt.Claims`: the registered claims of a presented token.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct PublicClaims {
    #[serde(rename = "iss", deserialize_with = "nullable")]
    pub issuer: String,
    #[serde(rename = "sub", deserialize_with = "nullable")]
    pub subject: String,
    #[serde(rename = "aud", deserialize_with = "audience")]
    pub audience: Vec<String>,
    #[serde(rename = "exp", deserialize_with = "numeric_date")]
    pub expiry: Option<i64>,
    #[serde(rename = "nbf", deserialize_with = "numeric_date")]
    pub not_before: Option<i64>,
    #[serde(rename = "iat", deserialize_with = "numeric_date")]
    pub issued_at: Option<i64>,
    #[serde(rename = "jti", deserialize_with = "nullable")]
    pub id: String,
}

/// Upstream's `privateClaims`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct PrivateClaims {
    #[serde(rename = "kubernetes.io")]
    pub kubernetes: Kubernetes,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Kubernetes {
    #[serde(deserialize_with = "nullable")]
    pub namespace: String,
    #[serde(rename = "serviceaccount")]
    pub svcacct: ObjectRef,
    pub pod: Option<ObjectRef>,
    pub secret: Option<ObjectRef>,
    pub node: Option<ObjectRef>,
    #[serde(deserialize_with = "numeric_date")]
    pub warnafter: Option<i64>,
}

/// go-jose's `Claims.Validate` against the time alone, with the default leeway, as
/// upstream's validator maps its errors.
pub fn validate_time(public: &PublicClaims, now: SystemTime) -> Result<(), String> {
    let now = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0);
    let leeway = DEFAULT_LEEWAY.as_nanos() as i128;
    let at = |secs: i64| secs as i128 * 1_000_000_000;
    if public.not_before.is_some_and(|nbf| now + leeway < at(nbf)) {
        return Err("service account token is not valid yet".to_owned());
    }
    if public.expiry.is_some_and(|exp| now - leeway > at(exp)) {
        return Err("service account token has expired".to_owned());
    }
    if public.issued_at.is_some_and(|iat| now + leeway < at(iat)) {
        return Err("service account token is issued in the future".to_owned());
    }
    Ok(())
}

/// Whether an object deleted at `deleted` counts as gone: deleted before now minus the
/// leeway.
fn deleted_before(deleted: Option<SystemTime>, now: SystemTime) -> bool {
    let cutoff = now.checked_sub(DEFAULT_LEEWAY).unwrap_or(UNIX_EPOCH);
    deleted.is_some_and(|d| d < cutoff)
}

/// Upstream's `validator.Validate` for bound tokens, whose signature and issuer were
/// checked.
pub async fn validate(
    lookup: &dyn ServiceAccountLookup,
    public: &PublicClaims,
    private: &PrivateClaims,
    now: SystemTime,
    notes: &mut Notes,
) -> Result<ServiceAccountInfo, String> {
    validate_time(public, now)?;
    let k = &private.kubernetes;
    let namespace = k.namespace.as_str();
    let saref = &k.svcacct;
    let sa = lookup
        .service_account(namespace, &saref.name)
        .await?
        .ok_or_else(|| not_found("serviceaccounts", &saref.name))?;
    if sa.uid != saref.uid {
        return Err(format!(
            "service account UID ({}) does not match claim ({})",
            sa.uid, saref.uid
        ));
    }
    if deleted_before(sa.deletion_timestamp, now) {
        return Err(format!(
            "service account {namespace}/{} has been deleted",
            saref.name
        ));
    }
    if let Some(secref) = &k.secret {
        let Ok(Some(secret)) = lookup.secret(namespace, &secref.name).await else {
            return Err(ERR_INVALIDATED.to_owned());
        };
        if secref.uid != secret.uid {
            return Err(format!(
                "secret UID ({}) does not match service account secret ref claim ({})",
                secret.uid, secref.uid
            ));
        }
        if deleted_before(secret.deletion_timestamp, now) {
            return Err(ERR_INVALIDATED.to_owned());
        }
    }
    let mut info = ServiceAccountInfo {
        namespace: namespace.to_owned(),
        name: saref.name.clone(),
        uid: saref.uid.clone(),
        credential_id: credential_id_for_jti(&public.id),
        ..Default::default()
    };
    if let Some(podref) = &k.pod {
        let Ok(Some(pod)) = lookup.pod(namespace, &podref.name).await else {
            return Err(ERR_INVALIDATED.to_owned());
        };
        if podref.uid != pod.uid {
            return Err(format!(
                "pod UID ({}) does not match service account pod ref claim ({})",
                pod.uid, podref.uid
            ));
        }
        if deleted_before(pod.deletion_timestamp, now) {
            return Err(ERR_INVALIDATED.to_owned());
        }
        info.pod_name = podref.name.clone();
        info.pod_uid = podref.uid.clone();
    }
    if let Some(noderef) = &k.node {
        if k.pod.is_none() {
            let Ok(Some(node)) = lookup.node(&noderef.name).await else {
                return Err(ERR_INVALIDATED.to_owned());
            };
            if noderef.uid != node.uid {
                return Err(format!(
                    "node UID ({}) does not match service account node ref claim ({})",
                    node.uid, noderef.uid
                ));
            }
            if deleted_before(node.deletion_timestamp, now) {
                return Err(ERR_INVALIDATED.to_owned());
            }
        }
        // For a pod-bound token the node claims are taken as they are.
        info.node_name = noderef.name.clone();
        info.node_uid = noderef.uid.clone();
    }
    // An extended projected token past the time its holder should have refreshed it.
    if let Some(warnafter) = k.warnafter.filter(|w| *w != 0)
        && now > UNIX_EPOCH + Duration::from_secs(warnafter.max(0) as u64)
    {
        notes.annotate(
            "authentication.k8s.io/stale-token",
            format!(
                "subject: {}, seconds after warning threshold: {}",
                public.subject,
                unix(now) - warnafter
            ),
        );
    }
    Ok(info)
}
