//! `berth doctor` on a good config, a bad one (the field named), an unreachable database and
//! daemon, and a daemon that answers.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn doctor(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_berth"));
    cmd.arg("doctor").args(args);
    // Only the files given here count, not the environment running the tests.
    for (k, _) in std::env::vars() {
        if k.starts_with("BERTH_") {
            cmd.env_remove(k);
        }
    }
    cmd.output().expect("run berth")
}

fn checks(o: &Output) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)));
    v.as_array().expect("a list of checks").clone()
}

fn status<'a>(checks: &'a [Value], name: &str) -> Vec<&'a str> {
    checks
        .iter()
        .filter(|c| c["check"] == name)
        .map(|c| c["status"].as_str().expect("status"))
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.display().to_string()
}

#[test]
fn a_good_config_passes_every_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inventory = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/inventory.yaml");
    let key_pair = rcgen::KeyPair::generate().expect("key");
    let certificate = rcgen::CertificateParams::new(vec!["berth.example".to_owned()])
        .expect("params")
        .self_signed(&key_pair)
        .expect("certificate");
    let cert = write(dir.path(), "c.pem", &certificate.pem());
    let key = write(dir.path(), "k.pem", &key_pair.serialize_pem());
    let cfg = write(
        dir.path(),
        "berth.toml",
        &format!(
            "listen = \"0.0.0.0:8091\"\ndatabase_url = \"sqlite://{}/data/berth.db\"\ninventory = \"{}\"\ncredential_key = \"{}\"\n[server]\ntls_cert = \"{cert}\"\ntls_key = \"{key}\"\n[notify]\nca_file = \"{cert}\"\n[auth]\ntokens = [\"t\"]\nread_tokens = [\"r\"]\n[store]\ncreate_dirs = true\n",
            dir.path().display(),
            inventory.display(),
            "ab".repeat(32),
        ),
    );
    let o = doctor(&["--config", &cfg, "-o", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let c = checks(&o);
    for (name, want) in [
        ("config", vec!["ok"]),
        ("auth", vec!["ok"]),
        ("credential key", vec!["ok"]),
        ("database", vec!["ok"]),
        ("inventory", vec!["ok"]),
        ("tls", vec!["ok"]),
        ("notify ca", vec!["ok"]),
    ] {
        assert_eq!(status(&c, name), want, "{name}: {c:?}");
    }
    let db = c
        .iter()
        .find(|x| x["check"] == "database")
        .expect("database check");
    assert_eq!(
        db["detail"],
        format!(
            "SQLite {0}/data/berth.db will be created, and its directory {0}/data (directory {0} is writable)",
            dir.path().display()
        )
    );
    let inv = c
        .iter()
        .find(|x| x["check"] == "inventory")
        .expect("inventory check");
    let detail = inv["detail"].as_str().expect("detail");
    assert!(
        detail.contains("43 cloud") && detail.contains("with capacity"),
        "{detail}"
    );
    // The text view: one line per check and a summary.
    let o = doctor(&["--config", &cfg]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("ok    database ")),
        "{text}"
    );
    assert!(text.ends_with("0 failed, 0 warning(s)\n"), "{text}");
}

