//! What CRD validation reports about `x-kubernetes-validations` once the schema itself is
//! valid (upstream `ValidateCustomResourceDefinitionOpenAPISchema`'s CEL part, and the
//! total-cost check of `validateCustomResourceDefinitionValidation`).

use std::sync::Arc;

use cel::Env;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use serde_json::Value as Json;

use super::compile::compile_node;
use super::cost::max_cardinality;
use super::environment;
use super::escaping::escape;
use super::node::Node;

/// Upstream `StaticEstimatedCostLimit`: the largest estimated cost of one expression.
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// Upstream `StaticEstimatedCRDCostLimit`: the largest estimated total of a schema.
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;

/// The CEL errors of a CRD version's `openAPIV3Schema` at `path` (upstream's
/// `spec.versions[i].schema.openAPIV3Schema`): rules that do not compile, estimated costs
/// over budget, `oldSelf` where values do not correlate, `optionalOldSelf` without
/// `oldSelf`, and the total cost. Upstream runs this only for a structural schema
/// without other errors at or below each node.
pub fn compile_errors(schema: &Json, path: &Path) -> Vec<field::Error> {
    compile_errors_with(schema, path, false)
}

/// As [`compile_errors`]; `suppress_per_expression_cost` drops the per-expression cost
/// errors, as upstream does for a version whose schema an update leaves unchanged
/// (`suppressExpressionCostForUnchangedSchema`; the total still counts).
pub fn compile_errors_with(
    schema: &Json,
    path: &Path,
    suppress_per_expression_cost: bool,
) -> Vec<field::Error> {
    let mut walk = Walk {
        suppress_per_expression_cost,
        env: environment::env(),
        errs: Vec::new(),
        total: 0,
        most_expensive: Vec::new(),
    };
    let ctx = Ctx {
        cardinality: Some(1),
        uncorrelatable: None,
        typed: true,
        resource_root: true,
    };
    walk.node(Node(schema), path, &ctx);
    let mut errs = walk.errs;
    if walk.total > STATIC_ESTIMATED_CRD_COST_LIMIT {
        for (p, _) in &walk.most_expensive {
            errs.push(field::forbidden(
                p,
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        let msg = cost_error_message(
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
            walk.total,
            STATIC_ESTIMATED_CRD_COST_LIMIT,
        );
        errs.push(field::forbidden(path, &msg));
    }
    errs
}

struct Ctx {
    /// Upstream `MaxCardinality`; `None` is unbounded.
    cardinality: Option<u64>,
    /// Upstream `forbidOldSelfValidations()`: the highest uncorrelatable ancestor.
    uncorrelatable: Option<Path>,
    /// Whether the node has CEL type information (every property on the way escapes).
    typed: bool,
    /// Whether the node is the root of a resource (the root, or an embedded resource).
    resource_root: bool,
}

struct Walk {
    suppress_per_expression_cost: bool,
    env: Arc<Env>,
    errs: Vec<field::Error>,
    total: u64,
    most_expensive: Vec<(Path, u64)>,
}

/// Upstream `extractMaxElements`.
fn max_elements(n: Node<'_>) -> Option<u64> {
    let bound = |k: &str| n.int(k).map(|v| v.max(0) as u64);
    match n.type_() {
        "object" if n.0.get("additionalProperties").is_some() => bound("maxProperties"),
        "array" => bound("maxItems"),
        _ => Some(1),
    }
}

impl Walk {
    fn node(&mut self, n: Node<'_>, path: &Path, ctx: &Ctx) {
        let child_card = ctx
            .cardinality
            .zip(max_elements(n))
            .map(|(a, b)| a.saturating_mul(b));
        if let Some(ap) = n.additional_properties() {
            let c = Ctx {
                cardinality: child_card,
                uncorrelatable: ctx.uncorrelatable.clone(),
                typed: ctx.typed,
                resource_root: ap.embedded_resource(),
            };
            self.node(ap, &path.child("additionalProperties"), &c);
        }
        let correlatable = matches!(n.map_type(), None | Some("granular" | "atomic"));
        for (name, prop) in n.properties().into_iter().flatten() {
            let uncorrelatable = ctx
                .uncorrelatable
                .clone()
                .or_else(|| (!correlatable).then(|| path.clone()));
            let typed = ctx.typed && escape(name).is_some();
            let c = Ctx {
                cardinality: child_card,
                uncorrelatable,
                typed,
                resource_root: Node(prop).embedded_resource(),
            };
            self.node(Node(prop), &path.child("properties").key(name), &c);
        }
        if let Some(items) = n.items() {
            let uncorrelatable = ctx
                .uncorrelatable
                .clone()
                .or_else(|| (n.list_type() != "map").then(|| path.clone()));
            let c = Ctx {
                cardinality: child_card,
                uncorrelatable,
                typed: ctx.typed,
                resource_root: items.embedded_resource(),
            };
            self.node(items, &path.child("items"), &c);
        }
        if !n.rules().is_empty() {
            self.rules(n, path, ctx);
        }
    }

    fn rules(&mut self, n: Node<'_>, path: &Path, ctx: &Ctx) {
        let base = path.child("x-kubernetes-validations");
        if !ctx.typed {
            let err = std::io::Error::other(
                "internal error: failed to retrieve type information for x-kubernetes-validations",
            );
            self.errs.push(field::internal_error(&base, &err));
            return;
        }
        for (i, cr) in compile_node(&self.env, n, ctx.resource_root, n.rules())
            .into_iter()
            .enumerate()
        {
            let rule_path = base.index(i).child("rule");
            let card = ctx.cardinality.unwrap_or_else(|| max_cardinality(n));
            let cost = if cr.max_cost == 0 {
                0
            } else {
                cr.max_cost.saturating_mul(card)
            };
            if !self.suppress_per_expression_cost && cost > STATIC_ESTIMATED_COST_LIMIT {
                let msg =
                    cost_error_message("estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT);
                self.errs.push(field::forbidden(&rule_path, &msg));
            }
            self.observe(&rule_path, cost);
            let raw = || BadValue::Raw(cr.rule.go_syntax());
            if let Some(e) = &cr.error {
                self.errs.push(field::invalid(&rule_path, raw(), e));
            }
            let msg_path = base.index(i).child("messageExpression");
            if let Some(e) = &cr.message_expression_error {
                self.errs.push(field::invalid(&msg_path, raw(), e));
            } else if cr.message_expression.is_some() {
                let cost = cr.message_expression_max_cost;
                if !self.suppress_per_expression_cost && cost > STATIC_ESTIMATED_COST_LIMIT {
                    let msg = cost_error_message(
                        "estimated messageExpression cost",
                        cost,
                        STATIC_ESTIMATED_COST_LIMIT,
                    );
                    self.errs.push(field::forbidden(&msg_path, &msg));
                }
                self.observe(&msg_path, cost);
            }
            if cr.uses_old_self {
                if let Some(u) = &ctx.uncorrelatable {
                    let detail = format!(
                        "oldSelf cannot be used on the uncorrelatable portion of the schema within {u}"
                    );
                    self.errs
                        .push(field::invalid(&rule_path, cr.rule.rule.as_str(), &detail));
                }
            } else if let Some(v) = cr.rule.optional_old_self {
                let p = base.index(i).child("optionalOldSelf");
                self.errs.push(field::invalid(
                    &p,
                    v,
                    "may not be set if oldSelf is not used in rule",
                ));
            }
        }
    }

    /// Upstream `TotalCost.ObserveExpressionCost`.
    fn observe(&mut self, path: &Path, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100 {
            return;
        }
        self.most_expensive.push((path.clone(), cost));
        self.most_expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        self.most_expensive.truncate(4);
    }
}

/// Upstream `getCostErrorMessage`.
pub(crate) fn cost_error_message(name: &str, cost: u64, limit: u64) -> String {
    let exceed = cost as f64 / limit as f64;
    let factor = if exceed > 100.0 {
        "more than 100x".to_owned()
    } else if exceed < 1.5 {
        format!("{exceed:.6}x")
    } else {
        format!("{exceed:.1}x")
    };
    format!(
        "{name} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}
