//! The JSONPath subset of a CRD's printer columns, selectable fields and scale paths, as
//! client-go's `jsonpath` evaluates them for upstream's table convertor: field names
//! (`.spec.replicas`, `['a.b']`), indexes (`[0]`, `[-1]`), `[*]` and `..`-free filters on
//! one field (`[?(@.type=="Ready")]`, `!=`, or a bare `@.x` for presence).

use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    All,
    Filter {
        path: Vec<String>,
        op: Option<(bool, Value)>,
    },
}

/// A parsed path.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

impl JsonPath {
    /// Parses `.a.b[0]` (with or without the `{}` client-go takes); `None` when it is not
    /// in the subset.
    pub fn parse(path: &str) -> Option<JsonPath> {
        let path = path.trim();
        let path = path
            .strip_prefix('{')
            .and_then(|p| p.strip_suffix('}'))
            .unwrap_or(path);
        let mut steps = Vec::new();
        let chars: Vec<char> = path.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '.' => {
                    let start = i + 1;
                    let mut end = start;
                    while end < chars.len() && chars[end] != '.' && chars[end] != '[' {
                        end += 1;
                    }
                    let name: String = chars[start..end].iter().collect();
                    if name.is_empty() {
                        if end == chars.len() && steps.is_empty() {
                            // `.` alone: the object itself.
                            i = end;
                            continue;
                        }
                        return None;
                    }
                    steps.push(Step::Field(name));
                    i = end;
                }
                '[' => {
                    let close = find_close(&chars, i)?;
                    let inner: String = chars[i + 1..close].iter().collect();
                    steps.push(bracket(inner.trim())?);
                    i = close + 1;
                }
                _ if i == 0 => {
                    // A path without the leading dot, as selectable fields may be written.
                    let mut end = 0;
                    while end < chars.len() && chars[end] != '.' && chars[end] != '[' {
                        end += 1;
                    }
                    steps.push(Step::Field(chars[..end].iter().collect()));
                    i = end;
                }
                _ => return None,
            }
        }
        Some(JsonPath { steps })
    }

    /// Every value the path reaches, in document order.
    pub fn find<'v>(&self, obj: &'v Value) -> Vec<&'v Value> {
        let mut current = vec![obj];
        for step in &self.steps {
            let mut next = Vec::new();
            for v in current {
                match step {
                    Step::Field(name) => next.extend(v.get(name.as_str())),
                    Step::Index(i) => {
                        if let Some(items) = v.as_array() {
                            let len = items.len() as i64;
                            let at = if *i < 0 { len + i } else { *i };
                            if (0..len).contains(&at) {
                                next.push(&items[at as usize]);
                            }
                        }
                    }
                    Step::All => match v {
                        Value::Array(items) => next.extend(items.iter()),
                        Value::Object(map) => next.extend(map.values()),
                        _ => {}
                    },
                    Step::Filter { path, op } => {
                        for item in v.as_array().into_iter().flatten() {
                            let mut at = Some(item);
                            for p in path {
                                at = at.and_then(|x| x.get(p.as_str()));
                            }
                            let keep = match (at, op) {
                                (None, _) => false,
                                (Some(_), None) => true,
                                (Some(found), Some((equal, want))) => {
                                    (loosely_equal(found, want)) == *equal
                                }
                            };
                            if keep {
                                next.push(item);
                            }
                        }
                    }
                }
            }
            current = next;
        }
        current
    }

    /// The first value the path reaches.
    pub fn first<'v>(&self, obj: &'v Value) -> Option<&'v Value> {
        self.find(obj).into_iter().next()
    }
}

fn loosely_equal(found: &Value, want: &Value) -> bool {
    match (found, want) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => found == want,
    }
}

fn find_close(chars: &[char], open: usize) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut depth = 0;
    for (i, c) in chars.iter().enumerate().skip(open) {
        match (quote, c) {
            (Some(q), c) if *c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(*c),
            (None, '[') => depth += 1,
            (None, ']') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn unquote(s: &str) -> Option<String> {
    let s = s.trim();
    let quoted =
        (s.starts_with('\'') && s.ends_with('\'')) || (s.starts_with('"') && s.ends_with('"'));
    (quoted && s.len() >= 2).then(|| s[1..s.len() - 1].to_owned())
}

fn bracket(inner: &str) -> Option<Step> {
    if inner == "*" {
        return Some(Step::All);
    }
    if let Some(name) = unquote(inner) {
        return Some(Step::Field(name));
    }
    if let Ok(i) = inner.parse::<i64>() {
        return Some(Step::Index(i));
    }
    let filter = inner.strip_prefix("?(")?.strip_suffix(')')?.trim();
    let (lhs, op) = match filter.find("==").or_else(|| filter.find("!=")) {
        Some(at) => {
            let equal = &filter[at..at + 2] == "==";
            let rhs = filter[at + 2..].trim();
            let value = match unquote(rhs) {
                Some(s) => Value::String(s),
                None => serde_json::from_str(rhs).ok()?,
            };
            (filter[..at].trim(), Some((equal, value)))
        }
        None => (filter, None),
    };
    let rest = lhs.strip_prefix('@')?;
    let path: Vec<String> = rest.split('.').skip(1).map(str::to_owned).collect();
    if path.iter().any(String::is_empty) {
        return None;
    }
    Some(Step::Filter { path, op })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_indexes_and_filters() {
        let obj = json!({"spec": {"replicas": 3, "a.b": "dotted"},
            "status": {"conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "Synced", "status": "False"}]}});
        let first = |p: &str| JsonPath::parse(p).unwrap().first(&obj).cloned();
        assert_eq!(first(".spec.replicas"), Some(json!(3)));
        assert_eq!(first("{.spec.replicas}"), Some(json!(3)));
        assert_eq!(first(".spec['a.b']"), Some(json!("dotted")));
        assert_eq!(first(".status.conditions[1].type"), Some(json!("Synced")));
        assert_eq!(first(".status.conditions[-1].type"), Some(json!("Synced")));
        assert_eq!(
            first(".status.conditions[?(@.type==\"Ready\")].status"),
            Some(json!("True"))
        );
        assert_eq!(
            first(".status.conditions[?(@.type!='Ready')].status"),
            Some(json!("False"))
        );
        assert_eq!(first(".status.conditions[*].type"), Some(json!("Ready")));
        assert_eq!(first(".spec.missing"), None);
        assert_eq!(first("spec.replicas"), Some(json!(3)));
        assert!(JsonPath::parse(".spec..x").is_none());
        assert!(JsonPath::parse(".spec[").is_none());
    }
}
