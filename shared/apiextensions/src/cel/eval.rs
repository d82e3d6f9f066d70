//! Upstream `validateExpressions` and `evalMessageExpression`
//! (`pkg/apiserver/schema/cel/validation.go`): the rules of one node evaluated with
//! `self` (and `oldSelf`) bound, and the errors upstream words.

use std::sync::Arc;

use cel::common::types::CelOptional;
use cel::common::value::Val;
use cel::{Context, Env, ExecutionError, Value};

use super::program::Program;
use kas_apimachinery::validation::field::{self, Path};
use serde_json::Value as Json;

use super::compile::CompiledRule;
use super::cost::runtime_cost;
use super::depth;
use super::node::Node;
use super::value::{Borrowed, to_cel};

/// Upstream `celconfig.PerCallLimit`: the cost one evaluation may reach.
pub(crate) const PER_CALL_LIMIT: u64 = 1_000_000;
/// Upstream `celconfig.RuntimeCELCostBudget`: the cost all rules of one object may reach.
pub(crate) const RUNTIME_CEL_COST_BUDGET: i64 = 10_000_000;

const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// Upstream `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES: usize = 5 * 1024;

pub(crate) struct Activation<'a> {
    pub path: &'a Path,
    pub new: &'a Json,
    pub old: Option<&'a Json>,
    pub ratchet: Ratchet,
    /// The schema of the node the rules belong to.
    pub schema: Node<'a>,
    pub is_resource_root: bool,
}

/// What evaluating rules produces.
#[derive(Default)]
pub(crate) struct Report {
    pub errors: Vec<field::Error>,
    pub warnings: Vec<String>,
    /// What is left of the runtime cost budget; negative once validation stopped.
    pub budget: i64,
}

/// Upstream's `ratchetingOptions`, reduced to what decides: whether this node has a
/// correlated old value, and whether the nearest correlated ancestor is unchanged.
#[derive(Clone, Copy)]
pub(crate) struct Ratchet {
    pub correlated: bool,
    pub parent_unchanged: bool,
}

impl Ratchet {
    pub fn child(self, new: &Json, old: Option<&Json>, child_old: Option<&Json>) -> Ratchet {
        let unchanged = if self.correlated {
            old == Some(new)
        } else {
            self.parent_unchanged
        };
        Ratchet {
            correlated: self.correlated && child_old.is_some(),
            parent_unchanged: unchanged,
        }
    }

    /// Upstream `shouldRatchetError`: errors of rules without `oldSelf` on a node equal
    /// to its old value are warnings, not errors.
    pub fn should_ratchet(self, new: &Json, old: Option<&Json>) -> bool {
        if self.correlated {
            old == Some(new)
        } else {
            self.parent_unchanged
        }
    }
}

pub(crate) fn evaluate_rules(
    env: &Arc<Env>,
    rules: &[CompiledRule],
    act: &Activation<'_>,
    report: &mut Report,
) {
    if rules.is_empty() {
        return;
    }
    let node = act.schema;
    let type_name = node.type_();
    if report.budget <= 0 {
        report
            .errors
            .push(field::invalid(act.path, type_name, OUT_OF_BUDGET));
        report.budget = -1;
        return;
    }
    let new = to_cel(act.new, node, act.is_resource_root);
    let old = act
        .old
        .and_then(|o| to_cel(o, node, act.is_resource_root).ok());
    for compiled in rules {
        let rule = &compiled.rule;
        if let Some(e) = &compiled.error {
            report.errors.push(field::invalid(
                act.path,
                type_name,
                &format!("rule compile error: {e}"),
            ));
            continue;
        }
        let Some(program) = &compiled.program else {
            continue;
        };
        let optional = rule.optional_old_self == Some(true);
        if compiled.uses_old_self && old.is_none() && !optional {
            // Transition rules run only when there is a comparable old value.
            continue;
        }
        let self_val = match &new {
            Ok(v) => v.as_ref(),
            Err(e) => {
                let detail = format!("{e} evaluating rule: {}", rule.error_string());
                report
                    .errors
                    .push(field::invalid(act.path, type_name, &detail));
                continue;
            }
        };
        // Upstream cancels an evaluation at the per-call limit, then charges the budget.
        let cost = depth::with_stack(compiled.depth, || {
            runtime_cost(program.expression(), node, act.new, act.old)
        });
        let charged = cost.min(PER_CALL_LIMIT + 1);
        if charged > u64::try_from(report.budget).unwrap_or(0) {
            report
                .errors
                .push(field::invalid(act.path, type_name, OUT_OF_BUDGET));
            report.budget = -1;
            return;
        }
        report.budget -= charged as i64;
        if cost > PER_CALL_LIMIT {
            let detail = format!(
                "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                rule.error_string()
            );
            report
                .errors
                .push(field::invalid(act.path, type_name, &detail));
            report.budget = -1;
            return;
        }
        let old = old.as_deref();
        let base = context(env, self_val, old, false);
        let result = depth::with_stack(compiled.depth, || {
            if optional {
                program.execute(&context(env, self_val, old, true))
            } else {
                program.execute(&base)
            }
        });
        match result {
            Ok(Value::Bool(true)) => {}
            Ok(_) => {
                let err = depth::with_stack(compiled.depth, || {
                    rule_failure(compiled, &base, act.path, type_name)
                });
                if !compiled.uses_old_self && act.ratchet.should_ratchet(act.new, act.old) {
                    // Upstream warns instead: the value did not change.
                    report.warnings.push(err.to_string());
                    continue;
                }
                report.errors.push(err);
            }
            Err(e) => {
                let err = runtime_error(&e);
                let detail = if err.starts_with("no such overload") {
                    format!(
                        "'{err}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                        rule.error_string()
                    )
                } else {
                    format!("{err} evaluating rule: {}", rule.error_string())
                };
                report
                    .errors
                    .push(field::invalid(act.path, type_name, &detail));
            }
        }
    }
}

