//! `/healthz`, `/livez` and `/readyz` with named checks, `?verbose`, `?exclude=` and
//! `/<endpoint>/<check>`, writing exactly what upstream's healthz handlers write.

use std::fmt::Write as _;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::future::BoxFuture;
use http::{Response, StatusCode};
use kas_endpoints::responsewriters::http_error;
use kas_endpoints::{Body, body};

/// One named check, after upstream's `healthz.HealthChecker`.
pub trait HealthCheck: Send + Sync {
    fn name(&self) -> &str;
    /// `Err` carries the reason; it is logged, and withheld from the HTTP answer as
    /// upstream does.
    fn check(&self) -> BoxFuture<'_, Result<(), String>>;
}

pub type DynHealthCheck = Arc<dyn HealthCheck>;

/// A check from its name and a function, after upstream's `healthz.NamedCheck`: how a
/// crate that does not know this trait (kas-storage-etcd's `etcd` check) is registered.
pub fn named_check<F, Fut>(name: &'static str, check: F) -> DynHealthCheck
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    Arc::new(NamedCheck { name, check })
}

struct NamedCheck<F> {
    name: &'static str,
    check: F,
}

impl<F, Fut> HealthCheck for NamedCheck<F>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    fn name(&self) -> &str {
        self.name
    }
    fn check(&self) -> BoxFuture<'_, Result<(), String>> {
        Box::pin((self.check)())
    }
}

/// The checks of the three health endpoints.
#[derive(Clone, Default)]
pub struct Health {
    healthz: Vec<DynHealthCheck>,
    livez: Vec<DynHealthCheck>,
    readyz: Vec<DynHealthCheck>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Healthz,
    Livez,
    Readyz,
}

impl Endpoint {
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::Healthz => "healthz",
            Endpoint::Livez => "livez",
            Endpoint::Readyz => "readyz",
        }
    }
}

impl Health {
    /// Upstream's defaults: `ping` and `log` on all three endpoints.
    pub fn new() -> Self {
        let mut health = Health::default();
        health.add_everywhere(Arc::new(AlwaysOk("ping")));
        // Upstream's `log` check fails when klog's flush blocks; tracing writes never block
        // on a flush, so it is always ok here.
        health.add_everywhere(Arc::new(AlwaysOk("log")));
        health
    }

    /// A check for /healthz, /livez and /readyz.
    pub fn add_everywhere(&mut self, check: DynHealthCheck) {
        self.healthz.push(check.clone());
        self.livez.push(check.clone());
        self.readyz.push(check);
    }

    /// A storage backend's check, on the endpoints of its scope.
    pub fn add_storage(&mut self, check: kas_storage::health::HealthCheck) {
        use kas_storage::health::Scope;
        let scope = check.scope;
        let named = named_check(check.name, move || check.run());
        match scope {
            Scope::Everywhere => self.add_everywhere(named),
            Scope::WithoutLivez => {
                self.healthz.push(named.clone());
                self.readyz.push(named);
            }
            Scope::Readyz => self.add_readyz(named),
        }
    }

    /// A check for /readyz only (upstream's `AddReadyzChecks`).
    pub fn add_readyz(&mut self, check: DynHealthCheck) {
        self.readyz.push(check);
    }

    pub fn checks(&self, endpoint: Endpoint) -> &[DynHealthCheck] {
        match endpoint {
            Endpoint::Healthz => &self.healthz,
            Endpoint::Livez => &self.livez,
            Endpoint::Readyz => &self.readyz,
        }
    }

    /// Runs every check of `endpoint` and says whether all passed, with each check's result.
    pub async fn evaluate(&self, endpoint: Endpoint) -> Vec<(String, Result<(), String>)> {
        let mut results = Vec::new();
        for check in self.checks(endpoint) {
            results.push((check.name().to_owned(), check.check().await));
        }
        results
    }

