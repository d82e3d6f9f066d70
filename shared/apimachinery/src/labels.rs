//! Label selectors (`labelSelector=app=web,tier in (a,b),!canary`), after upstream's
//! `k8s.io/apimachinery/pkg/labels`: the same grammar, the same error messages (which
//! become 400 `Status` messages), the same matching and the same canonical string.
//! `from_label_selector` is upstream's metav1 `LabelSelectorAsSelector`.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde_json::Value;
use thiserror::Error;

use crate::golang::json::describe;
use crate::golang::strconv::{parse_int, quote};
pub use crate::selection::Operator;
use crate::validation::field::{self, BadValue, ErrorList, Path};
use crate::validation::{is_qualified_name, is_valid_label_value};

mod parser;

/// Why a selector or requirement is not valid; `Display` is upstream's message.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum Error {
    /// A lexical or grammatical error, e.g. `found ')', expected: ',' or 'end of string'`.
    #[error("{0}")]
    Syntax(String),
    /// Upstream's aggregated `field.ErrorList` from `NewRequirement` or key validation.
    #[error("{}", field::aggregate_message(.0).unwrap_or_default())]
    Invalid(ErrorList),
    /// Upstream's `unable to parse requirement: <cause>` wrapper used by `Parse`.
    #[error("unable to parse requirement: {0}")]
    Requirement(#[source] Box<Error>),
    /// A `matchExpressions[].operator` upstream does not know.
    #[error("{} is not a valid label selector operator", quote(.0))]
    InvalidOperator(String),
    /// A LabelSelector whose JSON does not have the shape of metav1.LabelSelector.
    #[error("{0}")]
    Malformed(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Upstream `labels.Labels`: a read-only view of a label set.
pub trait Labels {
    fn get(&self, key: &str) -> Option<&str>;
}

impl Labels for BTreeMap<String, String> {
    fn get(&self, key: &str) -> Option<&str> {
        BTreeMap::get(self, key).map(String::as_str)
    }
}

impl<S: std::hash::BuildHasher> Labels for HashMap<String, String, S> {
    fn get(&self, key: &str) -> Option<&str> {
        HashMap::get(self, key).map(String::as_str)
    }
}

/// A JSON object of labels (`metadata.labels`); values that are not strings count as
/// absent, as no valid object carries them.
impl Labels for serde_json::Map<String, Value> {
    fn get(&self, key: &str) -> Option<&str> {
        serde_json::Map::get(self, key).and_then(Value::as_str)
    }
}

/// Upstream `labels.Requirement`: a key, an operator and its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

impl Requirement {
    /// Upstream `NewRequirement(key, op, vals)`, with upstream's validation and messages
    /// (fields `key`, `values`, `values[i]`, `values[i][key]`).
    pub fn new(key: &str, operator: Operator, values: Vec<String>) -> Result<Requirement> {
        Requirement::validated(key, operator, values, false, &Path::nil())
    }

    /// `NewRequirement` proper. `nil_values` renders an empty `values` as Go's nil slice,
    /// which is what `LabelSelectorAsSelector` passes for an empty list.
    fn validated(
        key: &str,
        operator: Operator,
        values: Vec<String>,
        nil_values: bool,
        path: &Path,
    ) -> Result<Requirement> {
        let mut errs = ErrorList::new();
        if let Some(e) = validate_label_key(key, &path.child("key")) {
            errs.push(e);
        }
        let value_path = path.child("values");
        let all_values =
            || BadValue::Strings((!(nil_values && values.is_empty())).then(|| values.clone()));
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => errs.push(field::invalid(
                &value_path,
                all_values(),
                "for 'in', 'notin' operators, values set can't be empty",
            )),
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals
                if values.len() != 1 =>
            {
                errs.push(field::invalid(
                    &value_path,
                    all_values(),
                    "exact-match compatibility requires one single value",
                ))
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                errs.push(field::invalid(
                    &value_path,
                    all_values(),
                    "values set must be empty for exists and does not exist",
                ))
            }
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    errs.push(field::invalid(
                        &value_path,
                        all_values(),
                        "for 'Gt', 'Lt' operators, exactly one value is required",
                    ));
                }
                for (i, v) in values.iter().enumerate() {
                    if parse_int(v, 10, 64).is_err() {
                        errs.push(field::invalid(
                            &value_path.index(i),
                            v.as_str(),
                            "for 'Gt', 'Lt' operators, the value must be an integer",
                        ));
                    }
                }
            }
            _ => {}
        }
        for (i, v) in values.iter().enumerate() {
            let msgs = is_valid_label_value(v);
            if !msgs.is_empty() {
                let p = value_path.index(i).key(key);
                errs.push(field::invalid(&p, v.as_str(), &msgs.join("; ")));
            }
        }
        if !errs.is_empty() {
            return Err(Error::Invalid(errs));
        }
        Ok(Requirement {
            key: key.to_owned(),
            operator,
            values,
        })
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values in the order given (upstream `ValuesUnsorted`); the parser gives them
    /// sorted and without duplicates.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// Upstream `Requirement.Matches`.
    pub fn matches(&self, labels: &(impl Labels + ?Sized)) -> bool {
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => {
                labels.get(&self.key).is_some_and(has)
            }
            Operator::NotIn | Operator::NotEquals => !labels.get(&self.key).is_some_and(has),
            Operator::Exists => labels.get(&self.key).is_some(),
            Operator::DoesNotExist => labels.get(&self.key).is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(have) = labels
                    .get(&self.key)
                    .and_then(|v| parse_int(v, 10, 64).ok())
                else {
                    return false;
                };
                let [want] = self.values.as_slice() else {
                    return false;
                };
                match parse_int(want, 10, 64).ok() {
                    Some(want) if self.operator == Operator::GreaterThan => have > want,
                    Some(want) => have < want,
                    None => false,
                }
            }
        }
    }
}

