//! The one body type that flows through every filter, handler and proxy hop.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use http_body_util::{BodyExt, Empty, Full, combinators::UnsyncBoxBody};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A streaming body: requests and responses pass through the proxy without buffering.
///
/// A nominal type rather than an alias of `UnsyncBoxBody<Bytes, BoxError>`: with the
/// `dyn Error` inside a type parameter, rustc cannot prove the boxed futures of the filter
/// chain `Send` for every lifetime ("implementation of `Send` is not general enough").
pub struct Body(UnsyncBoxBody<Bytes, BoxError>);

impl Body {
    /// Boxes any body whose error converts into `BoxError`.
    pub fn new<B>(body: B) -> Body
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        Body(body.map_err(Into::into).boxed_unsync())
    }
}

impl Default for Body {
    fn default() -> Self {
        empty()
    }
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Body")
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Pin::new(&mut self.0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.0.size_hint()
    }
}

/// A body holding `bytes` in full.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Body::new(Full::new(bytes.into()).map_err(|never| match never {}))
}

/// An empty body.
pub fn empty() -> Body {
    Body::new(Empty::new().map_err(|never| match never {}))
}

/// Boxes any body whose error converts into `BoxError`; a `Body` is passed through as is.
pub fn boxed<B>(body: B) -> Body
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let mut slot = Some(body);
    if let Some(body) = (&mut slot as &mut dyn std::any::Any)
        .downcast_mut::<Option<Body>>()
        .and_then(Option::take)
    {
        return body;
    }
    match slot {
        Some(body) => Body::new(body),
        None => empty(),
    }
}