/// The variables of a rule, bound by reference to values converted once per node.
fn context<'a>(
    env: &Arc<Env>,
    new: &'a dyn Val,
    old: Option<&'a dyn Val>,
    optional: bool,
) -> Context<'a, 'a> {
    let mut ctx = Context::with_env(env.clone());
    ctx.add_variable_as_val("self", Box::new(Borrowed(new)));
    if optional {
        let opt = match old {
            Some(o) => CelOptional::of(Box::new(Borrowed(o))),
            None => CelOptional::none(),
        };
        ctx.add_variable_as_val("oldSelf", Box::new(opt));
    } else if let Some(o) = old {
        ctx.add_variable_as_val("oldSelf", Box::new(Borrowed(o)));
    }
    ctx
}

/// The error of a rule that evaluated to false, as upstream's `fieldErrorForReason`.
fn rule_failure(
    compiled: &CompiledRule,
    ctx: &Context<'_, '_>,
    path: &Path,
    type_name: &str,
) -> field::Error {
    let rule = &compiled.rule;
    let path = if compiled.normalized_field_path.is_empty() {
        path.clone()
    } else {
        path.child(&compiled.normalized_field_path)
    };
    let detail = compiled
        .message_expression
        .as_ref()
        .and_then(|p| message_expression(p, ctx))
        .unwrap_or_else(|| rule.message_or_default());
    match rule.reason.as_deref() {
        Some("FieldValueForbidden") => field::forbidden(&path, &detail),
        Some("FieldValueRequired") => field::required(&path, &detail),
        Some("FieldValueDuplicate") => field::duplicate(&path, type_name),
        _ => field::invalid(&path, type_name, &detail),
    }
}

/// Upstream `evalMessageExpression`: the trimmed message, or `None` where upstream logs
/// the failure and falls back to the rule's message.
fn message_expression(program: &Program, ctx: &Context<'_, '_>) -> Option<String> {
    let Ok(Value::String(s)) = program.execute(ctx) else {
        return None;
    };
    let trimmed = s.trim();
    let ok = !trimmed.is_empty()
        && trimmed.len() <= MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES
        && !trimmed.contains('\n');
    ok.then(|| trimmed.to_owned())
}

/// cel-go's text for a runtime error.
fn runtime_error(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        ExecutionError::DivisionByZero(_) => "division by zero".to_owned(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_owned(),
        ExecutionError::Overflow(_, Value::UInt(_), _) => "unsigned integer overflow".to_owned(),
        ExecutionError::Overflow(..) => "integer overflow".to_owned(),
        ExecutionError::IndexOutOfBounds(i) => match i {
            Value::Int(i) => format!("index out of bounds: {i}"),
            other => format!("index out of bounds: {other:?}"),
        },
        ExecutionError::FunctionError { message, .. } => message.clone(),
        ExecutionError::NoSuchOverload(_)
        | ExecutionError::UnsupportedBinaryOperator(..)
        | ExecutionError::ValuesNotComparable(..)
        | ExecutionError::UnexpectedType { .. }
        | ExecutionError::UnsupportedTargetType { .. }
        | ExecutionError::NotSupportedAsMethod { .. }
        | ExecutionError::UndeclaredReference(_)
        | ExecutionError::UnsupportedIndex(..) => "no such overload".to_owned(),
        other => other.to_string(),
    }
}
