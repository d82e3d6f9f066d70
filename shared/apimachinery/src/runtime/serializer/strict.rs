//! Strict decoding as `sigs.k8s.io/json`'s `UnmarshalStrict` reports it: keys repeated in
//! one object and, with the type's schema, keys the type does not have, as field paths in
//! document order. Works on the raw bytes, since serde_json keeps only the last of a
//! repeated key.

use crate::golang::json::is_space;
use crate::schema::{Kind, Message};

/// Paths of repeated object keys in document order (`a.b`, `items[0].name`).
pub fn duplicate_fields(data: &[u8]) -> Vec<String> {
    strict_fields(data, None)
        .into_iter()
        .filter_map(|f| match f {
            StrictField::Duplicate(path) => Some(path),
            StrictField::Unknown(_) => None,
        })
        .collect()
}

/// What strict decoding (sigs.k8s.io/json's `UnmarshalStrict`) reports about a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrictField {
    /// A key repeated in one object.
    Duplicate(String),
    /// A key the type does not have (case-sensitive, as upstream's decoder). Reported once;
    /// nothing under it is looked at.
    Unknown(String),
}

/// Repeated keys and, when `schema` is given, keys the type does not know, in document
/// order, as paths (`spec.template`, `items[0].name`).
pub fn strict_fields(data: &[u8], schema: Option<&'static Message>) -> Vec<StrictField> {
    let mut walker = Walker {
        data,
        pos: 0,
        out: Vec::new(),
    };
    let kind = schema.map(Kind::Message);
    let ctx = kind.as_ref().map_or(Ctx::Loose, Ctx::Typed);
    let _ = walker.value(&mut String::new(), ctx);
    walker.out
}

/// The keys met so far in one object or mapping: a short list while it is small (most
/// are), a hash set once it is not, so that a map of 200,000 keys costs linear time.
#[derive(Default)]
pub(crate) enum Seen {
    #[default]
    Empty,
    Few(Vec<String>),
    Many(std::collections::HashSet<String>),
}

impl Seen {
    /// Keys kept in a list before moving to a hash set.
    const FEW: usize = 16;

    /// Adds `key`, or hands it back when it was already there.
    pub(crate) fn repeated(&mut self, key: String) -> Option<String> {
        match self {
            Seen::Empty => *self = Seen::Few(vec![key]),
            Seen::Few(keys) if keys.contains(&key) => return Some(key),
            Seen::Few(keys) if keys.len() < Self::FEW => keys.push(key),
            Seen::Few(keys) => {
                let mut set: std::collections::HashSet<String> = keys.drain(..).collect();
                set.insert(key);
                *self = Seen::Many(set);
            }
            Seen::Many(set) if set.contains(&key) => return Some(key),
            Seen::Many(set) => {
                set.insert(key);
            }
        }
        None
    }
}

struct Walker<'a> {
    data: &'a [u8],
    pos: usize,
    out: Vec<StrictField>,
}

/// What the walker knows of the value it is in.
#[derive(Clone, Copy)]
enum Ctx<'k> {
    /// No schema: only repeated keys are reported.
    Loose,
    /// A value of this kind.
    Typed(&'k Kind),
    /// Content the decoder does not look into (an unknown field's value, raw JSON).
    Skip,
}

impl<'k> Ctx<'k> {
    /// Whether `key` is a member of this object, and the context of its value.
    fn member(self, key: &str) -> (bool, Ctx<'k>) {
        match self {
            Ctx::Typed(Kind::Message(m)) => match m.field(key) {
                Some(f) => (true, Ctx::Typed(&f.kind)),
                None => (false, Ctx::Skip),
            },
            Ctx::Typed(Kind::Map(inner)) => (true, Ctx::Typed(inner)),
            Ctx::Typed(_) | Ctx::Skip => (true, Ctx::Skip),
            Ctx::Loose => (true, Ctx::Loose),
        }
    }

    fn element(self) -> Ctx<'k> {
        match self {
            Ctx::Typed(Kind::Array(inner)) => Ctx::Typed(inner),
            Ctx::Loose => Ctx::Loose,
            _ => Ctx::Skip,
        }
    }
}

impl Walker<'_> {
    fn skip_space(&mut self) {
        while self.pos < self.data.len() && is_space(self.data[self.pos]) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.data.get(self.pos).copied()
    }

    /// Walks one value; recursion depth is bounded by the scanner's 10000 levels
    /// only when `check_valid` ran first, so it is bounded here as well.
    fn value(&mut self, path: &mut String, ctx: Ctx<'_>) -> Option<()> {
        if path.len() > 64 * 1024 {
            return None;
        }
        match self.peek()? {
            b'{' => self.object(path, ctx),
            b'[' => self.array(path, ctx),
            b'"' => self.string().map(drop),
            _ => {
                while self.pos < self.data.len()
                    && !matches!(self.data[self.pos], b',' | b'}' | b']')
                    && !is_space(self.data[self.pos])
                {
                    self.pos += 1;
                }
                Some(())
            }
        }
    }

    fn object(&mut self, path: &mut String, ctx: Ctx<'_>) -> Option<()> {
        let report = !matches!(ctx, Ctx::Skip);
        self.pos += 1;
        let mut seen = Seen::default();
        if self.peek()? == b'}' {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.peek()?;
            let key = self.string()?;
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&key);
            let (known, member) = ctx.member(&key);
            if seen.repeated(key).is_some() {
                if known && report {
                    self.out.push(StrictField::Duplicate(path.clone()));
                }
            } else if !known {
                self.out.push(StrictField::Unknown(path.clone()));
            }
            if self.peek()? != b':' {
                return None;
            }
            self.pos += 1;
            self.value(path, member)?;
            path.truncate(len);
            match self.peek()? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, path: &mut String, ctx: Ctx<'_>) -> Option<()> {
        let element = ctx.element();
        self.pos += 1;
        if self.peek()? == b']' {
            self.pos += 1;
            return Some(());
        }
        let mut i = 0usize;
        loop {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            self.value(path, element)?;
            path.truncate(len);
            i += 1;
            match self.peek()? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string token at `pos`, decoded (invalid escapes and bytes become U+FFFD).
    fn string(&mut self) -> Option<String> {
        if self.data.get(self.pos) != Some(&b'"') {
            return None;
        }
        let start = self.pos;
        self.pos += 1;
        while self.pos < self.data.len() {
            match self.data[self.pos] {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    let raw = String::from_utf8_lossy(&self.data[start..self.pos]);
                    return Some(
                        serde_json::from_str::<String>(&raw)
                            .unwrap_or_else(|_| raw[1..raw.len() - 1].to_owned()),
                    );
                }
                _ => self.pos += 1,
            }
        }
        None
    }
}