/// Upstream `Requirement.String()`: `!k`, `k`, `k=v`, `k==v`, `k!=v`, `k>v`, `k<v`,
/// `k in (a,b)`, `k notin (a,b)`, several values sorted.
impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operator == Operator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        let (op, parens) = match self.operator {
            Operator::Equals => ("=", false),
            Operator::DoubleEquals => ("==", false),
            Operator::NotEquals => ("!=", false),
            Operator::In => (" in ", true),
            Operator::NotIn => (" notin ", true),
            Operator::GreaterThan => (">", false),
            Operator::LessThan => ("<", false),
            Operator::Exists | Operator::DoesNotExist => return Ok(()),
        };
        f.write_str(op)?;
        if parens {
            f.write_str("(")?;
        }
        let mut values: Vec<&str> = self.values.iter().map(String::as_str).collect();
        values.sort_unstable();
        f.write_str(&values.join(","))?;
        if parens {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// Upstream `labels.Selector`: the conjunction of requirements sorted by key, or
/// upstream's `Nothing()` selector, which matches nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    requirements: Vec<Requirement>,
    nothing: bool,
}

impl Selector {
    /// Upstream `Everything()`: matches all label sets.
    pub fn everything() -> Selector {
        Selector::default()
    }

    /// Upstream `Nothing()`: matches no label set, is not empty and prints as `""`.
    pub fn nothing() -> Selector {
        Selector {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// Upstream `labels.Parse`.
    pub fn parse(selector: &str) -> Result<Selector> {
        parse(selector)
    }

    /// Upstream `MatchesNothing`.
    pub fn matches_nothing(&self) -> bool {
        self.nothing
    }

    /// Upstream `Empty()`: true if the selector does not restrict anything.
    pub fn is_empty(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// Upstream `Requirements()`: `None` for `Nothing()` (upstream's `selectable == false`).
    pub fn requirements(&self) -> Option<&[Requirement]> {
        (!self.nothing).then_some(self.requirements.as_slice())
    }

    /// Upstream `Matches(labels)`.
    pub fn matches(&self, labels: &(impl Labels + ?Sized)) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Matches the labels of a JSON object (`metadata.labels`; missing means none).
    pub fn matches_json(&self, object: &Value) -> bool {
        match object
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object)
        {
            Some(labels) => self.matches(labels),
            None => self.matches(&serde_json::Map::new()),
        }
    }

    /// Upstream `Add(reqs...)`: a copy with more requirements, re-sorted by key.
    pub fn add(&self, requirements: impl IntoIterator<Item = Requirement>) -> Selector {
        if self.nothing {
            return self.clone();
        }
        let mut all = self.requirements.clone();
        all.extend(requirements);
        sort_by_key(&mut all);
        Selector {
            requirements: all,
            nothing: false,
        }
    }

    /// Upstream `RequiresExactMatch(label)`: the value the first requirement on `label`
    /// pins it to (`=`, `==`, or `in` with one value).
    pub fn requires_exact_match(&self, label: &str) -> Option<&str> {
        let r = self.requirements.iter().find(|r| r.key == label)?;
        match (r.operator, r.values.as_slice()) {
            (Operator::Equals | Operator::DoubleEquals | Operator::In, [v]) => Some(v),
            _ => None,
        }
    }
}

/// Upstream `Selector.String()`: requirements joined by `,`; `""` for everything and
/// nothing alike.
impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Selector {
    type Err = Error;

    fn from_str(s: &str) -> Result<Selector> {
        parse(s)
    }
}

/// Upstream sorts with `sort.Sort(ByKey)`, which is not stable; a stable sort gives the
/// same order for all but requirements on one key in selectors of more than 12 terms.
fn sort_by_key(requirements: &mut [Requirement]) {
    requirements.sort_by(|a, b| a.key.cmp(&b.key));
}

/// Upstream `labels.Parse`.
pub fn parse(selector: &str) -> Result<Selector> {
    let mut requirements = parser::parse(selector, &Path::nil())?;
    sort_by_key(&mut requirements);
    Ok(Selector {
        requirements,
        nothing: false,
    })
}

/// Upstream `FormatLabels`: `k=v` pairs sorted by key and joined by commas, `<none>` for
/// none (printers' label cells).
pub fn format_labels(set: &BTreeMap<String, String>) -> String {
    if set.is_empty() {
        return "<none>".to_owned();
    }
    let pairs: Vec<String> = set.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join(",")
}

/// Upstream `SelectorFromSet` / `SelectorFromValidatedSet`: `key=value` for each entry,
/// without validation.
pub fn selector_from_set(set: &BTreeMap<String, String>) -> Selector {
    let requirements = set
        .iter()
        .map(|(k, v)| Requirement {
            key: k.clone(),
            operator: Operator::Equals,
            values: vec![v.clone()],
        })
        .collect();
    Selector {
        requirements,
        nothing: false,
    }
}

/// Upstream `ValidatedSelectorFromSet`.
pub fn validated_selector_from_set(set: &BTreeMap<String, String>) -> Result<Selector> {
    let requirements = set
        .iter()
        .map(|(k, v)| Requirement::new(k, Operator::Equals, vec![v.clone()]))
        .collect::<Result<Vec<_>>>()?;
    Ok(Selector {
        requirements,
        nothing: false,
    })
}

/// Upstream's `validateLabelKey`: one `Invalid` error with the messages joined by `; `.
fn validate_label_key(key: &str, path: &Path) -> Option<field::Error> {
    let msgs = is_qualified_name(key);
    (!msgs.is_empty()).then(|| field::invalid(path, key, &msgs.join("; ")))
}

/// Upstream metav1 `LabelSelectorAsSelector`, over the JSON of a `metav1.LabelSelector`.
/// JSON `null` is upstream's nil selector and selects nothing; `{}` selects everything.
///
/// Upstream walks `matchLabels` as a Go map (random order); this walks it sorted, so when
/// several labels are invalid the error names the first in key order.
pub fn from_label_selector(selector: &Value) -> Result<Selector> {
    let obj = match selector {
        Value::Null => return Ok(Selector::nothing()),
        Value::Object(obj) => obj,
        other => return Err(malformed("LabelSelector", other)),
    };
    let match_labels = match obj.get("matchLabels") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m),
        Some(other) => return Err(malformed("LabelSelector.matchLabels", other)),
    };
    let expressions = match obj.get("matchExpressions") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => a.as_slice(),
        Some(other) => return Err(malformed("LabelSelector.matchExpressions", other)),
    };
    let mut requirements = Vec::new();
    let mut labels: Vec<(&String, &Value)> = match_labels.into_iter().flatten().collect();
    labels.sort_by(|a, b| a.0.cmp(b.0));
    for (k, v) in labels {
        let v = optional_string(v, "LabelSelector.matchLabels")?;
        requirements.push(Requirement::new(k, Operator::Equals, vec![v])?);
    }
    for expr in expressions {
        requirements.push(expression_requirement(expr)?);
    }
    if requirements.is_empty() {
        return Ok(Selector::everything());
    }
    Ok(Selector::everything().add(requirements))
}

