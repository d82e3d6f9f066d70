//! What upstream reads from Go struct tags (`patchStrategy`, `patchMergeKey`) to drive a
//! strategic merge patch, as data.

/// `patchStrategy` of a field, without `retainKeys` (see [`PatchMeta::retain_keys`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PatchStrategy {
    /// No tag: lists are replaced whole, maps merged key by key.
    #[default]
    Default,
    /// `merge`: lists merged element-wise (by merge key for lists of maps, as a set for
    /// primitive lists).
    Merge,
    /// `replace`: lists and maps replaced whole.
    Replace,
}

/// Patch metadata of one field: its strategy, whether `retainKeys` is among its strategies,
/// and the merge key of a merging list of maps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PatchMeta {
    pub strategy: PatchStrategy,
    pub retain_keys: bool,
    pub merge_key: Option<&'static str>,
}

/// The brief's name for [`PatchMeta`].
pub type FieldMeta = PatchMeta;

impl PatchMeta {
    /// No strategy: an atomic list, a map merged key by key.
    pub const ATOMIC: PatchMeta = PatchMeta {
        strategy: PatchStrategy::Default,
        retain_keys: false,
        merge_key: None,
    };
    /// `patchStrategy:"merge"` on a list of primitives (set semantics).
    pub const MERGE: PatchMeta = PatchMeta {
        strategy: PatchStrategy::Merge,
        retain_keys: false,
        merge_key: None,
    };
    /// `patchStrategy:"replace"`.
    pub const REPLACE: PatchMeta = PatchMeta {
        strategy: PatchStrategy::Replace,
        retain_keys: false,
        merge_key: None,
    };

    /// `patchStrategy:"merge" patchMergeKey:"<key>"`.
    pub const fn merge_by(key: &'static str) -> PatchMeta {
        PatchMeta {
            strategy: PatchStrategy::Merge,
            retain_keys: false,
            merge_key: Some(key),
        }
    }

    /// `patchStrategy:"merge,retainKeys" patchMergeKey:"<key>"`.
    pub const fn merge_retain_keys_by(key: &'static str) -> PatchMeta {
        PatchMeta {
            strategy: PatchStrategy::Merge,
            retain_keys: true,
            merge_key: Some(key),
        }
    }

    /// `patchStrategy:"retainKeys"`.
    pub const RETAIN_KEYS: PatchMeta = PatchMeta {
        strategy: PatchStrategy::Default,
        retain_keys: true,
        merge_key: None,
    };
}

/// Patch metadata by field path. A path names JSON keys from the object's root, with `[]`
/// for "an element of this list": `["spec", "containers", "[]", "env"]`.
pub trait PatchSchema {
    /// The metadata of the field at `path`; `None` when it has none (atomic lists, maps
    /// merged key by key).
    fn lookup(&self, path: &[&str]) -> Option<PatchMeta>;

    /// Upstream fails a metadata lookup on a Go struct that has no such JSON field. When the
    /// parent of `path` is such a closed struct and lacks the last segment, the struct's Go
    /// name (for `unable to find api field in struct <name> for the json field "<field>"`).
    fn unknown_field(&self, path: &[&str]) -> Option<&str> {
        let _ = path;
        None
    }
}

/// A schema that knows nothing: every list is atomic, every map merges key by key, no field
/// is unknown.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoSchema;

impl PatchSchema for NoSchema {
    fn lookup(&self, _path: &[&str]) -> Option<PatchMeta> {
        None
    }
}

/// A [`PatchSchema`] as a table of dotted paths (`spec.containers[].env`), plus the closed
/// structs whose unknown fields fail a lookup as upstream's do.
#[derive(Clone, Debug, Default)]
pub struct SchemaTable {
    fields: Vec<(Vec<String>, PatchMeta)>,
    structs: Vec<(Vec<String>, &'static str, Vec<String>)>,
}

/// `spec.containers[].env` → `["spec", "containers", "[]", "env"]`; `""` is the root.
fn split_path(path: &str) -> Vec<String> {
    path.replace("[]", ".[]")
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn join(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty()) {
        (true, _) => path.to_owned(),
        (false, true) => prefix.to_owned(),
        (false, false) if path.starts_with("[]") => format!("{prefix}{path}"),
        (false, false) => format!("{prefix}.{path}"),
    }
}

fn same(a: &[String], b: &[&str]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

impl SchemaTable {
    /// A table of `(dotted path, metadata)` rows.
    pub fn new(rows: &[(&str, PatchMeta)]) -> SchemaTable {
        SchemaTable::default().with_fields("", rows)
    }

    /// Adds rows whose paths are relative to `prefix` (a type reused at several places,
    /// such as PodSpec under `spec` and `spec.template.spec`).
    pub fn with_fields(mut self, prefix: &str, rows: &[(&str, PatchMeta)]) -> SchemaTable {
        for (path, meta) in rows {
            self.fields.push((split_path(&join(prefix, path)), *meta));
        }
        self
    }

    /// Declares the value at `path` a Go struct named `go_name` with exactly these JSON
    /// fields.
    pub fn with_struct(
        mut self,
        path: &str,
        go_name: &'static str,
        fields: &[&str],
    ) -> SchemaTable {
        let fields = fields.iter().map(|f| (*f).to_owned()).collect();
        self.structs.push((split_path(path), go_name, fields));
        self
    }
}

impl PatchSchema for SchemaTable {
    fn lookup(&self, path: &[&str]) -> Option<PatchMeta> {
        self.fields
            .iter()
            .find(|(p, _)| same(p, path))
            .map(|(_, meta)| *meta)
    }

    fn unknown_field(&self, path: &[&str]) -> Option<&str> {
        let (field, parent) = path.split_last()?;
        let (_, name, fields) = self.structs.iter().find(|(p, _, _)| same(p, parent))?;
        (!fields.iter().any(|f| f == field)).then_some(*name)
    }
}
