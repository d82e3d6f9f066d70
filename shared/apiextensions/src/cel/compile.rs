//! Upstream `Compile` and `compileRule` (`pkg/apiserver/schema/cel/compilation.go`): each
//! rule of one schema node compiled once, with what CRD validation reports about it.

use std::sync::Arc;

use cel::Env;
use serde_json::Value as Json;

use super::check::{self, Checker, Type};
use super::cost;
use super::depth;
use super::field_path::valid_field_path;
use super::node::Node;
use super::program::Program;
use super::rule::ValidationRule;

/// Upstream `CompilationResult`.
pub(crate) struct CompiledRule {
    pub rule: ValidationRule,
    /// `None` for an empty rule, or one that did not compile.
    pub program: Option<Program>,
    /// Upstream `Error.Detail` (`compilation failed: ...`).
    pub error: Option<String>,
    pub uses_old_self: bool,
    pub max_cost: u64,
    pub message_expression: Option<Program>,
    pub message_expression_error: Option<String>,
    pub message_expression_max_cost: u64,
    /// Upstream `NormalizedRuleFieldPath`: `fieldPath` as a field path string.
    pub normalized_field_path: String,
    /// The estimated depth of the deeper of the rule and its messageExpression, which
    /// sizes the stack they are evaluated on.
    pub depth: usize,
}

/// Compiles `rules` (upstream `Compile`) for values under `schema`.
pub(crate) fn compile_node(
    env: &Arc<Env>,
    schema: Node<'_>,
    is_resource_root: bool,
    rules: &[Json],
) -> Vec<CompiledRule> {
    let scope = Scope {
        env,
        schema,
        is_resource_root,
    };
    rules
        .iter()
        .map(|r| {
            let rule = ValidationRule::from_json(r);
            let depth = depth::estimate(&rule.rule).max(depth::estimate(&rule.message_expression));
            let mut compiled = depth::with_stack(depth, || compile_rule(&scope, rule));
            compiled.depth = depth;
            compiled
        })
        .collect()
}

/// What every rule of one node compiles against.
struct Scope<'a> {
    env: &'a Arc<Env>,
    schema: Node<'a>,
    is_resource_root: bool,
}

fn compile_rule(scope: &Scope<'_>, rule: ValidationRule) -> CompiledRule {
    let schema = scope.schema;
    let mut out = CompiledRule {
        program: None,
        error: None,
        uses_old_self: false,
        max_cost: 0,
        message_expression: None,
        message_expression_error: None,
        message_expression_max_cost: 0,
        normalized_field_path: String::new(),
        depth: 0,
        rule,
    };
    if out.rule.rule.trim().is_empty() {
        return out;
    }
    let optional = out.rule.optional_old_self == Some(true);
    let (program, uses_old_self, output) = match compile_expr(scope, &out.rule.rule, optional) {
        Ok(p) => p,
        Err(issues) => {
            out.error = Some(format!("compilation failed: {issues}"));
            return out;
        }
    };
    if !check::may_be_bool(&output) {
        out.error = Some("cel expression must evaluate to a bool".to_owned());
        return out;
    }
    out.uses_old_self = uses_old_self;
    out.max_cost = cost::estimate(program.expression(), schema);
    out.program = Some(program);
    let msg_expr = out.rule.message_expression.clone();
    if !msg_expr.is_empty() {
        match compile_expr(scope, &msg_expr, optional) {
            Err(issues) => {
                out.message_expression_error =
                    Some(format!("messageExpression compilation failed: {issues}"));
                return out;
            }
            Ok((_, _, output)) if !check::may_be_string(&output) => {
                out.message_expression_error =
                    Some("messageExpression must evaluate to a string".to_owned());
                return out;
            }
            Ok((p, _, _)) => {
                out.message_expression_max_cost = cost::estimate(p.expression(), schema);
                out.message_expression = Some(p);
            }
        }
    }
    if !out.rule.field_path.is_empty()
        && let Ok(path) = valid_field_path(&out.rule.field_path, schema, true)
    {
        out.normalized_field_path = path;
    }
    out
}

/// Parses and checks one expression: the program, whether it uses `oldSelf`, and its
/// type; the error is cel-go's rendering of the issues.
fn compile_expr<'a>(
    scope: &Scope<'a>,
    source: &str,
    optional_old_self: bool,
) -> Result<(Program, bool, Type<'a>), String> {
    let depth = depth::estimate(source);
    if depth > depth::MAX_RECURSION_DEPTH {
        return Err("ERROR: <input>:-1:0: max recursion depth exceeded".to_owned());
    }
    let program = Program::parse(scope.env, source, depth)
        .map_err(|e| e.to_string().replace("\n| ", "\n | "))?;
    let mut checker = Checker::new(scope.schema, scope.is_resource_root, optional_old_self);
    let output = checker.check(program.expression());
    for issues in [&checker.issues, &checker.validator_issues] {
        if !issues.is_empty() {
            return Err(check::render(issues, program.source_info(), source));
        }
    }
    Ok((program, checker.uses_old_self, output))
}
