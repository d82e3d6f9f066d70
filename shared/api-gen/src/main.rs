//! `cargo run -p kas-api-gen`: writes kas-api's generated schema tables.

use anyhow::Result;

fn main() -> Result<()> {
    let root = kas_api_gen::workspace_root();
    let out = root.join(kas_api_gen::OUT_DIR);
    let files = kas_api_gen::generate(&root)?;
    if out.exists() {
        std::fs::remove_dir_all(&out)?;
    }
    for (path, text) in &files {
        let path = out.join(path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, text)?;
    }
    println!("wrote {} files under {}", files.len(), out.display());
    Ok(())
}
