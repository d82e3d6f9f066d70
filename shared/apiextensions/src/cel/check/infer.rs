//! Inference over every kind of expression, after cel-go's `checker.go`: identifiers,
//! field selection, calls resolved against the declared overloads, literals of lists and
//! maps, and comprehensions (the expansions of the macros).

use cel::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr,
};

use super::super::literals;
use super::Checker;
use super::decls::{FUNCTIONS, Overload};
use super::schema::field_type;
use super::types::{Type, assignable, most_general};

/// Names of the comprehension helpers of `comprehensions.rs`.
const KEYS: &str = "@kasKeys";
const INSERT: &str = "@kasMapInsert";
const MERGE: &str = "@kasMapMerge";
/// The iteration variable of the bindings macros expand into (`cel.bind`).
const BIND_VAR: &str = "#unused";

impl<'a> Checker<'a> {
    pub(super) fn infer(&mut self, e: &IdedExpr) -> Type<'a> {
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
                if sel.test { Type::Bool } else { t }
            }
            Expr::Call(call) => self.call(e.id, call),
            Expr::Comprehension(c) => self.comprehension(c),
            Expr::List(l) => self.list(l),
            Expr::Map(m) => self.map(m),
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        self.check(&f.value);
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
        let operand_type = self.check(operand);
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
            Type::Unknown | Type::Free => Type::Unknown,
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
            types.push(self.check(a));
        }
        self.in_format -= usize::from(format);
        match name {
            "_&&_" | "_||_" => return self.logical(call, &types),
            KEYS => return keys_type(types.first()),
            INSERT | MERGE => return map_insert(types),
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
        let target_type = self.check(target);
        types.insert(0, target_type);
        self.resolve(id, name, true, types)
    }

    /// `_&&_` and `_||_`: each argument must be a bool.
    fn logical(&mut self, call: &CallExpr, types: &[Type<'a>]) -> Type<'a> {
        let mut ok = true;
        for (arg, t) in call.args.iter().zip(types) {
            if !assignable(&Type::Bool, t, &mut []) {
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
            Expr::Literal(LiteralValue::String(s)) => self.select(id, operand, s.inner(), true),
            _ => {
                self.check(operand);
                self.issue(field.id, "unsupported optional field selection".to_owned());
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
        let mut differ = false;
        for o in overloads.iter().filter(|o| o.member == member) {
            let Some(r) = matches(o, &types) else {
                continue;
            };
            match &result {
                None => result = Some(r),
                Some(prev) if !prev.same(&r) => differ = true,
                Some(_) => {}
            }
        }
        match result {
            None => {
                let (target, args) = if member {
                    (types.first().map(|t| format!("{t}.")), &types[1..])
                } else {
                    (None, &types[..])
                };
                let args: Vec<String> = args.iter().map(ToString::to_string).collect();
                let signature = format!("{}({})", target.unwrap_or_default(), args.join(", "));
                self.issue(
                    id,
                    format!("found no matching overload for '{name}' applied to '{signature}'"),
                );
                Type::Error
            }
            Some(_) if differ && types.iter().any(Type::has_unknown) => Type::Unknown,
            Some(_) if differ => Type::Dyn,
            Some(r) => r,
        }
    }

    fn comprehension(&mut self, c: &ComprehensionExpr) -> Type<'a> {
        let range = self.check(&c.iter_range);
        let accu = self.check(&c.accu_init);
        let (var, var2) = match (&range, c.iter_var2.is_some()) {
            (Type::List(e), false) => ((**e).clone(), None),
            (Type::List(e), true) => (Type::Int, Some((**e).clone())),
            (Type::Map(k, v), two) => ((**k).clone(), two.then(|| (**v).clone())),
            (Type::Unknown | Type::Free, two) => (Type::Unknown, two.then_some(Type::Unknown)),
            (t, two) if t.is_dyn_like() => (Type::Dyn, two.then_some(Type::Dyn)),
            (t, two) => {
                let message = format!(
                    "expression of type '{t}' cannot be range of a comprehension (must be list, map, or dynamic)"
                );
                self.issue(c.iter_range.id, message);
                (Type::Error, two.then_some(Type::Error))
            }
        };
        let depth = self.scope.len();
        self.scope.push((c.accu_var.clone(), accu.clone()));
        self.scope.push((c.iter_var.clone(), var));
        if let (Some(v2), Some(t2)) = (&c.iter_var2, var2) {
            self.scope.push((v2.clone(), t2));
        }
        let cond = self.check(&c.loop_cond);
        self.assert_type(&c.loop_cond, &Type::Bool, &cond);
        let step = self.check(&c.loop_step);
        self.assert_type(&c.loop_step, &accu, &step);
        self.scope.truncate(depth + 1);
        // The step binds the free variables of the accumulator (`[]` of `map()`).
        if accu.has_unknown() && assignable(&accu, &step, &mut []) {
            self.scope[depth].1 = most_general(accu, &step);
        }
        let result = self.check(&c.result);
        self.scope.truncate(depth);
        result
    }

    fn assert_type(&mut self, e: &IdedExpr, want: &Type<'a>, found: &Type<'a>) {
        if !assignable(want, found, &mut []) {
            let message = format!("expected type '{want}' but found '{found}'");
            self.issue(located(e), message);
        }
    }

    fn list(&mut self, l: &ListExpr) -> Type<'a> {
        let mut elem: Option<Type<'a>> = None;
        let mut first: Option<Type<'a>> = None;
        let mut mismatch = None;
        for (i, e) in l.elements.iter().enumerate() {
            let mut t = self.check(e);
            if l.optional_indices.contains(&i) {
                t = self.unwrap_optional_entry(e.id, t);
            }
            match &first {
                None => first = Some(t.clone()),
                Some(f) if mismatch.is_none() && differs(f, &t) => {
                    mismatch = Some(literal_mismatch(e.id, f, &t));
                }
                Some(_) => {}
            }
            elem = Some(join(elem, t));
        }
        if self.in_format == 0 {
            self.validator_issues.extend(mismatch);
        }
        Type::list(elem.unwrap_or(Type::Free))
    }

    fn map(&mut self, m: &MapExpr) -> Type<'a> {
        let (mut key, mut value): (Option<Type<'a>>, Option<Type<'a>>) = (None, None);
        let mut first: Option<(Type<'a>, Type<'a>)> = None;
        let mut mismatches = Vec::new();
        for entry in &m.entries {
            let EntryExpr::MapEntry(me) = &entry.expr else {
                continue;
            };
            let k = self.check(&me.key);
            let mut v = self.check(&me.value);
            if me.optional {
                v = self.unwrap_optional_entry(me.value.id, v);
            }
            match &first {
                None => first = Some((k.clone(), v.clone())),
                Some((fk, fv)) => {
                    if differs(fk, &k) {
                        mismatches.push(literal_mismatch(me.key.id, fk, &k));
                    }
                    if differs(fv, &v) {
                        mismatches.push(literal_mismatch(me.value.id, fv, &v));
                    }
                }
            }
            key = Some(join(key, k));
            value = Some(join(value, v));
        }
        if self.in_format == 0 {
            self.validator_issues.extend(mismatches);
        }
        Type::map(key.unwrap_or(Type::Free), value.unwrap_or(Type::Free))
    }

    /// An optional element `?x` of a list or map literal: `x` must be an optional.
    fn unwrap_optional_entry(&mut self, id: u64, t: Type<'a>) -> Type<'a> {
        match t.unwrap_optional() {
            (inner, true) => inner.clone(),
            (_, false) if t.is_dyn_like() => t,
            (_, false) => {
                let message = format!(
                    "expected type '{}' but found '{t}'",
                    Type::optional(t.clone())
                );
                self.issue(id, message);
                t
            }
        }
    }
}

/// The result of overload `o` for the argument types, if they are assignable to its own.
fn matches<'a>(o: &Overload, types: &[Type<'a>]) -> Option<Type<'a>> {
    if o.args.len() != types.len() {
        return None;
    }
    let mut binds: Vec<Option<Type<'a>>> = vec![None; o.params];
    for (decl, actual) in o.args.iter().zip(types) {
        if !assignable(decl, actual, &mut binds) {
            return None;
        }
    }
    Some(o.result.substitute(&binds))
}