    /// Serves `/<endpoint>` or `/<endpoint>/<check>`.
    pub async fn serve(
        &self,
        endpoint: Endpoint,
        check: Option<&str>,
        query: Option<&str>,
    ) -> Response<Body> {
        match check {
            Some(name) => self.serve_one(endpoint, name).await,
            None => self.serve_root(endpoint, query).await,
        }
    }

    async fn serve_one(&self, endpoint: Endpoint, name: &str) -> Response<Body> {
        // Upstream registers one path per check; any other falls through to its mux's
        // not-found handler, Go's `http.NotFound`.
        let Some(check) = self.checks(endpoint).iter().find(|c| c.name() == name) else {
            return http_error(StatusCode::NOT_FOUND, "404 page not found");
        };
        match check.check().await {
            Ok(()) => ok("ok".to_owned()),
            Err(reason) => http_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("internal server error: {reason}"),
            ),
        }
    }

    async fn serve_root(&self, endpoint: Endpoint, query: Option<&str>) -> Response<Body> {
        let mut verbose = false;
        let mut excluded: Vec<String> = Vec::new();
        for (key, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            match &*key {
                "verbose" => verbose = true,
                "exclude" => excluded.push(value.into_owned()),
                _ => {}
            }
        }
        let mut out = String::new();
        let mut failed = Vec::new();
        for check in self.checks(endpoint) {
            let name = check.name();
            if let Some(i) = excluded.iter().position(|e| e == name) {
                excluded.swap_remove(i);
                let _ = writeln!(out, "[+]{name} excluded: ok");
                continue;
            }
            match check.check().await {
                Ok(()) => {
                    let _ = writeln!(out, "[+]{name} ok");
                }
                Err(reason) => {
                    let _ = writeln!(out, "[-]{name} failed: reason withheld");
                    failed.push(format!("{name}: {reason}"));
                }
            }
        }
        if !excluded.is_empty() {
            excluded.sort();
            let quoted: Vec<String> = excluded.iter().map(|e| format!("{e:?}")).collect();
            let _ = writeln!(
                out,
                "warn: some health checks cannot be excluded: no matches for {}",
                quoted.join(",")
            );
        }
        let name = endpoint.name();
        if !failed.is_empty() {
            tracing::info!(endpoint = name, failed = %failed.join("; "), "health check failed");
            return http_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("{out}{name} check failed"),
            );
        }
        if !verbose {
            return ok("ok".to_owned());
        }
        let _ = writeln!(out, "{name} check passed");
        ok(out)
    }
}

/// A passing answer, with the headers upstream's healthz handlers set.
fn ok(body_text: String) -> Response<Body> {
    let mut resp = Response::new(body::full(body_text));
    let headers = resp.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        "x-content-type-options",
        http::HeaderValue::from_static("nosniff"),
    );
    resp
}

/// `ping` and `log`.
struct AlwaysOk(&'static str);

impl HealthCheck for AlwaysOk {
    fn name(&self) -> &str {
        self.0
    }
    fn check(&self) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
}

/// `shutdown`: fails from the moment graceful shutdown begins.
#[derive(Clone, Default)]
pub struct ShutdownCheck(pub Arc<AtomicBool>);

impl HealthCheck for ShutdownCheck {
    fn name(&self) -> &str {
        "shutdown"
    }
    fn check(&self) -> BoxFuture<'_, Result<(), String>> {
        let down = self.0.load(Ordering::Acquire);
        Box::pin(async move {
            if down {
                Err("process is shutting down".to_owned())
            } else {
                Ok(())
            }
        })
    }
}

/// A post-start hook's completion, after upstream's `postStartHookHealthz`: the check
/// `poststarthook/<name>` on /healthz, /livez and /readyz fails ("not finished") until the
/// role marks the hook [`done`](PostStartHook::done). Registered before the server starts
/// (see `run::main_with_hooks`); clones share the state.
#[derive(Clone, Debug)]
pub struct PostStartHook {
    check_name: String,
    done: Arc<AtomicBool>,
}

