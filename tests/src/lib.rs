//! kas-e2e: the harness of the end-to-end tests and of `kas-bench`: an HTTP/1.1 and
//! HTTP/2 client over rustls (with or without a client certificate), and a closed-loop
//! load generator with per-request latencies.
//!
//! Clusters come from kas-local, the same launcher users run.

pub mod client;
pub mod load;

use std::path::PathBuf;

/// Where cargo put the role binaries: the test executable lives in `target/<profile>/deps`.
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let mut dir = exe.parent().expect("exe dir").to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    for bin in ["aggregator", "core-apiserver", "extensions-apiserver"] {
        assert!(
            dir.join(bin).exists(),
            "{} is missing: run `cargo build --workspace --bins` before the tests",
            dir.join(bin).display()
        );
    }
    dir
}
