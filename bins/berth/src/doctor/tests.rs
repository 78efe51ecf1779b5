//! Doctor checks on files made here: SQLite paths, PEM files, redaction, the report.

use std::time::Duration;

use super::*;

fn status_of(checks: &[Check], name: &str) -> Vec<Status> {
    checks
        .iter()
        .filter(|c| c.check == name)
        .map(|c| c.status)
        .collect()
}

#[test]
fn passwords_are_not_shown() {
    assert_eq!(
        redact("postgres://u:secret@db:5432/b"),
        "postgres://u:***@db:5432/b"
    );
    assert_eq!(redact("postgres://db/b"), "postgres://db/b");
    assert_eq!(redact("sqlite://./a@b.db"), "sqlite://./a@b.db");
}

/// The doctor's database check of a SQLite URL, with or without `[store] create_dirs`.
fn sqlite_at(url: &str, create_dirs: bool) -> Check {
    sqlite(&Config {
        database_url: url.to_owned(),
        store: berth_config::Store { create_dirs },
        ..Config::default()
    })
}

#[test]
fn sqlite_paths_existing_new_and_impossible() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("sub/dir/berth.db");
    let url = format!("sqlite://{}", new.display());
    // A missing directory is refused unless berthd may create it.
    let c = sqlite_at(&url, false);
    assert_eq!(c.status, Status::Fail, "{c:?}");
    assert!(c.detail.contains("does not exist"), "{c:?}");
    assert!(c.fix.contains("create_dirs"), "{c:?}");
    let c = sqlite_at(&url, true);
    assert_eq!(c.status, Status::Ok, "{c:?}");
    assert!(
        c.detail.contains("will be created, and its directory"),
        "{c:?}"
    );
    assert!(!new.exists(), "the check must not create the database");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "probe left behind"
    );
    let here = dir.path().join("berth.db");
    let c = sqlite_at(&format!("sqlite://{}", here.display()), false);
    assert_eq!(c.status, Status::Ok, "{c:?}");
    assert!(
        c.detail.ends_with(&format!(
            "will be created (directory {} is writable)",
            dir.path().display()
        )),
        "{c:?}"
    );

    let not_db = dir.path().join("notes.txt");
    std::fs::write(&not_db, "hello, not a database").unwrap();
    let c = sqlite_at(&format!("sqlite://{}", not_db.display()), false);
    assert_eq!(c.status, Status::Fail);
    assert!(c.detail.contains("is not a SQLite database"), "{c:?}");

    let db = dir.path().join("real.db");
    std::fs::write(&db, b"SQLite format 3\0rest of the header").unwrap();
    assert_eq!(
        sqlite_at(&format!("sqlite://{}", db.display()), false).status,
        Status::Ok
    );

    // Under a regular file nothing can be created, even by root.
    let under_file = not_db.join("x/berth.db");
    let c = sqlite_at(&format!("sqlite://{}", under_file.display()), true);
    assert_eq!(c.status, Status::Fail, "{c:?}");
    assert!(c.detail.contains("does not take new files"), "{c:?}");
    assert!(!c.fix.is_empty());

    assert_eq!(sqlite_at("sqlite::memory:", false).status, Status::Warn);
}

/// A self-signed certificate and its key, PEM.
fn pair(name: &str) -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec![name.to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    (cert.pem(), key.serialize_pem())
}

#[test]
fn tls_files_load_as_berthd_loads_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let (cert_a, key_a) = pair("a");
    let (_, key_b) = pair("b");
    let (cert, key, other) = (
        file("a.pem", &cert_a),
        file("a.key", &key_a),
        file("b.key", &key_b),
    );
    let c = tls_pair(&cert, &key);
    assert_eq!(c.status, Status::Ok, "{c:?}");
    let fits = format!("1 certificate(s), key {} fits", key.display());
    assert!(c.detail.ends_with(&fits), "{c:?}");
    let c = tls_pair(&cert, &other);
    assert_eq!(c.status, Status::Fail);
    assert!(c.detail.contains("does not fit"), "{c:?}");
    let c = tls_pair(&key, &key);
    assert_eq!(c.status, Status::Fail);
    assert!(c.detail.contains("no PEM certificate"), "{c:?}");
    let c = tls_pair(&cert, &cert);
    assert!(c.detail.contains("no PEM private key"), "{c:?}");
    let c = tls_pair(&dir.path().join("missing.pem"), &key);
    assert!(c.detail.starts_with("cannot read"), "{c:?}");
    assert!(!c.fix.is_empty());
}

#[test]
fn a_config_that_does_not_parse_stops_the_other_checks() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("b.toml");
    std::fs::write(&f, "[limits]\nbody_bytes = -1\n").unwrap();
    let checks = diagnose(Some(&f), None, Duration::from_secs(1), |_| None);
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].status, Status::Fail);
    assert!(
        checks[0].detail.contains("limits.body_bytes (2:14)"),
        "{:?}",
        checks[0]
    );
    assert!(
        checks[0].fix.contains("`limits.body_bytes`"),
        "{:?}",
        checks[0]
    );
}

