//! The Kubernetes libraries of `k8s.io/apiserver/pkg/cel/library` that need no file of
//! their own: lists (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`) and regex
//! (`find`, `findAll`), with cel-go's `ext.Sets()`; and what every library's overloads
//! share (`overload!`, `no_such_overload`, `compare`).

use std::cmp::Ordering;
use std::sync::Arc;

use cel::common::types::{DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{Env, ExecutionError, Value};

use super::value::typed_sum_zero;

/// Wraps `fn(&[Value]) -> Result<Value, ExecutionError>` as one of cel-rust's overload
/// functions, which work on its `Val` trait objects.
macro_rules! overload {
    ($name:ident => $imp:path) => {
        fn $name<'b, 'v>(
            args: Vec<::cel::common::value::CowVal<'b, 'v>>,
        ) -> Result<::cel::common::value::CowVal<'b, 'v>, ::cel::ExecutionError> {
            let values = args
                .iter()
                .map(|a| ::cel::Value::try_from(a.as_ref()))
                .collect::<Result<Vec<_>, _>>()?;
            let out: Box<dyn ::cel::common::value::Val> = $imp(&values)?.try_into()?;
            Ok(::cel::common::value::CowVal::from(
                out as Box<dyn ::cel::common::value::Val + 'v>,
            ))
        }
    };
}
pub(crate) use overload;

/// Upstream `library.Lists()`.
pub(crate) fn add_lists(env: &mut Env) -> Result<(), cel::DeclarationError> {
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "list_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )
}

/// Upstream `library.Regex()`.
pub(crate) fn add_regex(env: &mut Env) -> Result<(), cel::DeclarationError> {
    let s = || vec![STRING_TYPE];
    env.add_member_overload("find", "string_find_string", STRING_TYPE, s(), find)?;
    env.add_member_overload(
        "findAll",
        "string_find_all_string",
        STRING_TYPE,
        s(),
        find_all,
    )?;
    let si = vec![STRING_TYPE, INT_TYPE];
    env.add_member_overload(
        "findAll",
        "string_find_all_string_int",
        STRING_TYPE,
        si,
        find_all,
    )
}

/// cel-go's `ext.Sets()`: `sets.contains`, `sets.equivalent`, `sets.intersects`.
pub(crate) fn add_sets(env: &mut Env) -> Result<(), cel::DeclarationError> {
    let ll = || vec![LIST_TYPE, LIST_TYPE];
    env.add_overload(
        "sets.contains",
        "list_sets_contains_list",
        ll(),
        sets_contains,
    )?;
    env.add_overload(
        "sets.equivalent",
        "list_sets_equivalent_list",
        ll(),
        sets_equivalent,
    )?;
    env.add_overload(
        "sets.intersects",
        "list_sets_intersects_list",
        ll(),
        sets_intersects,
    )
}

fn two_lists<'a>(
    name: &str,
    args: &'a [Value],
) -> Result<(&'a [Value], &'a [Value]), ExecutionError> {
    match (args.first(), args.get(1)) {
        (Some(Value::List(a)), Some(Value::List(b))) => Ok((a.as_slice(), b.as_slice())),
        _ => Err(no_such_overload(name, args)),
    }
}

fn sets_contains_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let (a, b) = two_lists("sets.contains", args)?;
    Ok(Value::Bool(b.iter().all(|x| a.contains(x))))
}
overload!(sets_contains => sets_contains_impl);

fn sets_equivalent_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let (a, b) = two_lists("sets.equivalent", args)?;
    Ok(Value::Bool(
        b.iter().all(|x| a.contains(x)) && a.iter().all(|x| b.contains(x)),
    ))
}
overload!(sets_equivalent => sets_equivalent_impl);

fn sets_intersects_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let (a, b) = two_lists("sets.intersects", args)?;
    Ok(Value::Bool(b.iter().any(|x| a.contains(x))))
}
overload!(sets_intersects => sets_intersects_impl);

/// Argument `i` as the library type `T` (an opaque value), else no such overload.
pub(crate) fn opaque<'a, T: 'static>(
    name: &str,
    args: &'a [Value],
    i: usize,
) -> Result<&'a T, ExecutionError> {
    if let Some(Value::Opaque(o)) = args.get(i)
        && let Some(v) = (o.as_ref() as &dyn std::any::Any).downcast_ref::<T>()
    {
        return Ok(v);
    }
    Err(no_such_overload(name, args))
}

pub(crate) fn no_such_overload(function: &str, args: &[Value]) -> ExecutionError {
    let types = args.iter().map(|a| a.type_of().to_string()).collect();
    ExecutionError::no_such_member_overload(function, types)
}

