//! The official Python client (`pip install kubernetes`) works unchanged against the
//! aggregator.

use kas_e2e::start_cluster;

#[test]
fn the_python_client_works_unchanged() {
    let c = start_cluster(|_| {});
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/client_smoke.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(c.kubeconfig_path())
        .output()
        .expect("python3 on PATH");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("python client ok"),
        "the Python client failed (needs `pip install kubernetes`):\n{stdout}\n{stderr}"
    );
}
