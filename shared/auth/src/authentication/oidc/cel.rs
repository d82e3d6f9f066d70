//! The CEL of upstream's `k8s.io/apiserver/pkg/authentication/cel`: expressions over the
//! `claims` of a token (a map of string to dyn) or the mapped `user`
//! (`kubernetes.UserInfo`), compiled in cel-rust's standard environment with the strings
//! extension and optional syntax.
//!
//! cel-rust has no type checker: compilation reports parse errors and references to
//! undeclared identifiers, in cel-go's rendering; a rule that evaluates to something other
//! than a bool fails at evaluation instead.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue, operators};
use cel::objects::{Key, Map};
use cel::{Context, Env, Program, Value};
use serde_json::Value as Json;

/// The variable claim mappings and claim validation rules see.
pub const CLAIMS: &str = "claims";
/// The variable user validation rules see.
pub const USER: &str = "user";

/// Type names that resolve without a declaration, as cel-go's checker has them.
const PREDECLARED: &[&str] = &[
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
    "google",
    "optional_type",
    "optional",
];

static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib().with_optional_support(true);
    // Registration fails only on a name clash, which the standard library does not have.
    let _ = env.add_extension(cel::extensions::strings);
    Arc::new(env)
});

/// A compiled expression and its source.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub expression: String,
    pub program: Arc<Program>,
}

/// Compiles `source` with `variable` declared; the error is upstream's `Error.Detail`
/// (`compilation failed: ERROR: <input>:1:1: ...`).
pub fn compile(source: &str, variable: &str) -> Result<Compiled, String> {
    let program = ENV.compile(source).map_err(|e| {
        format!(
            "compilation failed: {}",
            e.to_string().replace("\n| ", "\n | ")
        )
    })?;
    let mut issues = Vec::new();
    let mut scopes = vec![variable.to_owned()];
    undeclared(program.expression(), &mut scopes, &mut issues);
    if !issues.is_empty() {
        let rendered: Vec<String> = issues
            .iter()
            .map(|(id, name)| {
                let offset = program
                    .source_info()
                    .offset_for(*id)
                    .map_or(0, |(start, _)| start as usize);
                render_at(
                    source,
                    offset,
                    &format!("undeclared reference to '{name}' (in container '')"),
                )
            })
            .collect();
        return Err(format!("compilation failed: {}", rendered.join("\n")));
    }
    Ok(Compiled {
        expression: source.to_owned(),
        program: Arc::new(program),
    })
}

/// Identifiers not in scope, in order, with their node ids.
fn undeclared(e: &IdedExpr, scopes: &mut Vec<String>, out: &mut Vec<(u64, String)>) {
    match &e.expr {
        Expr::Ident(name) => {
            if !scopes.iter().any(|s| s == name) && !PREDECLARED.contains(&name.as_str()) {
                out.push((e.id, name.clone()));
            }
        }
        Expr::Select(s) => undeclared(&s.operand, scopes, out),
        Expr::Call(c) => {
            if let Some(t) = &c.target {
                undeclared(t, scopes, out);
            }
            for a in &c.args {
                undeclared(a, scopes, out);
            }
        }
        Expr::List(l) => l.elements.iter().for_each(|x| undeclared(x, scopes, out)),
        Expr::Map(m) => m.entries.iter().for_each(|x| entry(&x.expr, scopes, out)),
        Expr::Struct(s) => s.entries.iter().for_each(|x| entry(&x.expr, scopes, out)),
        Expr::Comprehension(c) => {
            undeclared(&c.iter_range, scopes, out);
            undeclared(&c.accu_init, scopes, out);
            let depth = scopes.len();
            scopes.push(c.iter_var.clone());
            scopes.extend(c.iter_var2.clone());
            scopes.push(c.accu_var.clone());
            undeclared(&c.loop_cond, scopes, out);
            undeclared(&c.loop_step, scopes, out);
            scopes.truncate(depth);
            scopes.push(c.accu_var.clone());
            undeclared(&c.result, scopes, out);
            scopes.truncate(depth);
        }
        Expr::Literal(_) | Expr::Unspecified => {}
    }
}

fn entry(e: &EntryExpr, scopes: &mut Vec<String>, out: &mut Vec<(u64, String)>) {
    match e {
        EntryExpr::MapEntry(m) => {
            undeclared(&m.key, scopes, out);
            undeclared(&m.value, scopes, out);
        }
        EntryExpr::StructField(f) => undeclared(&f.value, scopes, out),
    }
}

