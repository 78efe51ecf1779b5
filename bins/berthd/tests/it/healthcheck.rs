//! `berthd --healthcheck [URL]`, the container image's probe: exit 0 while a daemon serves
//! `/healthz`, 1 (naming the URL) once it is gone or for a path that is not 2xx; without a URL,
//! the daemon its config describes, over TLS when it serves TLS.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{free_port, site, start, terminate};
use crate::db::Db;

fn probe(url: &str) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_berthd"))
        .args(["--healthcheck", url])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

#[test]
fn healthcheck_flag_exits_0_while_serving_and_1_after() {
    let dir = site();
    let db = Db::sqlite(dir.path());
    let mut d = start(dir.path(), free_port(), &db);
    let url = format!("{}/healthz", d.base);
    assert_eq!(
        probe(&url),
        (Some(0), format!("berthd: {url} answered 200\n"))
    );
    // An authenticated route without credentials: 401, not healthy.
    let (code, text) = probe(&format!("{}/v1/plans", d.base));
    assert_eq!(code, Some(1));
    assert!(
        text.contains("answered 401 Unauthorized; expected 2xx"),
        "{text}"
    );
    terminate(&mut d);
    let (code, text) = probe(&url);
    assert_eq!(code, Some(1));
    assert!(
        text.starts_with(&format!("berthd: health check {url}: no answer")),
        "{text}"
    );
}

#[test]
fn bare_healthcheck_probes_the_configured_daemon_over_tls() {
    let dir = site();
    let pki = super::tls::pki(dir.path());
    let port = free_port();
    let mut child = super::tls::berthd(dir.path(), port)
        .env("BERTH_TLS_CERT", &pki.cert)
        .env("BERTH_TLS_KEY", &pki.key)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The probe's own config: every address, TLS; its certificate's CA is not trusted here.
    let bare = || {
        let out = Command::new(env!("CARGO_BIN_EXE_berthd"))
            .arg("--healthcheck")
            .env("BERTH_LISTEN", format!("0.0.0.0:{port}"))
            .env("BERTH_TLS_CERT", &pki.cert)
            .env("BERTH_TLS_KEY", &pki.key)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let t = Instant::now();
    let mut last = bare();
    while last.0 != Some(0) && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
        last = bare();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        last,
        (
            Some(0),
            format!("berthd: https://127.0.0.1:{port}/healthz answered 200\n")
        )
    );
    // Plain http to the TLS listener is no answer.
    let (code, _) = probe(&format!("http://127.0.0.1:{port}/healthz"));
    assert_eq!(code, Some(1));
}
