//! cel-go's type checker (`checker/checker.go`, cel-go v0.23) over cel-rust's AST, in the
//! environment upstream compiles stored CRD rules in: `self` (and `oldSelf`, optional
//! with `optionalOldSelf`) typed from the structural schema as upstream's
//! `SchemaDeclType`, the declared functions of `decls.rs`, and cel-go's messages
//! (`undeclared reference to 'x' (in container '')`, `undefined field 'x'`,
//! `found no matching overload for '_+_' applied to '(string, int)'`, `expected type
//! 'bool' but found 'int'`...). Also whether a rule uses `oldSelf` (upstream reads that
//! off the checked reference map), and cel-go's AST validators that upstream enables
//! (`literals.rs`, and the homogeneous aggregate literals check over inferred types).
//!
//! Types this checker does not infer are [`Type::Unknown`], which accepts everything, so
//! that a valid rule is never refused.

mod decls;
mod infer;
mod schema;
mod types;

use std::collections::HashMap;

use cel::common::ast::{IdedExpr, SourceInfo};

use super::Issue;
use super::node::Node;
use types::Mapping;
pub(crate) use types::Type;

pub(crate) struct Checker<'a> {
    /// The type of `self`.
    self_type: Type<'a>,
    /// Whether `oldSelf` is declared as an optional (rules with `optionalOldSelf`).
    optional_old_self: bool,
    pub issues: Vec<Issue>,
    /// Issues of cel-go's AST validators, which run only when checking found none.
    pub validator_issues: Vec<Issue>,
    pub uses_old_self: bool,
    /// The variables of the enclosing comprehensions, innermost last.
    scope: Vec<(String, Type<'a>)>,
    /// How many `format()` calls enclose the expression being checked: list and map
    /// literals under one may mix types (cel-go's exempt functions of the homogeneous
    /// aggregate literal validator).
    in_format: usize,
    /// The type inferred for each expression, by id.
    types: HashMap<u64, Type<'a>>,
    /// The bindings of type variables.
    mapping: Mapping<'a>,
    /// The targets of the enclosing two-variable comprehensions (expression ids).
    targets: Vec<u64>,
    /// The list and map literals, for the homogeneous literals validator.
    literals: Vec<infer::Literal<'a>>,
}

impl<'a> Checker<'a> {
    /// A checker for rules on values under `schema`; `is_resource_root` when `schema` is
    /// the root of a resource (the custom resource, or an embedded one), which gains
    /// `apiVersion`, `kind` and `metadata`.
    pub fn new(schema: Node<'a>, is_resource_root: bool, optional_old_self: bool) -> Checker<'a> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!("selfType{nanos}");
        Checker {
            self_type: schema::decl_type(schema, Some(&name), is_resource_root)
                .unwrap_or(Type::Dyn),
            optional_old_self,
            issues: Vec::new(),
            validator_issues: Vec::new(),
            uses_old_self: false,
            scope: Vec::new(),
            in_format: 0,
            types: HashMap::new(),
            mapping: Mapping::default(),
            targets: Vec::new(),
            literals: Vec::new(),
        }
    }

    /// Checks the expression `e`, returning its type (upstream's `OutputType`), with the
    /// type variables left unbound as `dyn`, as cel-go's `Check` ends.
    pub fn check(&mut self, e: &IdedExpr) -> Type<'a> {
        let t = self.visit(e);
        for t in self.types.values_mut() {
            *t = self.mapping.substitute(t, true);
        }
        self.validate_literals();
        self.mapping.substitute(&t, true)
    }

    /// The type inferred for the expression with id `id`.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn type_of(&self, id: u64) -> Option<&Type<'a>> {
        self.types.get(&id)
    }

    fn issue(&mut self, id: u64, message: String) {
        self.issues.push(Issue { id, message });
    }
}

/// Whether an expression of type `t` may be a rule: upstream requires the checked output
/// type to be `bool`; a type not inferred gets the benefit of the doubt.
pub(crate) fn may_be_bool(t: &Type<'_>) -> bool {
    matches!(t, Type::Bool | Type::Unknown)
}

/// Whether an expression of type `t` may be a messageExpression (output type `string`).
pub(crate) fn may_be_string(t: &Type<'_>) -> bool {
    matches!(t, Type::String | Type::Unknown)
}

/// cel-go's rendering of issues, sorted by position as cel-go sorts them:
/// `ERROR: <input>:L:C: message`, then the source line and a caret under the column.
pub(crate) fn render(issues: &[Issue], info: &SourceInfo, source: &str) -> String {
    let mut located: Vec<(usize, &str)> = issues
        .iter()
        .map(|issue| {
            let offset = info
                .offset_for(issue.id)
                .map_or(0, |(start, _)| start as usize);
            (offset, issue.message.as_str())
        })
        .collect();
    located.sort_by_key(|(offset, _)| *offset);
    let out: Vec<String> = located
        .iter()
        .map(|(offset, message)| render_at(source, *offset, message))
        .collect();
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
