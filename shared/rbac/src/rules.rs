//! RBAC v1 `PolicyRule` and upstream's rule matching (`pkg/apis/rbac/v1/evaluation_helpers.go`
//! and `RuleAllows` of `plugin/pkg/auth/authorizer/rbac/rbac.go`).
//!
//! A rule is parsed once from JSON into [`PolicyRule`], which packs its strings into one
//! buffer: the index holds every rule of every role, and a rule's JSON is mostly field
//! names and quotes.

use std::fmt;

use kas_apimachinery::golang::strconv::quote;
use kas_auth::authorization::{Attributes, NonResourceRuleInfo, ResourceRuleInfo};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};

/// `rbacv1.VerbAll`, `APIGroupAll`, `ResourceAll` and `NonResourceAll`.
pub const ALL: &str = "*";

/// The fields of a rule, in the order [`PolicyRule`] packs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Verbs = 0,
    ApiGroups = 1,
    Resources = 2,
    ResourceNames = 3,
    NonResourceUrls = 4,
}

const FIELDS: usize = 5;

/// One RBAC v1 `PolicyRule`, packed into one buffer: the number of strings of each field,
/// then each string preceded by its length, all numbers as LEB128 varints (one byte below
/// 128). A typical rule takes about half the bytes of its JSON.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PolicyRule {
    data: Box<[u8]>,
}

fn push_varint(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Reads a varint at `pos`; a truncated one reads as what it has.
fn read_varint(data: &[u8], pos: &mut usize) -> usize {
    let mut n = 0usize;
    let mut shift = 0u32;
    while let Some(&b) = data.get(*pos) {
        *pos += 1;
        if shift < usize::BITS {
            n |= usize::from(b & 0x7f) << shift;
        }
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    n
}

impl PolicyRule {
    /// A rule from its five lists.
    pub fn new<S: AsRef<str>>(
        verbs: &[S],
        api_groups: &[S],
        resources: &[S],
        resource_names: &[S],
        non_resource_urls: &[S],
    ) -> PolicyRule {
        let fields = [
            verbs,
            api_groups,
            resources,
            resource_names,
            non_resource_urls,
        ];
        let bytes: usize = fields
            .iter()
            .flat_map(|f| f.iter())
            .map(|s| s.as_ref().len() + 1)
            .sum();
        let mut data = Vec::with_capacity(FIELDS + bytes);
        for f in &fields {
            push_varint(&mut data, f.len());
        }
        for s in fields.iter().flat_map(|f| f.iter()) {
            push_varint(&mut data, s.as_ref().len());
            data.extend_from_slice(s.as_ref().as_bytes());
        }
        PolicyRule {
            data: data.into_boxed_slice(),
        }
    }

    /// The bytes the rule holds on the heap.
    pub fn heap_size(&self) -> usize {
        self.data.len()
    }

    /// A rule from its RBAC v1 JSON (`{"verbs": [...], "apiGroups": [...], ...}`).
    pub fn from_value(value: &Value) -> Result<PolicyRule> {
        RuleJson::deserialize(value)
            .map(RuleJson::pack)
            .map_err(|e| Error::InvalidRule(e.to_string()))
    }

    /// The `rules` of a Role or ClusterRole given as JSON (none when absent or null).
    pub fn rules_of(role: &Value) -> Result<Vec<PolicyRule>> {
        match role.get("rules") {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(rules) => Option::<Vec<RuleJson>>::deserialize(rules)
                .map(|r| {
                    r.unwrap_or_default()
                        .into_iter()
                        .map(RuleJson::pack)
                        .collect()
                })
                .map_err(|e| Error::InvalidRule(e.to_string())),
        }
    }

    /// The rule as RBAC v1 JSON, empty lists left out as the API omits them.
    pub fn to_value(&self) -> Value {
        let mut map = serde_json::Map::new();
        let fields = [
            ("verbs", self.verbs()),
            ("apiGroups", self.api_groups()),
            ("resources", self.resources()),
            ("resourceNames", self.resource_names()),
            ("nonResourceURLs", self.non_resource_urls()),
        ];
        for (name, strings) in fields {
            if strings.len() > 0 {
                map.insert(
                    name.to_owned(),
                    strings.map(|s| Value::String(s.to_owned())).collect(),
                );
            }
        }
        Value::Object(map)
    }

    fn field(&self, field: Field) -> Strings<'_> {
        let mut pos = 0;
        let mut counts = [0usize; FIELDS];
        for c in &mut counts {
            *c = read_varint(&self.data, &mut pos);
        }
        let f = field as usize;
        for _ in 0..counts[..f].iter().sum::<usize>() {
            let len = read_varint(&self.data, &mut pos);
            pos = pos.saturating_add(len);
        }
        Strings {
            data: &self.data,
            pos,
            remaining: counts[f],
        }
    }

    pub fn verbs(&self) -> Strings<'_> {
        self.field(Field::Verbs)
    }

    pub fn api_groups(&self) -> Strings<'_> {
        self.field(Field::ApiGroups)
    }

    pub fn resources(&self) -> Strings<'_> {
        self.field(Field::Resources)
    }

    pub fn resource_names(&self) -> Strings<'_> {
        self.field(Field::ResourceNames)
    }

    pub fn non_resource_urls(&self) -> Strings<'_> {
        self.field(Field::NonResourceUrls)
    }

    /// Upstream's `rbacv1helpers.CompactString`: the non-empty lists, each as Go's `%q`
    /// of a `[]string`, e.g. `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`.
    pub fn compact_string(&self) -> String {
        let parts = [
            ("APIGroups", self.api_groups()),
            ("Resources", self.resources()),
            ("NonResourceURLs", self.non_resource_urls()),
            ("ResourceNames", self.resource_names()),
            ("Verbs", self.verbs()),
        ];
        let rendered: Vec<String> = parts
            .into_iter()
            .filter(|(_, s)| s.len() > 0)
            .map(|(name, s)| format!("{name}:{}", quote_list(s)))
            .collect();
        format!("{{{}}}", rendered.join(", "))
    }

    /// The rule as `SelfSubjectRulesReview` reports it when it names resources.
    pub fn resource_rule_info(&self) -> Option<ResourceRuleInfo> {
        (self.resources().len() > 0).then(|| ResourceRuleInfo {
            verbs: self.verbs().map(str::to_owned).collect(),
            api_groups: self.api_groups().map(str::to_owned).collect(),
            resources: self.resources().map(str::to_owned).collect(),
            resource_names: self.resource_names().map(str::to_owned).collect(),
        })
    }

    /// The rule as `SelfSubjectRulesReview` reports it when it names non-resource URLs.
    pub fn non_resource_rule_info(&self) -> Option<NonResourceRuleInfo> {
        (self.non_resource_urls().len() > 0).then(|| NonResourceRuleInfo {
            verbs: self.verbs().map(str::to_owned).collect(),
            non_resource_urls: self.non_resource_urls().map(str::to_owned).collect(),
        })
    }
}

