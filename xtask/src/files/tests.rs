//! The file rules on small made-up crates.

use super::*;

fn crate_of(files: &[(&str, &str)]) -> BTreeMap<Vec<String>, File> {
    files
        .iter()
        .map(|(m, text)| {
            let key: Vec<String> = if m.is_empty() {
                Vec::new()
            } else {
                m.split("::").map(str::to_string).collect()
            };
            (
                key,
                File {
                    path: PathBuf::from(format!("src/{m}.rs")),
                    code: code(text),
                },
            )
        })
        .collect()
}

fn m(s: &str) -> Vec<String> {
    s.split("::").map(str::to_string).collect()
}

#[test]
fn use_trees_expand_to_paths() {
    let toks =
        tokens("pub(crate) use crate::{a::B, c::{D as E, f::*}};\nlet x = super::g::H::new();");
    let got = paths(&toks);
    assert_eq!(
        got,
        vec![
            (m("crate::a::B"), true),
            (m("crate::c::D"), true),
            (m("crate::c::f"), true),
            (m("super::g::H::new"), false),
        ]
    );
}

#[test]
fn comments_strings_and_inline_tests_are_not_code() {
    let c = code(
        "// crate::a\nlet s = \"crate::b\";\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}\nfn f() {}\n",
    );
    assert_eq!(code_lines(&c), 2);
    let p = paths(&tokens(&c));
    assert!(p.is_empty(), "{p:?}");
}

#[test]
fn a_circle_through_a_re_export_is_found() {
    // `ownership` takes `Clock` (re-exported by the root) from `reservations`, which imports
    // `ownership` back.
    let files = crate_of(&[
        (
            "",
            "mod ownership; mod reservations; pub use reservations::Clock;",
        ),
        ("ownership", "use crate::Clock;"),
        (
            "reservations",
            "use crate::ownership::Lease; pub struct Clock;",
        ),
        (
            "reservations::writer",
            "use super::super::ownership::Lease;",
        ),
    ]);
    let g = graph(&files);
    assert_eq!(g[&m("ownership")], BTreeSet::from([m("reservations")]));
    assert_eq!(
        g[&m("reservations::writer")],
        BTreeSet::from([m("ownership")])
    );
    let c = circles(&g);
    assert_eq!(
        c,
        vec![(
            vec![m("ownership"), m("reservations")],
            vec![m("ownership"), m("reservations"), m("ownership")]
        )]
    );
}

#[test]
fn a_child_may_use_its_parent_when_the_parent_does_not_use_it() {
    let files = crate_of(&[
        ("", "mod p;"),
        (
            "p",
            "mod a; mod b; pub(crate) use a::wrap; fn f() { b::g() }",
        ),
        ("p::a", "pub fn wrap() {}"),
        ("p::b", "use super::wrap; use super::Shared;"),
    ]);
    let g = graph(&files);
    // `super::wrap` resolves through the re-export to `a`; `super::Shared` is the parent's own,
    // and a submodule naming its ancestor is not an import.
    assert_eq!(g[&m("p::b")], BTreeSet::from([m("p::a")]));
    assert_eq!(g[&m("p")], BTreeSet::from([m("p::a"), m("p::b")]));
    assert!(circles(&g).is_empty());
}

#[test]
fn a_dag_has_no_circle_and_other_crates_are_not_edges() {
    let files = crate_of(&[
        ("", "mod a; mod b;"),
        ("a", "use std::fmt; use serde::Serialize; use crate::b::X;"),
        ("b", "pub struct X;"),
    ]);
    let g = graph(&files);
    assert_eq!(g[&m("a")], BTreeSet::from([m("b")]));
    assert!(g[&m("b")].is_empty());
    assert!(circles(&g).is_empty());
}
