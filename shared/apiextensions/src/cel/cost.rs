//! Static cost estimation of a rule, after cel-go's `checker/cost.go` with upstream's
//! size estimator (sizes from `maxLength`, `maxItems`, `maxProperties`, or estimated from
//! the 3 MiB request limit as `SchemaDeclType` does).
//!
//! cel-rust has no type checker, so sizes are known only along field paths from `self`
//! and comprehension variables, and for literals; elsewhere a size counts as 1, which
//! errs towards accepting a rule rather than refusing a valid one.

use cel::common::ast::{CallExpr, EntryExpr, Expr, IdedExpr, LiteralValue};

use super::escaping::unescape;
use super::node::Node;

/// Upstream `celconfig.MaxRequestSizeBytes`.
pub(crate) const MAX_REQUEST_SIZE_BYTES: u64 = 3 * 1024 * 1024;
const MAX_PER_REQUEST: u64 = MAX_REQUEST_SIZE_BYTES - 2;
const STRING_TRAVERSAL: f64 = 0.1;
const REGEX_LENGTH: f64 = 0.25;

/// The estimated maximum cost of one evaluation of `e` with `self` under `schema`.
pub(crate) fn estimate(e: &IdedExpr, schema: Node<'_>) -> u64 {
    Coster {
        root: schema,
        vars: Vec::new(),
    }
    .cost(e)
}

/// Upstream `maxCardinality`: how often a rule may run per request when no enclosing
/// list or map bounds it.
pub(crate) fn max_cardinality(schema: Node<'_>) -> u64 {
    MAX_REQUEST_SIZE_BYTES / (min_serialized_size(schema) + 1)
}

/// `MaxElements` of the node's declared type: characters of a string, items of a list,
/// entries of a map.
pub(crate) fn max_elements(n: Node<'_>) -> u64 {
    let bound = |k: &str| n.int(k).map(|v| v.max(0) as u64);
    if n.int_or_string() {
        return MAX_PER_REQUEST;
    }
    match n.type_() {
        "string" => {
            let chars_per_unit = if n.format() == "byte" { 1 } else { 4 };
            if let Some(max) = bound("maxLength") {
                return max.saturating_mul(chars_per_unit);
            }
            if let Some(values) = n.0.get("enum").and_then(|e| e.as_array()) {
                return values
                    .iter()
                    .filter_map(|v| v.as_str())
                    .map(|s| s.len() as u64)
                    .max()
                    .unwrap_or(0);
            }
            match n.format() {
                "duration" | "date-time" => 32,
                "date" => 12,
                _ => MAX_PER_REQUEST,
            }
        }
        "array" => bound("maxItems").unwrap_or_else(|| {
            n.items()
                .map_or(0, |i| MAX_PER_REQUEST / (min_serialized_size(i) + 1))
        }),
        "object" => match n.additional_properties() {
            Some(v) => bound("maxProperties")
                .unwrap_or_else(|| MAX_PER_REQUEST / (min_serialized_size(v) + 6)),
            None => 0,
        },
        _ => 0,
    }
}

/// `MinSerializedSize` of the node's declared type.
pub(crate) fn min_serialized_size(n: Node<'_>) -> u64 {
    if n.int_or_string() {
        return 1;
    }
    match n.type_() {
        "string" => match n.format() {
            "duration" => 3,
            "date" => 12,
            "date-time" => 21,
            _ => 2,
        },
        "boolean" => 4,
        "integer" | "number" => 1,
        "array" => 2,
        "object" if n.additional_properties().is_some() => 2,
        "object" => {
            let required: Vec<&str> =
                n.0.get("required")
                    .and_then(|r| r.as_array())
                    .map(|r| r.iter().filter_map(|s| s.as_str()).collect())
                    .unwrap_or_default();
            let mut size = 2;
            for (name, prop) in n.properties().into_iter().flatten() {
                if required.contains(&name.as_str()) && prop.get("default").is_none() {
                    size += name.len() as u64 + min_serialized_size(Node(prop)) + 4;
                }
            }
            size
        }
        _ => 1,
    }
}

fn factor(size: u64, f: f64) -> u64 {
    let v = (size as f64 * f).ceil();
    if v >= u64::MAX as f64 {
        u64::MAX
    } else {
        v as u64
    }
}

struct Coster<'a> {
    root: Node<'a>,
    /// Comprehension variables and the schema of what they range over, when known.
    vars: Vec<(String, Option<Node<'a>>, Option<u64>)>,
}

