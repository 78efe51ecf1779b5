//! `xtask tidy`'s file rules: the files of each crate import each other without a circle (a
//! submodule naming its own ancestors is not counted), and no file passes the line budget.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Non-test code lines (not blank, not comments) a file may hold.
pub(crate) const LINE_BUDGET: usize = 1000;

/// Files allowed past the budget, each with its reason.
const OVER_BUDGET: &[(&str, &str)] = &[];

/// Circles known and being broken, by crate directory; tidy fails on any other.
const KNOWN_CIRCLES: &[(&str, &str)] = &[];

/// A crate's source file as a module path (`src/a/b.rs` is `a::b`, `lib.rs` the root).
struct File {
    path: PathBuf,
    code: String,
}

pub(crate) fn check(root: &Path, problems: &mut Vec<String>) -> Result<()> {
    let mut crates = Vec::new();
    for group in ["crates", "bins"] {
        let Ok(entries) = std::fs::read_dir(root.join(group)) else {
            continue;
        };
        for e in entries {
            let dir = e?.path();
            if dir.join("src").is_dir() {
                crates.push(dir);
            }
        }
    }
    crates.sort();
    for dir in crates {
        let rel = dir.strip_prefix(root).unwrap_or(&dir).display().to_string();
        let files = modules(&dir.join("src"))?;
        for (path, f) in &files {
            let n = code_lines(&f.code);
            let name = f.path.strip_prefix(root).unwrap_or(&f.path);
            let name = name.display().to_string();
            let allowed = OVER_BUDGET.iter().any(|(p, _)| *p == name);
            if n > LINE_BUDGET && !allowed {
                problems.push(format!(
                    "{name}: {n} code lines (not tests, blanks or comments); the budget is \
                     {LINE_BUDGET}: split it along its concerns (module `{}`)",
                    show(path)
                ));
            }
            if n <= LINE_BUDGET && allowed {
                problems.push(format!(
                    "{name}: {n} code lines, within the budget: remove it from OVER_BUDGET"
                ));
            }
        }
        let graph = graph(&files);
        let found = circles(&graph);
        if found.is_empty() && KNOWN_CIRCLES.iter().any(|(c, _)| *c == rel) {
            problems.push(format!(
                "{rel}: its files form a DAG now: remove it from KNOWN_CIRCLES"
            ));
        }
        for (part, path) in found {
            let names =
                |ms: &[Vec<String>]| ms.iter().map(|m| file_of(&files, m)).collect::<Vec<_>>();
            let mut text = names(&path).join(" -> ");
            if part.len() + 1 > path.len() {
                text = format!("{text} (the circle holds {})", names(&part).join(", "));
            }
            if KNOWN_CIRCLES.iter().any(|(c, _)| *c == rel) {
                continue;
            }
            problems.push(format!(
                "{rel}: files import each other: {text}; expected the files of a crate to form \
                 a DAG (move what both need into a file of its own)"
            ));
        }
    }
    Ok(())
}

fn show(m: &[String]) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

fn file_of(files: &BTreeMap<Vec<String>, File>, m: &[String]) -> String {
    files.get(m).map_or_else(
        || show(m),
        |f| {
            let s = f.path.display().to_string();
            s.split_once("/src/")
                .map_or(s.clone(), |(_, r)| r.to_string())
        },
    )
}

