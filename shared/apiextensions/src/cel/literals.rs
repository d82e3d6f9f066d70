//! cel-go's AST validators that upstream enables (`ValidateDurationLiterals`,
//! `ValidateTimestampLiterals`, `ValidateRegexLiterals`,
//! `ValidateHomogeneousAggregateLiterals`), for literal arguments and literal elements:
//! the only cases whose outcome does not need type inference.

use cel::common::ast::{CallExpr, EntryExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr};
use kas_apimachinery::golang::time;

use super::Issue;
use super::node::Node;

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

fn literal_type(e: &IdedExpr) -> Option<&'static str> {
    match &e.expr {
        Expr::Literal(l) => Some(match l {
            LiteralValue::Boolean(_) => "bool",
            LiteralValue::Bytes(_) => "bytes",
            LiteralValue::Double(_) => "double",
            LiteralValue::Int(_) => "int",
            LiteralValue::Null => "null_type",
            LiteralValue::String(_) => "string",
            LiteralValue::UInt(_) => "uint",
        }),
        _ => None,
    }
}

fn mismatch(id: u64, expected: &str, actual: &str) -> Issue {
    Issue {
        id,
        message: format!("expected type '{expected}' but found '{actual}'"),
    }
}

/// The first element of a list literal whose literal type differs from the first's.
pub(crate) fn list_issue(l: &ListExpr) -> Option<Issue> {
    let mut first = None;
    for (i, e) in l.elements.iter().enumerate() {
        if l.optional_indices.contains(&i) {
            return None;
        }
        let t = literal_type(e)?;
        match first {
            None => first = Some(t),
            Some(f) if f != t => return Some(mismatch(e.id, f, t)),
            Some(_) => {}
        }
    }
    None
}

/// Each entry of a map literal whose literal key or value type differs from the first's.
pub(crate) fn map_issues(m: &MapExpr) -> Vec<Issue> {
    let mut out = Vec::new();
    let mut first: Option<(Option<&str>, Option<&str>)> = None;
    for entry in &m.entries {
        let EntryExpr::MapEntry(me) = &entry.expr else {
            return out;
        };
        if me.optional {
            return out;
        }
        let (k, v) = (literal_type(&me.key), literal_type(&me.value));
        let Some((fk, fv)) = first else {
            first = Some((k, v));
            continue;
        };
        if let (Some(fk), Some(k)) = (fk, k)
            && fk != k
        {
            out.push(mismatch(me.key.id, fk, k));
        }
        if let (Some(fv), Some(v)) = (fv, v)
            && fv != v
        {
            out.push(mismatch(me.value.id, fv, v));
        }
    }
    out
}

/// The CEL type of `e` where it is certain without inference: a literal's, or a scalar
/// field's (`node`, its schema, when `e` is a field path). Formatted as cel-go formats
/// types in its messages.
pub(crate) fn static_type(e: &IdedExpr, node: Option<Node<'_>>) -> Option<&'static str> {
    if let Expr::Literal(l) = &e.expr {
        return Some(match l {
            LiteralValue::Null => "null",
            _ => literal_type(e)?,
        });
    }
    let n = node?;
    if n.int_or_string() {
        return None;
    }
    Some(match (n.type_(), n.format()) {
        ("string", "byte") => "bytes",
        ("string", "duration") => "google.protobuf.Duration",
        ("string", "date" | "date-time") => "google.protobuf.Timestamp",
        ("string", _) => "string",
        ("integer", _) => "int",
        ("number", _) => "double",
        ("boolean", _) => "bool",
        _ => return None,
    })
}

/// cel-go's checker error for a comparison of two certainly different types: equality
/// needs one type, ordering one type or two numeric ones.
pub(crate) fn operator_issue(id: u64, call: &CallExpr, types: &[Option<&str>]) -> Option<Issue> {
    let op = call.func_name.as_str();
    let ordering = matches!(op, "_<_" | "_<=_" | "_>_" | "_>=_");
    if !(ordering || matches!(op, "_==_" | "_!=_")) {
        return None;
    }
    let [Some(a), Some(b)] = types else {
        return None;
    };
    let numeric = |t: &str| matches!(t, "int" | "uint" | "double");
    if a == b || (ordering && numeric(a) && numeric(b)) {
        return None;
    }
    Some(Issue {
        id,
        message: format!("found no matching overload for '{op}' applied to '({a}, {b})'"),
    })
}