fn expression_requirement(expr: &Value) -> Result<Requirement> {
    let ctx = "LabelSelectorRequirement";
    let Some(expr) = expr.as_object() else {
        return Err(malformed(ctx, expr));
    };
    let key = optional_string(expr.get("key").unwrap_or(&Value::Null), ctx)?;
    let op = optional_string(expr.get("operator").unwrap_or(&Value::Null), ctx)?;
    let values = match expr.get("values") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| optional_string(v, ctx))
            .collect::<Result<_>>()?,
        Some(other) => return Err(malformed(ctx, other)),
    };
    let operator = match op.as_str() {
        "In" => Operator::In,
        "NotIn" => Operator::NotIn,
        "Exists" => Operator::Exists,
        "DoesNotExist" => Operator::DoesNotExist,
        _ => return Err(Error::InvalidOperator(op)),
    };
    Requirement::validated(&key, operator, values, true, &Path::nil())
}

/// A JSON string, or `""` for null (Go leaves the zero value).
fn optional_string(v: &Value, ctx: &str) -> Result<String> {
    match v {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        other => Err(malformed(ctx, other)),
    }
}

fn malformed(ctx: &str, v: &Value) -> Error {
    Error::Malformed(format!(
        "json: cannot unmarshal {} into Go value of type {ctx}",
        describe(v)
    ))
}

#[cfg(test)]
mod tests;
