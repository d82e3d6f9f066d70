//! Webhook match conditions: upstream's `k8s.io/apiserver/pkg/authorization/cel` over
//! `request`, a `kubernetes.SubjectAccessReviewSpec`, compiled with the OIDC claim
//! mappings' CEL environment (`authentication::oidc::cel`).
//!
//! cel-rust has no type checker, so what cel-go's checker finds from `request`'s declared
//! type is found here by walking the expression: fields `request` and its parts do not
//! have (`undefined field 'x'`), and expressions that evaluate to something other than a
//! bool (`must evaluate to bool but got string`) when their type follows from the
//! declaration or a literal.

use cel::common::ast::{Expr, IdedExpr, LiteralValue, operators};
use kas_apimachinery::validation::field::{self, Error, Path};
use serde_json::Value as Json;

use super::WebhookMatchCondition;
use crate::authentication::oidc::cel::{self as oidc_cel, Compiled, is_bool, render_at};

/// The variable match conditions see.
pub const REQUEST: &str = "request";

/// Upstream's `CELMatcher`: the compiled conditions and whether any reads the selectors.
#[derive(Clone, Debug)]
pub struct Matcher {
    conditions: Vec<Compiled>,
    uses_field_selector: bool,
    uses_label_selector: bool,
}

/// Upstream's `compileMatchConditions` at the authorizer's `path` (nil for
/// `ValidateAndCompileMatchConditions`): no matcher when nothing compiled.
pub fn compile_match_conditions(
    conditions: &[WebhookMatchCondition],
    path: &Path,
) -> (Option<Matcher>, Vec<Error>) {
    if let Some(err) = too_many_match_conditions(conditions.len(), path) {
        return (None, vec![err]);
    }
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut compiled = Vec::new();
    for (i, condition) in conditions.iter().enumerate() {
        let at = path.child("matchConditions").index(i).child("expression");
        let expression = condition.expression.as_str();
        if expression.trim().is_empty() {
            errs.push(field::required(&at, ""));
            continue;
        }
        if seen.contains(&expression) {
            errs.push(field::duplicate(&at, expression));
            continue;
        }
        seen.push(expression);
        match compile(expression) {
            Ok(c) => compiled.push(c),
            Err(detail) => errs.push(field::invalid(&at, expression, &detail)),
        }
    }
    if compiled.is_empty() {
        return (None, errs);
    }
    let uses = |name: &str| {
        compiled
            .iter()
            .any(|c| selects_field(c.program.expression(), name))
    };
    let matcher = Matcher {
        uses_field_selector: uses("fieldSelector"),
        uses_label_selector: uses("labelSelector"),
        conditions: compiled,
    };
    (Some(matcher), errs)
}

/// Compiles one condition; the error is upstream's `Error.Detail`.
pub fn compile(expression: &str) -> Result<Compiled, String> {
    let compiled = oidc_cel::compile(expression, REQUEST)?;
    let root = compiled.program.expression();
    let mut issues = Vec::new();
    let output = infer(root, &mut issues);
    if !issues.is_empty() {
        let rendered: Vec<String> = issues
            .iter()
            .map(|(id, message)| {
                let offset = compiled
                    .program
                    .source_info()
                    .offset_for(*id)
                    .map_or(0, |(start, _)| start as usize);
                render_at(expression, offset, message)
            })
            .collect();
        return Err(format!("compilation failed: {}", rendered.join("\n")));
    }
    match output {
        T::Bool | T::Dyn => Ok(compiled),
        other => Err(format!("must evaluate to bool but got {}", other.name())),
    }
}

impl Matcher {
    /// Upstream's `CELMatcher.Eval` over a SubjectAccessReview spec (v1 JSON): false as
    /// soon as a condition is false; else the evaluation errors, aggregated; else true.
    pub fn eval(&self, spec: &Json) -> Result<bool, String> {
        let request = oidc_cel::to_value(&self.request(spec));
        let mut errors = Vec::new();
        for c in &self.conditions {
            match c.eval(REQUEST, &request) {
                Ok(cel::Value::Bool(true)) => {}
                Ok(cel::Value::Bool(false)) => return Ok(false),
                Ok(other) => errors.push(format!(
                    "cel evaluation error: expression '{}' eval result type should be bool but got {:?}",
                    c.expression,
                    other.type_of()
                )),
                Err(e) => errors.push(format!(
                    "cel evaluation error: expression '{}' resulted in error: {e}",
                    c.expression
                )),
            }
        }
        match field::aggregate_strings(errors) {
            Some(err) => Err(err),
            None => Ok(true),
        }
    }

