//! The CEL types the checker infers, after cel-go's `common/types` as its checker uses
//! them, and the checker's type variables (`checker/types.go`, `mapping.go`): assignability
//! that binds variables, the most general of two types, substitution, and `FormatCELType`
//! for messages.
//!
//! One addition: [`Type::Unknown`], a type this checker does not infer. It is assignable
//! to and from everything, as `dyn` is, so that no valid expression is refused; unlike
//! `dyn`, a rule of unknown type is not refused for not being a bool.

use std::fmt;
use std::sync::Arc;

use super::super::node::Node;

#[derive(Clone, Debug)]
pub(crate) enum Type<'a> {
    Unknown,
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
    /// A type variable of the checker (cel-go's `_var<n>`).
    Var(u32),
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

    /// cel-go's `isDynOrError`, and a type not inferred.
    pub fn is_dyn_like(&self) -> bool {
        matches!(self, Type::Unknown | Type::Error | Type::Dyn)
    }

    pub fn has_unknown(&self) -> bool {
        match self {
            Type::Unknown => true,
            Type::List(e) | Type::Kind(e) => e.has_unknown(),
            Type::Map(k, v) => k.has_unknown() || v.has_unknown(),
            Type::Opaque(_, p) => p.iter().any(Type::has_unknown),
            _ => false,
        }
    }

    /// cel-go's `IsExactType` (and `IsEquivalentType`, for checked types).
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
            (Type::Var(a), Type::Var(b)) => a == b,
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }

    /// Null is assignable to these (cel-go's `isLegacyNullable`; wrappers do not occur).
    fn nullable(&self) -> bool {
        matches!(
            self,
            Type::Opaque(..) | Type::Object(_) | Type::Struct(_) | Type::Duration | Type::Timestamp
        )
    }

    /// The declaration's type with its parameters replaced by `vars`.
    pub fn instantiate(&self, vars: &[Type<'a>]) -> Type<'a> {
        match self {
            Type::Param(i) => vars.get(*i as usize).cloned().unwrap_or(Type::Unknown),
            Type::List(e) => Type::list(e.instantiate(vars)),
            Type::Kind(e) => Type::Kind(Box::new(e.instantiate(vars))),
            Type::Map(k, v) => Type::map(k.instantiate(vars), v.instantiate(vars)),
            Type::Opaque(n, p) => Type::Opaque(n, p.iter().map(|t| t.instantiate(vars)).collect()),
            t => t.clone(),
        }
    }
}

/// The checker's bindings of type variables (cel-go's `mapping`), with an undo log so that
/// a failed assignability check leaves them as they were (cel-go copies the mapping).
#[derive(Default)]
pub(crate) struct Mapping<'a> {
    subs: Vec<Option<Type<'a>>>,
    undo: Vec<(u32, Option<Type<'a>>)>,
}

impl<'a> Mapping<'a> {
    /// cel-go's `newTypeVar`.
    pub fn new_var(&mut self) -> Type<'a> {
        let id = u32::try_from(self.subs.len()).unwrap_or(u32::MAX);
        self.subs.push(None);
        Type::Var(id)
    }

    fn find(&self, v: u32) -> Option<&Type<'a>> {
        self.subs.get(v as usize).and_then(Option::as_ref)
    }

    fn add(&mut self, v: u32, t: Type<'a>) {
        if let Some(slot) = self.subs.get_mut(v as usize) {
            let old = slot.replace(t);
            self.undo.push((v, old));
        }
    }

    fn rollback(&mut self, mark: usize) {
        while self.undo.len() > mark {
            if let Some((v, old)) = self.undo.pop()
                && let Some(slot) = self.subs.get_mut(v as usize)
            {
                *slot = old;
            }
        }
    }

    /// cel-go's `isAssignable`: binds variables only when the whole check holds.
    pub fn is_assignable(&mut self, t1: &Type<'a>, t2: &Type<'a>) -> bool {
        let mark = self.undo.len();
        let ok = self.internal_is_assignable(t1, t2);
        if ok {
            self.undo.truncate(mark);
        } else {
            self.rollback(mark);
        }
        ok
    }

    /// cel-go's `isAssignableList`.
    pub fn is_assignable_list(&mut self, l1: &[Type<'a>], l2: &[Type<'a>]) -> bool {
        let mark = self.undo.len();
        let ok = l1.len() == l2.len()
            && l1
                .iter()
                .zip(l2)
                .all(|(a, b)| self.internal_is_assignable(a, b));
        if ok {
            self.undo.truncate(mark);
        } else {
            self.rollback(mark);
        }
        ok
    }

    fn internal_is_assignable(&mut self, t1: &Type<'a>, t2: &Type<'a>) -> bool {
        if let Type::Var(v2) = t2 {
            let (valid, has_sub) = self.valid_substitution(t1, *v2, t2);
            if valid {
                return true;
            }
            if has_sub {
                return false;
            }
        }
        if let Type::Var(v1) = t1 {
            return self.valid_substitution(t2, *v1, t1).0;
        }
        if t1.is_dyn_like() || t2.is_dyn_like() {
            return true;
        }
        if let Type::Null = t1 {
            return matches!(t2, Type::Null) || t2.nullable();
        }
        if let Type::Null = t2 {
            return t1.nullable();
        }
        match (t1, t2) {
            (Type::List(a), Type::List(b)) => self.internal_is_assignable(a, b),
            (Type::Map(a, b), Type::Map(c, d)) => {
                self.internal_is_assignable(a, c) && self.internal_is_assignable(b, d)
            }
            (Type::Kind(_), Type::Kind(_)) => true,
            (Type::Opaque(a, p), Type::Opaque(b, q)) => {
                a == b
                    && p.len() == q.len()
                    && p.iter()
                        .zip(q.iter())
                        .all(|(x, y)| self.internal_is_assignable(x, y))
            }
            (a, b) => a.same(b),
        }
    }

    /// cel-go's `isValidTypeSubstitution` of `t1` for variable `v2` (the type `t2`).
    fn valid_substitution(&mut self, t1: &Type<'a>, v2: u32, t2: &Type<'a>) -> (bool, bool) {
        if t1.same(t2) {
            return (true, true);
        }
        if let Some(sub) = self.find(v2).cloned() {
            if t1.same(&sub) {
                return (true, true);
            }
            if self.internal_is_assignable(t1, &sub) {
                let general = most_general(t1, &sub);
                if self.not_referenced_in(v2, &general) {
                    self.add(v2, general);
                }
                return (true, true);
            }
            return (false, true);
        }
        if self.not_referenced_in(v2, t1) {
            self.add(v2, t1.clone());
            return (true, false);
        }
        (false, false)
    }

    /// cel-go's `notReferencedIn`: whether binding `v` to `within` makes no cycle.
    fn not_referenced_in(&self, v: u32, within: &Type<'a>) -> bool {
        match within {
            Type::Var(w) if *w == v => false,
            Type::Var(w) => self
                .find(*w)
                .is_none_or(|sub| self.not_referenced_in(v, sub)),
            Type::List(e) | Type::Kind(e) => self.not_referenced_in(v, e),
            Type::Map(k, val) => self.not_referenced_in(v, k) && self.not_referenced_in(v, val),
            Type::Opaque(_, p) => p.iter().all(|t| self.not_referenced_in(v, t)),
            _ => true,
        }
    }

    /// cel-go's `substitute`: the type with its bound variables replaced; unbound ones
    /// become `dyn` with `to_dyn`.
    pub fn substitute(&self, t: &Type<'a>, to_dyn: bool) -> Type<'a> {
        self.substitute_depth(t, to_dyn, 0)
    }

    fn substitute_depth(&self, t: &Type<'a>, to_dyn: bool, depth: usize) -> Type<'a> {
        // Bindings never form cycles (`notReferencedIn`); the depth only bounds the work.
        if depth > 512 {
            return Type::Unknown;
        }
        let sub = |t: &Type<'a>| self.substitute_depth(t, to_dyn, depth + 1);
        match t {
            Type::Var(v) => match self.find(*v) {
                Some(bound) => sub(bound),
                None if to_dyn => Type::Dyn,
                None => t.clone(),
            },
            Type::List(e) => Type::list(sub(e)),
            Type::Kind(e) => Type::Kind(Box::new(sub(e))),
            Type::Map(k, v) => Type::map(sub(k), sub(v)),
            Type::Opaque(n, p) => Type::Opaque(n, p.iter().map(sub).collect()),
            t => t.clone(),
        }
    }
}

/// cel-go's `mostGeneral`: the less specific of two assignable types.
pub(crate) fn most_general<'a>(a: &Type<'a>, b: &Type<'a>) -> Type<'a> {
    if less_specific(a, b) {
        a.clone()
    } else {
        b.clone()
    }
}

/// cel-go's `isEqualOrLessSpecific`.
fn less_specific(a: &Type<'_>, b: &Type<'_>) -> bool {
    let dyn_or_var = |t: &Type<'_>| matches!(t, Type::Dyn | Type::Unknown | Type::Var(_));
    if dyn_or_var(a) {
        return true;
    }
    if dyn_or_var(b) {
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

/// cel-go's `FormatCELType`.
impl fmt::Display for Type<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Type::Unknown | Type::Dyn => "dyn",
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
            Type::Param(i) => return write!(f, "{}", char::from(b'A' + i)),
            Type::Var(v) => return write!(f, "_var{v}"),
        };
        f.write_str(name)
    }
}