impl PostStartHook {
    /// The hook `name`, as upstream names it (`rbac/bootstrap-roles`...).
    pub fn new(name: &str) -> Self {
        PostStartHook {
            check_name: format!("poststarthook/{name}"),
            done: Arc::default(),
        }
    }

    /// A check named `name` itself that passes once marked done, as upstream's
    /// `AddBootSequenceHealthChecks` adds one (`autoregister-completion`) among the hooks.
    pub fn boot_sequence_check(name: &str) -> Self {
        PostStartHook {
            check_name: name.to_owned(),
            done: Arc::default(),
        }
    }

    /// The hook's name, without the `poststarthook/` prefix.
    pub fn name(&self) -> &str {
        self.check_name
            .strip_prefix("poststarthook/")
            .unwrap_or(&self.check_name)
    }

    /// Marks the hook's work complete; its check passes from now on.
    pub fn done(&self) {
        self.done.store(true, Ordering::Release);
    }

    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
}

impl HealthCheck for PostStartHook {
    fn name(&self) -> &str {
        &self.check_name
    }
    fn check(&self) -> BoxFuture<'_, Result<(), String>> {
        let done = self.is_done();
        Box::pin(async move {
            if done {
                Ok(())
            } else {
                Err("not finished".to_owned())
            }
        })
    }
}

