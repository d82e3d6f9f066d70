//! The RBAC objects as the index holds them: only what a decision reads (names, rules, role
//! references and subjects), decoded once from their JSON.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::rules::{PolicyRule, RuleJson};

/// `rbacv1.RoleRef`: the role a binding grants. Absent fields read as empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoleRef {
    pub api_group: String,
    pub kind: String,
    pub name: String,
}

impl RoleRef {
    /// Reads a binding's `roleRef` (the JSON object itself, not the binding).
    pub fn from_value(value: &Value) -> RoleRef {
        RoleRefJson::deserialize(value)
            .unwrap_or_default()
            .into_role_ref()
    }
}

/// The kind of role a binding references; upstream resolves only these two.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RoleKind {
    Role,
    ClusterRole,
    Other(Box<str>),
}

impl RoleKind {
    pub(crate) fn new(kind: &str) -> RoleKind {
        match kind {
            "Role" => RoleKind::Role,
            "ClusterRole" => RoleKind::ClusterRole,
            other => RoleKind::Other(other.into()),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            RoleKind::Role => "Role",
            RoleKind::ClusterRole => "ClusterRole",
            RoleKind::Other(k) => k,
        }
    }
}

/// `rbacv1.Subject` kinds; any other kind never applies to a user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SubjectKind {
    User,
    Group,
    ServiceAccount,
    Other,
}

impl SubjectKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SubjectKind::User => "User",
            SubjectKind::Group => "Group",
            SubjectKind::ServiceAccount => "ServiceAccount",
            SubjectKind::Other => "",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Subject {
    pub(crate) kind: SubjectKind,
    pub(crate) name: Box<str>,
    pub(crate) namespace: Box<str>,
}

/// A RoleBinding or ClusterRoleBinding (`namespace` empty).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Binding {
    pub(crate) name: Box<str>,
    pub(crate) namespace: Box<str>,
    pub(crate) role_kind: RoleKind,
    pub(crate) role_name: Box<str>,
    pub(crate) subjects: Box<[Subject]>,
}

/// A Role or ClusterRole (`namespace` empty): its name and rules. Its `aggregationRule`
/// is not read: the aggregation controller writes the aggregated rules into `rules`.
pub(crate) struct Role {
    pub(crate) namespace: Box<str>,
    pub(crate) name: Box<str>,
    pub(crate) rules: Box<[PolicyRule]>,
}

/// A document to decode: the stored bytes, or an already decoded value.
#[derive(Clone, Copy)]
pub enum Doc<'a> {
    Bytes(&'a [u8]),
    Value(&'a Value),
}

impl Doc<'_> {
    fn decode<T: DeserializeOwned>(self, kind: &'static str) -> Result<T> {
        let decoded = match self {
            Doc::Bytes(b) => serde_json::from_slice(b),
            Doc::Value(v) => T::deserialize(v),
        };
        decoded.map_err(|e| Error::Decode {
            kind,
            key: self.key(),
            message: e.to_string(),
        })
    }

    /// `namespace/name` for messages, best effort.
    fn key(self) -> String {
        let meta = match self {
            Doc::Bytes(b) => serde_json::from_slice::<ObjectJson>(b).map(|o| o.metadata),
            Doc::Value(v) => ObjectJson::deserialize(v).map(|o| o.metadata),
        }
        .unwrap_or_default();
        meta.key()
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MetaJson {
    name: Option<String>,
    namespace: Option<String>,
}

impl MetaJson {
    fn key(&self) -> String {
        match (self.namespace.as_deref(), self.name.as_deref()) {
            (Some(ns), name) if !ns.is_empty() => format!("{ns}/{}", name.unwrap_or("")),
            (_, name) => name.unwrap_or("").to_owned(),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ObjectJson {
    metadata: MetaJson,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RoleJson {
    metadata: MetaJson,
    rules: Option<Vec<RuleJson>>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RoleRefJson {
    api_group: Option<String>,
    kind: Option<String>,
    name: Option<String>,
}

impl RoleRefJson {
    fn into_role_ref(self) -> RoleRef {
        RoleRef {
            api_group: self.api_group.unwrap_or_default(),
            kind: self.kind.unwrap_or_default(),
            name: self.name.unwrap_or_default(),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SubjectJson {
    kind: Option<String>,
    name: Option<String>,
    namespace: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct BindingJson {
    metadata: MetaJson,
    role_ref: Option<RoleRefJson>,
    subjects: Option<Vec<SubjectJson>>,
}

fn boxed(s: Option<String>) -> Box<str> {
    s.unwrap_or_default().into_boxed_str()
}

/// The namespace (empty for cluster-scoped kinds) and name of an object.
pub(crate) fn decode_key(doc: Doc<'_>, kind: &'static str) -> Result<(Box<str>, Box<str>)> {
    let meta = doc.decode::<ObjectJson>(kind)?.metadata;
    Ok((boxed(meta.namespace), boxed(meta.name)))
}

pub(crate) fn decode_role(doc: Doc<'_>, kind: &'static str) -> Result<Role> {
    let role: RoleJson = doc.decode(kind)?;
    let rules = role
        .rules
        .unwrap_or_default()
        .into_iter()
        .map(RuleJson::pack)
        .collect::<Vec<_>>();
    Ok(Role {
        namespace: boxed(role.metadata.namespace),
        name: boxed(role.metadata.name),
        rules: rules.into_boxed_slice(),
    })
}

pub(crate) fn decode_binding(doc: Doc<'_>, kind: &'static str) -> Result<Binding> {
    let binding: BindingJson = doc.decode(kind)?;
    let role_ref = binding.role_ref.unwrap_or_default().into_role_ref();
    let subjects = binding
        .subjects
        .unwrap_or_default()
        .into_iter()
        .map(|s| Subject {
            kind: match s.kind.as_deref() {
                Some("User") => SubjectKind::User,
                Some("Group") => SubjectKind::Group,
                Some("ServiceAccount") => SubjectKind::ServiceAccount,
                _ => SubjectKind::Other,
            },
            name: boxed(s.name),
            namespace: boxed(s.namespace),
        })
        .collect();
    Ok(Binding {
        name: boxed(binding.metadata.name),
        namespace: boxed(binding.metadata.namespace),
        role_kind: RoleKind::new(&role_ref.kind),
        role_name: role_ref.name.into_boxed_str(),
        subjects,
    })
}
