//! Rendering of diagnostics: spans, notes for unknown positions, color only on request.

use berth_doc::{Diagnostic, Severity};

use super::*;

fn diag(line: u32, column: u32, path: &str, message: &str) -> Diagnostic {
    Diagnostic {
        severity: Severity::Error,
        path: path.into(),
        line,
        column,
        message: message.into(),
    }
}

#[test]
fn spans_cover_the_token() {
    let src = "a: 1\nb: {c: \"x y\", d: 5 km}\ne: plain text # note\nf:\n";
    let at = |l, c| span(src, l, c).map(|r| &src[r]);
    assert_eq!(at(1, 4), Some("1"));
    assert_eq!(at(2, 8), Some("\"x y\""));
    assert_eq!(at(2, 18), Some("5 km"));
    assert_eq!(at(3, 4), Some("plain text"));
    // A key stops at its colon; a flow collection runs to its closing bracket.
    assert_eq!(at(3, 1), Some("e"));
    assert_eq!(at(2, 4), Some("{c: \"x y\", d: 5 km}"));
    // The end of a line: one column past the last character.
    assert_eq!(span(src, 4, 3).map(|r| r.len()), Some(0));
    assert_eq!(at(0, 0), None);
    assert_eq!(at(9, 1), None);
    assert_eq!(at(1, 40), None);
}

#[test]
fn a_diagnostic_shows_the_line_the_caret_and_the_path() {
    let src = "homing_template_version: 2020-08-13\ndemands:\n  vG:\n    - inventory_type: clod\n";
    let out = render(
        "t.yaml",
        src,
        &[
            diag(
                4,
                23,
                "demands.vG[0].inventory_type",
                "unknown inventory type `clod`; expected one of cloud, service",
            ),
            diag(0, 0, "constraints", "no constraints"),
        ],
        false,
    );
    expect_test::expect![[r#"
        error: unknown inventory type `clod`; expected one of cloud, service
          --> t.yaml:4:23
          |
        4 |     - inventory_type: clod
          |                       ^^^^ at `demands.vG[0].inventory_type`

        error: no constraints
         = at `constraints`

    "#]]
    .assert_eq(&out);
    assert!(!out.contains('\u{1b}'));
    let colored = render("t.yaml", src, &[diag(4, 23, "p", "m")], true);
    assert!(colored.contains("\u{1b}["), "{colored:?}");
}

#[test]
fn color_needs_a_terminal_and_no_no_color() {
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    assert!(color_allowed(true, env(&[("TERM", "xterm-256color")])));
    assert!(!color_allowed(false, env(&[])));
    assert!(!color_allowed(true, env(&[("NO_COLOR", "1")])));
    // An empty NO_COLOR does not count (no-color.org).
    assert!(color_allowed(true, env(&[("NO_COLOR", "")])));
    assert!(!color_allowed(true, env(&[("TERM", "dumb")])));
}