impl fmt::Debug for PolicyRule {
    /// Upstream's `rbacv1helpers.String`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PolicyRule{}", self.compact_string())
    }
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
pub(crate) fn quote_list<'a>(strings: impl IntoIterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = strings.into_iter().map(quote).collect();
    format!("[{}]", quoted.join(" "))
}

/// The strings of one field of a [`PolicyRule`].
#[derive(Clone)]
pub struct Strings<'a> {
    data: &'a [u8],
    pos: usize,
    remaining: usize,
}

impl<'a> Iterator for Strings<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let len = read_varint(self.data, &mut self.pos);
        let end = self.pos.saturating_add(len);
        let s = self.data.get(self.pos..end).unwrap_or_default();
        self.pos = end;
        // Packed from `&str`s, so always valid.
        Some(std::str::from_utf8(s).unwrap_or_default())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Strings<'_> {}

/// The JSON of a rule; `null` lists read as empty, unknown fields are ignored.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct RuleJson {
    verbs: Option<Vec<String>>,
    api_groups: Option<Vec<String>>,
    resources: Option<Vec<String>>,
    resource_names: Option<Vec<String>>,
    #[serde(rename = "nonResourceURLs")]
    non_resource_urls: Option<Vec<String>>,
}

impl RuleJson {
    pub(crate) fn pack(self) -> PolicyRule {
        PolicyRule::new(
            &self.verbs.unwrap_or_default(),
            &self.api_groups.unwrap_or_default(),
            &self.resources.unwrap_or_default(),
            &self.resource_names.unwrap_or_default(),
            &self.non_resource_urls.unwrap_or_default(),
        )
    }
}

/// Upstream's `VerbMatches`.
pub fn verb_matches(rule: &PolicyRule, requested_verb: &str) -> bool {
    rule.verbs().any(|v| v == ALL || v == requested_verb)
}

/// Upstream's `APIGroupMatches`.
pub fn api_group_matches(rule: &PolicyRule, requested_group: &str) -> bool {
    rule.api_groups().any(|g| g == ALL || g == requested_group)
}

/// Upstream's `ResourceMatches`, with the combined resource given as its two parts
/// (`resource/subresource`, or `resource` when `subresource` is empty) so that no string
/// is built per check.
pub fn resource_matches(rule: &PolicyRule, resource: &str, subresource: &str) -> bool {
    rule.resources().any(|r| {
        if r == ALL || is_combined(r, resource, subresource) {
            return true;
        }
        // `*/subresource` matches that subresource of every resource.
        !subresource.is_empty()
            && r.len() == subresource.len() + 2
            && r.starts_with("*/")
            && r.ends_with(subresource)
    })
}

/// Whether `r` equals `resource`, or `resource/subresource` when there is a subresource.
fn is_combined(r: &str, resource: &str, subresource: &str) -> bool {
    if subresource.is_empty() {
        return r == resource;
    }
    r.len() == resource.len() + 1 + subresource.len()
        && r.starts_with(resource)
        && r.as_bytes().get(resource.len()) == Some(&b'/')
        && r.ends_with(subresource)
}

/// Upstream's `ResourceNameMatches`: no names allow every name.
pub fn resource_name_matches(rule: &PolicyRule, requested_name: &str) -> bool {
    let mut names = rule.resource_names();
    names.len() == 0 || names.any(|n| n == requested_name)
}

/// Upstream's `NonResourceURLMatches`: `*`, an exact match, or a prefix ending in `*`.
pub fn non_resource_url_matches(rule: &PolicyRule, requested_url: &str) -> bool {
    rule.non_resource_urls().any(|u| {
        u == ALL
            || u == requested_url
            || (u.ends_with('*') && requested_url.starts_with(u.trim_end_matches('*')))
    })
}

/// Upstream's `RuleAllows`.
pub fn rule_allows(attrs: &Attributes, rule: &PolicyRule) -> bool {
    if attrs.is_resource_request {
        return verb_matches(rule, &attrs.verb)
            && api_group_matches(rule, &attrs.api_group)
            && resource_matches(rule, &attrs.resource, &attrs.subresource)
            && resource_name_matches(rule, &attrs.name);
    }
    verb_matches(rule, &attrs.verb) && non_resource_url_matches(rule, &attrs.path)
}

/// Upstream's `RulesAllow`.
pub fn rules_allow(attrs: &Attributes, rules: &[PolicyRule]) -> bool {
    rules.iter().any(|r| rule_allows(attrs, r))
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