#[test]
fn defaults_warn_about_open_auth_and_the_example_inventory() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("b.db");
    let env = |k: &str| (k == "BERTH_DATABASE_URL").then(|| format!("sqlite://{}", db.display()));
    let checks = diagnose(None, None, Duration::from_secs(1), env);
    assert_eq!(status_of(&checks, "config"), [Status::Ok]);
    assert_eq!(status_of(&checks, "auth"), [Status::Warn]);
    assert_eq!(status_of(&checks, "database"), [Status::Ok]);
    assert_eq!(status_of(&checks, "inventory")[0], Status::Warn);
    let inv = checks.iter().find(|c| c.check == "inventory").unwrap();
    let bundled = berth_inventory::Inventory::parse(BUNDLED_INVENTORY).unwrap();
    let start = format!(
        "bundled example: {} candidate(s) (",
        bundled.candidates.len()
    );
    assert!(inv.detail.starts_with(&start), "{inv:?}");
    let r = report(&checks).unwrap();
    let text = r.render(crate::output::Format::Text).unwrap();
    assert!(text.ends_with("0 failed, 2 warning(s)\n"), "{text}");
}

#[test]
fn the_shipped_deploy_settings_fail_until_their_placeholder_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("b.db");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("deploy/systemd/berthd.env")).unwrap();
    let mut vars: std::collections::BTreeMap<String, String> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    vars.insert(
        "BERTH_DATABASE_URL".into(),
        format!("sqlite://{}", db.display()),
    );
    let checks = diagnose(None, None, Duration::from_secs(1), |k| vars.get(k).cloned());
    let auth = checks.iter().find(|c| c.check == "auth").unwrap();
    assert_eq!(auth.status, Status::Fail, "{auth:?}");
    assert!(
        auth.detail.contains(&format!(
            "basic user `admin1` has the placeholder password `{}`",
            berth_config::PLACEHOLDER_SECRET
        )),
        "{auth:?}"
    );
    // Plain HTTP on every address is a warning of its own.
    let tls = checks.iter().find(|c| c.check == "tls").unwrap();
    assert_eq!(tls.status, Status::Warn, "{tls:?}");
    // The same file with a generated password passes the auth check.
    vars.insert("BERTH_BASIC_AUTH".into(), "admin1:Zq7pX2vN9kLw4sTb".into());
    let checks = diagnose(None, None, Duration::from_secs(1), |k| vars.get(k).cloned());
    assert_eq!(status_of(&checks, "auth"), [Status::Ok]);
}

#[test]
fn a_daemons_inventory_status_names_changed_and_retired_pools() {
    let status = serde_json::json!({
        "source": "file /etc/berth/other.yaml",
        "last": {
            "at": "2030-01-01T00:00:00Z", "trigger": "start", "source": "file /etc/berth/other.yaml",
            "fingerprint": "f", "candidates": 2, "warnings": [], "reconciled": true,
            "diff": {
                "provider": "inventory",
                "added": [{"pool-id": "sea/inventory", "capacity": {"vcpu": 16}, "at-risk": []}],
                "changed": [{"pool-id": "dfw/inventory", "dimensions": {"vcpu": {"before": 64, "after": 32}}, "at-risk": ["r1"]}],
                "removed": [{"pool-id": "nyc/inventory", "capacity": {"vcpu": 64}, "reservations": ["r2"], "at-risk": ["r2"]}],
                "unchanged": 0
            }
        },
        "failed": {"at": "2030-01-01T00:01:00Z", "trigger": "signal", "error": "invalid inventory file x: x:3:21: bad", "diagnostics": []},
        "drift": {"provider": "inventory", "added": [], "changed": [], "removed": [], "unchanged": 2}
    });
    let checks = inventory_status(&status);
    let lines: Vec<(Status, &str)> = checks
        .iter()
        .map(|c| (c.status, c.detail.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (
                Status::Ok,
                "file /etc/berth/other.yaml: 2 candidate(s); reconciled on start at 2030-01-01T00:00:00Z: 1 added, 1 changed, 1 removed, 0 unchanged"
            ),
            (
                Status::Warn,
                "pool dfw/inventory changed: vcpu 64 -> 32; at risk: r1"
            ),
            (
                Status::Warn,
                "pool nyc/inventory retired: its candidate is gone from the inventory; live reservations: r2"
            ),
            (
                Status::Fail,
                "the reload on signal at 2030-01-01T00:01:00Z was refused (the inventory served is older than file /etc/berth/other.yaml): invalid inventory file x: x:3:21: bad"
            ),
        ]
    );
}
