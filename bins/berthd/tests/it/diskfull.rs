//! A store that runs out of space (SQLite on a tmpfs of a few MiB, filled up): writes are
//! refused with 503 and a reason that says so, reads keep working, nothing stored is lost, and
//! writes work again once space returns. (A read-only store takes the same path; berth-store's
//! tests open a database read-only, as a tmpfs cannot be remounted read-only under open files.)
//! Needs root to mount; compiled only when `BERTH_TEST_MOUNT=1` at build time (`.ci/run` sets
//! it when it runs as root).

use std::path::Path;
use std::process::Command;

use chrono::{TimeDelta, Utc};
use serde_json::{Value, json};

use super::{client, free_port, post, site, start, terminate};
use crate::db::Db;

fn sh(args: &[&str]) {
    let s = Command::new(args[0]).args(&args[1..]).status().unwrap();
    assert!(s.success(), "{args:?} failed");
}

/// Unmounts on drop, so a failed assertion does not leave a mount behind.
struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn reserve(c: &reqwest::blocking::Client, d: &super::Daemon, units: u64) -> (u16, Value) {
    let t0 = Utc::now() + TimeDelta::days(1);
    post(
        c,
        d,
        "/create-reservation",
        json!({"zone": "disk", "capacity": {"units": units},
        "start": t0.to_rfc3339(), "end": (t0 + TimeDelta::hours(1)).to_rfc3339()}),
    )
}

fn fill(dir: &Path) {
    // Fills the file system: `dd` stops with "no space left", which is the point.
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=64k"])
        .arg(format!("of={}", dir.join("filler").display()))
        .stderr(std::process::Stdio::null())
        .status();
}

#[test]
fn full_store_refuses_writes_keeps_reads_and_recovers() {
    let dir = site();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    sh(&[
        "mount",
        "-t",
        "tmpfs",
        "-o",
        "size=8m",
        "tmpfs",
        data.to_str().unwrap(),
    ]);
    let _mount = Mount(data.clone());
    let db = Db::Sqlite {
        url: format!("sqlite://{}", data.join("berth.db").display()),
    };
    let mut d = start(dir.path(), free_port(), &db);
    let c = client();
    assert_eq!(
        post(
            &c,
            &d,
            "/increase-capacity",
            json!({"zone": "disk", "capacity": {"units": 1000}})
        )
        .0,
        200
    );
    let mut kept = Vec::new();
    for _ in 0..5 {
        let (s, v) = reserve(&c, &d, 1);
        assert_eq!(s, 200, "{v}");
        kept.push(v["reservation-id"].as_str().unwrap_or_default().to_owned());
    }

    // Disk full: writes refused with a reason, reads still answered.
    fill(&data);
    let t0 = Utc::now() + TimeDelta::days(1);
    let r = c
        .post(format!("{}/create-reservation", d.base))
        .bearer_auth(super::TOKEN)
        .json(&json!({"zone": "disk", "capacity": {"units": 1}, "start": t0.to_rfc3339(), "end": (t0 + TimeDelta::hours(1)).to_rfc3339()}))
        .send()
        .unwrap();
    assert_eq!(
        (
            r.status().as_u16(),
            r.headers().get("retry-after").and_then(|v| v.to_str().ok())
        ),
        (503, Some("1"))
    );
    let mut refused = 1;
    for _ in 0..20 {
        let (s, v) = reserve(&c, &d, 1);
        match s {
            200 => kept.push(v["reservation-id"].as_str().unwrap_or_default().to_owned()),
            503 => {
                refused += 1;
                let msg = v["message"].as_str().unwrap_or_default();
                assert!(
                    msg.contains("no space left"),
                    "{v}\n{}",
                    super::logs(dir.path())
                );
            }
            _ => panic!("unexpected {s} on a full disk: {v}"),
        }
    }
    assert!(refused > 0, "the full disk refused nothing");
    let (s, v) = post(&c, &d, "/query-reservation", json!({"zone": "disk"}));
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        v["reservations"].as_array().map(Vec::len),
        Some(kept.len()),
        "{v}"
    );
    assert_eq!(
        c.get(format!("{}/healthz", d.base))
            .send()
            .unwrap()
            .status()
            .as_u16(),
        200
    );

    // Space returns: writes work again.
    std::fs::remove_file(data.join("filler")).unwrap();
    let (s, v) = reserve(&c, &d, 1);
    assert_eq!(s, 200, "{v}");
    kept.push(v["reservation-id"].as_str().unwrap_or_default().to_owned());

    // Nothing acknowledged was lost, across a restart.
    terminate(&mut d);
    let d = start(dir.path(), free_port(), &db);
    let (_, v) = post(&c, &d, "/query-reservation", json!({"zone": "disk"}));
    let mut got: Vec<String> = v["reservations"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|x| x.as_str().map(str::to_owned))
        .collect();
    got.sort();
    kept.sort();
    assert_eq!(got, kept);
    let mut d = d;
    terminate(&mut d);
}