/// Every source file under `src`, keyed by module path; test files and `src/bin` are left out,
/// as is `main.rs` beside a `lib.rs` (a crate of its own that uses the library by name).
fn modules(src: &Path) -> Result<BTreeMap<Vec<String>, File>> {
    let mut paths = Vec::new();
    walk(src, &mut paths)?;
    let has_lib = src.join("lib.rs").exists();
    let mut out = BTreeMap::new();
    for p in paths {
        let rel = p.strip_prefix(src).unwrap_or(&p).with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.first().is_some_and(|f| f == "bin") || parts.iter().any(|c| c == "tests") {
            continue;
        }
        match parts.as_slice() {
            [x] if x == "lib" => parts.clear(),
            [x] if x == "main" => {
                if has_lib {
                    continue;
                }
                parts.clear();
            }
            _ => {
                if parts.last().is_some_and(|l| l == "mod") {
                    parts.pop();
                }
            }
        }
        let text =
            std::fs::read_to_string(&p).with_context(|| format!("cannot read {}", p.display()))?;
        out.insert(
            parts,
            File {
                path: p,
                code: code(&text),
            },
        );
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let p = e?.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    Ok(())
}

/// The code of a file: comment lines and `#[cfg(test)] mod … { … }` blocks dropped.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        if t.starts_with("#[cfg(test)]")
            && let Some(next) = lines.peek()
            && next.trim_start().starts_with("mod ")
            && next.trim_end().ends_with('{')
        {
            let mut depth = 0i64;
            for l in lines.by_ref() {
                depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
                if depth <= 0 {
                    break;
                }
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn code_lines(code: &str) -> usize {
    code.lines().filter(|l| !l.trim().is_empty()).count()
}

#[derive(Debug, PartialEq)]
enum Tok {
    Ident(String),
    Path,
    Open,
    Close,
    Comma,
    Star,
    Semi,
    Other,
}

fn tokens(code: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(code[s..i].to_string()));
            continue;
        }
        if c == b'"' {
            // Skip string literals so paths inside text do not count.
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            continue;
        }
        let t = match c {
            b':' if b.get(i + 1) == Some(&b':') => {
                i += 1;
                Tok::Path
            }
            b'{' => Tok::Open,
            b'}' => Tok::Close,
            b',' => Tok::Comma,
            b'*' => Tok::Star,
            b';' => Tok::Semi,
            c if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            _ => Tok::Other,
        };
        out.push(t);
        i += 1;
    }
    out
}

/// The paths a file names: each `use` tree expanded, and every `a::b` path in code, each with whether it is a re-export (`pub use`).
fn paths(toks: &[Tok]) -> Vec<(Vec<String>, bool)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if toks[i] == Tok::Ident("use".into()) {
            // `pub use` or `pub(crate) use`: `pub` `(` `crate` `)` `use`.
            let public = (i >= 1 && toks[i - 1] == Tok::Ident("pub".into()))
                || (i >= 4
                    && toks[i - 4] == Tok::Ident("pub".into())
                    && toks[i - 3] == Tok::Other
                    && toks[i - 1] == Tok::Other);
            let mut j = i + 1;
            let mut found = Vec::new();
            use_tree(toks, &mut j, Vec::new(), &mut found);
            out.extend(found.into_iter().map(|p| (p, public)));
            i = j;
            continue;
        }
        // Any `a::b` in code; `start` keeps those that begin in this crate.
        if let Tok::Ident(s) = &toks[i]
            && toks.get(i + 1) == Some(&Tok::Path)
            && !(i > 0 && toks[i - 1] == Tok::Path)
        {
            let mut p = vec![s.clone()];
            let mut j = i + 1;
            while toks.get(j) == Some(&Tok::Path) {
                match toks.get(j + 1) {
                    Some(Tok::Ident(n)) => p.push(n.clone()),
                    _ => break,
                }
                j += 2;
            }
            out.push((p, false));
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

fn use_tree(toks: &[Tok], j: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut p = prefix;
    loop {
        match toks.get(*j) {
            Some(Tok::Ident(n)) if n == "as" => {
                *j += 2;
            }
            Some(Tok::Ident(n)) => {
                p.push(n.clone());
                *j += 1;
            }
            Some(Tok::Path) => *j += 1,
            Some(Tok::Star) => {
                *j += 1;
                out.push(p.clone());
                return;
            }
            Some(Tok::Open) => {
                *j += 1;
                loop {
                    match toks.get(*j) {
                        Some(Tok::Close) => {
                            *j += 1;
                            return;
                        }
                        Some(Tok::Comma) => *j += 1,
                        None | Some(Tok::Semi) => return,
                        _ => use_tree(toks, j, p.clone(), out),
                    }
                }
            }
            _ => {
                if !p.is_empty() {
                    out.push(p);
                }
                return;
            }
        }
    }
}

/// The module a path starts from, in `m`'s view, or `None` for another crate's path.
fn start(
    files: &BTreeMap<Vec<String>, File>,
    m: &[String],
    p: &[String],
) -> Option<(Vec<String>, usize)> {
    let mut cur = m.to_vec();
    let mut i = 0;
    match p.first()?.as_str() {
        "crate" => {
            cur.clear();
            i = 1;
        }
        "self" => i = 1,
        "super" => {
            while p.get(i).is_some_and(|s| s == "super") {
                cur.pop();
                i += 1;
            }
        }
        first => {
            let mut child = m.to_vec();
            child.push(first.to_string());
            files.get(&child)?;
        }
    }
    Some((cur, i))
}

/// The file a path resolves to: the deepest module it names, through re-exports.
fn resolve(
    files: &BTreeMap<Vec<String>, File>,
    exports: &BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
    mut cur: Vec<String>,
    p: &[String],
    depth: usize,
) -> Vec<String> {
    for seg in p {
        let mut next = cur.clone();
        next.push(seg.clone());
        if files.contains_key(&next) {
            cur = next;
            continue;
        }
        if depth < 8
            && let Some(target) = exports.get(&cur).and_then(|e| e.get(seg))
        {
            return resolve(files, exports, Vec::new(), target, depth + 1);
        }
        break;
    }
    cur
}

/// Which files each file imports.
fn graph(files: &BTreeMap<Vec<String>, File>) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let all: BTreeMap<&Vec<String>, Vec<(Vec<String>, bool)>> = files
        .iter()
        .map(|(m, f)| (m, paths(&tokens(&f.code))))
        .collect();
    // Re-exported names, as absolute paths from the crate root.
    let mut exports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (m, ps) in &all {
        for (p, public) in ps {
            if !public {
                continue;
            }
            let Some((base, i)) = start(files, m, p) else {
                continue;
            };
            let mut abs = base;
            abs.extend(p[i..].iter().cloned());
            if let Some(name) = p.last() {
                exports
                    .entry((*m).clone())
                    .or_default()
                    .insert(name.clone(), abs);
            }
        }
    }
    let mut g = BTreeMap::new();
    for (m, ps) in &all {
        let mut deps = BTreeSet::new();
        // The crate root declares and re-exports; it is not an importer.
        if !m.is_empty() {
            for (p, _) in ps {
                let Some((base, i)) = start(files, m, p) else {
                    continue;
                };
                let t = resolve(files, &exports, base, &p[i..], 0);
                // A submodule works inside its ancestors' context: naming them is no import.
                if &t != *m && !m.starts_with(&t) {
                    deps.insert(t);
                }
            }
        }
        g.insert((*m).clone(), deps);
    }
    g
}

