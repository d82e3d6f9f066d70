//! Upstream's `cel.ValidFieldPath` over a schema's JSON: a JSON path of field (`.name`) and
//! map (`['key']`) accessors that the schema defines, used by `selectableFields` and
//! `x-kubernetes-validations[].fieldPath`.

use kas_apimachinery::validation::field::Path;
use serde_json::Value;

/// Splits as upstream's scanner does: `.`, `[` and `]` alone, a single-quoted string whole,
/// anything else up to the next delimiter.
fn tokens(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    while start < b.len() {
        let rest = &b[start..];
        let len = if rest[0] == b'\'' {
            (1..rest.len())
                .find(|&i| rest[i] == b'\'' && rest[i - 1] != b'\\')
                .map_or(rest.len(), |i| i + 1)
        } else if matches!(rest[0], b'.' | b'[' | b']') {
            1
        } else {
            (0..rest.len())
                .find(|&i| matches!(rest[i], b'.' | b'[' | b']'))
                .unwrap_or(rest.len())
        };
        out.push(s.get(start..start + len).unwrap_or(""));
        start += len;
    }
    out
}

fn properties(s: &Value) -> Option<&serde_json::Map<String, Value>> {
    s.get("properties")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
}

fn has_additional(s: &Value) -> bool {
    s.get("additionalProperties").is_some_and(|a| !a.is_null())
}

/// One step: into a named property when the schema has properties, else into
/// additionalProperties.
fn step<'a>(schema: &'a Value, name: &str, path: Path) -> Result<(&'a Value, Path), String> {
    const INVALID: &str = "does not refer to a valid field";
    if let Some(props) = properties(schema) {
        let next = props.get(name).ok_or(INVALID)?;
        return Ok((next, path.child(name)));
    }
    if has_additional(schema) {
        // `additionalProperties: true` has no schema; upstream would dereference nil.
        let next = schema
            .get("additionalProperties")
            .filter(|a| a.is_object())
            .ok_or(INVALID)?;
        return Ok((next, path.key(name)));
    }
    Err(INVALID.to_owned())
}

/// Upstream `ValidFieldPath`: the field path and the schema it reaches, or the error text.
pub fn valid_field_path<'a>(
    json_path: &str,
    schema: &'a Value,
    allow_array_notation: bool,
) -> Result<(Path, &'a Value), String> {
    const END: &str = "unexpected end of JSON path";
    let toks = tokens(json_path);
    let mut it = toks.into_iter();
    let mut schema = schema;
    let mut path = Path::nil();
    while let Some(tok) = it.next() {
        match tok {
            "[" => {
                if !allow_array_notation {
                    return Err("array notation is not allowed".to_owned());
                }
                let tok = it.next().ok_or(END)?;
                if tok.len() < 2 || !tok.starts_with('\'') || !tok.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {tok}"));
                }
                let name = crate::cel::escaping::unescape_single_quote(&tok[1..tok.len() - 1])
                    .map_err(|e| format!("invalid string literal: {e}"))?;
                (schema, path) = step(schema, &name, path)?;
                let tok = it.next().ok_or(END)?;
                if tok != "]" {
                    return Err(format!("expected ] but got {tok}"));
                }
            }
            "." => {
                let tok = it.next().ok_or(END)?;
                (schema, path) = step(schema, tok, path)?;
            }
            _ => return Err(format!("expected [ or . but got: {tok}")),
        }
    }
    Ok((path, schema))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths() {
        let s = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"a.b": {"type": "string"}, "n": {"type": "integer"}}},
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
        }});
        let (p, found) = valid_field_path(".spec.n", &s, false).unwrap();
        assert_eq!(p.to_string(), "spec.n");
        assert_eq!(found["type"], "integer");
        let (p, _) = valid_field_path(".spec['a.b']", &s, true).unwrap();
        assert_eq!(p.to_string(), "spec.a.b");
        let (p, _) = valid_field_path(".m.x", &s, false).unwrap();
        assert_eq!(p.to_string(), "m[x]");
        assert_eq!(
            valid_field_path(".spec['a.b']", &s, false).unwrap_err(),
            "array notation is not allowed"
        );
        assert_eq!(
            valid_field_path(".spec.x", &s, false).unwrap_err(),
            "does not refer to a valid field"
        );
        assert_eq!(
            valid_field_path("spec", &s, false).unwrap_err(),
            "expected [ or . but got: spec"
        );
        assert_eq!(
            valid_field_path(".spec.", &s, false).unwrap_err(),
            "unexpected end of JSON path"
        );
        assert_eq!(
            valid_field_path(".spec[a]", &s, true).unwrap_err(),
            "expected single quoted string but got a"
        );
    }

    /// Upstream's `TestValidateFieldPath` cases.
    #[test]
    fn upstream_cases() {
        let s = json!({"type": "object", "properties": {
            "foo": {"type": "object", "additionalProperties": {"type": "object",
                "properties": {"f1": {"type": "number"}}}},
            "a": {"type": "object", "properties": {
                "bbb": {"type": "object", "properties": {"c": {"type": "number"}, "34": {"type": "number"}}},
                "bbb.c": {"type": "object", "properties": {"a-b34": {"type": "number"}}},
            }},
            "list": {"type": "array", "items": {"type": "object", "properties": {
                "a": {"type": "number"}, "a-b.34": {"type": "number"}}}},
        }});
        let ok = [
            ".a",
            ".a.bbb",
            ".foo.f1",
            ".a['bbb']",
            ".a['bbb.c']",
            ".a['bbb.c'].a-b34",
            ".a['bbb.c']['a-b34']",
            ".a.bbb.c",
            ".a.bbb['34']",
            ".a.bbb.34",
            ".list",
        ];
        for p in ok {
            assert!(valid_field_path(p, &s, true).is_ok(), "{p}");
        }
        let invalid = "does not refer to a valid field";
        let bad = [
            (".a.foo", invalid),
            (".a.bbb[0]", "expected single quoted string but got 0"),
            (".list[1]", "expected single quoted string but got 1"),
            (".list.a", invalid),
            (".list['a-b.34']", invalid),
            (".list.a-b.34", invalid),
            ("a", "expected [ or . but got: a"),
            (".c", invalid),
            (".a..b", invalid),
            (".list[-1]", "expected single quoted string but got -1"),
            (".list[1.0]", "expected single quoted string but got 1"),
        ];
        for (p, msg) in bad {
            assert_eq!(valid_field_path(p, &s, true).unwrap_err(), msg, "{p}");
        }
    }
}
