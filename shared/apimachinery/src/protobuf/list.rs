//! Lists. Every Kubernetes list message is `{ ListMeta metadata = 1; repeated Item items =
//! 2; }` (its TypeMeta travels in the envelope), and upstream's streaming list encoder
//! (`collections.go`) writes the same bytes as the plain one. An item is either a value to
//! encode or bytes already encoded, so a cache can keep each object's message once and a
//! list splices them.

use serde_json::Value;

use super::wire::{begin_nested, end_nested, write_bytes_field};
use super::{Result, encode};
use crate::schema::Message;

/// One item of a list.
#[derive(Clone, Copy, Debug)]
pub enum ListItem<'a> {
    /// An object to encode with the list's item message.
    Value(&'a Value),
    /// An object's message, already encoded (the `raw` of its envelope).
    Encoded(&'a [u8]),
}

impl<'a> From<&'a Value> for ListItem<'a> {
    fn from(v: &'a Value) -> Self {
        ListItem::Value(v)
    }
}

impl<'a> From<&'a [u8]> for ListItem<'a> {
    fn from(b: &'a [u8]) -> Self {
        ListItem::Encoded(b)
    }
}

/// Appends a list message: `list_meta` (a ListMeta value, written even when empty as the
/// non-pointer struct it is) as field 1, then each item as field 2.
pub fn encode_list<'a, I>(
    list_meta: &Value,
    list_meta_msg: &Message,
    items: I,
    item_msg: &Message,
    out: &mut Vec<u8>,
) -> Result<()>
where
    I: IntoIterator,
    I::Item: Into<ListItem<'a>>,
{
    let mark = begin_nested(1, out);
    encode(list_meta, list_meta_msg, out)?;
    end_nested(mark, out);
    for item in items {
        match item.into() {
            ListItem::Value(v) => {
                let mark = begin_nested(2, out);
                encode(v, item_msg, out)?;
                end_nested(mark, out);
            }
            ListItem::Encoded(bytes) => write_bytes_field(2, bytes, out),
        }
    }
    Ok(())
}
