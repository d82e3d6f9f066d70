//! The glue every filter shares, after axum's `middleware::from_fn`: a filter is a function
//! of its state, the request and [`Next`] (the rest of the chain) that returns the future of
//! its answer; [`from_fn`] / [`from_fn_with_state`] make it a tower `Layer`. So each filter
//! file holds only its rule, its policy types and its tests.
//!
//! The chain is on every request's path, and how a rule is written shows there:
//! - A rule is an `async fn`, or a plain function that does its synchronous part at once,
//!   calls [`Next::run`] (or answers itself) and returns an `async` block for the rest. The
//!   plain form is cheaper: an `async fn` keeps its arguments, the request among them, in
//!   its future, so the request is copied in and out again. Authentication, which lends
//!   the request to its authenticator, is an `async fn`; the other rules are plain.
//! - A filter keeps its rule's future in a box of its own ([`Boxed`]), so that a filter's
//!   future holds the next one's by pointer. Embedded instead, each filter's future contains
//!   every later one and starting each copies them all, which costs more than the boxes. A
//!   rule whose future is little more than the rest of the chain's, and the outermost filter
//!   (whose future the server boxes), skip the box: [`FilterLayer::inline`].
//! - A `Filter` shares its inner service and rule behind one `Arc`: cloning the chain (the
//!   server does per request, [`Next`] per filter) costs a reference count, not a copy.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker, ready};

use http::{Request, Response};
use kas_endpoints::Body;
use pin_project_lite::pin_project;
use tower::{Layer, Service};

/// What a filter passes requests on to: the rest of the chain, a service that always
/// answers (`Error = Infallible`). `Sync` because a `Filter` shares it between requests.
pub trait Inner:
    Service<Request<Body>, Response = Response<Body>, Error = Infallible, Future: Send + 'static>
    + Clone
    + Send
    + Sync
    + 'static
{
}

impl<S> Inner for S where
    S: Service<
            Request<Body>,
            Response = Response<Body>,
            Error = Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + Sync
        + 'static
{
}

/// The rest of the chain, handed to a filter's rule. A rule that answers by itself (a 401,
/// a 429) drops it instead of passing the request on.
pub struct Next<S> {
    inner: S,
}

impl<S: Inner> Next<S> {
    /// Passes the request on: the inner service is called now, its answer is the future's.
    pub fn run(mut self, req: Request<Body>) -> NextFuture<S> {
        // Every service in the chain is ready at once; one that is not is polled ready
        // first, as tower requires.
        let state = match self
            .inner
            .poll_ready(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(Ok(())) => State::Called {
                fut: self.inner.call(req),
            },
            Poll::Ready(Err(never)) => match never {},
            // Boxed, so that the rare case does not make every `NextFuture` larger.
            Poll::Pending => State::NotReady {
                waiting: Some(Box::new((self.inner, req))),
            },
        };
        NextFuture { state }
    }
}

pin_project! {
    /// The rest of the chain answering.
    pub struct NextFuture<S: Service<Request<Body>>> {
        #[pin]
        state: State<S>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<S: Service<Request<Body>>> {
        NotReady { waiting: Option<Box<(S, Request<Body>)>> },
        Called { #[pin] fut: S::Future },
    }
}

impl<S: Inner> Future for NextFuture<S> {
    type Output = Response<Body>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response<Body>> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProj::NotReady { waiting } => {
                    let (inner, _) = waiting.as_deref_mut().expect("polled after it called");
                    let Ok(()) = ready!(inner.poll_ready(cx));
                    let (mut inner, req) = *waiting.take().expect("polled after it called");
                    let fut = inner.call(req);
                    state.set(State::Called { fut });
                }
                StateProj::Called { fut } => {
                    let Ok(resp) = ready!(fut.poll(cx));
                    return Poll::Ready(resp);
                }
            }
        }
    }
}

/// The future of a filter's answer.
pub trait Answer: Future<Output = Response<Body>> + Send + 'static {}

impl<F: Future<Output = Response<Body>> + Send + 'static> Answer for F {}

