//! k8s-pb's sources: prost's bindings of upstream's `generated.proto` files. Each message is a
//! struct whose fields carry `#[prost(<type>, <label>, tag = "N")]` and whose doc comments
//! keep the Go markers (`+optional`, `+listType=map`, `+patchStrategy=merge`, ...); each
//! top-level kind has an `impl crate::Resource` naming its group, version, kind, plural
//! and scope. This module reads them with syn; nothing here is typed by hand.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use syn::{Expr, Fields, Item, Lit, Meta, Type};

/// One proto message.
#[derive(Debug)]
pub struct PbMessage {
    /// The prost struct name (`AwsElasticBlockStoreVolumeSource`).
    pub name: String,
    /// Doc comment lines, markers included.
    pub doc: Vec<String>,
    pub fields: Vec<PbField>,
}

/// One proto field.
#[derive(Debug)]
pub struct PbField {
    /// The prost field name, snake case, without `r#`.
    pub ident: String,
    pub doc: Vec<String>,
    pub tag: u32,
    pub ty: PbType,
    pub repeated: bool,
}

/// A field's proto type.
#[derive(Debug, Clone)]
pub enum PbType {
    Scalar(String),
    /// A message, as a path from the crate root (`["api","core","v1","Container"]`).
    Message(Vec<String>),
    /// `map<string, V>`.
    Map(Box<PbType>),
}

/// What `impl crate::Resource for X` says.
#[derive(Debug, Clone)]
pub struct PbResource {
    pub group: String,
    pub plural: String,
    /// `Namespace`, `Cluster` or `SubResource`.
    pub scope: String,
}

/// The messages and resources of one proto package (one `mod.rs`).
#[derive(Debug, Default)]
pub struct PbModule {
    pub messages: Vec<PbMessage>,
    pub resources: BTreeMap<String, PbResource>,
}

