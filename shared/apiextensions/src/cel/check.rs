//! The part of cel-go's type checker that cel-rust lacks and that CRD authors meet most:
//! undeclared references (`undeclared reference to 'x' (in container '')`), fields that
//! the schema does not declare (`undefined field 'x'`), rules that cannot evaluate to a
//! bool, and whether a rule uses `oldSelf` (upstream reads that off the checked
//! reference map).
//!
//! Only what is certain from the schema is reported, so a valid rule is never refused;
//! the checks stop wherever a value's type is not known without full inference.

use cel::common::ast::SourceInfo;
use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};
use serde_json::{Value as Json, json};
use std::sync::LazyLock;

use super::Issue;
use super::escaping::unescape;
use super::literals;
use super::node::Node;

/// Names that resolve without a declaration: type names.
#[rustfmt::skip]
const PREDECLARED: &[&str] = &[
    "int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type",
    "dyn", "google", "optional_type",
];

/// Namespaces of the qualified functions upstream's environment declares.
const NAMESPACES: &[&str] = &["optional", "format", "sets", "strings", "ip"];

/// The functions upstream's environment for stored CRD rules declares: cel-go's standard
/// library, optional types, strings v2, sets, two-variable comprehensions, and the
/// Kubernetes libraries (lists, regex, urls, quantity, semver, ip, cidr, format, authz). Calls of
/// anything else are undeclared references, as cel-go's checker reports them.
#[rustfmt::skip]
const FUNCTIONS: &[&str] = &[
    // standard
    "size", "int", "uint", "double", "string", "bytes", "bool", "dyn", "type", "duration",
    "timestamp", "matches", "contains", "startsWith", "endsWith", "getFullYear", "getMonth",
    "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getHours", "getMinutes",
    "getSeconds", "getMilliseconds",
    // macros, including the two-variable ones
    "has", "all", "exists", "exists_one", "existsOne", "map", "filter", "transformList",
    "transformMap", "transformMapEntry",
    // optional types
    "hasValue", "value", "or", "orValue", "optMap", "optFlatMap",
    // strings v2
    "charAt", "indexOf", "lastIndexOf", "lowerAscii", "upperAscii", "replace", "split",
    "substring", "trim", "join", "format",
    // Kubernetes lists, regex, urls, quantity
    "isSorted", "sum", "min", "max", "find", "findAll", "url", "isURL", "getScheme", "getHost",
    "getHostname", "getPort", "getEscapedPath", "getQuery", "quantity", "isQuantity", "sign",
    "isInteger", "asInteger", "asApproximateFloat", "add", "sub", "isLessThan",
    "isGreaterThan", "compareTo",
    // Kubernetes semver (1.33)
    "semver", "isSemver", "major", "minor", "patch",
    // Kubernetes ip, cidr, format
    "ip", "isIP", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
    "isLinkLocalUnicast", "isGlobalUnicast", "cidr", "isCIDR", "containsIP", "containsCIDR",
    "masked", "prefixLength", "validate", "isCanonical",
    // Kubernetes authz
    "path", "group", "serviceAccount", "resource", "subresource", "namespace", "name", "check",
    "allowed", "reason", "errored", "error", "fieldSelector", "labelSelector",
];

/// What `WithTypeAndObjectMeta` gives a resource's `metadata`: only these two fields.
static OBJECT_META: LazyLock<Json> = LazyLock::new(|| {
    json!({ "type": "object", "properties": {
        "name": { "type": "string" }, "generateName": { "type": "string" },
    } })
});
static STRING: LazyLock<Json> = LazyLock::new(|| json!({ "type": "string" }));

pub(crate) struct Checker<'a> {
    pub schema: Node<'a>,
    /// Whether `schema` is the root of a resource (the custom resource, or an embedded
    /// one), which gains `apiVersion`, `kind` and `metadata`.
    pub is_resource_root: bool,
    /// Whether `oldSelf` is declared as an optional (rules with `optionalOldSelf`).
    pub optional_old_self: bool,
    pub issues: Vec<Issue>,
    /// Issues of cel-go's AST validators, which run only when checking found none.
    pub validator_issues: Vec<Issue>,
    pub uses_old_self: bool,
    scope: Vec<String>,
}

