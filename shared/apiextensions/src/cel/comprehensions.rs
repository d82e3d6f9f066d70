//! cel-go's two-variable comprehensions (`ext.TwoVarComprehensions()`, in upstream's
//! environment since 1.32): `all`, `exists`, `existsOne`, `transformList`,
//! `transformMap` and `transformMapEntry` with an index (or key) and a value variable.
//!
//! cel-rust evaluates only one-variable comprehensions, so each macro expands into one
//! over the target's indices (or keys), with the value bound as `cel.bind` binds: a
//! comprehension over no elements whose accumulator is the value.

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::ast::{
    CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr,
};
use cel::common::types::{DYN_TYPE, MAP_TYPE};
use cel::objects::{Key, Map};
use cel::parser::{Macro, MacroExprHelper, ParseError};
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::library::{no_such_overload, overload};

/// The variable the target is bound to, so that it is evaluated once.
const TARGET: &str = "@kas_target";
const RESULT: &str = "@result";
/// The indices of a list, or the keys of a map.
const KEYS: &str = "@kasKeys";
const INSERT: &str = "@kasMapInsert";
const MERGE: &str = "@kasMapMerge";

#[derive(Clone, Copy)]
enum Kind {
    All,
    Exists,
    ExistsOne,
    TransformList,
    TransformMap,
    TransformMapEntry,
}

pub(crate) fn add(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_overload(KEYS, "kas_keys", vec![DYN_TYPE], keys)?;
    let insert_args = vec![MAP_TYPE, DYN_TYPE, DYN_TYPE];
    env.add_overload(INSERT, "kas_map_insert", insert_args, insert)?;
    env.add_overload(MERGE, "kas_map_merge", vec![MAP_TYPE, MAP_TYPE], merge)?;
    let forms = [
        ("all", 3, Kind::All),
        ("exists", 3, Kind::Exists),
        ("existsOne", 3, Kind::ExistsOne),
        ("transformList", 3, Kind::TransformList),
        ("transformList", 4, Kind::TransformList),
        ("transformMap", 3, Kind::TransformMap),
        ("transformMap", 4, Kind::TransformMap),
        ("transformMapEntry", 3, Kind::TransformMapEntry),
        ("transformMapEntry", 4, Kind::TransformMapEntry),
    ];
    for (name, argc, kind) in forms {
        env.add_macro(Macro::receiver(name, argc, move |h, t, a| {
            expand(h, t, a, kind).map(Some)
        }))?;
    }
    Ok(())
}

fn ident(h: &mut MacroExprHelper<'_>, name: &str) -> IdedExpr {
    h.next_expr(Expr::Ident(name.to_owned()))
}

/// The helper comes last so that arguments built with it are built first.
fn call(name: &str, args: Vec<IdedExpr>, h: &mut MacroExprHelper<'_>) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: name.to_owned(),
        target: None,
        args,
    }))
}

fn boolean(h: &mut MacroExprHelper<'_>, b: bool) -> IdedExpr {
    h.next_expr(Expr::Literal(LiteralValue::Boolean(b.into())))
}

fn list(h: &mut MacroExprHelper<'_>, elements: Vec<IdedExpr>) -> IdedExpr {
    h.next_expr(Expr::List(ListExpr::new(elements)))
}

fn comprehension(h: &mut MacroExprHelper<'_>, c: ComprehensionExpr) -> IdedExpr {
    h.next_expr(Expr::Comprehension(Box::new(c)))
}

/// `cel.bind(name, init, result)`.
fn bind(h: &mut MacroExprHelper<'_>, name: &str, init: IdedExpr, result: IdedExpr) -> IdedExpr {
    let c = ComprehensionExpr {
        iter_range: list(h, Vec::new()),
        iter_var: "#unused".to_owned(),
        iter_var2: None,
        accu_var: name.to_owned(),
        accu_init: init,
        loop_cond: boolean(h, false),
        loop_step: ident(h, name),
        result,
    };
    comprehension(h, c)
}

/// `body` with the value variable bound to `@kas_target[index]`.
fn with_value(h: &mut MacroExprHelper<'_>, index: &str, value: &str, body: IdedExpr) -> IdedExpr {
    let args = vec![ident(h, TARGET), ident(h, index)];
    let element = call("_[_]", args, h);
    bind(h, value, element, body)
}

fn name(h: &mut MacroExprHelper<'_>, e: IdedExpr) -> Result<String, ParseError> {
    match e.expr {
        Expr::Ident(n) => Ok(n),
        _ => Err(h.new_error(e.id, "argument must be a simple name")),
    }
}

