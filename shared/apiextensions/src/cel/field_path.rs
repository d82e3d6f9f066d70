//! Upstream `ValidFieldPath` (`pkg/apiserver/schema/cel/validation.go`): a rule's
//! `fieldPath` (`.spec.x`, `['a.b']`) checked against the schema and turned into a field
//! path string.

use kas_apimachinery::validation::field::Path;

use super::node::Node;

/// The field path `json_path` names under `schema`, rendered as upstream's `field.Path`
/// renders, or upstream's error text.
pub(crate) fn valid_field_path(
    json_path: &str,
    schema: Node<'_>,
    allow_array_notation: bool,
) -> Result<String, String> {
    let tokens = tokenize(json_path);
    let mut path = Path::nil();
    let mut schema = Some(schema);
    let mut it = tokens.into_iter();
    while let Some(tok) = it.next() {
        let name = match tok {
            "[" => {
                if !allow_array_notation {
                    return Err("array notation is not allowed".to_owned());
                }
                let tok = it.next().ok_or("unexpected end of JSON path")?;
                if tok.len() < 2 || !tok.starts_with('\'') || !tok.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {tok}"));
                }
                let name = super::escaping::unescape_single_quote(&tok[1..tok.len() - 1])
                    .map_err(|e| format!("invalid string literal: {e}"))?;
                let close = it.next().ok_or("unexpected end of JSON path")?;
                (name, Some(close))
            }
            "." => (
                it.next().ok_or("unexpected end of JSON path")?.to_owned(),
                None,
            ),
            other => return Err(format!("expected [ or . but got: {other}")),
        };
        let s = schema.ok_or("does not refer to a valid field")?;
        (path, schema) = if let Some(props) = s.properties() {
            let prop = props
                .get(&name.0)
                .ok_or("does not refer to a valid field")?;
            (path.child(&name.0), Some(Node(prop)))
        } else if s.0.get("additionalProperties").is_some() {
            (path.key(&name.0), s.additional_properties())
        } else {
            return Err("does not refer to a valid field".to_owned());
        };
        if let Some(close) = name.1
            && close != "]"
        {
            return Err(format!("expected ] but got {close}"));
        }
    }
    Ok(path.to_string())
}

/// Upstream's scanner: `.`, `[` and `]` alone, a single-quoted string whole, and the text
/// between delimiters.
fn tokenize(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let end = if b[i] == b'\'' {
            (i + 1..b.len())
                .find(|&j| b[j] == b'\'' && b[j - 1] != b'\\')
                .map_or(b.len(), |j| j + 1)
        } else if matches!(b[i], b'.' | b'[' | b']') {
            i + 1
        } else {
            (i..b.len())
                .find(|&j| matches!(b[j], b'.' | b'[' | b']'))
                .unwrap_or(b.len())
        };
        out.push(&s[i..end]);
        i = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Cases of upstream's `TestValidateFieldPath`.
    #[test]
    fn field_paths_as_upstream() {
        let num = json!({ "type": "number" });
        let schema = json!({ "type": "object", "properties": {
            "foo": { "type": "object", "additionalProperties": {
                "type": "object", "properties": { "subAdd": num } } },
            "white space": num,
            "'foo'bar": num,
            "a": { "type": "object", "properties": {
                "foo's": num, "test\u{7}": num, "bb[b": num,
                "bbb": { "type": "object", "properties": { "c": num, "34": num } },
                "bbb.c": { "type": "object", "properties": { "a-b.3'4": num } },
            } },
            "list": { "type": "array", "items": { "type": "object", "properties": { "a": num } } },
        } });
        let cases: &[(&str, Result<&str, &str>)] = &[
            (".a", Ok("a")),
            ("['\\'foo\\'bar']", Ok("'foo'bar")),
            (".\\'foo\\'bar", Err("does not refer to a valid field")),
            (". a", Err("does not refer to a valid field")),
            (".white space", Ok("white space")),
            ("['white space']", Ok("white space")),
            (".a.bb[b", Err("does not refer to a valid field")),
            (".a['bbb.c']", Ok("a.bbb.c")),
            (".a['bbb.c'", Err("unexpected end of JSON path")),
            (".", Err("unexpected end of JSON path")),
            (".foo.subAdd", Ok("foo[subAdd]")),
            (".foo['subAdd']", Ok("foo[subAdd]")),
            (".a['foo\\'s']", Ok("a.foo's")),
            (".a['test\\a']", Ok("a.test\u{7}")),
            (".a.foo", Err("does not refer to a valid field")),
            (".a.bbb[0]", Err("expected single quoted string but got 0")),
            (".a.bbb.34", Ok("a.bbb.34")),
            (".a.bbb['34']", Ok("a.bbb.34")),
            (".list", Ok("list")),
            (".list[0]", Err("expected single quoted string but got 0")),
            (".list. a", Err("does not refer to a valid field")),
            (".list['a']", Err("does not refer to a valid field")),
            ("a", Err("expected [ or . but got: a")),
            (".c", Err("does not refer to a valid field")),
        ];
        for (path, want) in cases {
            let got = valid_field_path(path, Node(&schema), true);
            assert_eq!(
                got.as_deref(),
                want.map_err(str::to_owned).as_deref(),
                "{path}"
            );
        }
        assert_eq!(
            valid_field_path("['a']", Node(&schema), false),
            Err("array notation is not allowed".to_owned())
        );
    }
}