/// Where a filter keeps its rule's future: [`Boxed`] (the default) or [`Inline`].
pub trait Storage: Send + Sync + 'static {
    type Stored<F: Answer>: Answer;

    fn store<F: Answer>(make: impl FnOnce() -> F) -> Self::Stored<F>;
}

/// The rule's future in a box of its own.
#[derive(Clone, Copy, Debug)]
pub struct Boxed;

impl Storage for Boxed {
    type Stored<F: Answer> = Pin<Box<F>>;

    fn store<F: Answer>(make: impl FnOnce() -> F) -> Pin<Box<F>> {
        // Allocated first, so that the future is built in place, not copied in.
        Box::into_pin(Box::write(Box::new_uninit(), make()))
    }
}

/// The rule's future inside the filter's own.
#[derive(Clone, Copy, Debug)]
pub struct Inline;

impl Storage for Inline {
    type Stored<F: Answer> = F;

    fn store<F: Answer>(make: impl FnOnce() -> F) -> F {
        make()
    }
}

/// A filter's rule: a function `(request, next) -> future of the response`, or one of
/// `(state, request, next)` paired with its state by [`from_fn_with_state`].
pub trait Rule<S>: Send + Sync + 'static {
    type Future: Answer;

    fn call(&self, req: Request<Body>, next: Next<S>) -> Self::Future;
}

impl<S, F, Fut> Rule<S> for F
where
    F: Fn(Request<Body>, Next<S>) -> Fut + Send + Sync + 'static,
    Fut: Answer,
{
    type Future = Fut;

    fn call(&self, req: Request<Body>, next: Next<S>) -> Fut {
        self(req, next)
    }
}

/// A rule with its state; each request gets a clone of the state, so keep it cheap to
/// clone (an `Arc`, a `Copy` value).
#[derive(Clone, Debug)]
pub struct WithState<St, F> {
    state: St,
    rule: F,
}

impl<S, St, F, Fut> Rule<S> for WithState<St, F>
where
    St: Clone + Send + Sync + 'static,
    F: Fn(St, Request<Body>, Next<S>) -> Fut + Send + Sync + 'static,
    Fut: Answer,
{
    type Future = Fut;

    fn call(&self, req: Request<Body>, next: Next<S>) -> Fut {
        (self.rule)(self.state.clone(), req, next)
    }
}

/// A filter from a function `(request, next) -> future of the response`.
pub fn from_fn<F>(rule: F) -> FilterLayer<F> {
    FilterLayer {
        rule,
        storage: Boxed,
    }
}

/// A filter from a function `(state, request, next) -> future of the response`.
pub fn from_fn_with_state<St, F>(state: St, rule: F) -> FilterLayer<WithState<St, F>> {
    FilterLayer {
        rule: WithState { state, rule },
        storage: Boxed,
    }
}

#[derive(Clone, Debug)]
pub struct FilterLayer<R, B = Boxed> {
    rule: R,
    storage: B,
}

impl<R> FilterLayer<R> {
    /// Keeps the rule's future inside the filter's own rather than in a box: for a rule
    /// whose future is little more than [`Next::run`]'s, and for the outermost filter, whose
    /// future the server boxes.
    pub fn inline(self) -> FilterLayer<R, Inline> {
        FilterLayer {
            rule: self.rule,
            storage: Inline,
        }
    }
}

impl<S, R: Clone, B: Clone> Layer<S> for FilterLayer<R, B> {
    type Service = Filter<S, R, B>;

    fn layer(&self, inner: S) -> Filter<S, R, B> {
        Filter {
            shared: Arc::new(Shared {
                inner,
                rule: self.rule.clone(),
            }),
            storage: self.storage.clone(),
        }
    }
}

/// One filter in front of `S`: a tower `Service` running rule `R`, its future kept as `B`
/// says.
pub struct Filter<S, R, B = Boxed> {
    shared: Arc<Shared<S, R>>,
    storage: B,
}

struct Shared<S, R> {
    inner: S,
    rule: R,
}