fn list<'a>(function: &str, args: &'a [Value]) -> Result<&'a [Value], ExecutionError> {
    match args.first() {
        Some(Value::List(l)) => Ok(l.as_slice()),
        _ => Err(no_such_overload(function, args)),
    }
}

/// CEL's ordering of two values of one comparable type; `None` for other pairs.
pub(crate) fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::UInt(x), Value::UInt(y)) => Some(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bytes(x), Value::Bytes(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        (Value::Duration(x), Value::Duration(y)) => Some(x.cmp(y)),
        (Value::Timestamp(x), Value::Timestamp(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

fn is_sorted_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let items = list("isSorted", args)?;
    for pair in items.windows(2) {
        match compare(&pair[0], &pair[1]) {
            Some(Ordering::Greater) => return Ok(Value::Bool(false)),
            Some(_) => {}
            None => return Err(no_such_overload("isSorted", args)),
        }
    }
    Ok(Value::Bool(true))
}
overload!(is_sorted => is_sorted_impl);

fn sum_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let items = list("sum", args)?;
    let Some(first) = items.first() else {
        return Ok(Value::Int(0));
    };
    let mut acc = first.clone();
    for item in &items[1..] {
        acc = match (&acc, item) {
            (Value::Int(a), Value::Int(b)) => a
                .checked_add(*b)
                .map(Value::Int)
                .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?,
            (Value::UInt(a), Value::UInt(b)) => {
                a.checked_add(*b).map(Value::UInt).ok_or_else(|| {
                    ExecutionError::function_error("sum", "unsigned integer overflow")
                })?
            }
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            (Value::Duration(a), Value::Duration(b)) => a
                .checked_add(b)
                .map(Value::Duration)
                .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?,
            _ => return Err(no_such_overload("sum", args)),
        };
    }
    match acc {
        Value::Int(_) | Value::UInt(_) | Value::Float(_) | Value::Duration(_) => Ok(acc),
        _ => Err(no_such_overload("sum", args)),
    }
}
overload!(sum_values => sum_impl);

/// Upstream's `sum()` is an overload per element type: an empty list sums to the zero of
/// its type where the schema gives one.
fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    if let Some(zero) = args.first().and_then(|l| typed_sum_zero(l.as_ref())) {
        return Ok(CowVal::from(zero as Box<dyn Val + 'v>));
    }
    sum_values(args)
}

fn extreme(name: &str, args: &[Value], prefer: Ordering) -> Result<Value, ExecutionError> {
    let items = list(name, args)?;
    let Some(mut best) = items.first() else {
        return Err(ExecutionError::function_error(
            name,
            format!("{name} called on empty list"),
        ));
    };
    for item in items {
        match compare(item, best) {
            Some(o) if o == prefer => best = item,
            Some(_) => {}
            None => return Err(no_such_overload(name, args)),
        }
    }
    Ok(best.clone())
}

fn min_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    extreme("min", args, Ordering::Less)
}
overload!(min => min_impl);

fn max_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    extreme("max", args, Ordering::Greater)
}
overload!(max => max_impl);

fn index_of_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let items = list("indexOf", args)?;
    let pos = items.iter().position(|i| Some(i) == args.get(1));
    Ok(Value::Int(pos.map_or(-1, |p| p as i64)))
}
overload!(index_of => index_of_impl);

fn last_index_of_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let items = list("lastIndexOf", args)?;
    let pos = items.iter().rposition(|i| Some(i) == args.get(1));
    Ok(Value::Int(pos.map_or(-1, |p| p as i64)))
}
overload!(last_index_of => last_index_of_impl);

fn regex_args<'a>(
    name: &str,
    args: &'a [Value],
) -> Result<(&'a str, regex::Regex), ExecutionError> {
    let (Some(Value::String(s)), Some(Value::String(re))) = (args.first(), args.get(1)) else {
        return Err(no_such_overload(name, args));
    };
    let re = regex::Regex::new(re)
        .map_err(|e| ExecutionError::function_error(name, format!("Illegal regex: {e}")))?;
    Ok((s.as_str(), re))
}

fn find_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let (s, re) = regex_args("find", args)?;
    let found = re.find(s).map_or("", |m| m.as_str());
    Ok(Value::String(Arc::new(found.to_owned())))
}
overload!(find => find_impl);

fn find_all_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let (s, re) = regex_args("findAll", args)?;
    let limit = match args.get(2) {
        Some(Value::Int(n)) if *n >= 0 => *n as usize,
        Some(Value::Int(_)) | None => usize::MAX,
        Some(_) => return Err(no_such_overload("findAll", args)),
    };
    let found = re
        .find_iter(s)
        .take(limit)
        .map(|m| Value::String(Arc::new(m.as_str().to_owned())))
        .collect();
    Ok(Value::List(Arc::new(found)))
}
overload!(find_all => find_all_impl);
