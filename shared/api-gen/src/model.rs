//! The generated tables' model: k8s-pb's messages (structure, order, protobuf numbers,
//! markers) joined with k8s-openapi's definitions (JSON names, descriptions, required), and
//! the overlay's Go facts.

use std::collections::{BTreeMap, HashMap};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::openapi::Definition;
use crate::overlay;
use crate::packages::{PACKAGES, PROTO_NAMES, PROTO_ONLY, Package, special, union};
use crate::pb::{self, PbField, PbModule, PbType};

/// A field's kind, as kas-apimachinery's `schema::Kind`.
#[derive(Debug, Clone)]
pub enum GenKind {
    Scalar(&'static str),
    Message(String),
    Array(Box<GenKind>),
    Map(Box<GenKind>),
    /// A `JSONSchemaProps` union: the kind's name and the definition of its message.
    Union(&'static str, String),
}

#[derive(Debug)]
pub struct GenField {
    pub name: String,
    pub tag: u32,
    pub kind: GenKind,
    pub omit_empty: bool,
    pub pointer: bool,
    pub patch_strategy: Option<String>,
    pub merge_key: Option<String>,
    /// `atomic`, `set`, or `map` with its keys.
    pub list_type: Option<(String, Vec<String>)>,
    pub description: String,
    /// An embedded struct (`json:",inline"`): its fields are the parent's in JSON, a
    /// message of its own in protobuf.
    pub inline: bool,
    /// A named slice type (`Verbs`): an array in JSON, a wrapper message in protobuf.
    pub wrapped: bool,
}

#[derive(Debug)]
pub struct GenMessage {
    /// The OpenAPI definition name.
    pub def: String,
    /// The Go type name.
    pub go_name: String,
    pub module: [&'static str; 2],
    /// The k8s-pb type, for tests that compare with prost (`api::core::v1::Pod`).
    pub pb_type: String,
    pub description: String,
    pub fields: Vec<GenField>,
    pub required: Vec<String>,
    pub atomic: bool,
}

/// A top-level kind (lists included), with what k8s-pb's `impl Resource` says of it.
#[derive(Debug)]
pub struct GenKindEntry {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub scope: String,
    pub def: String,
    pub pb_type: String,
}

pub struct Model {
    pub messages: Vec<GenMessage>,
    pub kinds: Vec<GenKindEntry>,
}

/// Reads both sources and joins them.
pub fn build(pb_src: &std::path::Path, defs: &BTreeMap<String, Definition>) -> Result<Model> {
    let mut modules = Vec::new();
    for p in PACKAGES {
        modules.push((p, pb::read_module(pb_src, p.pb)?));
    }
    let defs = &with_embedded(&modules, defs);
    // Go type names by package and lowercase name: prost renames `APIResource` to
    // `ApiResource`, OpenAPI keeps Go's.
    let mut go_names: HashMap<(String, String), String> = HashMap::new();
    for (p, m) in &modules {
        for msg in &m.messages {
            let lower = msg.name.to_lowercase();
            let openapi = defs
                .keys()
                .filter_map(|d| d.strip_prefix(p.defs)?.strip_prefix('.'))
                .find(|n| n.to_lowercase() == lower)
                .map(str::to_owned);
            let list_of = lower.strip_suffix("list").and_then(|item| {
                defs.keys()
                    .filter_map(|d| d.strip_prefix(p.defs)?.strip_prefix('.'))
                    .find(|n| n.to_lowercase() == item)
                    .map(|n| format!("{n}List"))
            });
            let proto_only = PROTO_ONLY
                .iter()
                .find(|(defs, n)| *defs == p.defs && n.to_lowercase() == lower)
                .map(|(_, n)| (*n).to_owned());
            if let Some(go) = openapi.or(list_of).or(proto_only) {
                go_names.insert((p.defs.to_owned(), lower), go);
            }
        }
    }
    let ctx = Ctx {
        defs,
        go_names: &go_names,
    };
    let mut messages = Vec::new();
    let mut kinds = Vec::new();
    for (p, m) in &modules {
        let module: Vec<String> = p.pb.iter().map(|s| s.to_string()).collect();
        for msg in &m.messages {
            let Some(go) = go_names.get(&(p.defs.to_owned(), msg.name.to_lowercase())) else {
                continue;
            };
            if special(&module, &msg.name).is_some() {
                continue;
            }
            let def = format!("{}.{go}", p.defs);
            messages.push(
                ctx.message(p, m, msg, &def, go)
                    .with_context(|| def.clone())?,
            );
        }
        // Every struct with TypeMeta is a kind its group version registers (upstream's
        // `addKnownTypes`); k8s-pb's `Resource` gives the group and, for resources, the
        // plural and scope.
        let Some(group) = m.resources.values().next().map(|r| r.group.clone()) else {
            continue;
        };
        for msg in messages.iter().filter(|x| x.module == p.module) {
            if !msg.fields.iter().any(|f| f.tag == 0 && f.name == "kind") {
                continue;
            }
            let resource = m
                .resources
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(&msg.go_name))
                .map(|(_, r)| r);
            kinds.push(GenKindEntry {
                group: group.clone(),
                version: p.module[1].to_owned(),
                kind: msg.go_name.clone(),
                plural: resource.map(|r| r.plural.clone()).unwrap_or_default(),
                scope: resource.map(|r| r.scope.clone()).unwrap_or_default(),
                def: msg.def.clone(),
                pb_type: msg.pb_type.clone(),
            });
        }
    }
    overlay::check(|def, field| {
        messages
            .iter()
            .any(|m| m.def == def && m.fields.iter().any(|f| f.name == field))
    })?;
    Ok(Model { messages, kinds })
}

/// `defs` plus a definition for each embedded struct upstream's OpenAPI has none for
/// (`Rule` inside `RuleWithOperations`, `ProbeHandler` inside `Probe`): its properties are
/// the embedding definition's that name its fields.
fn with_embedded(
    modules: &[(&Package, PbModule)],
    defs: &BTreeMap<String, Definition>,
) -> BTreeMap<String, Definition> {
    let mut out = BTreeMap::new();
    for (p, m) in modules {
        for msg in &m.messages {
            let Some(parent) = defs.get(&format!("{}.{}", p.defs, msg.name)).or_else(|| {
                defs.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(&format!("{}.{}", p.defs, msg.name)))
                    .map(|(_, d)| d)
            }) else {
                continue;
            };
            for f in &msg.fields {
                let PbType::Message(path) = &f.ty else {
                    continue;
                };
                if f.repeated || parent.properties.keys().any(|k| same_name(k, &f.ident)) {
                    continue;
                }
                let Some((name, module)) = path.split_last() else {
                    continue;
                };
                let Some((q, qm)) = modules
                    .iter()
                    .find(|(q, _)| q.pb.iter().copied().eq(module.iter().map(String::as_str)))
                else {
                    continue;
                };
                let def = format!("{}.{name}", q.defs);
                if defs.keys().any(|k| k.eq_ignore_ascii_case(&def)) {
                    continue;
                }
                let Some(inner) = qm.messages.iter().find(|x| &x.name == name) else {
                    continue;
                };
                let properties: serde_json::Map<String, Value> = parent
                    .properties
                    .iter()
                    .filter(|(k, _)| inner.fields.iter().any(|g| same_name(k, &g.ident)))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if properties.len() != inner.fields.len() {
                    continue;
                }
                let required = parent
                    .required
                    .iter()
                    .filter(|r| properties.contains_key(*r))
                    .cloned()
                    .collect();
                out.insert(
                    def.clone(),
                    Definition {
                        name: def,
                        description: doc_description(&inner.doc),
                        properties,
                        required,
                    },
                );
            }
        }
    }
    out.extend(defs.iter().map(|(k, v)| (k.clone(), v.clone())));
    out
}

/// go-to-protobuf's messages for named slice types of strings.
const WRAPPERS: [&str; 2] = ["Verbs", "ExtraValue"];

struct Ctx<'a> {
    defs: &'a BTreeMap<String, Definition>,
    go_names: &'a HashMap<(String, String), String>,
}

