//! Provider secrets against the real daemon: a password given to `add-provider` is never
//! returned by any route, never written to the log (at trace level), is stored encrypted (its
//! bytes are nowhere in the database files), and a daemon started with the wrong key, or none,
//! refuses to start and names the provider.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use super::{TOKEN, client, free_port, get, post, site, start_env, terminate};
use crate::db::Db;

const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const OTHER: &str = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
const PASSWORD: &str = "Zq7-very-secret-pw-41";

/// Everything under `dir` (database, WAL, logs) as bytes.
fn all_bytes(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn provider_passwords_are_never_returned_logged_or_stored_in_clear() {
    let dir = site();
    let db = Db::sqlite(dir.path());
    let port = free_port();
    let env = [("BERTH_CREDENTIAL_KEY", KEY), ("BERTH_LOG", "trace")];
    let mut d = start_env(dir.path(), port, &db, &env);
    let c = client();
    let (s, v) = post(
        &c,
        &d,
        "/add-provider",
        json!({"provider-type": "openstack",
        "endpoint": "http://127.0.0.1:5000/v3", "username": "admin", "password": PASSWORD,
        // A catalog in the body: registered as given, no cloud asked.
        "tenant": {"name": "promise"}, "flavors": []}),
    );
    assert_eq!(s, 200, "{v}");
    assert!(!v.to_string().contains(PASSWORD));
    // Every route that reads something.
    for path in ["/", "/v1/plans", "/openapi.json", "/healthz", "/readyz"] {
        let (_, v) = get(&c, &d, path);
        assert!(
            !v.to_string().contains(PASSWORD),
            "{path} returned the password"
        );
    }
    for path in ["/query-capacity", "/query-reservation"] {
        let (_, v) = post(&c, &d, path, json!({}));
        assert!(
            !v.to_string().contains(PASSWORD),
            "{path} returned the password"
        );
    }
    let metrics = c
        .get(format!("{}/metrics", d.base))
        .bearer_auth(TOKEN)
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(!metrics.contains(PASSWORD));
    terminate(&mut d);
    // Not in the log (trace level), not in the database files in clear.
    let files = all_bytes(dir.path());
    assert!(
        files.iter().any(|(n, _)| n.ends_with(".log")),
        "no daemon log was written"
    );
    assert!(files.iter().any(|(n, b)| n == "berth.db" && !b.is_empty()));
    for (name, bytes) in &files {
        assert!(
            !contains(bytes, PASSWORD.as_bytes()),
            "the password is in {name} in clear"
        );
    }

    // The wrong key, or none: the start is refused, naming the provider.
    for key in [Some(OTHER), None] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_berthd"));
        cmd.env("BERTH_LISTEN", format!("127.0.0.1:{}", free_port()))
            .env("BERTH_INVENTORY", dir.path().join("inventory.yaml"))
            .env("BERTH_TOKENS", TOKEN)
            .env("BERTH_LOG", "error")
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        match key {
            Some(k) => cmd.env("BERTH_CREDENTIAL_KEY", k),
            None => cmd.env_remove("BERTH_CREDENTIAL_KEY"),
        };
        db.configure(&mut cmd);
        let out = cmd.spawn().unwrap();
        let out = wait_exit(out);
        assert_eq!(out.status.code(), Some(2), "{key:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("provider `"), "{key:?}: {err}");
        let want = if key.is_some() {
            "do not open with the configured credential key"
        } else {
            "no credential key is configured"
        };
        assert!(err.contains(want), "{key:?}: {err}");
    }
    // The right key starts.
    let mut d = start_env(dir.path(), port, &db, &env);
    terminate(&mut d);
}

fn wait_exit(mut child: std::process::Child) -> std::process::Output {
    for _ in 0..200 {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("berthd kept running with a wrong key");
}
