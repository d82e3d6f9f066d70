//! The code's layering, checked on the sources: no two files of a crate import each other
//! through a chain of `crate::`/`super::` paths (a submodule may use its parent, which it is
//! part of), and the registry's store imports nothing of the HTTP side.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

/// Every crate's `src` directory.
fn crate_sources(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !path.is_dir() || name.starts_with('.') || name == "target" {
                continue;
            }
            if name == "src" && dir.join("Cargo.toml").exists() {
                out.push(path);
            } else {
                dirs.push(path);
            }
        }
    }
    out.sort();
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's module path: `store/mod.rs` → `["store"]`, `lib.rs` → `[]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file
        .strip_prefix(src)
        .expect("under src")
        .with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The code of a file, without comments and without its test module.
fn code(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `::`-separated words after each occurrence of `prefix` (`crate::`, `super::`).
fn paths_after<'a>(text: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices(prefix) {
        let before = text[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[i + prefix.len()..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        out.push(rest[..end].split("::").filter(|s| !s.is_empty()).collect());
    }
    out
}

/// The import edges between one crate's module files.
fn edges(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let resolve = |path: Vec<String>| -> Option<Vec<String>> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| modules.contains_key(p))
    };
    let mut out = BTreeMap::new();
    for (module, file) in &modules {
        let text = code(file);
        let mut targets = BTreeSet::new();
        for path in paths_after(&text, "crate::") {
            targets.extend(resolve(path.iter().map(|s| s.to_string()).collect()));
        }
        let parent = &module[..module.len().saturating_sub(1)];
        for path in paths_after(&text, "super::") {
            let mut full = parent.to_vec();
            full.extend(path.iter().map(|s| s.to_string()));
            targets.extend(resolve(full));
        }
        // A module is part of its ancestors: using them is not an edge.
        targets.retain(|t| t != module && !module.starts_with(t));
        out.insert(module.clone(), targets);
    }
    out
}

/// The modules that sit on a cycle (Tarjan's strongly connected components of size > 1).
fn cycles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        found: Vec<Vec<Vec<String>>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a Vec<String>) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        for t in w.graph.get(v).into_iter().flatten() {
            if !w.index.contains_key(t) {
                visit(w, t);
                let low = w.low[v].min(w.low[t]);
                w.low.insert(v, low);
            } else if w.stack.contains(&t) {
                let low = w.low[v].min(w.index[t]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let mut component = Vec::new();
            while let Some(t) = w.stack.pop() {
                component.push(t.clone());
                if t == v {
                    break;
                }
            }
            if component.len() > 1 {
                w.found.push(component);
            }
        }
    }
    let mut w = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    w.found
}

#[test]
fn no_file_imports_itself_through_others() {
    let root = workspace();
    let sources = crate_sources(&root);
    assert!(sources.len() > 10, "found only {sources:?}");
    let mut problems = Vec::new();
    for src in &sources {
        for component in cycles(&edges(src)) {
            let names: Vec<String> = component.iter().map(|m| m.join("/")).collect();
            problems.push(format!("{}: {}", src.display(), names.join(" <-> ")));
        }
    }
    assert!(
        problems.is_empty(),
        "import cycles:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checker_finds_a_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::B;\npub struct A;\n").unwrap();
    std::fs::write(src.join("b.rs"), "pub struct B(crate::a::A);\n").unwrap();
    assert_eq!(cycles(&edges(src)).len(), 1);
    std::fs::write(src.join("b.rs"), "// crate::a::A\npub struct B;\n").unwrap();
    assert!(cycles(&edges(src)).is_empty(), "comments are not imports");
}

#[test]
fn the_registry_imports_nothing_of_the_http_side() {
    let manifest = std::fs::read_to_string(workspace().join("shared/registry/Cargo.toml")).unwrap();
    for crate_name in [
        "kas-endpoints",
        "kas-filters",
        "kas-server",
        "hyper",
        "http-body",
    ] {
        assert!(
            !manifest
                .lines()
                .any(|l| l.trim_start().starts_with(crate_name)),
            "kas-registry depends on {crate_name}"
        );
    }
}
