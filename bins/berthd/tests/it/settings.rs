//! Settings the real `berthd` refuses or acts on at start: every config problem at once, and
//! a SQLite directory that does not exist (refused, created when allowed, said in the log).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Daemon, client, free_port, terminate, wait_ready};

/// `berthd` in `dir` with only the variables given (the test runner's `BERTH_*` removed).
fn berthd(dir: &Path, env: &[(&str, String)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_berthd"));
    for (k, _) in std::env::vars() {
        if k.starts_with("BERTH_") {
            cmd.env_remove(k);
        }
    }
    cmd.current_dir(dir)
        .env("BERTH_LOG", "info")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    cmd
}

/// Runs `berthd` expecting it to refuse to start: its exit code and stderr.
fn refused(cmd: &mut Command) -> (Option<i32>, String) {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("berthd started instead of refusing");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_config_problem_is_named_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("berth.toml");
    std::fs::write(
        &cfg,
        "[plans]\nworkers = \"two\"\n[journal]\nmax_bach = 3\n[limits]\nmax_inflight = 3\n",
    )
    .unwrap();
    let (code, err) = refused(
        berthd(dir.path(), &[("BERTH_LEASE_SECS", "soon".into())])
            .arg("--config")
            .arg(&cfg),
    );
    assert_eq!(code, Some(2), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 4, "{err}");
    for (line, want) in lines.iter().zip([
        "plans.workers (2:11): invalid type: string \"two\"",
        "journal (4:1): unknown field `max_bach`",
        "limits (6:1): unknown field `max_inflight`",
        "BERTH_LEASE_SECS `soon` is not a number",
    ]) {
        assert!(
            line.starts_with("berthd: ") && line.contains(want),
            "{line}: {err}"
        );
    }
}

#[test]
fn a_missing_sqlite_directory_is_refused_unless_created_by_request() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("typo/data");
    let url = format!("sqlite://{}/berth.db", data.display());
    let (code, err) = refused(&mut berthd(
        dir.path(),
        &[("BERTH_DATABASE_URL", url.clone())],
    ));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "directory {} of database_url {url} does not exist",
            data.display()
        )) && err.contains("[store] create_dirs = true"),
        "{err}"
    );
    assert!(!dir.path().join("typo").exists(), "nothing is created");

    // Asked for: created, and said in the log.
    let port = free_port();
    let log = dir.path().join("berthd.log");
    let mut cmd = berthd(
        dir.path(),
        &[
            ("BERTH_DATABASE_URL", url),
            ("BERTH_STORE_CREATE_DIRS", "1".into()),
            ("BERTH_LISTEN", format!("127.0.0.1:{port}")),
        ],
    );
    cmd.stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    let mut d = wait_ready(
        Daemon {
            child: cmd.spawn().unwrap(),
            base: format!("http://127.0.0.1:{port}"),
        },
        &client(),
    );
    terminate(&mut d);
    assert!(data.join("berth.db").is_file());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.lines()
            .any(|l| l.contains("creating the SQLite database's directory")
                && l.contains(&data.display().to_string())),
        "{text}"
    );
}

#[test]
fn the_default_data_directory_is_created_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let log = dir.path().join("berthd.log");
    let mut cmd = berthd(dir.path(), &[("BERTH_LISTEN", format!("127.0.0.1:{port}"))]);
    cmd.stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    let mut d = wait_ready(
        Daemon {
            child: cmd.spawn().unwrap(),
            base: format!("http://127.0.0.1:{port}"),
        },
        &client(),
    );
    terminate(&mut d);
    assert!(dir.path().join("berth-data/berth.db").is_file());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.lines()
            .any(|l| l.contains("creating the SQLite database's directory")
                && l.contains("berth-data")),
        "{text}"
    );
}
