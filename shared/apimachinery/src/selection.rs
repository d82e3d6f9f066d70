//! Selector operators, after upstream's `k8s.io/apimachinery/pkg/selection`: shared by label
//! and field selectors.

use std::fmt;

/// Upstream `selection.Operator`; `as_str` is the Go constant's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    DoesNotExist,
    Equals,
    DoubleEquals,
    In,
    NotEquals,
    NotIn,
    Exists,
    GreaterThan,
    LessThan,
}

impl Operator {
    /// The string upstream's constant holds (`"!"`, `"="`, `"=="`, `"in"`, `"!="`,
    /// `"notin"`, `"exists"`, `"gt"`, `"lt"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::DoesNotExist => "!",
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::In => "in",
            Operator::NotEquals => "!=",
            Operator::NotIn => "notin",
            Operator::Exists => "exists",
            Operator::GreaterThan => "gt",
            Operator::LessThan => "lt",
        }
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Operator;

    #[test]
    fn strings_are_upstreams() {
        let all = [
            (Operator::DoesNotExist, "!"),
            (Operator::Equals, "="),
            (Operator::DoubleEquals, "=="),
            (Operator::In, "in"),
            (Operator::NotEquals, "!="),
            (Operator::NotIn, "notin"),
            (Operator::Exists, "exists"),
            (Operator::GreaterThan, "gt"),
            (Operator::LessThan, "lt"),
        ];
        for (op, s) in all {
            assert_eq!(op.to_string(), s);
        }
    }
}
