//! Daemons started together on one empty database give the inventory's capacity to the
//! calendar once: every pool's total is the inventory's, not a multiple of it. (The schema is
//! created first: concurrent SQLite migrations are a separate matter.)

use std::process::{Command, Stdio};

use serde_json::json;

use super::{Daemon, TOKEN, client, daemon_log, free_port, post, site, terminate, wait_ready};
use crate::db::Db;

/// A berthd on `port`, not yet waited for.
fn spawn(dir: &std::path::Path, port: u16, db: &Db) -> Daemon {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_berthd"));
    cmd.env("BERTH_LISTEN", format!("127.0.0.1:{port}"))
        .env("BERTH_INVENTORY", dir.join("inventory.yaml"))
        .env("BERTH_TOKENS", TOKEN)
        .env("BERTH_LOG", "warn")
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(daemon_log(dir, port));
    db.configure(&mut cmd);
    Daemon {
        child: cmd.spawn().unwrap(),
        base: format!("http://127.0.0.1:{port}"),
    }
}

fn seeded_once(dir: &std::path::Path, db: &Db) {
    let c = client();
    db.block_on(|_store| async {});
    let starting: Vec<Daemon> = (0..3).map(|_| spawn(dir, free_port(), db)).collect();
    let mut daemons: Vec<Daemon> = starting.into_iter().map(|d| wait_ready(d, &c)).collect();
    for d in &daemons {
        for zone in ["dfw", "nyc"] {
            let (s, v) = post(
                &c,
                d,
                "/query-capacity",
                json!({"zone": zone, "show-utilization": false}),
            );
            assert_eq!(s, 200, "{v}");
            // The test inventory gives each candidate 64 vCPUs (Promise's `cores`).
            assert_eq!(
                v["capacity"][format!("{zone}/inventory")]["cores"]["total"],
                64,
                "{}: {v}",
                d.base
            );
        }
    }
    for d in &mut daemons {
        terminate(d);
    }
}

on_both_stores!(
    daemons_starting_together_seed_the_inventory_once_on_sqlite,
    daemons_starting_together_seed_the_inventory_once_on_postgres,
    "e2e_seeding",
    |dir, db| seeded_once(dir, db)
);
