//! A parsed expression, as cel-rust's `Program` but parsed with a recursion limit of our
//! choosing: cel-rust's parser stops at 96 nested expressions, where cel-go (whose limit
//! of 250 `depth.rs` enforces first, with upstream's message) goes on.

use cel::common::ast::{IdedExpr, SourceInfo};
use cel::{Context, Env, ParseErrors, ResolveResult, Value};

pub(crate) struct Program {
    expression: IdedExpr,
    source_info: SourceInfo,
}

impl Program {
    /// Parses `source` with `env`'s macros, allowing about `depth` nested expressions
    /// (the estimate the stack was sized for; cel-rust counts nested `expr` rules, which
    /// cel-go's depth bounds).
    pub fn parse(env: &Env, source: &str, depth: usize) -> Result<Program, ParseErrors> {
        let depth = u16::try_from(depth + 4).unwrap_or(u16::MAX - 1);
        let (expression, source_info) = env
            .parser()
            .max_recursion_depth(depth)
            .parse_with_source_info(source)?;
        Ok(Program {
            expression,
            source_info,
        })
    }

    pub fn expression(&self) -> &IdedExpr {
        &self.expression
    }

    pub fn source_info(&self) -> &SourceInfo {
        &self.source_info
    }

    pub fn execute(&self, context: &Context<'_, '_>) -> ResolveResult {
        Value::resolve(&self.expression, context)
    }
}