fn expand(
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
    kind: Kind,
) -> Result<IdedExpr, ParseError> {
    let Some(target) = target.take() else {
        return Err(h.new_error(0, "two-variable comprehension without a target"));
    };
    let mut args = std::mem::take(args).into_iter();
    let (Some(i), Some(v)) = (args.next(), args.next()) else {
        return Err(h.new_error(target.id, "two-variable comprehension without variables"));
    };
    let (i, v) = (name(h, i)?, name(h, v)?);
    let rest: Vec<IdedExpr> = args.collect();
    let (filter, body) = match <[IdedExpr; 2]>::try_from(rest) {
        Ok([f, b]) => (Some(f), b),
        Err(mut one) => match one.pop() {
            Some(b) => (None, b),
            None => return Err(h.new_error(target.id, "missing comprehension body")),
        },
    };
    let body = with_value(h, &i, &v, body);
    let result_ident = ident(h, RESULT);
    let (init, cond, step, result) = match kind {
        Kind::All | Kind::Exists => {
            let all = matches!(kind, Kind::All);
            let acc = ident(h, RESULT);
            let cond_arg = if all { acc } else { call("!_", vec![acc], h) };
            let cond = call("@not_strictly_false", vec![cond_arg], h);
            let op = if all { "_&&_" } else { "_||_" };
            let step = call(op, vec![ident(h, RESULT), body], h);
            (boolean(h, all), cond, step, result_ident)
        }
        Kind::ExistsOne => {
            let one = h.next_expr(Expr::Literal(LiteralValue::Int(1.into())));
            let plus = call("_+_", vec![ident(h, RESULT), one], h);
            let step = call("_?_:_", vec![body, plus, ident(h, RESULT)], h);
            let one = h.next_expr(Expr::Literal(LiteralValue::Int(1.into())));
            let result = call("_==_", vec![result_ident, one], h);
            let zero = h.next_expr(Expr::Literal(LiteralValue::Int(0.into())));
            (zero, boolean(h, true), step, result)
        }
        Kind::TransformList | Kind::TransformMap | Kind::TransformMapEntry => {
            let added = match kind {
                Kind::TransformList => {
                    let one = list(h, vec![body]);
                    call("_+_", vec![ident(h, RESULT), one], h)
                }
                Kind::TransformMap => call(INSERT, vec![ident(h, RESULT), ident(h, &i), body], h),
                _ => call(MERGE, vec![ident(h, RESULT), body], h),
            };
            let step = match filter {
                Some(f) => {
                    let f = with_value(h, &i, &v, f);
                    call("_?_:_", vec![f, added, ident(h, RESULT)], h)
                }
                None => added,
            };
            let init = match kind {
                Kind::TransformList => list(h, Vec::new()),
                _ => h.next_expr(Expr::Map(MapExpr {
                    entries: Vec::new(),
                })),
            };
            (init, boolean(h, true), step, result_ident)
        }
    };
    let range = call(KEYS, vec![ident(h, TARGET)], h);
    let loop_ = comprehension(
        h,
        ComprehensionExpr {
            iter_range: range,
            iter_var: i,
            iter_var2: None,
            accu_var: RESULT.to_owned(),
            accu_init: init,
            loop_cond: cond,
            loop_step: step,
            result,
        },
    );
    Ok(bind(h, TARGET, target, loop_))
}

fn keys_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let keys = match args.first() {
        Some(Value::List(l)) => (0..l.len() as i64).map(Value::Int).collect(),
        Some(Value::Map(m)) => m.map.keys().map(Value::from).collect(),
        _ => return Err(no_such_overload("all", args)),
    };
    Ok(Value::List(Arc::new(keys)))
}
overload!(keys => keys_impl);

fn map_arg(args: &[Value], i: usize) -> Option<&HashMap<Key, Value>> {
    match args.get(i) {
        Some(Value::Map(m)) => Some(m.map.as_ref()),
        _ => None,
    }
}

fn insert_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let (Some(m), Some(k), Some(v)) = (map_arg(args, 0), args.get(1), args.get(2)) else {
        return Err(no_such_overload("transformMap", args));
    };
    let key = match k {
        Value::String(s) => Key::String(s.clone()),
        Value::Int(i) => Key::Int(*i),
        Value::UInt(u) => Key::Uint(*u),
        Value::Bool(b) => Key::Bool(*b),
        _ => return Err(no_such_overload("transformMap", args)),
    };
    let mut out = m.clone();
    out.insert(key, v.clone());
    Ok(Value::Map(Map { map: Arc::new(out) }))
}
overload!(insert => insert_impl);

fn merge_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let (Some(m), Some(entry)) = (map_arg(args, 0), map_arg(args, 1)) else {
        return Err(no_such_overload("transformMapEntry", args));
    };
    let mut out = m.clone();
    for (k, v) in entry {
        if out.insert(k.clone(), v.clone()).is_some() {
            let key = Value::from(k);
            return Err(ExecutionError::function_error(
                "transformMapEntry",
                format!("insert failed: key {key:?} already exists"),
            ));
        }
    }
    Ok(Value::Map(Map { map: Arc::new(out) }))
}
overload!(merge => merge_impl);
