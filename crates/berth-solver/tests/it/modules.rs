//! The crate's files depend on each other without a circle: each names only files below it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module of each file: `src/x.rs` is `x`, `src/builtin/*.rs` belong to `builtin` and
/// `src/search/*.rs` to `search`.
fn sources() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut add = |module: String, path: &Path| {
        let text = std::fs::read_to_string(path).expect("readable source");
        // Each file's own code: a `#[cfg(test)]` tail ends that file only.
        let all = out.entry(module).or_default();
        all.push_str(&code(&text));
        all.push('\n');
    };
    for dir in [src.clone(), src.join("builtin"), src.join("search")] {
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("source directory")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        files.sort();
        for f in files {
            let stem = f.file_stem().and_then(|s| s.to_str()).expect("utf-8 name");
            let module = if dir == src {
                stem
            } else {
                dir.file_name()
                    .and_then(|s| s.to_str())
                    .expect("utf-8 name")
            };
            if module != "lib" && module != "tests" {
                add(module.to_string(), &f);
            }
        }
    }
    out
}

/// Code only: line comments (docs included) and the `#[cfg(test)]` tail dropped.
fn code(text: &str) -> String {
    uncommented(text.split("#[cfg(test)]").next().unwrap_or(""))
}

fn uncommented(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn idents(s: &str) -> Vec<String> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Which module each name re-exported by `lib.rs` comes from.
fn reexports() -> BTreeMap<String, String> {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("lib.rs");
    let mut out = BTreeMap::new();
    for stmt in uncommented(&lib).split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once("::") else {
            continue;
        };
        for n in idents(names) {
            out.insert(n, module.trim().to_string());
        }
    }
    out
}

/// The modules each module names through `crate::` paths (re-exports resolved).
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let files = sources();
    let names = reexports();
    let mut g = BTreeMap::new();
    for (module, text) in &files {
        let code = code(text);
        let mut deps = BTreeSet::new();
        for part in code.split("crate::").skip(1) {
            // `crate::a::b`, `crate::A` or `crate::{A, b::C}`.
            let head: String = if let Some(list) = part.strip_prefix('{') {
                list.split('}').next().unwrap_or("").to_string()
            } else {
                idents(part).into_iter().next().unwrap_or_default()
            };
            for item in head.split(',') {
                let Some(first) = idents(item).into_iter().next() else {
                    continue;
                };
                let target = if files.contains_key(&first) {
                    Some(first)
                } else {
                    names.get(&first).cloned()
                };
                if let Some(t) = target.filter(|t| t != module) {
                    deps.insert(t);
                }
            }
        }
        g.insert(module.clone(), deps);
    }
    g
}

#[test]
fn module_dependencies_form_a_dag() {
    let g = graph();
    // The engine reads the split; the split knows nothing of the engine or of `combine`.
    assert!(g["search"].contains("decompose"), "{g:?}");
    assert!(!g["decompose"].contains("search") && !g["decompose"].contains("combine"));
    // Depth-first search for a back edge.
    fn visit(
        m: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        path.push(m.to_string());
        match state.get(m) {
            Some(1) => return Some(path.clone()),
            Some(_) => {
                path.pop();
                return None;
            }
            None => {}
        }
        state.insert(m.to_string(), 1);
        for d in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(d, g, state, path) {
                return Some(c);
            }
        }
        state.insert(m.to_string(), 2);
        path.pop();
        None
    }
    let mut state = BTreeMap::new();
    for m in g.keys() {
        let mut path = Vec::new();
        if let Some(circle) = visit(m, &g, &mut state, &mut path) {
            panic!("module circle: {}", circle.join(" -> "));
        }
    }
}