#[test]
fn a_bad_config_names_the_field_and_exits_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = write(
        dir.path(),
        "berth.toml",
        "listen = \"127.0.0.1:8091\"\n[journal]\nsnapshot_every = \"often\"\n",
    );
    let o = doctor(&["--config", &cfg, "-o", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let c = checks(&o);
    assert_eq!(status(&c, "config"), ["fail"]);
    let detail = c[0]["detail"].as_str().expect("detail");
    assert!(detail.contains("journal.snapshot_every (3:18)"), "{detail}");
    assert!(detail.contains("expected u64"), "{detail}");
    assert_eq!(
        c[0]["fix"],
        "correct `journal.snapshot_every` (see the berthd section of the README for every key)"
    );
    // A bad key in another table, as a table.
    let cfg = write(dir.path(), "typo.toml", "[limits]\nmax_inflight = 3\n");
    let o = doctor(&["--config", &cfg, "-o", "table"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    let mut lines = out.lines();
    assert!(
        lines
            .next()
            .expect("header")
            .starts_with("STATUS  CHECK   DETAIL"),
        "{out}"
    );
    let row = lines.next().expect("row");
    assert!(row.starts_with("fail    config  invalid config"), "{row}");
    assert!(row.contains("unknown field `max_inflight`"), "{row}");
}

#[test]
fn every_config_problem_is_its_own_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = write(
        dir.path(),
        "berth.toml",
        "[plans]\nworkers = \"two\"\n[journal]\nmax_bach = 3\n[limits]\nmax_inflight = 3\n",
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_berth"));
    for (k, _) in std::env::vars() {
        if k.starts_with("BERTH_") {
            cmd.env_remove(k);
        }
    }
    let o = cmd
        .args(["doctor", "--config", &cfg, "-o", "json"])
        .env("BERTH_PLAN_THREADS", "many")
        .output()
        .expect("run berth");
    assert_eq!(o.status.code(), Some(1));
    let c = checks(&o);
    assert_eq!(status(&c, "config"), ["fail"; 4], "{c:?}");
    let details: Vec<&str> = c.iter().filter_map(|x| x["detail"].as_str()).collect();
    for (d, want) in details.iter().zip([
        "plans.workers (2:11)",
        "journal (4:1): unknown field `max_bach`",
        "limits (6:1): unknown field `max_inflight`",
        "BERTH_PLAN_THREADS `many` is not a number",
    ]) {
        assert!(d.contains(want), "{d}");
    }
    assert_eq!(c[3]["fix"], "correct or unset BERTH_PLAN_THREADS");
    let o = doctor(&["--config", &cfg]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.ends_with("3 failed, 0 warning(s)\n"), "{text}");
}

#[test]
fn a_missing_sqlite_directory_fails_unless_berthd_may_create_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}/typo/berth.db", dir.path().display());
    let cfg = write(dir.path(), "a.toml", &format!("database_url = \"{url}\"\n"));
    let o = doctor(&["--config", &cfg, "-o", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let c = checks(&o);
    let db = c
        .iter()
        .find(|x| x["check"] == "database")
        .expect("database");
    assert_eq!(db["status"], "fail");
    assert_eq!(
        db["detail"],
        format!(
            "directory {}/typo of database_url {url} does not exist; expected an existing directory: create it, or set [store] create_dirs = true (BERTH_STORE_CREATE_DIRS=1) to have berthd create it",
            dir.path().display()
        )
    );
    let cfg = write(
        dir.path(),
        "b.toml",
        &format!("database_url = \"{url}\"\n[store]\ncreate_dirs = true\n"),
    );
    let o = doctor(&["--config", &cfg, "-o", "json"]);
    let c = checks(&o);
    let db = c
        .iter()
        .find(|x| x["check"] == "database")
        .expect("database");
    assert_eq!(db["status"], "ok", "{db}");
    assert!(
        db["detail"]
            .as_str()
            .expect("detail")
            .contains("and its directory"),
        "{db}"
    );
    assert!(!dir.path().join("typo").exists(), "doctor creates nothing");
}

#[test]
fn unreachable_database_and_daemon_fail_without_showing_the_password() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Port 1 on loopback: nothing listens there.
    let cfg = write(
        dir.path(),
        "pg.toml",
        "database_url = \"postgres://berth:s3cret@127.0.0.1:1/berth\"\n",
    );
    let o = doctor(&[
        "--config",
        &cfg,
        "--url",
        "http://127.0.0.1:1",
        "--timeout",
        "3",
        "-o",
        "yaml",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let c: Vec<Value> = serde_yaml::from_slice(&o.stdout).expect("yaml");
    assert_eq!(status(&c, "database"), ["fail"]);
    assert_eq!(status(&c, "daemon"), ["fail"]);
    let db = c
        .iter()
        .find(|x| x["check"] == "database")
        .expect("database");
    assert!(
        db["detail"]
            .as_str()
            .expect("detail")
            .starts_with("cannot connect to postgres://berth:***@127.0.0.1:1/berth"),
        "{db}"
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("s3cret"));
    // A SQLite path nothing can be created under.
    let file = write(dir.path(), "plain", "x");
    let cfg = write(
        dir.path(),
        "sq.toml",
        &format!("database_url = \"sqlite://{file}/sub/berth.db\"\n"),
    );
    let o = doctor(&["--config", &cfg, "-o", "json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(status(&checks(&o), "database"), ["fail"]);
}

#[test]
fn a_daemon_that_answers_is_healthy() {
    let (addr, server) = crate::fake::serve(vec![
        (200, "{\"status\": \"ok\"}".into()),
        (200, "{\"status\": \"ready\"}".into()),
    ]);
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = write(dir.path(), "m.toml", "database_url = \"sqlite::memory:\"\n");
    let o = doctor(&[
        "--config",
        &cfg,
        "--url",
        &format!("http://{addr}/"),
        "-o",
        "json",
    ]);
    let c = checks(&o);
    assert_eq!(status(&c, "daemon"), ["ok"], "{c:?}");
    // In memory is allowed but warned about.
    assert_eq!(status(&c, "database"), ["warn"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        server.join().expect("server"),
        ["GET /healthz", "GET /readyz"]
    );
}

/// The cluster `.ci/postgres.sh start` runs: doctor connects and names the server's version.
#[cfg(berth_test_postgres)]
#[test]
fn a_reachable_postgres_passes() {
    let url = env!("BERTH_TEST_POSTGRES_URL");
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = write(
        dir.path(),
        "pg.toml",
        &format!("database_url = \"{url}\"\npg_schema = \"doctor_check\"\n"),
    );
    let o = doctor(&["--config", &cfg, "-o", "json"]);
    let c = checks(&o);
    assert_eq!(status(&c, "database"), ["ok"], "{c:?}");
    let db = c
        .iter()
        .find(|x| x["check"] == "database")
        .expect("database");
    let detail = db["detail"].as_str().expect("detail");
    assert!(
        detail.starts_with("PostgreSQL ") && detail.ends_with(" answers"),
        "{detail}"
    );
    // A schema name berthd would refuse.
    let cfg = write(
        dir.path(),
        "bad.toml",
        &format!("database_url = \"{url}\"\npg_schema = \"Bad-Name\"\n"),
    );
    let o = doctor(&["--config", &cfg, "-o", "json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(status(&checks(&o), "database"), ["fail"]);
}