/// cel-go's `joinTypes` for the elements of a literal (mixed types join as `dyn`).
fn join<'a>(prev: Option<Type<'a>>, t: Type<'a>) -> Type<'a> {
    match prev {
        None => t,
        Some(p) if assignable(&p, &t, &mut []) => most_general(p, &t),
        Some(_) => Type::Dyn,
    }
}

/// Whether two element types of a literal certainly differ (the homogeneous aggregate
/// literal validator's `IsEquivalentType`), which is unknown for types not inferred.
fn differs(a: &Type<'_>, b: &Type<'_>) -> bool {
    !a.has_unknown() && !b.has_unknown() && !a.same(b)
}

fn literal_mismatch(id: u64, want: &Type<'_>, found: &Type<'_>) -> super::super::Issue {
    super::super::Issue {
        id,
        message: format!("expected type '{want}' but found '{found}'"),
    }
}

/// The element type of `@kasKeys(target)`: the indices of a list, the keys of a map.
fn keys_type<'a>(target: Option<&Type<'a>>) -> Type<'a> {
    Type::list(match target {
        Some(Type::List(_)) => Type::Int,
        Some(Type::Map(k, _)) => (**k).clone(),
        Some(Type::Dyn | Type::Error) => Type::Dyn,
        _ => Type::Unknown,
    })
}

/// The type of `@kasMapInsert(map, key, value)` and `@kasMapMerge(map, entry)`: the map's,
/// bound by what is added.
fn map_insert(types: Vec<Type<'_>>) -> Type<'_> {
    let mut types = types.into_iter();
    let map = types.next().unwrap_or(Type::Unknown);
    let added = match (types.next(), types.next()) {
        (Some(k), Some(v)) => Type::map(k, v),
        (Some(entry @ Type::Map(..)), None) => entry,
        _ => return Type::map(Type::Unknown, Type::Unknown),
    };
    if assignable(&map, &added, &mut []) {
        most_general(map, &added)
    } else {
        Type::map(Type::Dyn, Type::Dyn)
    }
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

/// The type names of the well-known protobuf types, which upstream's rules compare
/// `type()` against.
fn qualified_type<'a>(e: &IdedExpr) -> Option<Type<'a>> {
    let Expr::Select(s) = &e.expr else {
        return None;
    };
    if !matches!(&s.operand.expr, Expr::Select(_)) {
        return None;
    }
    let name = qualified_name(e)?;
    let t = match name.strip_prefix("google.protobuf.")? {
        "Duration" => Type::Duration,
        "Timestamp" => Type::Timestamp,
        _ => Type::Unknown,
    };
    Some(Type::Kind(Box::new(t)))
}