impl<S, R, B: Clone> Clone for Filter<S, R, B> {
    fn clone(&self) -> Self {
        Filter {
            shared: self.shared.clone(),
            storage: self.storage.clone(),
        }
    }
}

impl<S: Inner, R: Rule<S>, B: Storage> Service<Request<Body>> for Filter<S, R, B> {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = FilterFuture<B::Stored<R::Future>>;

    /// Always ready: [`Next::run`] makes the inner service ready, on the clone it calls.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let next = Next {
            inner: self.shared.inner.clone(),
        };
        let rule = &self.shared.rule;
        FilterFuture {
            rule: B::store(|| rule.call(req, next)),
        }
    }
}

pin_project! {
    /// A rule's future, answering as a tower service does.
    pub struct FilterFuture<F> {
        #[pin]
        rule: F,
    }
}

impl<F: Future<Output = Response<Body>>> Future for FilterFuture<F> {
    type Output = Result<Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().rule.poll(cx).map(Ok)
    }
}

/// A filter behind one pointer to a trait object: where the chain's type stops growing.
///
/// Each filter's type names the chain below it three times (the filter's, its rule's
/// `Next`'s and its future's), so nine nested filters have a type name of 3^9 times the
/// innermost one's: 20 MB per name, written into the debug info of every binary that
/// builds the chain (465 MB of `.debug_str` per role binary, which filled CI's disk).
/// An erased filter's outer neighbours see `Erased` instead. It costs one virtual call per
/// request: the filter's own boxed future is handed out as the trait object, and cloning
/// is the reference count a `Filter` clone is anyway.
#[derive(Clone)]
pub struct Erased {
    filter: Arc<dyn Call>,
}

/// A `Shared` filter, called through a trait object.
trait Call: Send + Sync + 'static {
    fn call(&self, req: Request<Body>) -> Pin<Box<dyn Answer>>;
}

impl<S: Inner, R: Rule<S>> Call for Shared<S, R> {
    fn call(&self, req: Request<Body>) -> Pin<Box<dyn Answer>> {
        let next = Next {
            inner: self.inner.clone(),
        };
        Boxed::store(|| self.rule.call(req, next))
    }
}

impl Service<Request<Body>> for Erased {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = FilterFuture<Pin<Box<dyn Answer>>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        FilterFuture {
            rule: self.filter.call(req),
        }
    }
}

/// Erases the (boxed) filter it wraps: [`Erased`].
#[derive(Clone, Copy, Debug, Default)]
pub struct EraseLayer;

impl<S: Inner, R: Rule<S>> Layer<Filter<S, R, Boxed>> for EraseLayer {
    type Service = Erased;

