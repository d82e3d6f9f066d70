//! cel-go's AST validators that upstream enables (`ValidateDurationLiterals`,
//! `ValidateTimestampLiterals`, `ValidateRegexLiterals`,
//! `ValidateHomogeneousAggregateLiterals`): the literal arguments of `duration()`,
//! `timestamp()` and `matches()`; the homogeneous literals check needs the inferred types
//! and lives with the checker (`check/infer.rs`).

use cel::common::ast::{CallExpr, Expr, LiteralValue};
use kas_apimachinery::golang::time;

use super::Issue;

/// `invalid <function> argument` for a literal that `duration()`, `timestamp()` or
/// `matches()` cannot take.
pub(crate) fn call_issue(call: &CallExpr) -> Option<Issue> {
    let arg = call.args.first()?;
    let Expr::Literal(LiteralValue::String(s)) = &arg.expr else {
        return None;
    };
    let s = s.inner();
    let valid = match call.func_name.as_str() {
        "duration" => time::parse_duration(s).is_ok(),
        "timestamp" => time::parse_rfc3339(s).is_some(),
        "matches" => regex::Regex::new(s).is_ok(),
        _ => true,
    };
    (!valid).then(|| Issue {
        id: arg.id,
        message: format!("invalid {} argument", call.func_name),
    })
}