    /// Upstream's `convertObjectToUnstructured`: every string field, even empty ones; the
    /// selectors only when a condition reads them.
    fn request(&self, spec: &Json) -> Json {
        let s = |v: &Json, k: &str| v.get(k).cloned().unwrap_or(Json::String(String::new()));
        let mut out = serde_json::json!({
            "user": s(spec, "user"),
            "groups": spec.get("groups").cloned().unwrap_or(Json::Array(Vec::new())),
            "uid": s(spec, "uid"),
            "extra": spec.get("extra").cloned().unwrap_or(Json::Object(Default::default())),
        });
        if let Some(ra) = spec.get("resourceAttributes") {
            let mut attrs = serde_json::Map::new();
            for k in [
                "namespace",
                "verb",
                "group",
                "version",
                "resource",
                "subresource",
                "name",
            ] {
                attrs.insert(k.to_owned(), s(ra, k));
            }
            for (name, used) in [
                ("fieldSelector", self.uses_field_selector),
                ("labelSelector", self.uses_label_selector),
            ] {
                if let (true, Some(sel)) = (used, ra.get(name)) {
                    attrs.insert(name.to_owned(), selector(sel));
                }
            }
            out["resourceAttributes"] = Json::Object(attrs);
        }
        if let Some(nra) = spec.get("nonResourceAttributes") {
            out["nonResourceAttributes"] =
                serde_json::json!({"verb": s(nra, "verb"), "path": s(nra, "path")});
        }
        out
    }
}

