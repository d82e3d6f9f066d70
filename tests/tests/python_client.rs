//! The official Python client (`kubernetes` from PyPI) works unchanged against the
//! aggregator. When `python3` cannot import it, kas-local's tools obtain it into the
//! repository's tool cache first (`pip install --target`), so the test needs no manual
//! `pip install`.

use kas_e2e::start_cluster;
use kas_local::Tools;

/// Runs `tests/python/<script>` with the cluster's kubeconfig and expects it to print
/// `done`.
fn run_script(script: &str, done: &str) {
    let mut python = Tools::from_env()
        .python_client()
        .unwrap_or_else(|e| panic!("{e}"));
    let c = start_cluster(|_| {});
    let script = format!("{}/python/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = python
        .arg(script)
        .arg(c.kubeconfig_path())
        .output()
        .expect("python3 on PATH");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(done),
        "the Python client failed:\n{stdout}\n{stderr}"
    );
}

#[test]
fn the_python_client_works_unchanged() {
    run_script("client_smoke.py", "python client ok");
}

#[test]
fn the_python_client_s_custom_objects_api_works_unchanged() {
    run_script("custom_objects.py", "python custom objects ok");
}