impl<'a> Coster<'a> {
    fn var(&self, name: &str) -> Option<&(String, Option<Node<'a>>, Option<u64>)> {
        self.vars.iter().rev().find(|(n, ..)| n == name)
    }

    /// The schema of `e`'s value, for field paths.
    fn node(&self, e: &IdedExpr) -> Option<Node<'a>> {
        match &e.expr {
            Expr::Ident(name) => match self.var(name) {
                Some((_, n, _)) => *n,
                None if name == "self" || name == "oldSelf" => Some(self.root),
                None => None,
            },
            Expr::Select(s) if !s.test => {
                let parent = self.node(&s.operand)?;
                let name = unescape(&s.field)?;
                parent
                    .property(&name)
                    .or_else(|| parent.additional_properties())
            }
            Expr::Call(c) if c.func_name == "_[_]" => {
                let parent = self.node(c.args.first()?)?;
                parent.items().or_else(|| parent.additional_properties())
            }
            _ => None,
        }
    }

    /// The estimated maximum size of `e`'s value; `None` when unknown.
    fn size(&self, e: &IdedExpr) -> Option<u64> {
        if let Some(n) = self.node(e) {
            return Some(max_elements(n));
        }
        match &e.expr {
            Expr::Literal(LiteralValue::String(s)) => Some(s.inner().chars().count() as u64),
            Expr::Literal(LiteralValue::Bytes(b)) => Some(b.inner().len() as u64),
            Expr::Literal(_) => Some(1),
            Expr::List(l) => Some(l.elements.len() as u64),
            Expr::Map(m) => Some(m.entries.len() as u64),
            Expr::Ident(name) => self.var(name).and_then(|v| v.2),
            Expr::Comprehension(c) if matches!(c.accu_init.expr, Expr::Literal(_)) => Some(1),
            Expr::Comprehension(c) => self.size(&c.iter_range),
            Expr::Call(c) => match c.func_name.as_str() {
                "lowerAscii" | "upperAscii" | "trim" | "substring" | "find" | "findAll"
                | "split" | "replace" => c.target.as_deref().and_then(|t| self.size(t)),
                "_+_" => {
                    let (a, b) = (c.args.first()?, c.args.get(1)?);
                    Some(self.size(a)?.saturating_add(self.size(b)?))
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn cost(&mut self, e: &IdedExpr) -> u64 {
        match &e.expr {
            Expr::Literal(_) | Expr::Unspecified => 0,
            Expr::Ident(_) => 1,
            Expr::Select(s) if s.test => self.cost(&s.operand),
            Expr::Select(s) => 1u64.saturating_add(self.cost(&s.operand)),
            Expr::List(l) => l
                .elements
                .iter()
                .fold(10, |acc, x| acc.saturating_add(self.cost(x))),
            Expr::Map(m) => m.entries.iter().fold(30, |acc, entry| match &entry.expr {
                EntryExpr::MapEntry(me) => acc
                    .saturating_add(self.cost(&me.key))
                    .saturating_add(self.cost(&me.value)),
                EntryExpr::StructField(f) => acc.saturating_add(self.cost(&f.value)),
            }),
            Expr::Struct(s) => s.entries.iter().fold(40, |acc, entry| match &entry.expr {
                EntryExpr::StructField(f) => acc.saturating_add(self.cost(&f.value)),
                EntryExpr::MapEntry(me) => acc.saturating_add(self.cost(&me.value)),
            }),
            Expr::Comprehension(c) => {
                let mut sum = self
                    .cost(&c.iter_range)
                    .saturating_add(self.cost(&c.accu_init));
                let range_node = self.node(&c.iter_range);
                // Over a list the variable is an element; over a map, a key (of size 0:
                // upstream's key type has no bound).
                let (element, element_size) = match range_node {
                    Some(n) if n.type_() == "array" => (n.items(), n.items().map(max_elements)),
                    Some(_) => (None, Some(0)),
                    None => (None, None),
                };
                let depth = self.vars.len();
                self.vars.push((c.iter_var.clone(), element, element_size));
                if let Some(v2) = &c.iter_var2 {
                    self.vars.push((v2.clone(), element, element_size));
                }
                self.vars.push((c.accu_var.clone(), None, None));
                let per_item = self
                    .cost(&c.loop_cond)
                    .saturating_add(self.cost(&c.loop_step));
                sum = sum.saturating_add(self.cost(&c.result));
                self.vars.truncate(depth);
                let count = self.size(&c.iter_range).unwrap_or(1);
                sum.saturating_add(count.saturating_mul(per_item))
            }
            Expr::Call(call) => self.call(call),
        }
    }

    fn call(&mut self, call: &CallExpr) -> u64 {
        let target_cost = call.target.as_ref().map_or(0, |t| self.cost(t));
        let arg_costs: Vec<u64> = call.args.iter().map(|a| self.cost(a)).collect();
        let args_sum = arg_costs
            .iter()
            .fold(target_cost, |a, b| a.saturating_add(*b));
        if call.func_name == "_?_:_" && arg_costs.len() == 3 {
            return target_cost
                .saturating_add(arg_costs[0])
                .saturating_add(arg_costs[1].max(arg_costs[2]));
        }
        args_sum.saturating_add(self.call_own(call))
    }

    /// The cost of the call itself, without its arguments (cel-go's `functionCost` and
    /// upstream's `CostEstimator.EstimateCallCost`).
    fn call_own(&self, call: &CallExpr) -> u64 {
        let size = |e: Option<&IdedExpr>| e.and_then(|e| self.size(e)).unwrap_or(1);
        let target = call.target.as_deref();
        let (arg0, arg1) = (call.args.first(), call.args.get(1));
        match call.func_name.as_str() {
            "_&&_" | "_||_" => 0,
            "_<_" | "_<=_" | "_>_" | "_>=_" if !self.stringy(arg0) && !self.stringy(arg1) => 1,
            "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_" => {
                factor(size(arg0).min(size(arg1)), STRING_TRAVERSAL)
            }
            "@in" => size(arg1),
            "_+_" if self.stringy(arg0) || self.stringy(arg1) => {
                factor(size(arg0).saturating_add(size(arg1)), STRING_TRAVERSAL)
            }
            "matches" | "find" | "findAll" if target.is_some() => {
                factor(size(target).saturating_add(1), STRING_TRAVERSAL)
                    .saturating_mul(factor(size(arg0), REGEX_LENGTH))
            }
            "contains" if target.is_some() => factor(size(target), STRING_TRAVERSAL)
                .saturating_mul(factor(size(arg0), STRING_TRAVERSAL)),
            "startsWith" | "endsWith" => factor(size(arg0), STRING_TRAVERSAL),
            "isSorted" | "sum" | "min" | "max" | "indexOf" | "lastIndexOf" if target.is_some() => {
                match self.element(target) {
                    Some(el) => {
                        let per = 1 + if self.stringy_node(el) {
                            factor(max_elements(el), STRING_TRAVERSAL)
                        } else {
                            0
                        };
                        size(target).saturating_mul(per)
                    }
                    None => factor(size(target), STRING_TRAVERSAL),
                }
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" if target.is_some() => {
                factor(size(target), STRING_TRAVERSAL)
            }
            "replace" | "split" if target.is_some() => factor(size(target), 2.0 * STRING_TRAVERSAL),
            "join" if target.is_some() => {
                let items = size(target);
                let el = self.element(target).map_or(0, max_elements);
                let sep = arg0.map_or(0, |a| size(Some(a)));
                let total = items
                    .saturating_mul(el)
                    .saturating_add(sep.saturating_mul(items.saturating_sub(1)));
                factor(total, STRING_TRAVERSAL)
            }
            "url" | "isURL" | "isIP" | "isCIDR" | "cidr" | "ip" if !call.args.is_empty() => {
                factor(size(arg0), STRING_TRAVERSAL)
            }
            _ => 1,
        }
    }

    /// The schema of the elements of the list `e`.
    fn element(&self, e: Option<&IdedExpr>) -> Option<Node<'a>> {
        self.node(e?)?.items()
    }

    fn stringy_node(&self, n: Node<'_>) -> bool {
        n.type_() == "string" && !matches!(n.format(), "date" | "date-time" | "duration")
    }

    /// Whether `e` is certainly a string or bytes.
    fn stringy(&self, e: Option<&IdedExpr>) -> bool {
        let Some(e) = e else {
            return false;
        };
        match &e.expr {
            Expr::Literal(LiteralValue::String(_) | LiteralValue::Bytes(_)) => true,
            _ => self.node(e).is_some_and(|n| self.stringy_node(n)),
        }
    }
}

#[cfg(test)]
mod tests;