/// Each circle of the graph: the files of one strongly connected part (two or more), sorted,
/// and one path around it from the first.
type Circle = (Vec<Vec<String>>, Vec<Vec<String>>);

fn circles(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Circle> {
    let reach = |from: &Vec<String>| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(x) = stack.pop() {
            for y in g.get(&x).into_iter().flatten() {
                if seen.insert(y.clone()) {
                    stack.push(y.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> =
        g.keys().map(|m| (m, reach(m))).collect();
    let mut out = Vec::new();
    let mut done: BTreeSet<Vec<String>> = BTreeSet::new();
    for m in g.keys() {
        if done.contains(m) || !reached[m].contains(m) {
            continue;
        }
        let part: Vec<Vec<String>> = reached[m]
            .iter()
            .filter(|x| reached.get(x).is_some_and(|r| r.contains(m)))
            .cloned()
            .collect();
        done.extend(part.iter().cloned());
        let path = cycle_from(g, m).unwrap_or_else(|| part.clone());
        out.push((part, path));
    }
    out
}

/// The shortest path from `m` back to `m` (breadth first).
fn cycle_from(
    g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    m: &Vec<String>,
) -> Option<Vec<Vec<String>>> {
    let mut prev: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([m.clone()]);
    while let Some(x) = queue.pop_front() {
        for y in g.get(&x).into_iter().flatten() {
            if y == m {
                let mut path = vec![x.clone()];
                let mut cur = x;
                while let Some(p) = prev.get(&cur) {
                    path.push(p.clone());
                    cur = p.clone();
                }
                path.reverse();
                path.push(m.clone());
                return Some(path);
            }
            if !prev.contains_key(y) && y != m {
                prev.insert(y.clone(), x.clone());
                queue.push_back(y.clone());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
