//! k8s-openapi's sources (feature `v1_33`): one file per OpenAPI definition of upstream's
//! 1.33 `swagger.json`, each holding, behind its `schemars` feature, the definition's JSON
//! schema as a `json_schema!({...})` literal. This module reads those literals with syn into
//! JSON: property names as upstream's JSON writes them, descriptions as upstream's OpenAPI
//! has them, and the `required` list.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use serde_json::{Map, Value};
use syn::{Expr, ImplItem, Item, Lit, Stmt};

/// One definition.
#[derive(Debug, Clone)]
pub struct Definition {
    /// `io.k8s.api.core.v1.ConfigMap`.
    pub name: String,
    pub description: String,
    /// Property name → its schema (`description`, `type`, `$ref`, ...).
    pub properties: Map<String, Value>,
    pub required: Vec<String>,
}

/// Every definition in `dir`, by definition name.
pub fn read_dir(dir: &Path, out: &mut BTreeMap<String, Definition>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path)?;
            if let Some(def) = read_file(&text).with_context(|| format!("{}", path.display()))? {
                out.insert(def.name.clone(), def);
            }
        }
    }
    Ok(())
}

fn read_file(text: &str) -> Result<Option<Definition>> {
    let Some(name) = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// Generated from definition "))
    else {
        return Ok(None);
    };
    let file = syn::parse_file(text)?;
    let Some(schema) = file.items.iter().find_map(json_schema_of) else {
        return Ok(None);
    };
    let schema = to_json(schema)?;
    let description = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(Definition {
        name: name.trim().to_owned(),
        description,
        properties,
        required,
    }))
}

/// The tokens inside `json_schema!(...)` of an `impl JsonSchema`'s `json_schema` function.
fn json_schema_of(item: &Item) -> Option<TokenStream> {
    let Item::Impl(imp) = item else { return None };
    let (_, path, _) = imp.trait_.as_ref()?;
    if path.segments.last()?.ident != "JsonSchema" {
        return None;
    }
    imp.items.iter().find_map(|i| {
        let ImplItem::Fn(f) = i else { return None };
        if f.sig.ident != "json_schema" {
            return None;
        }
        f.block.stmts.iter().find_map(|s| {
            let mac = match s {
                Stmt::Macro(m) => &m.mac,
                Stmt::Expr(Expr::Macro(m), _) => &m.mac,
                _ => return None,
            };
            (mac.path.segments.last()?.ident == "json_schema").then(|| mac.tokens.clone())
        })
    })
}

/// A `json_schema!` literal as JSON. Rust blocks in it (`__gen.subschema_for::<T>()`, with
/// a description inserted) become `{"$ref": "<T's path>", "description": ...}`.
fn to_json(tokens: TokenStream) -> Result<Value> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    match trees.as_slice() {
        [one] => value(one),
        _ => bail!("expected one value, found {}", trees.len()),
    }
}

fn value(tree: &TokenTree) -> Result<Value> {
    match tree {
        TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => object(g.stream()),
        TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket => {
            let mut items = Vec::new();
            for part in split_commas(g.stream()) {
                if let [one] = part.as_slice() {
                    items.push(value(one)?);
                } else if !part.is_empty() {
                    bail!("unexpected array item");
                }
            }
            Ok(Value::Array(items))
        }
        TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => rust_block(g.stream()),
        TokenTree::Literal(l) => {
            let lit: Lit = syn::parse_str(&l.to_string())?;
            Ok(match lit {
                Lit::Str(s) => Value::String(s.value()),
                Lit::Int(i) => Value::from(i.base10_parse::<i64>()?),
                Lit::Float(f) => Value::from(f.base10_parse::<f64>()?),
                _ => bail!("unexpected literal {l}"),
            })
        }
        TokenTree::Ident(i) if i == "true" => Ok(Value::Bool(true)),
        TokenTree::Ident(i) if i == "false" => Ok(Value::Bool(false)),
        other => bail!("unexpected token {other}"),
    }
}

fn object(stream: TokenStream) -> Result<Value> {
    let mut map = Map::new();
    for part in split_commas(stream) {
        match part.as_slice() {
            [] => {}
            [TokenTree::Literal(k), TokenTree::Punct(p), v] if p.as_char() == ':' => {
                let key: syn::LitStr = syn::parse_str(&k.to_string())?;
                map.insert(key.value(), value(v)?);
            }
            // `"metadata": __gen.subschema_for::<T>()`, unparenthesized.
            [TokenTree::Literal(k), TokenTree::Punct(p), rest @ ..] if p.as_char() == ':' => {
                let key: syn::LitStr = syn::parse_str(&k.to_string())?;
                map.insert(key.value(), rust_block(rest.iter().cloned().collect())?);
            }
            _ => bail!("unexpected object entry"),
        }
    }
    Ok(Value::Object(map))
}

/// `( __gen.subschema_for::<T>() )` or `({ let mut schema_obj = __gen.subschema_for::<T>();
/// schema_obj.ensure_object().insert("description".into(), "...".into()); schema_obj })`.
fn rust_block(stream: TokenStream) -> Result<Value> {
    let text = stream.to_string().replace(' ', "");
    let start = text.find("subschema_for::<").context("no subschema_for")? + 16;
    let end = start + text[start..].find('>').context("unterminated type")?;
    let path = text[start..end].to_owned();
    let mut out = Map::new();
    out.insert("$ref".into(), Value::String(path));
    let expr: Expr = syn::parse2(stream)?;
    if let Some(d) = inserted_description(&expr) {
        out.insert("description".into(), Value::String(d));
    }
    Ok(Value::Object(out))
}

fn inserted_description(expr: &Expr) -> Option<String> {
    let Expr::Block(b) = expr else { return None };
    b.block.stmts.iter().find_map(|s| {
        let Stmt::Expr(Expr::MethodCall(call), _) = s else {
            return None;
        };
        if call.method != "insert" {
            return None;
        }
        let Expr::MethodCall(into) = call.args.iter().nth(1)? else {
            return None;
        };
        match into.receiver.as_ref() {
            Expr::Lit(l) => match &l.lit {
                Lit::Str(s) => Some(s.value()),
                _ => None,
            },
            _ => None,
        }
    })
}

fn split_commas(stream: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut parts = vec![Vec::new()];
    for t in stream {
        match &t {
            TokenTree::Punct(p) if p.as_char() == ',' => parts.push(Vec::new()),
            _ => parts.last_mut().expect("one part").push(t),
        }
    }
    parts
}
