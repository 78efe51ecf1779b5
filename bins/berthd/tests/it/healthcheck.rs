//! `berthd --healthcheck URL`, the container image's probe: exit 0 while a daemon serves
//! `/healthz`, 1 (naming the URL) once it is gone or for a path that is not 2xx.

use std::process::Command;

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