impl<'a> Checker<'a> {
    pub fn new(schema: Node<'a>, is_resource_root: bool, optional_old_self: bool) -> Checker<'a> {
        Checker {
            schema,
            is_resource_root,
            optional_old_self,
            issues: Vec::new(),
            validator_issues: Vec::new(),
            uses_old_self: false,
            scope: Vec::new(),
        }
    }

    fn bound(&self, name: &str) -> bool {
        self.scope.iter().any(|s| s == name)
    }

    /// Walks `e`, returning the schema of its value when it is a field path from
    /// `self` (or a non-optional `oldSelf`).
    pub fn walk(&mut self, e: &IdedExpr) -> Option<Node<'a>> {
        match &e.expr {
            Expr::Ident(name) => self.ident(e.id, name),
            Expr::Select(sel) => {
                let operand = self.walk(&sel.operand)?;
                self.field(e.id, operand, &sel.field)
            }
            Expr::Call(call) => {
                self.function(e.id, call);
                if call.func_name != "format" {
                    self.validator_issues.extend(literals::call_issue(call));
                }
                if let Some(t) = &call.target {
                    self.walk(t);
                }
                let mut types = Vec::with_capacity(call.args.len());
                for a in &call.args {
                    if call.func_name == "format" {
                        self.walk_format_arg(a);
                        types.push(None);
                    } else {
                        let node = self.walk(a);
                        types.push(literals::static_type(a, node));
                    }
                }
                self.issues
                    .extend(literals::operator_issue(e.id, call, &types));
                None
            }
            Expr::Comprehension(c) => {
                self.walk(&c.iter_range);
                self.walk(&c.accu_init);
                let depth = self.scope.len();
                self.scope.push(c.iter_var.clone());
                if let Some(v2) = &c.iter_var2 {
                    self.scope.push(v2.clone());
                }
                self.scope.push(c.accu_var.clone());
                self.walk(&c.loop_cond);
                self.walk(&c.loop_step);
                self.walk(&c.result);
                self.scope.truncate(depth);
                None
            }
            Expr::List(l) => {
                self.validator_issues.extend(literals::list_issue(l));
                for el in &l.elements {
                    self.walk(el);
                }
                None
            }
            Expr::Map(m) => {
                self.validator_issues.extend(literals::map_issues(m));
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        self.walk(&me.key);
                        self.walk(&me.value);
                    }
                }
                None
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        self.walk(&f.value);
                    }
                }
                None
            }
            Expr::Literal(_) | Expr::Unspecified => None,
        }
    }

    /// An argument of `format()`: list and map literals in it, at any depth of literals,
    /// may mix types (cel-go's `hasStringFormatAncestor`).
    fn walk_format_arg(&mut self, e: &IdedExpr) {
        match &e.expr {
            Expr::List(l) => {
                for el in &l.elements {
                    self.walk_format_arg(el);
                }
            }
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        self.walk_format_arg(&me.key);
                        self.walk_format_arg(&me.value);
                    }
                }
            }
            _ => {
                self.walk(e);
            }
        }
    }

    /// Reports calls of functions upstream's environment does not declare.
    fn function(&mut self, id: u64, call: &cel::common::ast::CallExpr) {
        let name = call.func_name.as_str();
        let operator = !name.starts_with(|c: char| c.is_ascii_alphabetic());
        if operator || FUNCTIONS.contains(&name) {
            return;
        }
        if let Some(IdedExpr {
            expr: Expr::Ident(ns),
            ..
        }) = call.target.as_deref()
            && NAMESPACES.contains(&ns.as_str())
            && !self.bound(ns)
        {
            return;
        }
        self.issues.push(Issue {
            id,
            message: format!("undeclared reference to '{name}' (in container '')"),
        });
    }

    fn ident(&mut self, id: u64, name: &str) -> Option<Node<'a>> {
        if self.bound(name) {
            return None;
        }
        match name {
            "self" => Some(self.schema),
            "oldSelf" => {
                self.uses_old_self = true;
                (!self.optional_old_self).then_some(self.schema)
            }
            n if PREDECLARED.contains(&n) || NAMESPACES.contains(&n) => None,
            n => {
                self.issues.push(Issue {
                    id,
                    message: format!("undeclared reference to '{n}' (in container '')"),
                });
                None
            }
        }
    }

    /// The schema of field `field` of a value under `schema`, reporting fields that a
    /// closed object type does not have.
    fn field(&mut self, id: u64, schema: Node<'a>, field: &str) -> Option<Node<'a>> {
        if schema.int_or_string() || schema.type_() != "object" {
            return None;
        }
        let resource = schema.embedded_resource()
            || (self.is_resource_root && std::ptr::eq(schema.0, self.schema.0));
        let map = schema.additional_properties().filter(|_| !resource);
        if map.is_none() {
            let name = unescape(field).unwrap_or_default();
            if resource {
                match name.as_str() {
                    "apiVersion" | "kind" => return Some(Node(&STRING)),
                    "metadata" => return Some(Node(&OBJECT_META)),
                    _ => {}
                }
            }
            if let Some(p) = schema.property(&name).filter(|p| p.has_decl_type()) {
                return Some(p);
            }
            // Unknown fields, even preserved ones, are not part of the object's type.
            self.issues.push(Issue {
                id,
                message: format!("undefined field '{field}'"),
            });
            return None;
        }
        map
    }
}

