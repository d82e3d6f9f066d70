//! The checked-in tables are what the generator writes today.

#[test]
fn generated_tables_are_fresh() {
    let root = kas_api_gen::workspace_root();
    let out = root.join(kas_api_gen::OUT_DIR);
    let files = kas_api_gen::generate(&root).expect("generate");
    for (path, text) in &files {
        let on_disk = std::fs::read_to_string(out.join(path)).unwrap_or_default();
        assert!(
            on_disk == *text,
            "{path} is stale: run `cargo run -p kas-api-gen` and commit the result"
        );
    }
    let mut extra = Vec::new();
    walk(&out, &out, &mut extra);
    extra.retain(|p| !files.contains_key(p));
    assert!(
        extra.is_empty(),
        "files the generator no longer writes: {extra:?}"
    );
}

fn walk(root: &std::path::Path, dir: &std::path::Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("read generated dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            walk(root, &path, out);
        } else if let Ok(rel) = path.strip_prefix(root) {
            out.push(rel.to_string_lossy().into_owned());
        }
    }
}