/// A selector's requirements (each with `values`, empty when absent), or its raw text.
fn selector(sel: &Json) -> Json {
    if let Some(raw) = sel.get("rawSelector").filter(|r| r.as_str() != Some("")) {
        return serde_json::json!({ "rawSelector": raw });
    }
    let requirements: Vec<Json> = sel
        .get("requirements")
        .and_then(Json::as_array)
        .map(|rs| {
            rs.iter()
                .map(|r| {
                    serde_json::json!({
                        "key": r.get("key").cloned().unwrap_or(Json::String(String::new())),
                        "operator": r.get("operator").cloned().unwrap_or(Json::String(String::new())),
                        "values": r.get("values").cloned().unwrap_or(Json::Array(Vec::new())),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    serde_json::json!({ "requirements": requirements })
}

/// Whether `e` selects `name` anywhere (`.fieldSelector` or `.?fieldSelector`), upstream's
/// `UsesFieldSelector`/`UsesLabelSelector`.
fn selects_field(e: &IdedExpr, name: &str) -> bool {
    match &e.expr {
        Expr::Select(s) => s.field == name || selects_field(&s.operand, name),
        Expr::Call(c) => {
            let opt = c.func_name == operators::OPT_SELECT
                && c.args.len() == 2
                && matches!(&c.args[1].expr, Expr::Literal(LiteralValue::String(s)) if **s == *name);
            opt || c.args.iter().any(|a| selects_field(a, name))
                || c.target.as_ref().is_some_and(|t| selects_field(t, name))
        }
        Expr::List(l) => l.elements.iter().any(|x| selects_field(x, name)),
        Expr::Comprehension(c) => [
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ]
        .into_iter()
        .any(|x| selects_field(x, name)),
        _ => false,
    }
}

/// The types cel-go's checker gives what `request` declares, and literals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum T {
    Spec,
    ResourceAttributes,
    NonResourceAttributes,
    FieldSelector,
    LabelSelector,
    Requirement,
    Requirements,
    String,
    Strings,
    Extra,
    Bool,
    Int,
    Uint,
    Double,
    Bytes,
    Null,
    /// Not known here (comprehension variables, function results).
    Dyn,
}

impl T {
    fn name(self) -> &'static str {
        match self {
            T::Spec => "kubernetes.SubjectAccessReviewSpec",
            T::ResourceAttributes => "kubernetes.ResourceAttributes",
            T::NonResourceAttributes => "kubernetes.NonResourceAttributes",
            T::FieldSelector => "kubernetes.FieldSelectorAttributes",
            T::LabelSelector => "kubernetes.LabelSelectorAttributes",
            T::Requirement => "kubernetes.SelectorRequirement",
            T::Requirements => "list(kubernetes.SelectorRequirement)",
            T::String => "string",
            T::Strings => "list(string)",
            T::Extra => "map(string, list(string))",
            T::Bool => "bool",
            T::Int => "int",
            T::Uint => "uint",
            T::Double => "double",
            T::Bytes => "bytes",
            T::Null => "null_type",
            T::Dyn => "dyn",
        }
    }

    /// The fields of an object type; `None` for other types.
    fn fields(self) -> Option<&'static [(&'static str, T)]> {
        Some(match self {
            T::Spec => &[
                ("resourceAttributes", T::ResourceAttributes),
                ("nonResourceAttributes", T::NonResourceAttributes),
                ("user", T::String),
                ("groups", T::Strings),
                ("extra", T::Extra),
                ("uid", T::String),
            ],
            T::ResourceAttributes => &[
                ("namespace", T::String),
                ("verb", T::String),
                ("group", T::String),
                ("version", T::String),
                ("resource", T::String),
                ("subresource", T::String),
                ("name", T::String),
                ("fieldSelector", T::FieldSelector),
                ("labelSelector", T::LabelSelector),
            ],
            T::NonResourceAttributes => &[("path", T::String), ("verb", T::String)],
            T::FieldSelector | T::LabelSelector => &[
                ("rawSelector", T::String),
                ("requirements", T::Requirements),
            ],
            T::Requirement => &[
                ("key", T::String),
                ("operator", T::String),
                ("values", T::Strings),
            ],
            _ => return None,
        })
    }
}

/// The type of `e`, collecting undefined fields with the node they are at.
fn infer(e: &IdedExpr, issues: &mut Vec<(u64, String)>) -> T {
    match &e.expr {
        Expr::Ident(name) if name == REQUEST => T::Spec,
        Expr::Ident(_) => T::Dyn,
        Expr::Literal(l) => match l {
            LiteralValue::Boolean(_) => T::Bool,
            LiteralValue::Bytes(_) => T::Bytes,
            LiteralValue::Double(_) => T::Double,
            LiteralValue::Int(_) => T::Int,
            LiteralValue::Null => T::Null,
            LiteralValue::String(_) => T::String,
            LiteralValue::UInt(_) => T::Uint,
        },
        Expr::Select(s) => {
            let operand = infer(&s.operand, issues);
            let field = match operand {
                T::Extra => T::Strings,
                t => match t.fields() {
                    Some(fields) => match fields.iter().find(|(n, _)| *n == s.field) {
                        Some((_, t)) => *t,
                        None => {
                            issues.push((e.id, format!("undefined field '{}'", s.field)));
                            T::Dyn
                        }
                    },
                    None => T::Dyn,
                },
            };
            if s.test { T::Bool } else { field }
        }
        Expr::Call(c) => {
            let target = c.target.as_ref().map(|t| infer(t, issues));
            let args: Vec<T> = c.args.iter().map(|a| infer(a, issues)).collect();
            match c.func_name.as_str() {
                operators::INDEX => match args.first() {
                    Some(T::Strings) => T::String,
                    Some(T::Extra) => T::Strings,
                    Some(T::Requirements) => T::Requirement,
                    _ => T::Dyn,
                },
                operators::CONDITIONAL if args.len() == 3 && args[1] == args[2] => args[1],
                "size" => T::Int,
                "lowerAscii" | "upperAscii" | "trim" | "replace" if target == Some(T::String) => {
                    T::String
                }
                _ if is_bool(e) => T::Bool,
                _ => T::Dyn,
            }
        }
        Expr::List(l) => {
            l.elements.iter().for_each(|x| {
                infer(x, issues);
            });
            T::Dyn
        }
        Expr::Comprehension(c) => {
            for x in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ] {
                infer(x, issues);
            }
            if is_bool(e) { T::Bool } else { T::Dyn }
        }
        _ => T::Dyn,
    }
}

/// Upstream's limit on a webhook's match conditions.
const MAX_MATCH_CONDITIONS: usize = 64;

/// Whether there are more match conditions than upstream allows.
fn too_many_match_conditions(n: usize, path: &Path) -> Option<Error> {
    (n > MAX_MATCH_CONDITIONS).then(|| {
        field::too_many(
            &path.child("matchConditions"),
            n as i64,
            MAX_MATCH_CONDITIONS as i64,
        )
    })
}

#[cfg(test)]
#[path = "cel_tests.rs"]
mod tests;
