//! Upstream's Kubernetes quantity library (`k8s.io/apiserver/pkg/cel/library/quantity.go`):
//! `quantity()`, `isQuantity()` and the methods of a `kubernetes.Quantity`.

use std::cmp::Ordering;
use std::sync::Arc;

use cel::common::types::{DYN_TYPE, STRING_TYPE, Type};
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError, Value};
use kas_apimachinery::resource;

use super::library::{no_such_overload, overload};

const TYPE_NAME: &str = "kubernetes.Quantity";

#[derive(Clone, Debug)]
pub(crate) struct Quantity(pub resource::Quantity);

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.0.cmp_value(&other.0) == Ordering::Equal
    }
}

impl Eq for Quantity {}

impl Opaque for Quantity {
    fn runtime_type_name(&self) -> &str {
        TYPE_NAME
    }
}

pub(crate) fn add(env: &mut Env) -> Result<(), DeclarationError> {
    let q = || Type::new_opaque_type(TYPE_NAME);
    env.add_type(q())?;
    env.add_overload("quantity", "string_to_quantity", vec![STRING_TYPE], parse)?;
    env.add_overload(
        "isQuantity",
        "is_quantity_string",
        vec![STRING_TYPE],
        is_quantity,
    )?;
    let member = |env: &mut Env, name: &str, args: Vec<Type>, f| {
        env.add_member_overload(name, &format!("quantity_{name}"), q(), args, f)
    };
    // Upstream declares `sign` as a global function (`sign(quantity(...))`).
    env.add_overload("sign", "quantity_sign", vec![q()], sign)?;
    member(env, "isInteger", vec![], is_integer)?;
    member(env, "asInteger", vec![], as_integer)?;
    member(env, "asApproximateFloat", vec![], as_float)?;
    member(env, "compareTo", vec![q()], compare_to)?;
    member(env, "isGreaterThan", vec![q()], greater)?;
    member(env, "isLessThan", vec![q()], less)?;
    member(env, "add", vec![DYN_TYPE], add_q)?;
    member(env, "sub", vec![DYN_TYPE], sub_q)?;
    Ok(())
}

fn opaque(q: resource::Quantity) -> Value {
    Value::Opaque(Arc::new(Quantity(q)))
}

fn arg<'a>(
    name: &str,
    args: &'a [Value],
    i: usize,
) -> Result<&'a resource::Quantity, ExecutionError> {
    super::library::opaque::<Quantity>(name, args, i).map(|q| &q.0)
}

fn parse_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let Some(Value::String(s)) = args.first() else {
        return Err(no_such_overload("quantity", args));
    };
    resource::Quantity::parse(s)
        .map(opaque)
        .map_err(|e| ExecutionError::function_error("quantity", e))
}
overload!(parse => parse_impl);

fn is_quantity_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let Some(Value::String(s)) = args.first() else {
        return Err(no_such_overload("isQuantity", args));
    };
    Ok(Value::Bool(resource::Quantity::parse(s).is_ok()))
}
overload!(is_quantity => is_quantity_impl);

fn sign_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let q = arg("sign", args, 0)?;
    let sign = if q.is_zero() {
        0
    } else if q.is_negative() {
        -1
    } else {
        1
    };
    Ok(Value::Int(sign))
}
overload!(sign => sign_impl);

/// Upstream's `AsInt64`: the value when it is a whole number that fits in an int64.
fn as_int64(q: &resource::Quantity) -> Option<i64> {
    let v = i64::try_from(q.value()).ok()?;
    (resource::Quantity::from_int(v).cmp_value(q) == Ordering::Equal).then_some(v)
}

fn is_integer_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(as_int64(arg("isInteger", args, 0)?).is_some()))
}
overload!(is_integer => is_integer_impl);

fn as_integer_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    as_int64(arg("asInteger", args, 0)?)
        .map(Value::Int)
        .ok_or_else(|| {
            ExecutionError::function_error("asInteger", "cannot convert value to integer")
        })
}
overload!(as_integer => as_integer_impl);

fn as_float_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let q = arg("asApproximateFloat", args, 0)?;
    Ok(Value::Float(q.milli_value() as f64 / 1000.0))
}
overload!(as_float => as_float_impl);

fn cmp(name: &str, args: &[Value]) -> Result<Ordering, ExecutionError> {
    Ok(arg(name, args, 0)?.cmp_value(arg(name, args, 1)?))
}

fn compare_to_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Int(cmp("compareTo", args)? as i64))
}
overload!(compare_to => compare_to_impl);

fn greater_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(
        cmp("isGreaterThan", args)? == Ordering::Greater,
    ))
}
overload!(greater => greater_impl);

fn less_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(cmp("isLessThan", args)? == Ordering::Less))
}
overload!(less => less_impl);

fn operand(name: &str, args: &[Value]) -> Result<resource::Quantity, ExecutionError> {
    match args.get(1) {
        Some(Value::Int(i)) => Ok(resource::Quantity::from_int(*i)),
        _ => arg(name, args, 1).cloned(),
    }
}

fn add_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let mut q = arg("add", args, 0)?.clone();
    q.add(&operand("add", args)?);
    Ok(opaque(q))
}
overload!(add_q => add_impl);

fn sub_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let mut q = arg("sub", args, 0)?.clone();
    q.sub(&operand("sub", args)?);
    Ok(opaque(q))
}
overload!(sub_q => sub_impl);