    fn layer(&self, filter: Filter<S, R, Boxed>) -> Erased {
        Erased {
            filter: filter.shared,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::test_util::body_string;
    use kas_endpoints::body;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tower::ServiceExt;

    #[derive(Clone)]
    struct Tag(&'static str);

    /// Appends its tag to the `Tag`s the request carries, then passes it on.
    async fn tag<S: Inner>(
        tag: &'static str,
        mut req: Request<Body>,
        next: Next<S>,
    ) -> Response<Body> {
        let mut tags: Vec<Tag> = req.extensions_mut().remove().unwrap_or_default();
        tags.push(Tag(tag));
        req.extensions_mut().insert(tags);
        next.run(req).await
    }

    /// The same as a plain function, as a rule that does not await is written.
    fn tag_now<S: Inner>(
        tag: &'static str,
        mut req: Request<Body>,
        next: Next<S>,
    ) -> NextFuture<S> {
        let mut tags: Vec<Tag> = req.extensions_mut().remove().unwrap_or_default();
        tags.push(Tag(tag));
        req.extensions_mut().insert(tags);
        next.run(req)
    }

    async fn refuse<S: Inner>(_: Request<Body>, _: Next<S>) -> Response<Body> {
        let mut resp = Response::new(body::full("refused"));
        *resp.status_mut() = http::StatusCode::FORBIDDEN;
        resp
    }

    fn echo_tags() -> impl Inner {
        tower::service_fn(|req: Request<Body>| async move {
            let tags: Vec<Tag> = req.extensions().get().cloned().unwrap_or_default();
            let names: Vec<&str> = tags.iter().map(|t| t.0).collect();
            Ok::<_, Infallible>(Response::new(body::full(names.join(","))))
        })
    }

    #[tokio::test]
    async fn filters_run_in_request_order() {
        let svc = tower::ServiceBuilder::new()
            .layer(from_fn_with_state("outer", tag))
            .layer(from_fn_with_state("inner", tag))
            .service(echo_tags());
        let resp = svc.oneshot(Request::new(body::empty())).await.unwrap();
        assert_eq!(body_string(resp).await, "outer,inner");
    }

    #[tokio::test]
    async fn an_erased_filter_runs_where_it_stands() {
        let svc = tower::ServiceBuilder::new()
            .layer(from_fn_with_state("first", tag_now))
            .layer(EraseLayer)
            .layer(from_fn_with_state("second", tag))
            .layer(from_fn_with_state("third", tag_now))
            .service(echo_tags());
        // Twice through the same (cloned) chain: erasure shares the filter, it does not
        // consume it.
        for _ in 0..2 {
            let resp = svc
                .clone()
                .oneshot(Request::new(body::empty()))
                .await
                .unwrap();
            assert_eq!(body_string(resp).await, "first,second,third");
        }
        let refused = tower::ServiceBuilder::new()
            .layer(EraseLayer)
            .layer(from_fn(refuse))
            .service(echo_tags());
        let resp = refused.oneshot(Request::new(body::empty())).await.unwrap();
        assert_eq!(resp.status(), http::StatusCode::FORBIDDEN);
    }

    #[tokio::test]
    async fn boxed_and_inline_filters_chain_alike() {
        let svc = tower::ServiceBuilder::new()
            .layer(from_fn_with_state("first", tag_now).inline())
            .layer(from_fn_with_state("second", tag))
            .layer(from_fn_with_state("third", tag).inline())
            .layer(from_fn_with_state("fourth", tag_now))
            .service(echo_tags());
        let resp = svc.oneshot(Request::new(body::empty())).await.unwrap();
        assert_eq!(body_string(resp).await, "first,second,third,fourth");
    }

    #[tokio::test]
    async fn a_rule_that_answers_stops_the_chain() {
        let called = Arc::new(AtomicUsize::new(0));
        let seen = called.clone();
        let svc = from_fn(refuse).layer(tower::service_fn(move |_req: Request<Body>| {
            seen.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, Infallible>(Response::new(body::empty())) }
        }));
        let resp = svc.oneshot(Request::new(body::empty())).await.unwrap();
        assert_eq!(resp.status(), 403);
        assert_eq!(body_string(resp).await, "refused");
        assert_eq!(called.load(Ordering::SeqCst), 0);
    }

    /// Not ready until polled twice; counts the calls it gets.
    #[derive(Clone)]
    struct SlowToReady {
        polls: usize,
        calls: Arc<AtomicUsize>,
    }

    impl Service<Request<Body>> for SlowToReady {
        type Response = Response<Body>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Response<Body>, Infallible>>;

        fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            self.polls += 1;
            if self.polls < 2 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request<Body>) -> Self::Future {
            assert!(self.polls >= 2, "called before it was ready");
            self.calls.fetch_add(1, Ordering::SeqCst);
            std::future::ready(Ok(Response::new(body::empty())))
        }
    }

    #[tokio::test]
    async fn next_waits_for_the_inner_service_to_be_ready() {
        let calls = Arc::new(AtomicUsize::new(0));
        let svc = from_fn_with_state("t", tag).layer(SlowToReady {
            polls: 0,
            calls: calls.clone(),
        });
        for _ in 0..2 {
            let resp = svc
                .clone()
                .oneshot(Request::new(body::empty()))
                .await
                .unwrap();
            assert_eq!(resp.status(), 200);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }
}
