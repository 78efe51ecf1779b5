//! Project automation: `cargo xtask ci | tidy | bench | bench-homing | codegen | loadtest | fuzz
//! | python-client | lint-deploy`.

mod deploy;
mod homing;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  ci      fmt check, clippy -D warnings, tidy, all tests and doctests, bench smoke, fuzz check
  tidy    layering rule, `//!` headers, no ignored or should-panic tests
  bench   run the criterion benches briefly (extra arguments go to cargo bench)
  bench-homing  [--limit S] [--sizes 4x20,15x150] [--seeds N] [--workers N] [--no-cpsat]
          Berth and CP-SAT (ortools in a venv under target/) on the same seeded homing
          instances, one table; fails if Berth proves a different optimum
  codegen regenerate docs/openapi.json from the code (`--check`: fail if it is stale)
  python-client  mypy --strict and pytest of clients/python (venv under target/) against a
          real target/debug/berthd
  lint-deploy  check the Dockerfile, docker-compose.yml, deploy/kubernetes and the systemd unit
  loadtest  64 concurrent clients against an in-process berthd (extra arguments go to berth-loadtest)
  fuzz    [--seconds N] [TARGET...]  run the cargo-fuzz targets (default: all, 60 s each), corpora
          seeded from examples/; needs `cargo install cargo-fuzz`";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("tidy") => tidy::run(&root()),
        Some("bench") => bench(&args[1..]),
        Some("bench-homing") => homing::bench(&args[1..]),
        Some("codegen") => codegen(args.get(1).is_some_and(|a| a == "--check")),
        Some("loadtest") => loadtest(&args[1..]),
        Some("python-client") => python_client(),
        Some("lint-deploy") => deploy::lint(&root()),
        Some("fuzz") => fuzz(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("xtask: {e:#}");
        std::process::exit(1);
    }
}

/// The workspace root (the parent of this package).
fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map_or(manifest.clone(), Path::to_path_buf)
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

fn run(step: &str, mut cmd: Command) -> Result<()> {
    eprintln!("\n==> {step}");
    let status = cmd
        .status()
        .with_context(|| format!("cannot start `{step}`"))?;
    if !status.success() {
        bail!("step `{step}` failed ({status})");
    }
    Ok(())
}