/// Reads the module at `module` (a path from the crate root, e.g. `["api","core","v1"]`).
pub fn read_module(src: &Path, module: &[&str]) -> Result<PbModule> {
    let mut path = src.to_path_buf();
    module.iter().for_each(|m| path.push(m));
    path.push("mod.rs");
    let text = std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
    let file = syn::parse_file(&text).with_context(|| format!("{}", path.display()))?;
    let here: Vec<String> = module.iter().map(|s| s.to_string()).collect();
    let mut out = PbModule::default();
    for item in file.items {
        match item {
            Item::Struct(s) => {
                if !s.attrs.iter().any(derives_prost_message) {
                    continue;
                }
                let Fields::Named(named) = &s.fields else {
                    continue;
                };
                let mut fields = Vec::new();
                for f in &named.named {
                    let Some(ident) = &f.ident else { continue };
                    let Some(attr) = f.attrs.iter().find(|a| a.path().is_ident("prost")) else {
                        continue;
                    };
                    fields.push(read_field(&here, ident, attr, &f.attrs, &f.ty)?);
                }
                out.messages.push(PbMessage {
                    name: s.ident.to_string(),
                    doc: doc_lines(&s.attrs),
                    fields,
                });
            }
            Item::Impl(imp) => {
                if let Some(r) = read_resource(&imp) {
                    out.resources.insert(r.0, r.1);
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

fn derives_prost_message(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("derive") && attr_text(attr).contains("prost :: Message")
}

fn attr_text(attr: &syn::Attribute) -> String {
    match &attr.meta {
        Meta::List(l) => l.tokens.to_string(),
        _ => String::new(),
    }
}

/// The lines of `///` comments, each without its leading space.
pub fn doc_lines(attrs: &[syn::Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(l) => match &l.lit {
                    Lit::Str(s) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .map(|l| l.strip_prefix(' ').unwrap_or(&l).to_owned())
        .collect()
}

fn read_field(
    here: &[String],
    ident: &syn::Ident,
    attr: &syn::Attribute,
    attrs: &[syn::Attribute],
    ty: &Type,
) -> Result<PbField> {
    // `string, optional, tag = "1"`, `message, repeated, tag = "2"`,
    // `btree_map = "string, message", tag = "3"`
    let text = attr_text(attr);
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let tag = parts
        .iter()
        .find_map(|p| p.strip_prefix("tag = "))
        .map(|t| t.trim_matches('"').parse::<u32>())
        .transpose()?
        .with_context(|| format!("no tag in {text}"))?;
    let ident = ident.to_string();
    let ident = ident.strip_prefix("r#").unwrap_or(&ident).to_owned();
    let first = parts[0];
    let (ty, repeated) = if let Some(map) = first.strip_prefix("btree_map = ") {
        // `"string, message"` is split at its comma: the value type is the next part.
        let _ = map;
        let value_kind = parts
            .get(1)
            .map(|p| p.trim_matches('"').trim())
            .unwrap_or_default();
        let value_ty = match value_kind {
            "message" => PbType::Message(map_value_path(here, ty)?),
            other => PbType::Scalar(other.to_owned()),
        };
        (PbType::Map(Box::new(value_ty)), false)
    } else {
        let repeated = parts.contains(&"repeated");
        let t = match first {
            "message" => PbType::Message(message_path(here, ty)?),
            b if b.starts_with("bytes") => PbType::Scalar("bytes".into()),
            scalar => PbType::Scalar(scalar.to_owned()),
        };
        (t, repeated)
    };
    Ok(PbField {
        ident,
        doc: doc_lines(attrs),
        tag,
        ty,
        repeated,
    })
}

/// The message a field's Rust type names, through `Option<..>`, `Vec<..>` and `Box<..>`.
fn message_path(here: &[String], ty: &Type) -> Result<Vec<String>> {
    let Type::Path(p) = ty else {
        bail!("unexpected type")
    };
    let last = p.path.segments.last().context("empty path")?;
    let name = last.ident.to_string();
    if matches!(name.as_str(), "Option" | "Vec" | "Box")
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(syn::GenericArgument::Type(inner)) = args.args.first()
    {
        return message_path(here, inner);
    }
    resolve(here, &p.path)
}

/// The message of a `BTreeMap<String, V>`'s values.
fn map_value_path(here: &[String], ty: &Type) -> Result<Vec<String>> {
    let Type::Path(p) = ty else {
        bail!("unexpected map type")
    };
    let last = p.path.segments.last().context("empty path")?;
    if let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(syn::GenericArgument::Type(value)) = args.args.iter().nth(1)
    {
        return message_path(here, value);
    }
    bail!("map without a value type")
}

/// A path relative to module `here` (`super::super::X::Y`, or a bare `Y`) from the crate root.
fn resolve(here: &[String], path: &syn::Path) -> Result<Vec<String>> {
    let mut out: Vec<String> = here.to_vec();
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let mut rest = segments.as_slice();
    if rest.first().is_some_and(|s| s == "crate") {
        out.clear();
        rest = &rest[1..];
    }
    while let Some((first, tail)) = rest.split_first() {
        if first != "super" {
            break;
        }
        out.pop().context("super past the crate root")?;
        rest = tail;
    }
    out.extend(rest.iter().cloned());
    Ok(out)
}

fn read_resource(imp: &syn::ItemImpl) -> Option<(String, PbResource)> {
    let (_, trait_path, _) = imp.trait_.as_ref()?;
    if trait_path.segments.last()?.ident != "Resource" {
        return None;
    }
    let Type::Path(self_ty) = imp.self_ty.as_ref() else {
        return None;
    };
    let name = self_ty.path.segments.last()?.ident.to_string();
    let mut consts = BTreeMap::new();
    let mut scope = String::new();
    for item in &imp.items {
        match item {
            syn::ImplItem::Const(c) => {
                if let Expr::Lit(l) = &c.expr
                    && let Lit::Str(s) = &l.lit
                {
                    consts.insert(c.ident.to_string(), s.value());
                }
            }
            syn::ImplItem::Type(t) => {
                if let Type::Path(p) = &t.ty {
                    let last = p.path.segments.last()?.ident.to_string();
                    scope = last.trim_end_matches("ResourceScope").to_owned();
                }
            }
            _ => {}
        }
    }
    Some((
        name,
        PbResource {
            group: consts.get("GROUP")?.clone(),
            plural: consts.get("URL_PATH_SEGMENT")?.clone(),
            scope,
        },
    ))
}

/// The Go markers of a doc comment: `+listType=map` is `("listType", "map")`; a marker
/// without a value (`+optional`) has an empty one. A marker may repeat (`+listMapKey`).
pub fn markers(doc: &[String]) -> Vec<(String, String)> {
    doc.iter()
        .filter_map(|l| l.trim().strip_prefix('+'))
        .map(|m| match m.split_once('=') {
            Some((k, v)) => (k.trim().to_owned(), v.trim().to_owned()),
            None => (m.trim().to_owned(), String::new()),
        })
        .collect()
}
