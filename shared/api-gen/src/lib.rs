//! kas-api-gen: generates kas-api's schema tables (`shared/api/src/generated/`) from data
//! that dependencies carry, so that no protobuf number, JSON name or description of
//! upstream's API types is typed by hand:
//!
//! - **k8s-pb 0.8** (prost's bindings of Kubernetes 1.33's `generated.proto`): which messages
//!   exist, their fields in Go struct order, protobuf numbers and types, the Go markers in
//!   their comments (`+listType`, `+listMapKey`, `+patchStrategy`, `+patchMergeKey`,
//!   `+structType`), and each top-level kind's group, version, plural and scope;
//! - **k8s-openapi 0.29** (`v1_33`): JSON names, descriptions and `required`, as upstream's
//!   OpenAPI has them;
//! - **the overlay** ([`overlay`]): the Go facts neither carries (pointers, `omitempty`).
//!
//! Both crates are read as source text with syn (`cargo metadata` says where cargo put
//! them); neither is compiled into the tables. `cargo run -p kas-api-gen` writes the
//! files; the crate's test fails when they are stale.
//!
//! Must not be depended on by anything that ships: it is a development tool.

mod emit;
mod model;
mod openapi;
mod overlay;
mod packages;
mod pb;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Where the generated files go, relative to the workspace root.
pub const OUT_DIR: &str = "shared/api/src/generated";

/// The generated files, by path relative to [`OUT_DIR`].
pub fn generate(workspace: &Path) -> Result<BTreeMap<String, String>> {
    let pb = source_dir(workspace, "k8s-pb", "0.8.")?.join("src");
    let openapi = source_dir(workspace, "k8s-openapi", "0.29.")?.join("src/v1_33");
    let mut defs = BTreeMap::new();
    for p in packages::PACKAGES {
        let dir = p.pb.iter().fold(openapi.clone(), |d, m| d.join(m));
        // meta/v1beta1 has no definitions of its own in the OpenAPI.
        if dir.is_dir() {
            openapi::read_dir(&dir, &mut defs)?;
        }
    }
    let model = model::build(&pb, &defs)?;
    emit::files(&model)
}

/// The source directory of a dependency, from `cargo metadata`.
fn source_dir(workspace: &Path, name: &str, version_prefix: &str) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // Resolved for this host only: other platforms' dependencies need not be downloaded.
    let output = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--filter-platform", &host_triple()?])
        .current_dir(workspace)
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let meta: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let packages = meta["packages"].as_array().context("no packages")?;
    let manifest = packages
        .iter()
        .find(|p| {
            p["name"] == name
                && p["version"]
                    .as_str()
                    .is_some_and(|v| v.starts_with(version_prefix))
        })
        .and_then(|p| p["manifest_path"].as_str())
        .with_context(|| format!("{name} {version_prefix}x is not a dependency"))?;
    Ok(Path::new(manifest)
        .parent()
        .context("manifest without a directory")?
        .to_path_buf())
}

fn host_triple() -> Result<String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let output = std::process::Command::new(rustc).arg("-vV").output()?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .context("rustc -vV names no host")
}

/// The workspace root, from this crate's manifest directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
