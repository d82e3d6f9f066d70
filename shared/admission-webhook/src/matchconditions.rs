//! A webhook's `matchConditions`, after upstream's `plugin/webhook/matchconditions`
//! (`matcher.Match`): CEL expressions over `object`, `oldObject` and `request` (the
//! AdmissionRequest without its objects), evaluated in order; the first `false` skips the
//! webhook, and errors (when none is `false`) fail closed with `failurePolicy: Fail` and
//! skip the webhook with `Ignore`.
//!
//! The environment is cel-rust's standard one with the strings extension and optional
//! syntax (as kas-auth's), not upstream's whole Kubernetes library: `authorizer`, `params`
//! and the Kubernetes extension functions are not available (an expression using them
//! fails at evaluation), and without a type checker an expression that does not yield a
//! bool fails at evaluation rather than when the configuration is written.

use std::sync::{Arc, LazyLock};

use cel::{Context, Env, Program, Value};
use kas_auth::authentication::oidc::cel::to_value;
use serde_json::Value as Json;

static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib().with_optional_support(true);
    // Registration fails only on a name clash, which the standard library does not have.
    let _ = env.add_extension(cel::extensions::strings);
    Arc::new(env)
});

/// One condition: its name, expression and compiled program (or why it did not compile).
pub struct Condition {
    pub name: String,
    pub expression: String,
    pub program: Result<Arc<Program>, String>,
}

impl Condition {
    pub fn new(name: &str, expression: &str) -> Condition {
        Condition {
            name: name.to_owned(),
            expression: expression.to_owned(),
            program: ENV
                .compile(expression)
                .map(Arc::new)
                .map_err(|e| e.to_string()),
        }
    }
}

/// The conditions of a webhook's JSON (`matchConditions`).
pub fn conditions_of(hook: &Json) -> Vec<Condition> {
    hook.get("matchConditions")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let text = |k: &str| c.get(k).and_then(Json::as_str).unwrap_or("");
            Condition::new(text("name"), text("expression"))
        })
        .collect()
}

/// What the conditions decided.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    Match,
    /// A condition was false (its name).
    NoMatch(String),
    /// Errors and no false condition: upstream's aggregate error text.
    Error(String),
}

/// Evaluates `conditions` against the three variables.
pub fn evaluate(
    conditions: &[Condition],
    object: Option<&Json>,
    old_object: Option<&Json>,
    request: &Json,
) -> Outcome {
    if conditions.is_empty() {
        return Outcome::Match;
    }
    let mut ctx = Context::with_env(ENV.clone());
    let bind = |v: Option<&Json>| v.map_or(Value::Null, to_value);
    ctx.add_variable_from_value("object", bind(object));
    ctx.add_variable_from_value("oldObject", bind(old_object));
    ctx.add_variable_from_value("request", to_value(request));
    let mut errors = Vec::new();
    for condition in conditions {
        let program = match &condition.program {
            Ok(program) => program,
            Err(e) => {
                errors.push(format!("compilation error: {e}"));
                continue;
            }
        };
        match program.execute(&ctx) {
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => return Outcome::NoMatch(condition.name.clone()),
            Ok(other) => errors.push(format!(
                "expression '{}' resulted in error: expected a bool, got {:?}",
                condition.expression,
                other.type_of()
            )),
            Err(e) => errors.push(format!(
                "expression '{}' resulted in error: {}",
                condition.expression,
                evaluation_error(e)
            )),
        }
    }
    match errors.len() {
        0 => Outcome::Match,
        // Upstream's `NewAggregate`: one error is itself, more are listed in brackets.
        1 => Outcome::Error(errors.remove(0)),
        _ => Outcome::Error(format!("[{}]", errors.join(", "))),
    }
}

/// cel-go's words for the commonest failures.
fn evaluation_error(e: cel::ExecutionError) -> String {
    match e {
        cel::ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        cel::ExecutionError::UnsupportedBinaryOperator(..)
        | cel::ExecutionError::NoSuchOverload(_) => "no such overload".to_owned(),
        e => e.to_string(),
    }
}
