//! `berth completions SHELL` and `berth man`: generated from the command definitions, every
//! subcommand in each.

use std::process::{Command, Output};

fn berth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_berth"))
        .args(args)
        .output()
        .expect("run berth")
}

const SUBCOMMANDS: &[&str] = &[
    "validate",
    "solve",
    "place",
    "schema",
    "assembly",
    "plan",
    "reservation",
    "capacity",
    "instance",
    "doctor",
    "completions",
    "man",
];

#[test]
fn completions_for_every_shell_name_every_subcommand() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef berth"),
        ("fish", "complete -c berth"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let o = berth(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains(marker), "{shell}: no `{marker}`");
        for sub in SUBCOMMANDS {
            assert!(text.contains(sub), "{shell} completions miss `{sub}`");
        }
        // Flags too, and their values where the shell's script lists them.
        assert!(text.contains("output"), "{shell}");
        assert!(shell == "powershell" || text.contains("yaml"), "{shell}");
    }
    assert_eq!(berth(&["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn man_pages_cover_every_subcommand() {
    let o = berth(&["man"]);
    assert_eq!(o.status.code(), Some(0));
    let page = String::from_utf8_lossy(&o.stdout);
    assert!(
        page.starts_with(".ie \\n(.g .ds Aq") || page.contains(".TH berth 1"),
        "{page}"
    );
    for sub in SUBCOMMANDS {
        assert!(
            page.contains(&format!("berth\\-{sub}(1)")),
            "berth.1 misses {sub}"
        );
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let o = berth(&["man", "--dir", dir.path().to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(0));
    let listed = String::from_utf8_lossy(&o.stdout);
    for name in
        std::iter::once("berth".to_owned()).chain(SUBCOMMANDS.iter().map(|s| format!("berth-{s}")))
    {
        let file = dir.path().join(format!("{name}.1"));
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(text.contains(".TH"), "{name}.1 is not a man page");
        assert!(listed.contains(&file.display().to_string()), "{listed}");
    }
    // Nested subcommands get their own pages.
    assert!(dir.path().join("berth-plan-create.1").exists());
    assert!(dir.path().join("berth-assembly-validate.1").exists());
}
