//! Inference over every kind of expression, after cel-go's `checker.go`: identifiers,
//! field selection, calls resolved against the declared overloads, literals of lists and
//! maps, and comprehensions (the expansions of the macros).

use cel::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr,
};

use super::super::literals;
use super::Checker;
use super::decls::{FUNCTIONS, STRUCTS};
use super::schema::field_type;
use super::types::{Type, most_general};

/// Names of the comprehension helpers of `comprehensions.rs`.
const KEYS: &str = "@kasKeys";
const INSERT: &str = "@kasMapInsert";
const MERGE: &str = "@kasMapMerge";
const TARGET: &str = "@kas_target";
/// The iteration variable of the bindings macros expand into (`cel.bind`).
const BIND_VAR: &str = "#unused";

/// Element types of a list or map literal, for the homogeneous literals validator, which
/// runs on the final types.
pub(super) struct Literal<'a> {
    /// (expression id, type) of each element; keys and values alternate for a map.
    pub elems: Vec<(u64, Type<'a>)>,
    pub map: bool,
}

impl<'a> Checker<'a> {
    /// cel-go's `check`: the type of `e`, as far as bound so far.
    pub(super) fn visit(&mut self, e: &IdedExpr) -> Type<'a> {
        let t = self.infer(e);
        self.types.insert(e.id, t.clone());
        t
    }

    fn infer(&mut self, e: &IdedExpr) -> Type<'a> {
        match &e.expr {
            Expr::Literal(l) => match l {
                LiteralValue::Boolean(_) => Type::Bool,
                LiteralValue::Bytes(_) => Type::Bytes,
                LiteralValue::Double(_) => Type::Double,
                LiteralValue::Int(_) => Type::Int,
                LiteralValue::Null => Type::Null,
                LiteralValue::String(_) => Type::String,
                LiteralValue::UInt(_) => Type::Uint,
            },
            Expr::Ident(name) => self.ident(e.id, name),
            Expr::Select(sel) => {
                if let Some(t) = qualified_type(e) {
                    return t;
                }
                let t = self.select(e.id, &sel.operand, &sel.field, false);
                let t = if sel.test { Type::Bool } else { t };
                self.mapping.substitute(&t, false)
            }
            Expr::Call(call) => self.call(e.id, call),
            Expr::Comprehension(c) => self.comprehension(c),
            Expr::List(l) => self.list(l),
            Expr::Map(m) => self.map(m),
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        self.visit(&f.value);
                    }
                }
                // No message type is declared but the well-known ones.
                if s.type_name.starts_with("google.protobuf.") {
                    return Type::Unknown;
                }
                let name = &s.type_name;
                self.issue(
                    e.id,
                    format!("undeclared reference to '{name}' (in container '')"),
                );
                Type::Error
            }
            Expr::Unspecified => Type::Unknown,
        }
    }

    fn ident(&mut self, id: u64, name: &str) -> Type<'a> {
        // Upstream reads this off the reference map, where a comprehension variable named
        // `oldSelf` counts as well.
        self.uses_old_self |= name == "oldSelf";
        if let Some((_, t)) = self.scope.iter().rev().find(|(n, _)| n == name) {
            return t.clone();
        }
        let ty = |t| Type::Kind(Box::new(t));
        match name {
            "self" => self.self_type.clone(),
            "oldSelf" => {
                if self.optional_old_self {
                    Type::optional(self.self_type.clone())
                } else {
                    self.self_type.clone()
                }
            }
            "bool" => ty(Type::Bool),
            "int" => ty(Type::Int),
            "uint" => ty(Type::Uint),
            "double" => ty(Type::Double),
            "string" => ty(Type::String),
            "bytes" => ty(Type::Bytes),
            "null_type" => ty(Type::Null),
            "list" => ty(Type::list(Type::Unknown)),
            "map" => ty(Type::map(Type::Unknown, Type::Unknown)),
            "type" | "optional_type" => ty(Type::Unknown),
            // Not a declared identifier of cel-go's; kept accepted as before.
            "dyn" | "google" => Type::Unknown,
            _ => {
                self.issue(
                    id,
                    format!("undeclared reference to '{name}' (in container '')"),
                );
                Type::Error
            }
        }
    }

    /// cel-go's `checkSelectField`: field `field` of `operand`.
    fn select(&mut self, id: u64, operand: &IdedExpr, field: &str, optional: bool) -> Type<'a> {
        let operand_type = self.visit(operand);
        let operand_type = self.mapping.substitute(&operand_type, false);
        let (target, is_opt) = operand_type.unwrap_optional();
        let result = match target {
            Type::Map(_, v) => (**v).clone(),
            Type::Object(o) => match field_type(o, field) {
                Some(t) => t,
                None => {
                    self.issue(id, format!("undefined field '{field}'"));
                    Type::Error
                }
            },
            Type::Struct(_) => {
                self.issue(id, format!("undefined field '{field}'"));
                Type::Error
            }
            Type::Var(_) => {
                self.mapping.is_assignable(&Type::Dyn, target);
                Type::Dyn
            }
            Type::Unknown => Type::Unknown,
            Type::Dyn | Type::Error => Type::Dyn,
            t => {
                let message = format!("type '{t}' does not support field selection");
                self.issue(id, message);
                Type::Dyn
            }
        };
        if is_opt || optional {
            Type::optional(result)
        } else {
            result
        }
    }

    fn call(&mut self, id: u64, call: &CallExpr) -> Type<'a> {
        let name = call.func_name.as_str();
        if name == "_?._" {
            return self.opt_select(id, call);
        }
        let format = name == "format";
        if !format {
            self.validator_issues.extend(literals::call_issue(call));
        }
        self.in_format += usize::from(format);
        let mut types: Vec<Type<'a>> = Vec::with_capacity(call.args.len() + 1);
        for a in &call.args {
            types.push(self.visit(a));
        }
        self.in_format -= usize::from(format);
        match name {
            "_&&_" | "_||_" => return self.logical(call, &types),
            KEYS => return self.keys(types.first()),
            _ => {}
        }
        let Some(target) = call.target.as_deref() else {
            return self.resolve(id, name, false, types);
        };
        if let Some(ns) = qualified_name(target) {
            let qualified = format!("{ns}.{name}");
            if FUNCTIONS.contains_key(&qualified) {
                return self.resolve(id, &qualified, false, types);
            }
        }
        let target_type = self.visit(target);
        types.insert(0, target_type);
        self.resolve(id, name, true, types)
    }

    /// `_&&_` and `_||_`: each argument must be a bool.
    fn logical(&mut self, call: &CallExpr, types: &[Type<'a>]) -> Type<'a> {
        let mut ok = true;
        for (arg, t) in call.args.iter().zip(types) {
            if !self.mapping.is_assignable(t, &Type::Bool) {
                let at = located(arg);
                self.issue(at, format!("expected type 'bool' but found '{t}'"));
                ok = false;
            }
        }
        if ok { Type::Bool } else { Type::Error }
    }

    /// `x.?f`: `f` must be a name.
    fn opt_select(&mut self, id: u64, call: &CallExpr) -> Type<'a> {
        let (Some(operand), Some(field)) = (call.args.first(), call.args.get(1)) else {
            return Type::Unknown;
        };
        match &field.expr {
            Expr::Literal(LiteralValue::String(s)) => {
                let t = self.select(id, operand, s.inner(), true);
                self.mapping.substitute(&t, false)
            }
            _ => {
                self.visit(operand);
                let message = "unsupported optional field selection".to_owned();
                self.issue(field.id, message);
                Type::Error
            }
        }
    }

    /// cel-go's `resolveOverload`: the overloads of `name` the argument types (the target
    /// first, for a member call) are assignable to; their result, or `dyn` when they
    /// differ.
    fn resolve(&mut self, id: u64, name: &str, member: bool, types: Vec<Type<'a>>) -> Type<'a> {
        let Some(overloads) = FUNCTIONS.get(name) else {
            self.issue(
                id,
                format!("undeclared reference to '{name}' (in container '')"),
            );
            return Type::Error;
        };
        let mut result: Option<Type<'a>> = None;
        for o in overloads.iter().filter(|o| o.member == member) {
            if o.args.len() != types.len() {
                continue;
            }
            let r = if o.params == 0 {
                if !self.mapping.is_assignable_list(&types, &o.args) {
                    continue;
                }
                o.result.clone()
            } else {
                let vars: Vec<Type<'a>> = (0..o.params).map(|_| self.mapping.new_var()).collect();
                let args: Vec<Type<'a>> = o.args.iter().map(|a| a.instantiate(&vars)).collect();
                if !self.mapping.is_assignable_list(&types, &args) {
                    continue;
                }
                self.mapping.substitute(&o.result.instantiate(&vars), false)
            };
            result = Some(match result {
                None => r,
                Some(prev) if !matches!(prev, Type::Dyn) && !r.same(&prev) => Type::Dyn,
                Some(prev) => prev,
            });
        }
        match result {
            None => {
                let types: Vec<Type<'a>> = types
                    .iter()
                    .map(|t| self.mapping.substitute(t, true))
                    .collect();
                let (target, args) = if member {
                    let args = types.get(1..).unwrap_or_default();
                    (types.first().map(|t| format!("{t}.")), args)
                } else {
                    (None, &types[..])
                };
                let args: Vec<String> = args.iter().map(ToString::to_string).collect();
                let signature = format!("{}({})", target.unwrap_or_default(), args.join(", "));
                let name = match name {
                    INSERT | MERGE => "cel.@mapInsert",
                    n => n,
                };
                self.issue(
                    id,
                    format!("found no matching overload for '{name}' applied to '{signature}'"),
                );
                Type::Error
            }
            // Where a type is not inferred, fewer overloads may match in cel-go.
            Some(Type::Dyn)
                if types
                    .iter()
                    .any(|t| self.mapping.substitute(t, false).has_unknown()) =>
            {
                Type::Unknown
            }
            Some(r) => r,
        }
    }

    /// `@kasKeys(target)`, the range of a two-variable comprehension: the indices of a
    /// list, the keys of a map.
    fn keys(&mut self, target: Option<&Type<'a>>) -> Type<'a> {
        let target = target.map_or(Type::Unknown, |t| self.mapping.substitute(t, false));
        Type::list(match target {
            Type::List(_) => Type::Int,
            Type::Map(k, _) => *k,
            Type::Unknown => Type::Unknown,
            Type::Var(_) => {
                self.mapping.is_assignable(&Type::Dyn, &target);
                Type::Dyn
            }
            t if t.is_dyn_like() => Type::Dyn,
            t => {
                if let Some(&id) = self.targets.last() {
                    self.issue(id, not_a_range(&t));
                }
                // The value variable is taken off the target: no more issues about it.
                if let Some(entry) = self.scope.iter_mut().rev().find(|(n, _)| n == TARGET) {
                    entry.1 = Type::Error;
                }
                Type::Error
            }
        })
    }

    fn comprehension(&mut self, c: &ComprehensionExpr) -> Type<'a> {
        let range = self.visit(&c.iter_range);
        let accu = self.visit(&c.accu_init);
        let range = self.mapping.substitute(&range, false);
        let (var, var2) = match (&range, c.iter_var2.is_some()) {
            (Type::List(e), false) => ((**e).clone(), None),
            (Type::List(e), true) => (Type::Int, Some((**e).clone())),
            (Type::Map(k, v), two) => ((**k).clone(), two.then(|| (**v).clone())),
            (Type::Unknown, two) => (Type::Unknown, two.then_some(Type::Unknown)),
            (t, two) if t.is_dyn_like() || matches!(t, Type::Var(_)) => {
                self.mapping.is_assignable(&Type::Dyn, t);
                (Type::Dyn, two.then_some(Type::Dyn))
            }
            (t, two) => {
                self.issue(c.iter_range.id, not_a_range(t));
                (Type::Error, two.then_some(Type::Error))
            }
        };
        let depth = self.scope.len();
        let target = c.accu_var == TARGET;
        if target {
            self.targets.push(c.accu_init.id);
        }
        self.scope.push((c.accu_var.clone(), accu.clone()));
        self.scope.push((c.iter_var.clone(), var));
        if let (Some(v2), Some(t2)) = (&c.iter_var2, var2) {
            self.scope.push((v2.clone(), t2));
        }
        let cond = self.visit(&c.loop_cond);
        self.assert_type(&c.loop_cond, &Type::Bool, &cond);
        let step = self.visit(&c.loop_step);
        self.assert_type(&c.loop_step, &accu, &step);
        self.scope.truncate(depth + 1);
        let result = self.visit(&c.result);
        self.scope.truncate(depth);
        if target {
            self.targets.pop();
        }
        self.mapping.substitute(&result, false)
    }

    fn assert_type(&mut self, e: &IdedExpr, want: &Type<'a>, found: &Type<'a>) {
        if !self.mapping.is_assignable(want, found) {
            let message = format!("expected type '{want}' but found '{found}'");
            self.issue(located(e), message);
        }
    }

    /// cel-go's `joinTypes` for the elements of a literal (mixed types join as `dyn`).
    fn join(&mut self, prev: Option<Type<'a>>, t: Type<'a>) -> Type<'a> {
        match prev {
            None => t,
            Some(p) if self.mapping.is_assignable(&p, &t) => most_general(&p, &t),
            Some(_) => Type::Dyn,
        }
    }

    fn list(&mut self, l: &ListExpr) -> Type<'a> {
        let mut elem: Option<Type<'a>> = None;
        let mut literal = Literal {
            elems: Vec::with_capacity(l.elements.len()),
            map: false,
        };
        for (i, e) in l.elements.iter().enumerate() {
            let mut t = self.visit(e);
            if l.optional_indices.contains(&i) {
                t = self.unwrap_optional_entry(e.id, t);
            }
            literal.elems.push((e.id, t.clone()));
            elem = Some(self.join(elem, t));
        }
        if self.in_format == 0 {
            self.literals.push(literal);
        }
        let elem = elem.unwrap_or_else(|| self.mapping.new_var());
        Type::list(elem)
    }

    fn map(&mut self, m: &MapExpr) -> Type<'a> {
        let (mut key, mut value): (Option<Type<'a>>, Option<Type<'a>>) = (None, None);
        let mut literal = Literal {
            elems: Vec::with_capacity(m.entries.len() * 2),
            map: true,
        };
        for entry in &m.entries {
            let EntryExpr::MapEntry(me) = &entry.expr else {
                continue;
            };
            let k = self.visit(&me.key);
            key = Some(self.join(key, k.clone()));
            let mut v = self.visit(&me.value);
            if me.optional {
                v = self.unwrap_optional_entry(me.value.id, v);
            }
            literal.elems.push((me.key.id, k));
            literal.elems.push((me.value.id, v.clone()));
            value = Some(self.join(value, v));
        }
        if self.in_format == 0 {
            self.literals.push(literal);
        }
        match (key, value) {
            (Some(k), Some(v)) => Type::map(k, v),
            _ => {
                let k = self.mapping.new_var();
                Type::map(k, self.mapping.new_var())
            }
        }
    }

    /// An optional element `?x` of a list or map literal: `x` must be an optional.
    fn unwrap_optional_entry(&mut self, id: u64, t: Type<'a>) -> Type<'a> {
        match t.unwrap_optional() {
            (inner, true) => inner.clone(),
            (_, false) if matches!(t, Type::Dyn | Type::Unknown) => t,
            (_, false) => {
                let optional = Type::optional(t.clone());
                self.issue(id, format!("expected type '{optional}' but found '{t}'"));
                t
            }
        }
    }

    /// cel-go's homogeneous aggregate literals validator, on the final types: the first
    /// element of each list literal whose type differs from the first element's, and each
    /// key and value of a map literal that differs from the first entry's.
    pub(super) fn validate_literals(&mut self) {
        for literal in std::mem::take(&mut self.literals) {
            let types: Vec<(u64, Type<'a>)> = literal
                .elems
                .into_iter()
                .map(|(id, t)| (id, self.mapping.substitute(&t, true)))
                .collect();
            let stride = if literal.map { 2 } else { 1 };
            for lane in 0..stride {
                let mut lane_types = types.iter().skip(lane).step_by(stride);
                let Some((_, first)) = lane_types.next() else {
                    continue;
                };
                for (id, t) in lane_types {
                    if first.has_unknown() || t.has_unknown() || first.same(t) {
                        continue;
                    }
                    self.validator_issues.push(super::super::Issue {
                        id: *id,
                        message: format!("expected type '{first}' but found '{t}'"),
                    });
                    if !literal.map {
                        break;
                    }
                }
            }
        }
    }
}

fn not_a_range(t: &Type<'_>) -> String {
    format!(
        "expression of type '{t}' cannot be range of a comprehension (must be list, map, or dynamic)"
    )
}

/// Where cel-go reports an issue about `e`: for a binding that a macro expansion put
/// around an argument, the argument itself.
fn located(e: &IdedExpr) -> u64 {
    match &e.expr {
        Expr::Comprehension(c) if c.iter_var == BIND_VAR => located(&c.result),
        _ => e.id,
    }
}

/// `a.b.c` as a qualified name, when it is a chain of selections from an identifier.
fn qualified_name(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Ident(n) => Some(n.clone()),
        Expr::Select(s) if !s.test => {
            let mut q = qualified_name(&s.operand)?;
            q.push('.');
            q.push_str(&s.field);
            Some(q)
        }
        _ => None,
    }
}

/// Type names written qualified: the well-known protobuf types upstream's rules compare
/// `type()` against, and the types of the Kubernetes libraries.
fn qualified_type<'a>(e: &IdedExpr) -> Option<Type<'a>> {
    let Expr::Select(s) = &e.expr else {
        return None;
    };
    if s.test || !matches!(&s.operand.expr, Expr::Select(_) | Expr::Ident(_)) {
        return None;
    }
    let name = qualified_name(e)?;
    let t = match name.as_str() {
        "google.protobuf.Duration" => Type::Duration,
        "google.protobuf.Timestamp" => Type::Timestamp,
        n if n.starts_with("google.protobuf.") => Type::Unknown,
        "net.IP" => Type::Opaque("net.IP", Box::new([])),
        "net.CIDR" => Type::Opaque("net.CIDR", Box::new([])),
        n => Type::Struct(STRUCTS.iter().find(|s| **s == n)?),
    };
    Some(Type::Kind(Box::new(t)))
}
