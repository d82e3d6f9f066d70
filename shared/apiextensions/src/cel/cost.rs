//! Static cost estimation of a rule, after cel-go's `checker/cost.go` with upstream's
//! size estimator (sizes from `maxLength`, `maxItems`, `maxProperties`, or estimated from
//! the 3 MiB request limit as `SchemaDeclType` does).
//!
//! cel-rust has no type checker, so sizes are known only along field paths from `self`
//! and comprehension variables, and for literals; elsewhere a size counts as 1, which
//! errs towards accepting a rule rather than refusing a valid one.

use cel::common::ast::{CallExpr, EntryExpr, Expr, IdedExpr, LiteralValue};
use serde_json::Value as Json;

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
        data: None,
        old_data: None,
        vars: Vec::new(),
    }
    .cost(e)
}

/// The cost of evaluating `e` on these values: the same model with the sizes of the
/// actual data, standing in for cel-go's runtime cost tracking (it counts every
/// iteration, where cel-go stops at a loop's short circuit).
pub(crate) fn runtime_cost(e: &IdedExpr, schema: Node<'_>, new: &Json, old: Option<&Json>) -> u64 {
    Coster {
        root: schema,
        data: Some(new),
        old_data: old,
        vars: Vec::new(),
    }
    .cost(e)
}

/// The size of a value as cel-go measures it: code points of a string, entries of a
/// list or map.
fn json_size(v: &Json) -> u64 {
    match v {
        Json::String(s) => s.chars().count() as u64,
        Json::Array(a) => a.len() as u64,
        Json::Object(m) => m.len() as u64,
        _ => 0,
    }
}

fn children(v: &Json) -> Vec<&Json> {
    match v {
        Json::Array(a) => a.iter().collect(),
        Json::Object(m) => m.values().collect(),
        _ => Vec::new(),
    }
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

/// A comprehension variable: the schema and size of what it stands for, when known, and
/// the values it takes (runtime costs only).
struct Var<'a> {
    name: String,
    node: Option<Node<'a>>,
    size: Option<u64>,
    data: Option<Vec<&'a Json>>,
}

struct Coster<'a> {
    root: Node<'a>,
    /// `self` and `oldSelf` for runtime costs; `None` for estimates.
    data: Option<&'a Json>,
    old_data: Option<&'a Json>,
    vars: Vec<Var<'a>>,
}

impl<'a> Coster<'a> {
    fn var(&self, name: &str) -> Option<&Var<'a>> {
        self.vars.iter().rev().find(|v| v.name == name)
    }

    /// The values a field path takes, for runtime costs.
    fn data(&self, e: &IdedExpr) -> Option<Vec<&'a Json>> {
        let root = self.data?;
        match &e.expr {
            Expr::Ident(name) => match self.var(name) {
                Some(v) => v.data.clone(),
                None if name == "self" => Some(vec![root]),
                None if name == "oldSelf" => self.old_data.map(|o| vec![o]),
                None => None,
            },
            Expr::Select(s) if !s.test => {
                let name = unescape(&s.field).unwrap_or_else(|| s.field.clone());
                let parents = self.data(&s.operand)?;
                Some(parents.into_iter().filter_map(|v| v.get(&name)).collect())
            }
            Expr::Call(c) if c.func_name == "_[_]" => {
                let parents = self.data(c.args.first()?)?;
                Some(parents.into_iter().flat_map(children).collect())
            }
            _ => None,
        }
    }

    /// The schema of `e`'s value, for field paths.
    fn node(&self, e: &IdedExpr) -> Option<Node<'a>> {
        match &e.expr {
            Expr::Ident(name) => match self.var(name) {
                Some(v) => v.node,
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
        if let Some(values) = self.data(e) {
            return Some(values.into_iter().map(json_size).max().unwrap_or(0));
        }
        if let Some(n) = self.node(e) {
            return Some(max_elements(n));
        }
        match &e.expr {
            Expr::Literal(LiteralValue::String(s)) => Some(s.inner().chars().count() as u64),
            Expr::Literal(LiteralValue::Bytes(b)) => Some(b.inner().len() as u64),
            Expr::Literal(_) => Some(1),
            Expr::List(l) => Some(l.elements.len() as u64),
            Expr::Map(m) => Some(m.entries.len() as u64),
            Expr::Ident(name) => self.var(name).and_then(|v| v.size),
            Expr::Comprehension(c) if matches!(c.accu_init.expr, Expr::Literal(_)) => Some(1),
            Expr::Comprehension(c) => self.size(&c.iter_range),
            Expr::Call(c) => match c.func_name.as_str() {
                "@kasKeys" => self.size(c.args.first()?),
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
                let (node, mut size) = match range_node {
                    Some(n) if n.type_() == "array" => (n.items(), n.items().map(max_elements)),
                    Some(_) => (None, Some(0)),
                    None => (None, None),
                };
                let mut data = None;
                if let Some(ranges) = self.data(&c.iter_range) {
                    let mut elements = Vec::new();
                    let mut key_size = 0;
                    for r in ranges {
                        match r {
                            Json::Array(a) => elements.extend(a.iter()),
                            Json::Object(m) => {
                                let longest = m.keys().map(|k| k.chars().count()).max();
                                key_size = key_size.max(longest.unwrap_or(0) as u64);
                            }
                            _ => {}
                        }
                    }
                    let element_size = elements.iter().map(|e| json_size(e)).max();
                    size = Some(element_size.unwrap_or(0).max(key_size));
                    data = Some(elements);
                }
                let depth = self.vars.len();
                let var = |name: &str| Var {
                    name: name.to_owned(),
                    node,
                    size,
                    data: data.clone(),
                };
                self.vars.push(var(&c.iter_var));
                if let Some(v2) = &c.iter_var2 {
                    self.vars.push(var(v2));
                }
                // A comprehension over no elements is a `cel.bind`: its accumulator is
                // its initial value.
                let bind = matches!(&c.iter_range.expr, Expr::List(l) if l.elements.is_empty());
                let accu = if bind {
                    Var {
                        name: c.accu_var.clone(),
                        node: self.node(&c.accu_init),
                        size: self.size(&c.accu_init),
                        data: self.data(&c.accu_init),
                    }
                } else {
                    Var {
                        name: c.accu_var.clone(),
                        node: None,
                        size: None,
                        data: None,
                    }
                };
                self.vars.push(accu);
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
                            factor(self.element_size(target, el), STRING_TRAVERSAL)
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
                let el = self
                    .element(target)
                    .map_or(0, |el| self.element_size(target, el));
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

    /// The largest element of the list `e` (schema `el`): from the data for runtime
    /// costs, from the schema for estimates.
    fn element_size(&self, e: Option<&IdedExpr>, el: Node<'_>) -> u64 {
        match e.and_then(|e| self.data(e)) {
            Some(lists) => lists
                .into_iter()
                .flat_map(children)
                .map(json_size)
                .max()
                .unwrap_or(0),
            None => max_elements(el),
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
