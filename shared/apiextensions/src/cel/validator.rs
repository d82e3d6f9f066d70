//! Upstream `Validator` (`pkg/apiserver/schema/cel/validation.go`): the compiled rules of
//! a schema, in the schema's shape, and their evaluation against a custom resource.

use std::collections::BTreeMap;
use std::sync::Arc;

use cel::Env;
use kas_apimachinery::validation::field::{self, Path};
use serde_json::Value as Json;

use super::compile::{CompiledRule, compile_node};
use super::environment;
use super::eval::{Activation, RUNTIME_CEL_COST_BUDGET, Ratchet, Report, evaluate_rules};
use super::maplist::MapList;
use super::node::Node;

/// The compiled `x-kubernetes-validations` of one CRD version's schema, compiled once
/// and evaluated for every create and update.
pub struct Validator {
    env: Arc<Env>,
    root: Option<NodeValidator>,
}

/// One schema node that holds rules, or has a descendant that does.
pub(crate) struct NodeValidator {
    /// The node's schema (for converting values and naming the type in errors).
    pub schema: Json,
    pub is_resource_root: bool,
    pub rules: Vec<CompiledRule>,
    items: Option<Box<NodeValidator>>,
    properties: BTreeMap<String, NodeValidator>,
    additional_properties: Option<Box<NodeValidator>>,
    all_of: Vec<NodeValidator>,
}

impl Validator {
    /// Upstream `NewValidator(structural, isResourceRoot=true, PerCallLimit)` over the raw
    /// `openAPIV3Schema` of a CRD version.
    pub fn new(schema: &Json) -> Validator {
        let env = environment::env();
        let root = build(&env, Node(schema), Node(schema), true);
        Validator { env, root }
    }

    /// Whether the schema has any rule.
    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// Upstream `Validate`: every rule evaluated against `new` (with `oldSelf` from `old`
    /// on updates), errors at `path` (the resource root is `Path::nil()`).
    pub fn validate(&self, path: &Path, new: &Json, old: Option<&Json>) -> Vec<field::Error> {
        self.validate_with_warnings(path, new, old).0
    }

    /// As `validate`, with the warnings upstream adds instead of errors for rules that
    /// fail on values unchanged since `old` (CRD validation ratcheting), as upstream's
    /// `Error()` prints them.
    pub fn validate_with_warnings(
        &self,
        path: &Path,
        new: &Json,
        old: Option<&Json>,
    ) -> (Vec<field::Error>, Vec<String>) {
        let mut errs = Report {
            budget: RUNTIME_CEL_COST_BUDGET,
            ..Report::default()
        };
        if let Some(root) = &self.root {
            let ratchet = Ratchet {
                correlated: old.is_some(),
                parent_unchanged: false,
            };
            root.validate(&self.env, path, new, old, ratchet, &mut errs);
        }
        (errs.errors, errs.warnings)
    }
}

fn build(env: &Arc<Env>, rules: Node<'_>, node: Node<'_>, is_root: bool) -> Option<NodeValidator> {
    if !has_rules(rules) {
        return None;
    }
    let items = match (rules.items(), node.items()) {
        (Some(r), Some(n)) => build(env, r, n, n.embedded_resource()).map(Box::new),
        _ => None,
    };
    let mut properties = BTreeMap::new();
    for (name, r) in rules.properties().into_iter().flatten() {
        let Some(n) = node.property(name).filter(|n| n.has_decl_type()) else {
            continue;
        };
        if let Some(v) = build(env, Node(r), n, n.embedded_resource()) {
            properties.insert(name.clone(), v);
        }
    }
    let additional_properties = match (rules.additional_properties(), node.additional_properties())
    {
        (Some(r), Some(n)) => build(env, r, n, n.embedded_resource()).map(Box::new),
        _ => None,
    };
    let all_of = rules
        .all_of()
        .filter_map(|r| build(env, r, node, is_root))
        .collect();
    Some(NodeValidator {
        schema: node.0.clone(),
        is_resource_root: is_root,
        rules: compile_node(env, node, is_root, rules.rules()),
        items,
        properties,
        additional_properties,
        all_of,
    })
}

/// Upstream `hasXValidations`, also looking into `allOf`.
fn has_rules(s: Node<'_>) -> bool {
    !s.rules().is_empty()
        || s.items().is_some_and(has_rules)
        || s.additional_properties().is_some_and(has_rules)
        || s.properties()
            .into_iter()
            .flatten()
            .any(|(_, p)| has_rules(Node(p)))
        || s.all_of().any(has_rules)
}

impl NodeValidator {
    pub fn node(&self) -> Node<'_> {
        Node(&self.schema)
    }

    fn validate(
        &self,
        env: &Arc<Env>,
        path: &Path,
        new: &Json,
        old: Option<&Json>,
        ratchet: Ratchet,
        errs: &mut Report,
    ) {
        if new.is_null() || errs.budget < 0 {
            return;
        }
        let old = old.filter(|o| !o.is_null());
        let activation = Activation {
            path,
            new,
            old,
            ratchet,
            schema: self.node(),
            is_resource_root: self.is_resource_root,
        };
        evaluate_rules(env, &self.rules, &activation, errs);
        for v in &self.all_of {
            let r = Ratchet {
                correlated: false,
                parent_unchanged: ratchet.parent_unchanged,
            };
            v.validate(env, path, new, old, r, errs);
        }
        match new {
            Json::Array(items) => {
                let Some(item_validator) = &self.items else {
                    return;
                };
                let old_items = MapList::new(self.node(), old);
                for (i, item) in items.iter().enumerate() {
                    let item_old = old_items.get(item);
                    let r = ratchet.child(new, old, item_old);
                    item_validator.validate(env, &path.index(i), item, item_old, r, errs);
                }
            }
            Json::Object(fields) => {
                let correlatable =
                    matches!(self.node().map_type(), None | Some("granular" | "atomic"));
                for (k, v) in fields {
                    let child_old = old.filter(|_| correlatable).and_then(|o| o.get(k));
                    let r = ratchet.child(new, old, child_old);
                    if let Some(a) = &self.additional_properties {
                        a.validate(env, &path.key(k), v, child_old, r, errs);
                    }
                    if let Some(p) = self.properties.get(k) {
                        p.validate(env, &path.child(k), v, child_old, r, errs);
                    }
                }
            }
            _ => {}
        }
    }
}
