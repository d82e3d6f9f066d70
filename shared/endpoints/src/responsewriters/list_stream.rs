//! A JSON list answer streamed in chunks instead of joined into one buffer.
//!
//! A LIST of 10,000 configmaps is ~14 MB. Joined, the first byte leaves only after the
//! whole list is copied into a fresh allocation (page faults included), and a proxy in
//! front (the aggregator) starts forwarding only then. Streamed, each chunk of items is
//! copied into a buffer of [`CHUNK`] bytes and sent while the next is built, so copying,
//! encryption and the hop overlap. The total size is known up front, so the answer still
//! carries an exact `Content-Length`. The items are the cache's shared objects: nothing
//! is encoded here.
//!
//! Pretty answers (curl, `?pretty=true`) stream too: each chunk goes through Go's
//! `json.Indent` as it is built, so a pretty LIST no longer holds the joined list and its
//! indented copy at once. Their length is not known ahead.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{BufMut, Bytes, BytesMut};
use http_body::{Frame, SizeHint};
use kas_storage::{ListResult, ObjectRef};

use kas_apimachinery::runtime::serializer::JsonIndenter;

use crate::responsewriters::encode::{LIST_TAIL, list_head};
use kas_registry::ResourceDescriptor;

/// Bytes per chunk: large enough that per-chunk overhead vanishes, small enough that
/// the first one leaves at once.
const CHUNK: usize = 64 * 1024;

/// The body of a `<Kind>List` answer, byte for byte what [`encode::list`] joins.
///
/// [`encode::list`]: crate::responsewriters::encode::list
pub struct ListStream {
    head: Option<Bytes>,
    items: std::vec::IntoIter<ObjectRef>,
    first: bool,
    tail_sent: bool,
    remaining: u64,
    /// Set for a pretty answer: the indenter's state between chunks.
    pretty: Option<JsonIndenter>,
    /// The type meta each item starts with, for a list whose items carry one.
    item_head: Option<Bytes>,
}

impl ListStream {
    pub fn new(d: &ResourceDescriptor, result: ListResult) -> ListStream {
        let head = list_head(d, &result);
        let item_head = crate::responsewriters::encode::item_head(d);
        let typed = |json: &[u8]| {
            item_head
                .as_ref()
                .map_or(0, |h| crate::responsewriters::encode::typed_len(h, json))
        };
        let items_len: usize = result
            .items
            .iter()
            .map(|o| o.json.len() + typed(&o.json))
            .sum();
        let commas = result.items.len().saturating_sub(1);
        let total = head.len() + items_len + commas + LIST_TAIL.len();
        ListStream {
            head: Some(head),
            items: result.items.into_iter(),
            first: true,
            tail_sent: false,
            remaining: total as u64,
            pretty: None,
            item_head,
        }
    }

    /// The same list indented as `json.MarshalIndent` writes it.
    pub fn pretty(mut self) -> ListStream {
        self.pretty = Some(JsonIndenter::default());
        self
    }

    /// The next chunk: the head alone first (it goes out before any item is copied),
    /// then items up to [`CHUNK`] bytes, the tail after the last.
    ///
    /// A pretty list sends the head with the first items instead: the indenter must see
    /// what follows `"items":[` to tell an empty list.
    fn next_chunk(&mut self) -> Option<Bytes> {
        if self.pretty.is_none()
            && let Some(head) = self.head.take()
        {
            return Some(head);
        }
        if self.tail_sent {
            return None;
        }
        let mut out = BytesMut::with_capacity(CHUNK + LIST_TAIL.len());
        if let Some(head) = self.head.take() {
            out.put_slice(&head);
        }
        while out.len() < CHUNK {
            let Some(item) = self.items.next() else {
                out.put_slice(LIST_TAIL);
                self.tail_sent = true;
                break;
            };
            if !self.first {
                out.put_u8(b',');
            }
            self.first = false;
            match &self.item_head {
                Some(h) => crate::responsewriters::encode::put_typed(&mut out, h, &item.json),
                None => out.put_slice(&item.json),
            }
        }
        let Some(indenter) = self.pretty.as_mut() else {
            return Some(out.freeze());
        };
        let mut indented = Vec::with_capacity(out.len() + out.len() / 2);
        indenter.push(&out, &mut indented);
        Some(Bytes::from(indented))
    }
}

impl http_body::Body for ListStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let chunk = this.next_chunk();
        if let Some(c) = &chunk {
            this.remaining = this.remaining.saturating_sub(c.len() as u64);
        }
        Poll::Ready(chunk.map(|c| Ok(Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.head.is_none() && self.tail_sent
    }

    fn size_hint(&self) -> SizeHint {
        if self.pretty.is_some() {
            return SizeHint::default();
        }
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;
    use http_body_util::BodyExt;
    use kas_storage::Object;
    use std::sync::Arc;

    fn result(sizes: &[usize]) -> ListResult {
        let items = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let filler = "x".repeat(n);
                Arc::new(Object {
                    key: format!("k{i}"),
                    resource_version: 7,
                    json: Bytes::from(format!("{{\"i\":{i},\"d\":\"{filler}\"}}")),
                })
            })
            .collect();
        ListResult {
            items,
            resource_version: 9,
            continue_token: Some("c".into()),
            remaining_item_count: Some(3),
        }
    }

    async fn streamed(result: ListResult) -> (Vec<Bytes>, u64) {
        let d = kas_registry::descriptor::fixtures::CONFIG_MAP;
        let body = ListStream::new(&d, result);
        let exact = body.size_hint().exact().unwrap_or(u64::MAX);
        let mut body = std::pin::pin!(body);
        let mut chunks = Vec::new();
        while let Some(frame) = body.as_mut().frame().await {
            chunks.push(frame.unwrap().into_data().unwrap());
        }
        assert!(body.is_end_stream());
        (chunks, exact)
    }

    #[tokio::test]
    async fn streams_what_the_joined_list_holds_in_bounded_chunks() {
        let d = kas_registry::descriptor::fixtures::CONFIG_MAP;
        for sizes in [vec![], vec![10], vec![40_000; 7], vec![200_000, 5, 70_000]] {
            let joined = crate::responsewriters::encode::list(&d, &result(&sizes));
            let (chunks, exact) = streamed(result(&sizes)).await;
            assert_eq!(chunks.concat(), joined.to_vec(), "sizes {sizes:?}");
            assert_eq!(exact, joined.len() as u64, "Content-Length for {sizes:?}");
            // One item may overshoot a chunk; nothing else does.
            let largest = sizes.iter().max().copied().unwrap_or(0);
            assert!(chunks.iter().all(|c| c.len() < CHUNK + largest + 64));
        }
        let (chunks, _) = streamed(result(&[40_000; 7])).await;
        assert!(chunks.len() >= 4, "{} chunks: not streamed", chunks.len());
    }

    #[tokio::test]
    async fn a_pretty_list_is_the_indented_joined_list() {
        let d = kas_registry::descriptor::fixtures::CONFIG_MAP;
        for sizes in [vec![], vec![10], vec![40_000; 7], vec![200_000, 5, 70_000]] {
            let joined = crate::responsewriters::encode::list(&d, &result(&sizes));
            let want = kas_apimachinery::runtime::serializer::indent_json(&joined);
            let body = ListStream::new(&d, result(&sizes)).pretty();
            assert_eq!(body.size_hint().exact(), None);
            let got = body.collect().await.unwrap().to_bytes();
            assert_eq!(got, want, "sizes {sizes:?}");
        }
    }
}
