//! The environment every rule and messageExpression compiles in, after upstream's base
//! environment (`k8s.io/apiserver/pkg/cel/environment`): cel-rust's standard library with
//! the strings extension, then the Kubernetes libraries this crate implements: lists,
//! regex and sets (`library.rs`), quantity (`quantity.rs`), semver (`semver.rs`), IP/CIDR (`ip.rs`), URLs
//! (`url.rs`), named formats (`format.rs`) and two-variable comprehensions
//! (`comprehensions.rs`).

use std::sync::Arc;

use cel::{Env, extensions};

/// Upstream's base environment for stored CRD rules, built once per `Validator`.
pub(crate) fn env() -> Arc<Env> {
    let mut env = Env::stdlib();
    // Registration only fails on a name clash, which these names are chosen to avoid.
    let _ = env.add_extension(extensions::strings);
    let _ = super::library::add_lists(&mut env);
    let _ = super::library::add_regex(&mut env);
    let _ = super::library::add_sets(&mut env);
    let _ = super::quantity::add(&mut env);
    let _ = super::semver::add(&mut env);
    let _ = super::ip::add(&mut env);
    let _ = super::url::add(&mut env);
    let _ = super::format::add(&mut env);
    let _ = super::comprehensions::add(&mut env);
    Arc::new(env)
}
