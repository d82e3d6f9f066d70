//! The CEL types the checker infers, after cel-go's `common/types` as its checker uses
//! them: assignability with type parameters (`checker/types.go`), the most general of two
//! types, and `FormatCELType` for messages.
//!
//! Two additions, both assignable to and from everything as `dyn` is, so that no valid
//! expression is refused, and neither refused as a rule that is not a bool:
//! [`Type::Free`], a free type variable of cel-go's (the elements of an empty literal, a
//! type parameter an overload leaves unbound), which the first type joined with it binds,
//! one use at a time (cel-go binds it once for the whole expression); and
//! [`Type::Unknown`], a type this checker does not infer, which stays unknown.

use std::fmt;
use std::sync::Arc;

use super::super::node::Node;

#[derive(Clone, Debug)]
pub(crate) enum Type<'a> {
    Unknown,
    Free,
    Error,
    Dyn,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    List(Box<Type<'a>>),
    Map(Box<Type<'a>>, Box<Type<'a>>),
    /// `type(T)`: the type of a type name (cel-go's `TypeKind`).
    Kind(Box<Type<'a>>),
    /// An object of the schema (upstream's `DeclType` object, a struct type).
    Object(Arc<Object<'a>>),
    /// A struct type of the Kubernetes libraries (`kubernetes.Quantity`...), which has no
    /// fields.
    Struct(&'static str),
    /// An opaque type: `optional_type(T)`, `net.IP`, `net.CIDR`.
    Opaque(&'static str, Box<[Type<'a>]>),
    /// A type parameter of an overload declaration (`A`, `B`).
    Param(u8),
}

/// An object type of the schema: its name (upstream's `MaybeAssignTypeName`) and node.
#[derive(Debug)]
pub(crate) struct Object<'a> {
    pub name: Arc<str>,
    pub node: Node<'a>,
    /// The root of a resource, with `apiVersion`, `kind` and a `metadata` of its own.
    pub resource: bool,
}

pub(crate) const OPTIONAL: &str = "optional_type";

impl<'a> Type<'a> {
    pub fn list(elem: Type<'a>) -> Type<'a> {
        Type::List(Box::new(elem))
    }

    pub fn map(key: Type<'a>, value: Type<'a>) -> Type<'a> {
        Type::Map(Box::new(key), Box::new(value))
    }

    pub fn optional(t: Type<'a>) -> Type<'a> {
        Type::Opaque(OPTIONAL, Box::new([t]))
    }

    /// `(T, true)` for `optional_type(T)`, else `(self, false)`.
    pub fn unwrap_optional(&self) -> (&Type<'a>, bool) {
        match self {
            Type::Opaque(OPTIONAL, p) if p.len() == 1 => (&p[0], true),
            t => (t, false),
        }
    }

    /// `dyn`, an error, or a type not inferred: assignable to and from anything.
    pub fn is_dyn_like(&self) -> bool {
        matches!(self, Type::Unknown | Type::Free | Type::Error | Type::Dyn)
    }

    /// Whether the type is not fully known: unknown, or with a free variable.
    pub fn has_unknown(&self) -> bool {
        match self {
            Type::Unknown | Type::Free => true,
            Type::List(e) | Type::Kind(e) => e.has_unknown(),
            Type::Map(k, v) => k.has_unknown() || v.has_unknown(),
            Type::Opaque(_, p) => p.iter().any(Type::has_unknown),
            _ => false,
        }
    }

    /// cel-go's `IsExactType`/`IsEquivalentType` for checked types.
    pub fn same(&self, other: &Type<'a>) -> bool {
        match (self, other) {
            (Type::List(a), Type::List(b)) | (Type::Kind(a), Type::Kind(b)) => a.same(b),
            (Type::Map(a, b), Type::Map(c, d)) => a.same(c) && b.same(d),
            (Type::Object(a), Type::Object(b)) => a.name == b.name,
            (Type::Struct(a), Type::Struct(b)) => a == b,
            (Type::Opaque(a, p), Type::Opaque(b, q)) => {
                a == b && p.len() == q.len() && p.iter().zip(q.iter()).all(|(x, y)| x.same(y))
            }
            (Type::Param(a), Type::Param(b)) => a == b,
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }

    /// Null is assignable to these (cel-go's `isLegacyNullable`; wrappers do not occur).
    fn nullable(&self) -> bool {
        matches!(
            self,
            Type::Null
                | Type::Opaque(..)
                | Type::Object(_)
                | Type::Struct(_)
                | Type::Duration
                | Type::Timestamp
        )
    }

    /// Replaces the bound type parameters; unbound ones are not inferred.
    pub fn substitute(&self, binds: &[Option<Type<'a>>]) -> Type<'a> {
        match self {
            Type::Param(i) => binds
                .get(*i as usize)
                .cloned()
                .flatten()
                .unwrap_or(Type::Free),
            Type::List(e) => Type::list(e.substitute(binds)),
            Type::Kind(e) => Type::Kind(Box::new(e.substitute(binds))),
            Type::Map(k, v) => Type::map(k.substitute(binds), v.substitute(binds)),
            Type::Opaque(n, p) => Type::Opaque(n, p.iter().map(|t| t.substitute(binds)).collect()),
            t => t.clone(),
        }
    }
}

/// cel-go's `isAssignable(t1, t2)` with overload type parameters bound in `binds`: whether
/// a value of type `actual` may be passed where `decl` is declared.
pub(crate) fn assignable<'a>(
    decl: &Type<'a>,
    actual: &Type<'a>,
    binds: &mut [Option<Type<'a>>],
) -> bool {
    if let Type::Param(i) = decl {
        let Some(slot) = binds.get_mut(*i as usize) else {
            return true;
        };
        return match slot {
            None => {
                *slot = Some(actual.clone());
                true
            }
            Some(bound) => {
                let bound = bound.clone();
                if !assignable(&bound, actual, &mut []) {
                    return false;
                }
                binds[*i as usize] = Some(most_general(bound, actual));
                true
            }
        };
    }
    if decl.is_dyn_like() || actual.is_dyn_like() {
        return true;
    }
    if let Type::Null = actual {
        return decl.nullable();
    }
    if let Type::Null = decl {
        return actual.nullable();
    }
    match (decl, actual) {
        (Type::List(a), Type::List(b)) => assignable(a, b, binds),
        (Type::Map(a, b), Type::Map(c, d)) => assignable(a, c, binds) && assignable(b, d, binds),
        (Type::Kind(_), Type::Kind(_)) => true,
        (Type::Opaque(a, p), Type::Opaque(b, q)) => {
            a == b
                && p.len() == q.len()
                && p.iter().zip(q.iter()).all(|(x, y)| assignable(x, y, binds))
        }
        (a, b) => a.same(b),
    }
}

/// cel-go's `mostGeneral`: the less specific of two assignable types.
pub(crate) fn most_general<'a>(a: Type<'a>, b: &Type<'a>) -> Type<'a> {
    if less_specific(&a, b) { a } else { b.clone() }
}

fn less_specific(a: &Type<'_>, b: &Type<'_>) -> bool {
    // A free variable takes the other type (cel-go binds it to that type).
    if let Type::Free = b {
        return true;
    }
    if let Type::Free = a {
        return false;
    }
    if a.is_dyn_like() || matches!(a, Type::Param(_)) {
        return true;
    }
    if b.is_dyn_like() || matches!(b, Type::Param(_)) {
        return false;
    }
    match (a, b) {
        (Type::List(x), Type::List(y)) => less_specific(x, y),
        (Type::Map(k, v), Type::Map(l, w)) => less_specific(k, l) && less_specific(v, w),
        (Type::Opaque(n, p), Type::Opaque(m, q)) => {
            n == m && p.len() == q.len() && p.iter().zip(q.iter()).all(|(x, y)| less_specific(x, y))
        }
        (Type::Kind(_), Type::Kind(_)) => true,
        (a, b) => a.same(b),
    }
}

/// cel-go's `FormatCELType`; types not inferred print as the free type variables they
/// stand for do in cel-go's messages: `dyn`.
impl fmt::Display for Type<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Type::Unknown | Type::Free | Type::Dyn => "dyn",
            Type::Error => "!error!",
            Type::Null => "null",
            Type::Bool => "bool",
            Type::Int => "int",
            Type::Uint => "uint",
            Type::Double => "double",
            Type::String => "string",
            Type::Bytes => "bytes",
            Type::Duration => "duration",
            Type::Timestamp => "timestamp",
            Type::List(e) => return write!(f, "list({e})"),
            Type::Map(k, v) => return write!(f, "map({k}, {v})"),
            Type::Kind(t) => return write!(f, "type({t})"),
            Type::Object(o) => &o.name,
            Type::Struct(n) => n,
            Type::Opaque(n, p) if p.is_empty() => n,
            Type::Opaque(n, p) => {
                write!(f, "{n}(")?;
                for (i, t) in p.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                return f.write_str(")");
            }
            Type::Param(i) => return write!(f, "{}", (b'A' + i) as char),
        };
        f.write_str(name)
    }
}