/// One issue at byte `offset` of `source`, as cel-go prints it.
pub fn render_at(source: &str, offset: usize, message: &str) -> String {
    let line_start = source[..offset.min(source.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line_no = source[..line_start].matches('\n').count() + 1;
    let line = source[line_start..].lines().next().unwrap_or("");
    let col = source[line_start..offset.min(source.len())].chars().count();
    format!(
        "ERROR: <input>:{line_no}:{}: {message}\n | {}\n | {}^",
        col + 1,
        line.replace('\t', " "),
        ".".repeat(col)
    )
}

/// Whether `e` certainly evaluates to a bool, as cel-go's checker would type it: the
/// claims are `dyn`, so only operators, predicates, macros and literals are.
pub fn is_bool(e: &IdedExpr) -> bool {
    match &e.expr {
        Expr::Literal(LiteralValue::Boolean(_)) => true,
        Expr::Select(s) => s.test,
        Expr::Call(c) => match c.func_name.as_str() {
            operators::CONDITIONAL => {
                c.args.len() == 3 && is_bool(&c.args[1]) && is_bool(&c.args[2])
            }
            operators::LOGICAL_AND
            | operators::LOGICAL_OR
            | operators::LOGICAL_NOT
            | operators::EQUALS
            | operators::NOT_EQUALS
            | operators::GREATER_EQUALS
            | operators::LESS_EQUALS
            | operators::GREATER
            | operators::LESS
            | operators::IN
            | operators::NOT_STRICTLY_FALSE
            | operators::HAS
            | "startsWith"
            | "endsWith"
            | "contains"
            | "matches"
            | "all"
            | "exists"
            | "exists_one" => true,
            _ => false,
        },
        Expr::Comprehension(c) => match &c.result.expr {
            Expr::Ident(n) if *n == c.accu_var => is_bool(&c.accu_init),
            _ => is_bool(&c.result),
        },
        _ => false,
    }
}

/// Whether `e` selects `field` of the identifier `operand` anywhere (`claims.email`, or
/// `claims.?email`), upstream's `hasSelectExp`.
pub fn has_select(e: &IdedExpr, operand: &str, field: &str) -> bool {
    let is_ident = |x: &IdedExpr| matches!(&x.expr, Expr::Ident(n) if n == operand);
    match &e.expr {
        Expr::Select(s) => {
            (is_ident(&s.operand) && s.field == field) || has_select(&s.operand, operand, field)
        }
        Expr::Call(c) => {
            if c.target.is_none()
                && c.func_name == operators::OPT_SELECT
                && c.args.len() == 2
                && is_ident(&c.args[0])
                && matches!(&c.args[1].expr, Expr::Literal(LiteralValue::String(s)) if **s == *field)
            {
                return true;
            }
            c.args.iter().any(|a| has_select(a, operand, field))
                || c.target
                    .as_ref()
                    .is_some_and(|t| has_select(t, operand, field))
        }
        Expr::List(l) => l.elements.iter().any(|x| has_select(x, operand, field)),
        Expr::Map(m) => m.entries.iter().any(|x| match &x.expr {
            EntryExpr::MapEntry(m) => {
                has_select(&m.key, operand, field) || has_select(&m.value, operand, field)
            }
            EntryExpr::StructField(f) => has_select(&f.value, operand, field),
        }),
        Expr::Struct(s) => s.entries.iter().any(|x| match &x.expr {
            EntryExpr::MapEntry(m) => {
                has_select(&m.key, operand, field) || has_select(&m.value, operand, field)
            }
            EntryExpr::StructField(f) => has_select(&f.value, operand, field),
        }),
        Expr::Comprehension(c) => [
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ]
        .into_iter()
        .any(|x| has_select(x, operand, field)),
        _ => false,
    }
}

/// JSON as a CEL value, as upstream's unstructured values: integral numbers are ints.
pub fn to_value(v: &Json) -> Value {
    match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(0.0)),
        },
        Json::String(s) => Value::String(Arc::new(s.clone())),
        Json::Array(a) => Value::List(Arc::new(a.iter().map(to_value).collect())),
        Json::Object(m) => {
            let map: HashMap<Key, Value> = m
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_value(v)))
                .collect();
            Value::Map(Map { map: Arc::new(map) })
        }
    }
}

impl Compiled {
    /// Evaluates the expression with `variable` bound to `value`; the error is cel's.
    pub fn eval(&self, variable: &str, value: &Value) -> Result<Value, String> {
        let mut ctx = Context::with_env(ENV.clone());
        ctx.add_variable_from_value(variable, value.clone());
        self.program.execute(&ctx).map_err(|e| match e {
            // cel-go's wording of the commonest failure, a claim the token lacks.
            cel::ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
            cel::ExecutionError::UnsupportedBinaryOperator(..)
            | cel::ExecutionError::NoSuchOverload(_) => "no such overload".to_owned(),
            e => e.to_string(),
        })
    }
}