impl Ctx<'_> {
    fn message(
        &self,
        p: &Package,
        module: &PbModule,
        msg: &pb::PbMessage,
        def: &str,
        go: &str,
    ) -> Result<GenMessage> {
        // A union's OpenAPI describes its JSON only; its fields are the protobuf message's.
        let described = self.defs.get(def);
        let module_path: Vec<String> = p.pb.iter().map(|s| s.to_string()).collect();
        let openapi = described.filter(|_| union(&module_path, &msg.name).is_none());
        let top_level = module.resources.keys().any(|r| r.eq_ignore_ascii_case(go))
            || go.ends_with("List")
            || PROTO_ONLY.contains(&(p.defs, go))
            || openapi.is_some_and(|d| d.properties.contains_key("apiVersion"));
        let mut fields = Vec::new();
        if let Some(d) = openapi {
            for type_meta in ["kind", "apiVersion"] {
                // TypeMeta's, unless the struct has a field of that name (OwnerReference).
                let own = msg.fields.iter().any(|f| same_name(type_meta, &f.ident));
                if let Some(prop) = d.properties.get(type_meta).filter(|_| !own) {
                    fields.push(type_meta_field(type_meta, prop));
                }
            }
        } else if top_level {
            fields.push(type_meta_field("kind", &Value::Null));
            fields.push(type_meta_field("apiVersion", &Value::Null));
        }
        for f in &msg.fields {
            let (name, prop) = match openapi {
                Some(d) => match d.properties.iter().find(|(k, _)| same_name(k, &f.ident)) {
                    Some((k, v)) => (k.clone(), Some(v)),
                    None if self.embedded(d, f)? => {
                        let mut field = self.field(def, f, String::new(), None, false, false)?;
                        field.inline = true;
                        field.pointer = false;
                        field.omit_empty = false;
                        fields.push(field);
                        continue;
                    }
                    // Fields upstream's OpenAPI leaves out are not served.
                    None => bail!("protobuf field {} is not in the OpenAPI", f.ident),
                },
                None => match PROTO_NAMES.iter().find(|(ident, _)| *ident == f.ident) {
                    Some((_, name)) => ((*name).to_owned(), None),
                    None => (lower_camel(&f.ident)?, None),
                },
            };
            // A list's items are written even when empty (`json:"items"`).
            let required = match openapi {
                Some(d) => d.required.contains(&name),
                None => go.ends_with("List") && name == "items",
            };
            fields.push(self.field(def, f, name, prop, required, top_level)?);
        }
        if let Some(d) = openapi {
            for k in d.properties.keys() {
                if !fields.iter().any(|f| &f.name == k) && !self.inlined(&fields, k) {
                    bail!("OpenAPI property {k} has no protobuf field");
                }
            }
        }
        let markers = pb::markers(&msg.doc);
        let required: Vec<String> = match openapi {
            Some(d) => d
                .required
                .iter()
                .filter(|r| fields.iter().any(|f| &f.name == *r && !f.omit_empty))
                .cloned()
                .collect(),
            None if go.ends_with("List") => vec!["items".to_owned()],
            None => Vec::new(),
        };
        Ok(GenMessage {
            def: def.to_owned(),
            go_name: go.to_owned(),
            module: p.module,
            pb_type: format!("{}::{}", p.pb.join("::"), msg.name),
            description: match described {
                Some(d) => d.description.clone(),
                None => doc_description(&msg.doc),
            },
            fields,
            // k8s-openapi requires `metadata` of every kind; upstream's OpenAPI requires
            // what Go writes without `omitempty`.
            required,
            atomic: markers
                .iter()
                .any(|(k, v)| k == "structType" && v == "atomic"),
        })
    }

    /// Whether `f` is an embedded struct: a message none of the parent's properties names,
    /// every property of which the parent has.
    fn embedded(&self, parent: &Definition, f: &PbField) -> Result<bool> {
        if f.repeated {
            return Ok(false);
        }
        let GenKind::Message(def) = self.kind(&f.ty)? else {
            return Ok(false);
        };
        let Some(inner) = self.defs.get(&def) else {
            return Ok(false);
        };
        Ok(inner
            .properties
            .keys()
            .all(|k| parent.properties.contains_key(k)))
    }

    /// Whether property `k` comes from one of the embedded structs among `fields`.
    fn inlined(&self, fields: &[GenField], k: &str) -> bool {
        fields.iter().filter(|f| f.inline).any(|f| match &f.kind {
            GenKind::Message(def) => self
                .defs
                .get(def)
                .is_some_and(|d| d.properties.contains_key(k)),
            _ => false,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn field(
        &self,
        def: &str,
        f: &PbField,
        name: String,
        prop: Option<&Value>,
        required: bool,
        top_level: bool,
    ) -> Result<GenField> {
        let mut kind = self.kind(&f.ty).with_context(|| format!("field {name}"))?;
        let json_type = prop.and_then(|p| p.get("type")).and_then(Value::as_str);
        if f.repeated {
            kind = GenKind::Array(Box::new(kind));
        } else if json_type == Some("array") && matches!(kind, GenKind::Message(_)) {
            bail!("{name}: a named slice type that is not among the known wrappers");
        }
        let markers = pb::markers(&f.doc);
        let marker = |k: &str| markers.iter().find(|(m, _)| m == k).map(|(_, v)| v.clone());
        // Upstream puts `+listType` on a struct now and then (Status.details); only slices
        // (and `[]byte`) have a list type.
        let sliced = matches!(kind, GenKind::Array(_) | GenKind::Scalar("Bytes"));
        let list_type = marker("listType").filter(|_| sliced).map(|t| {
            let keys = markers
                .iter()
                .filter(|(m, _)| m == "listMapKey")
                .map(|(_, v)| v.clone())
                .collect();
            (t, keys)
        });
        let struct_like = matches!(kind, GenKind::Message(_))
            || matches!(kind, GenKind::Scalar(s) if s != "String" && s != "Bool"
                && s != "Int32" && s != "Int64" && s != "Float64" && s != "Bytes");
        let collection = matches!(kind, GenKind::Array(_) | GenKind::Map(_))
            || matches!(kind, GenKind::Scalar("Bytes"));
        let meta = matches!(&kind, GenKind::Message(m) if m.ends_with("meta.v1.ObjectMeta")
            || m.ends_with("meta.v1.ListMeta"));
        let scalar_or_time = matches!(
            kind,
            GenKind::Scalar("String" | "Bool" | "Int32" | "Int64" | "Time" | "MicroTime")
        );
        let derived_pointer = !(required
            || collection
            || meta
            || scalar_or_time
            || (top_level && struct_like && (name == "spec" || name == "status")));
        let facts = overlay::facts(def, &name);
        Ok(GenField {
            tag: f.tag,
            kind,
            omit_empty: facts.omit_empty.unwrap_or(!required),
            pointer: facts.pointer.unwrap_or(derived_pointer),
            patch_strategy: marker("patchStrategy"),
            merge_key: marker("patchMergeKey"),
            list_type,
            description: match prop {
                Some(p) => p
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                None => doc_description(&f.doc),
            },
            name,
            inline: false,
            wrapped: !f.repeated
                && matches!(&f.ty, PbType::Message(path)
                    if path.last().is_some_and(|n| WRAPPERS.contains(&n.as_str()))),
        })
    }

    fn kind(&self, ty: &PbType) -> Result<GenKind> {
        Ok(match ty {
            PbType::Scalar(s) => GenKind::Scalar(match s.as_str() {
                "string" => "String",
                "bool" => "Bool",
                "int32" => "Int32",
                "int64" => "Int64",
                "double" => "Float64",
                "bytes" => "Bytes",
                other => bail!("unsupported scalar {other}"),
            }),
            PbType::Map(v) => GenKind::Map(Box::new(self.kind(v)?)),
            PbType::Message(path) => {
                let (name, module) = path.split_last().context("empty path")?;
                if let Some(s) = special(module, name) {
                    return Ok(GenKind::Scalar(s));
                }
                // go-to-protobuf's messages for named slice types (`Verbs []string`,
                // `ExtraValue []string`): JSON arrays.
                if WRAPPERS.contains(&name.as_str()) {
                    return Ok(GenKind::Array(Box::new(GenKind::Scalar("String"))));
                }
                let pkg = PACKAGES
                    .iter()
                    .find(|q| q.pb.iter().copied().eq(module.iter().map(String::as_str)))
                    .with_context(|| format!("{path:?} is in no generated package"))?;
                let go = self
                    .go_names
                    .get(&(pkg.defs.to_owned(), name.to_lowercase()))
                    .with_context(|| format!("{path:?} is not generated"))?;
                let def = format!("{}.{go}", pkg.defs);
                match union(module, name) {
                    Some(u) => GenKind::Union(u, def),
                    None => GenKind::Message(def),
                }
            }
        })
    }
}

fn type_meta_field(name: &str, prop: &Value) -> GenField {
    GenField {
        name: name.to_owned(),
        tag: 0,
        kind: GenKind::Scalar("String"),
        omit_empty: true,
        pointer: false,
        patch_strategy: None,
        merge_key: None,
        list_type: None,
        description: prop
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        inline: false,
        wrapped: false,
    }
}

/// A JSON name and a prost field name name the same field: prost snake-cases the proto
/// name, which is the JSON name but for JSONSchemaProps' `$ref`, `$schema` and
/// `x-kubernetes-*` (protobuf `ref`, `schema`, `xKubernetes*`).
fn same_name(json: &str, ident: &str) -> bool {
    let a: String = json
        .chars()
        .filter(|c| !matches!(c, '$' | '-'))
        .collect::<String>()
        .to_lowercase();
    let b: String = ident.chars().filter(|c| *c != '_').collect();
    a == b
}

/// prost's snake case back to lower camel case; refused unless unambiguous.
fn lower_camel(ident: &str) -> Result<String> {
    let mut out = String::new();
    let mut upper = false;
    for c in ident.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    if out.chars().any(|c| c.is_ascii_digit()) {
        bail!("{ident}: cannot derive a JSON name");
    }
    Ok(out)
}

/// A Go doc comment as upstream's OpenAPI writes it: markers and `TODO`s dropped, lines
/// joined, prost's `<url>` brackets removed.
fn doc_description(doc: &[String]) -> String {
    let lines: Vec<String> = doc
        .iter()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.starts_with('+') && !l.starts_with("TODO"))
        .map(|l| unbracket_urls(&l))
        .collect();
    lines.join(" ").trim().to_owned()
}

/// `<https://...>` (prost's markdown for a URL) back to the URL.
fn unbracket_urls(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("<http") {
        let Some(len) = rest[start..].find('>') else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&rest[start + 1..start + len]);
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}