/// Marks done the hook of `hooks` named `name`, if registered.
pub fn mark_done(hooks: &[PostStartHook], name: &str) {
    hooks
        .iter()
        .filter(|h| h.name() == name)
        .for_each(PostStartHook::done);
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    struct Failing;
    impl HealthCheck for Failing {
        fn name(&self) -> &str {
            "broken"
        }
        fn check(&self) -> BoxFuture<'_, Result<(), String>> {
            Box::pin(async { Err("secret detail".to_owned()) })
        }
    }

    async fn body_text(resp: Response<Body>) -> (u16, String) {
        let code = resp.status().as_u16();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        (code, String::from_utf8(bytes.to_vec()).unwrap())
    }

    fn health() -> (Health, ShutdownCheck) {
        let mut h = Health::new();
        let shutdown = ShutdownCheck::default();
        h.add_readyz(Arc::new(shutdown.clone()));
        (h, shutdown)
    }

    #[tokio::test]
    async fn verbose_lists_checks_and_plain_says_ok() {
        let (h, _) = health();
        assert_eq!(
            body_text(h.serve(Endpoint::Readyz, None, None).await).await,
            (200, "ok".into())
        );
        let (code, text) = body_text(h.serve(Endpoint::Readyz, None, Some("verbose")).await).await;
        assert_eq!(code, 200);
        assert_eq!(
            text,
            "[+]ping ok\n[+]log ok\n[+]shutdown ok\nreadyz check passed\n"
        );
        let (_, text) = body_text(h.serve(Endpoint::Livez, None, Some("verbose")).await).await;
        assert_eq!(text, "[+]ping ok\n[+]log ok\nlivez check passed\n");
    }

    #[tokio::test]
    async fn post_start_hooks_fail_everywhere_until_done() {
        // As the server registers them: the hooks, then `shutdown` last on /readyz.
        let mut h = Health::new();
        let hook = PostStartHook::new("rbac/bootstrap-roles");
        h.add_everywhere(Arc::new(hook.clone()));
        h.add_readyz(Arc::new(ShutdownCheck::default()));
        for endpoint in [Endpoint::Healthz, Endpoint::Livez] {
            let (code, text) = body_text(h.serve(endpoint, None, Some("verbose")).await).await;
            assert_eq!(code, 500);
            assert_eq!(
                text,
                format!(
                    "[+]ping ok\n[+]log ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n{} check failed\n",
                    endpoint.name()
                )
            );
        }
        let one = h
            .serve(
                Endpoint::Readyz,
                Some("poststarthook/rbac/bootstrap-roles"),
                None,
            )
            .await;
        assert_eq!(
            body_text(one).await,
            (500, "internal server error: not finished\n".into())
        );
        mark_done(std::slice::from_ref(&hook), "other");
        assert!(!hook.is_done());
        mark_done(std::slice::from_ref(&hook), "rbac/bootstrap-roles");
        let (code, text) = body_text(h.serve(Endpoint::Readyz, None, Some("verbose")).await).await;
        assert_eq!(code, 200);
        assert_eq!(
            text,
            "[+]ping ok\n[+]log ok\n[+]poststarthook/rbac/bootstrap-roles ok\n[+]shutdown ok\nreadyz check passed\n"
        );
    }

    #[tokio::test]
    async fn shutdown_fails_readyz_only_and_withholds_reason() {
        let (h, shutdown) = health();
        shutdown.0.store(true, Ordering::Release);
        let (code, text) = body_text(h.serve(Endpoint::Readyz, None, None).await).await;
        assert_eq!(code, 500);
        assert_eq!(
            text,
            "[+]ping ok\n[+]log ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n"
        );
        assert_eq!(
            body_text(h.serve(Endpoint::Livez, None, None).await)
                .await
                .0,
            200
        );
        let (code, text) = body_text(h.serve(Endpoint::Readyz, Some("shutdown"), None).await).await;
        assert_eq!(
            (code, text.as_str()),
            (500, "internal server error: process is shutting down\n")
        );
    }

    #[tokio::test]
    async fn exclude_skips_and_warns_about_unknown_names() {
        let mut h = Health::new();
        h.add_readyz(Arc::new(Failing));
        let (code, text) = body_text(
            h.serve(
                Endpoint::Readyz,
                None,
                Some("verbose&exclude=broken&exclude=nope"),
            )
            .await,
        )
        .await;
        assert_eq!(code, 200);
        assert_eq!(
            text,
            "[+]ping ok\n[+]log ok\n[+]broken excluded: ok\nwarn: some health checks cannot be excluded: no matches for \"nope\"\nreadyz check passed\n"
        );
        assert!(!text.contains("secret"));
    }

    #[tokio::test]
    async fn single_check_paths() {
        let (h, _) = health();
        assert_eq!(
            body_text(h.serve(Endpoint::Readyz, Some("ping"), None).await).await,
            (200, "ok".into())
        );
        // `shutdown` is a readyz check only: elsewhere it is as unknown as any other name.
        for (endpoint, name) in [
            (Endpoint::Readyz, "nope"),
            (Endpoint::Livez, "shutdown"),
            (Endpoint::Healthz, "ping/extra"),
        ] {
            let resp = h.serve(endpoint, Some(name), None).await;
            let headers = resp.headers().clone();
            assert_eq!(
                body_text(resp).await,
                (404, "404 page not found\n".into()),
                "{endpoint:?}/{name}"
            );
            assert_eq!(headers["content-type"], "text/plain; charset=utf-8");
            assert_eq!(headers["x-content-type-options"], "nosniff");
        }
    }

    #[tokio::test]
    async fn named_checks_run_their_function_on_every_request() {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = calls.clone();
        let mut h = Health::new();
        h.add_readyz(named_check("flaky", move || {
            let n = seen.fetch_add(1, Ordering::AcqRel);
            async move {
                if n == 0 {
                    Ok(())
                } else {
                    Err(format!("call {n}"))
                }
            }
        }));
        let (code, text) = body_text(h.serve(Endpoint::Readyz, None, Some("verbose")).await).await;
        assert_eq!(
            (code, text.as_str()),
            (
                200,
                "[+]ping ok\n[+]log ok\n[+]flaky ok\nreadyz check passed\n"
            )
        );
        let (code, text) = body_text(h.serve(Endpoint::Readyz, Some("flaky"), None).await).await;
        assert_eq!(
            (code, text.as_str()),
            (500, "internal server error: call 1\n")
        );
        assert_eq!(calls.load(Ordering::Acquire), 2);
    }
}