fn has_nextest() -> bool {
    cargo()
        .args(["nextest", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn ci() -> Result<()> {
    let started = std::time::Instant::now();
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    run("cargo fmt --check", fmt)?;

    let mut clippy = cargo();
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--locked",
        "--",
        "-D",
        "warnings",
    ]);
    run("cargo clippy -D warnings", clippy)?;

    eprintln!("\n==> xtask tidy");
    tidy::run(&root())?;

    if has_nextest() {
        let mut t = cargo();
        t.args([
            "nextest",
            "run",
            "--workspace",
            "--locked",
            "--no-fail-fast",
        ]);
        t.env("NEXTEST_STATUS_LEVEL", "fail");
        run("cargo nextest run", t)?;
    } else {
        let mut t = cargo();
        t.args([
            "test",
            "--workspace",
            "--locked",
            "--lib",
            "--bins",
            "--tests",
        ]);
        run("cargo test", t)?;
    }
    let mut doc = cargo();
    doc.args(["test", "--workspace", "--locked", "--doc"]);
    run("cargo test --doc", doc)?;

    // Each benchmark body runs once in test mode: benches keep compiling and keep working.
    let mut benches = cargo();
    benches.args(["test", "--locked", "-p", "berth-benches", "--benches"]);
    run("cargo test --benches (smoke)", benches)?;

    let mut fuzz = cargo();
    fuzz.args(["check", "--manifest-path", "fuzz/Cargo.toml", "--bins"]);
    run("cargo check (fuzz package)", fuzz)?;

    eprintln!("\n==> xtask codegen --check");
    codegen(true)?;

    python_client()?;

    eprintln!("\n==> xtask lint-deploy");
    deploy::lint(&root())?;

    eprintln!("\nxtask ci: all steps passed in {:.0?}", started.elapsed());
    Ok(())
}

/// The Python client's type check and tests, against the workspace's own debug `berthd` and
/// `berth`, in a venv under `target/` (pip installs the client's test extras from PyPI).
fn python_client() -> Result<()> {
    let mut build = cargo();
    build.args(["build", "--locked", "-p", "berthd", "-p", "berth", "--bins"]);
    run("cargo build -p berthd -p berth", build)?;
    let root = root();
    let venv = root.join("target/python-client-venv");
    let bin = venv.join("bin");
    if !bin.join("pip").is_file() {
        let mut v = Command::new("python3");
        v.args(["-m", "venv"]).arg(&venv);
        run("python3 -m venv target/python-client-venv", v)?;
    }
    let mut pip = Command::new(bin.join("pip"));
    pip.args(["install", "-q", "-e"])
        .arg(root.join("clients/python[test]"));
    run("pip install -e clients/python[test]", pip)?;
    let dir = root.join("clients/python");
    let mut mypy = Command::new(bin.join("mypy"));
    mypy.arg("--strict").current_dir(&dir);
    run("mypy --strict (clients/python)", mypy)?;
    let mut pytest = Command::new(bin.join("pytest"));
    pytest
        .args(["-q", "-p", "no:cacheprovider"])
        .current_dir(&dir)
        .env("BERTH_BIN", root.join("target/debug/berthd"))
        .env("BERTH_CLI", root.join("target/debug/berth"));
    run("pytest (clients/python, real berthd)", pytest)
}

fn bench(extra: &[String]) -> Result<()> {
    let mut b = cargo();
    b.args(["bench", "-p", "berth-benches"]);
    b.args(extra);
    if !extra.iter().any(|a| a == "--") {
        b.args(["--", "--warm-up-time", "1", "--measurement-time", "3"]);
    }
    run("cargo bench", b)
}

fn codegen(check: bool) -> Result<()> {
    let out = cargo()
        .args(["run", "-q", "-p", "berth-api", "--bin", "berth-openapi"])
        .output()
        .context("cannot run berth-openapi")?;
    if !out.status.success() {
        bail!(
            "berth-openapi failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let path = root().join("docs/openapi.json");
    let committed = std::fs::read(&path).unwrap_or_default();
    if check {
        if committed != out.stdout {
            bail!("docs/openapi.json is stale; run `cargo xtask codegen`");
        }
        eprintln!("codegen: docs/openapi.json is fresh");
        return Ok(());
    }
    std::fs::write(&path, &out.stdout)
        .with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("codegen: wrote {}", path.display());
    Ok(())
}

fn loadtest(extra: &[String]) -> Result<()> {
    // Both binaries: `--overload` starts a real `berthd` beside the load generator.
    let mut b = cargo();
    b.args(["build", "--release", "-p", "berthd", "--bins"]);
    run("cargo build --release -p berthd", b)?;
    let mut l = cargo();
    l.args([
        "run",
        "--release",
        "-p",
        "berthd",
        "--bin",
        "berth-loadtest",
        "--",
    ]);
    if extra.is_empty() {
        l.args(["--clients", "64"]);
    }
    l.args(extra);
    run("berth-loadtest", l)
}

/// Example files that seed each fuzz target's corpus: `(target, leading byte, files)`; a
/// leading byte selects the document kind for targets that take several.
fn fuzz_seeds(root: &Path, target: &str) -> Vec<(Option<u8>, PathBuf)> {
    let files = |dir: &str, filter: &dyn Fn(&str) -> bool| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .map(|rd| {
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| {
                        p.is_file() && p.file_name().and_then(|n| n.to_str()).is_some_and(filter)
                    })
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let docs = |n: &str| n.ends_with(".yaml") || n.ends_with(".json");
    let plain = |v: Vec<PathBuf>| v.into_iter().map(|p| (None, p)).collect::<Vec<_>>();
    match target {
        "template_parse" => {
            let mut v = files("examples/templates", &docs);
            v.extend(files("crates/berth-template/tests/fixtures", &docs));
            plain(v)
        }
        "topology_load" => {
            let mut v = files("examples/topology", &docs);
            v.extend(files("examples/heat", &|n| n.contains("topology")));
            plain(v)
        }
        "inventory_parse" => plain(files("examples", &|n| n == "inventory.yaml")),
        "heat_load" => plain(files("examples/heat", &docs)),
        "assembly_plan" => plain(files("examples/assemblies", &docs)),
        "cloudpolicy_parse" => files("examples/cloud-policy", &docs)
            .into_iter()
            .flat_map(|p| (0u8..3).map(move |b| (Some(b), p.clone())))
            .collect(),
        _ => Vec::new(),
    }
}

fn fuzz(args: &[String]) -> Result<()> {
    let mut seconds = 60u64;
    let mut targets = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--seconds" {
            let n = it.next().context("`--seconds` needs a number")?;
            seconds = n
                .parse()
                .with_context(|| format!("`--seconds {n}`: expected a whole number"))?;
        } else {
            targets.push(a.clone());
        }
    }
    let installed = cargo()
        .args(["fuzz", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !installed {
        bail!("cargo-fuzz is not installed; install it with `cargo install cargo-fuzz`");
    }
    let out = cargo()
        .args(["fuzz", "list"])
        .output()
        .context("cannot run `cargo fuzz list`")?;
    let known: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    if targets.is_empty() {
        targets = known.clone();
    }
    if let Some(t) = targets.iter().find(|t| !known.contains(t)) {
        bail!(
            "unknown fuzz target `{t}`; expected one of: {}",
            known.join(", ")
        );
    }
    let root = root();
    for t in &targets {
        let corpus = root.join("fuzz/corpus").join(t);
        std::fs::create_dir_all(&corpus)
            .with_context(|| format!("cannot create {}", corpus.display()))?;
        for (prefix, seed) in fuzz_seeds(&root, t) {
            let mut bytes: Vec<u8> = prefix.into_iter().collect();
            bytes.extend(
                std::fs::read(&seed).with_context(|| format!("cannot read {}", seed.display()))?,
            );
            let name = format!(
                "seed-{}{}",
                prefix.map_or(String::new(), |b| format!("{b}-")),
                seed.file_name().and_then(|n| n.to_str()).unwrap_or("input")
            );
            std::fs::write(corpus.join(name), bytes)
                .with_context(|| format!("cannot write into {}", corpus.display()))?;
        }
        let mut f = cargo();
        // libFuzzer needs nightly-only compiler flags; the stable toolchain accepts them so.
        f.env("RUSTC_BOOTSTRAP", "1");
        f.args(["fuzz", "run", "-O", t]);
        f.arg(&corpus);
        f.args([
            "--",
            &format!("-max_total_time={seconds}"),
            "-rss_limit_mb=2048",
            "-timeout=10",
        ]);
        run(&format!("cargo fuzz run {t} ({seconds} s)"), f)?;
    }
    Ok(())
}