/// Whether `e` certainly does not evaluate to a bool.
pub(crate) fn certainly_not_bool(e: &IdedExpr) -> bool {
    match &e.expr {
        Expr::Literal(l) => !matches!(l, LiteralValue::Boolean(_)),
        Expr::List(_) | Expr::Map(_) | Expr::Struct(_) => true,
        Expr::Call(c) => matches!(
            c.func_name.as_str(),
            "_+_"
                | "_-_"
                | "_*_"
                | "_/_"
                | "_%_"
                | "-_"
                | "size"
                | "string"
                | "int"
                | "uint"
                | "double"
        ),
        _ => false,
    }
}

/// Whether `e` certainly does not evaluate to a string.
pub(crate) fn certainly_not_string(e: &IdedExpr) -> bool {
    match &e.expr {
        Expr::Literal(l) => !matches!(l, LiteralValue::String(_)),
        Expr::List(_) | Expr::Map(_) | Expr::Struct(_) => true,
        Expr::Call(c) => matches!(
            c.func_name.as_str(),
            "_==_"
                | "_!=_"
                | "_<_"
                | "_<=_"
                | "_>_"
                | "_>=_"
                | "_&&_"
                | "_||_"
                | "!_"
                | "size"
                | "int"
                | "uint"
                | "double"
                | "@in"
        ),
        _ => false,
    }
}

/// cel-go's rendering of issues: `ERROR: <input>:L:C: message`, then the source line and
/// a caret under the column.
pub(crate) fn render(issues: &[Issue], info: &SourceInfo, source: &str) -> String {
    let mut out = Vec::new();
    for issue in issues {
        let offset = info
            .offset_for(issue.id)
            .map_or(0, |(start, _)| start as usize);
        out.push(render_at(source, offset, &issue.message));
    }
    out.join("\n")
}

/// One issue at byte `offset` of `source`, as cel-go prints it.
pub(crate) fn render_at(source: &str, offset: usize, message: &str) -> String {
    let mut line_start = 0;
    let mut line_no = 1;
    for (i, c) in source.char_indices() {
        if i >= offset {
            break;
        }
        if c == '\n' {
            line_no += 1;
            line_start = i + 1;
        }
    }
    let rest = source.get(line_start..).unwrap_or("");
    let line = rest.lines().next().unwrap_or("");
    // Offsets are byte offsets of token starts; columns count code points, as cel-go's.
    let col = source
        .char_indices()
        .filter(|(i, _)| *i >= line_start && *i < offset)
        .count();
    format!(
        "ERROR: <input>:{line_no}:{}: {message}\n | {}\n | {}^",
        col + 1,
        line.replace('\t', " "),
        ".".repeat(col)
    )
}
