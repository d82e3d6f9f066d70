//! An `audit.k8s.io/v1` `Policy` document (already JSON) read as Go's `encoding/json`
//! (sigs.k8s.io/json) reads it into upstream's structs: keys match case-sensitively, null
//! leaves a field unset, the first value of a wrong type is the error
//! (`json: cannot unmarshal number into Go struct field PolicyRule.rules.level of type
//! v1.Level`), and keys no field has are collected as strict decoding's
//! `unknown field "rules[0].x"`. Keys are read in the document's map order, which for YAML
//! (converted through a Go map) is upstream's too.

use kas_apimachinery::golang::json::describe;
use kas_apimachinery::golang::strconv::quote;
use serde_json::{Map, Value};

use super::types::{GroupResources, Policy, PolicyRule};

/// What reading found.
#[derive(Debug, Default)]
pub(super) struct Read {
    pub policy: Policy,
    /// The first value of a wrong type, as Go's `UnmarshalTypeError` writes it.
    pub type_error: Option<String>,
    /// Strict decoding's unknown fields, each as its error text.
    pub unknown: Vec<String>,
}

/// Where a value sits: the strict path (`rules[0].level`) and Go's error context (the
/// field names without indices, `rules.level`, and the innermost struct's name).
#[derive(Clone, Copy)]
struct At<'a> {
    strict: &'a str,
    fields: &'a str,
    parent: &'static str,
}

pub(super) fn read_policy(v: &Value) -> Read {
    let mut r = Read::default();
    let root = At {
        strict: "",
        fields: "",
        parent: "Policy",
    };
    let mut policy = Policy::default();
    r.fields(v, root, "v1.Policy", "Policy", |r, key, value, at| {
        match key {
            "apiVersion" | "kind" => {}
            // Its fields are not read: the policy has no use for them.
            "metadata" => {
                r.object(value, at, "v1.ObjectMeta");
            }
            "rules" => policy.rules = r.list(value, at, "[]v1.PolicyRule", Read::rule),
            "omitStages" => policy.omit_stages = r.strings(value, at, "[]v1.Stage", "v1.Stage"),
            "omitManagedFields" => policy.omit_managed_fields = r.bool(value, at).unwrap_or(false),
            _ => return false,
        }
        true
    });
    r.policy = policy;
    r
}

fn join(path: &str, key: &str) -> String {
    match path.is_empty() {
        true => key.to_owned(),
        false => format!("{path}.{key}"),
    }
}

impl Read {
    fn mismatch(&mut self, v: &Value, at: At<'_>, go_type: &str) {
        if self.type_error.is_none() {
            self.type_error = Some(format!(
                "json: cannot unmarshal {} into Go struct field {}.{} of type {go_type}",
                describe(v),
                at.parent,
                at.fields
            ));
        }
    }

    fn unknown_field(&mut self, at: &At<'_>, key: &str) {
        let path = join(at.strict, key);
        self.unknown.push(format!("unknown field {}", quote(&path)));
    }

    /// A struct's fields, each key handed to `field` with its place (`parent` the struct's
    /// name); a key `field` does not know (it answers false) is an unknown field.
    fn fields(
        &mut self,
        v: &Value,
        at: At<'_>,
        go_type: &str,
        parent: &'static str,
        mut field: impl FnMut(&mut Read, &str, &Value, At<'_>) -> bool,
    ) {
        let Some(map) = self.object(v, at, go_type) else {
            return;
        };
        for (key, value) in map {
            let (strict, fields) = (join(at.strict, key), join(at.fields, key));
            let at_field = At {
                strict: &strict,
                fields: &fields,
                parent,
            };
            if !field(self, key, value, at_field) {
                self.unknown_field(&at, key);
            }
        }
    }

    /// A struct's object; `None` for null or a value of another type.
    fn object<'v>(
        &mut self,
        v: &'v Value,
        at: At<'_>,
        go_type: &str,
    ) -> Option<&'v Map<String, Value>> {
        match v {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                self.mismatch(other, at, go_type);
                None
            }
        }
    }

    /// A list, each item read by `item` (null items too: Go leaves them zero).
    fn list<T>(
        &mut self,
        v: &Value,
        at: At<'_>,
        go_type: &str,
        item: fn(&mut Read, &Value, At<'_>) -> T,
    ) -> Vec<T> {
        match v {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, value)| {
                    let strict = format!("{}[{i}]", at.strict);
                    item(
                        self,
                        value,
                        At {
                            strict: &strict,
                            ..at
                        },
                    )
                })
                .collect(),
            Value::Null => Vec::new(),
            other => {
                self.mismatch(other, at, go_type);
                Vec::new()
            }
        }
    }

    fn strings(
        &mut self,
        v: &Value,
        at: At<'_>,
        go_type: &str,
        item_type: &'static str,
    ) -> Vec<String> {
        match v {
            Value::Array(items) => items
                .iter()
                .map(|value| self.string(value, at, item_type))
                .collect(),
            Value::Null => Vec::new(),
            other => {
                self.mismatch(other, at, go_type);
                Vec::new()
            }
        }
    }

    fn string(&mut self, v: &Value, at: At<'_>, go_type: &str) -> String {
        match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => {
                self.mismatch(other, at, go_type);
                String::new()
            }
        }
    }

    fn bool(&mut self, v: &Value, at: At<'_>) -> Option<bool> {
        match v {
            Value::Bool(b) => Some(*b),
            Value::Null => None,
            other => {
                self.mismatch(other, at, "bool");
                None
            }
        }
    }

    fn rule(&mut self, v: &Value, at: At<'_>) -> PolicyRule {
        let mut rule = PolicyRule::default();
        self.fields(v, at, "v1.PolicyRule", "PolicyRule", |r, key, value, at| {
            let strings = |r: &mut Read| r.strings(value, at, "[]string", "string");
            match key {
                "level" => rule.level = r.string(value, at, "v1.Level"),
                "users" => rule.users = strings(r),
                "userGroups" => rule.user_groups = strings(r),
                "verbs" => rule.verbs = strings(r),
                "resources" => {
                    let go_type = "[]v1.GroupResources";
                    rule.resources = r.list(value, at, go_type, Read::group_resources);
                }
                "namespaces" => rule.namespaces = strings(r),
                "nonResourceURLs" => rule.non_resource_urls = strings(r),
                "omitStages" => rule.omit_stages = r.strings(value, at, "[]v1.Stage", "v1.Stage"),
                "omitManagedFields" => rule.omit_managed_fields = r.bool(value, at),
                _ => return false,
            }
            true
        });
        rule
    }

    fn group_resources(&mut self, v: &Value, at: At<'_>) -> GroupResources {
        let mut gr = GroupResources::default();
        self.fields(
            v,
            at,
            "v1.GroupResources",
            "GroupResources",
            |r, key, value, at| {
                let strings = |r: &mut Read| r.strings(value, at, "[]string", "string");
                match key {
                    "group" => gr.group = r.string(value, at, "string"),
                    "resources" => gr.resources = strings(r),
                    "resourceNames" => gr.resource_names = strings(r),
                    _ => return false,
                }
                true
            },
        );
        gr
    }
}
