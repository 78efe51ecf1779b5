//! PostgreSQL only: a daemon that restores its calendar while another daemon's append to the
//! same stream is under way loads after that append, not before it. (A killed daemon's last
//! commit is the case that matters — it can land after its successor read the log — but a
//! live daemon's append held open is the same wait, and can be staged exactly.) The append
//! is held by an uncommitted row this test puts at the seq the append will take: the append
//! moves the stream's head, then waits on that row's transaction until the test rolls it back.

use std::str::FromStr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;
use sqlx::{ConnectOptions, Connection, PgConnection};

use super::{client, free_port, post, site, start};
use crate::db::{Db, runtime};

/// A connection of its own in the test's schema.
async fn connect(db: &Db) -> PgConnection {
    let Db::Postgres { url, schema } = db else {
        panic!("a PostgreSQL test on another store");
    };
    sqlx::postgres::PgConnectOptions::from_str(url)
        .unwrap()
        .options([("search_path", schema.as_str())])
        .connect()
        .await
        .unwrap()
}

/// Backends waiting on a lock while holding one on the schema's `streams` table.
fn waiting_on_streams(db: &Db) -> i64 {
    runtime().block_on(async {
        let mut conn = connect(db).await;
        let n: i64 = sqlx::query_scalar(
            "SELECT count(DISTINCT a.pid) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid \
             WHERE a.wait_event_type = 'Lock' AND l.relation = 'streams'::regclass",
        )
        .fetch_one(&mut conn)
        .await
        .unwrap();
        conn.close().await.unwrap();
        n
    })
}

fn until_waiting(db: &Db, n: i64, what: &str) {
    let t = Instant::now();
    while waiting_on_streams(db) < n {
        assert!(t.elapsed() < Duration::from_secs(30), "never saw {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Total units of `zone` the daemon reports.
fn units(c: &reqwest::blocking::Client, d: &super::Daemon, zone: &str) -> u64 {
    let (s, v) = post(c, d, "/query-capacity", json!({"capacity": "total"}));
    assert_eq!(s, 200, "{v}");
    super::zone_units(&v, zone)
}

#[test]
fn a_starting_daemon_loads_after_an_append_under_way() {
    let tmp = site();
    let db = Db::postgres("settle");
    let c = client();
    let a = start(tmp.path(), free_port(), &db);
    let raise = |d: &super::Daemon, n: u64| {
        post(
            &c,
            d,
            "/increase-capacity",
            json!({"zone": "z", "capacity": {"units": n}}),
        )
    };
    assert_eq!(raise(&a, 5).0, 200);

    let dbr = &db;
    std::thread::scope(|s| {
        // The gate: an uncommitted command at the next seq of every stream, held by a thread
        // until told to roll back (or until `release` is dropped: a failing check below must
        // not leave the threads waiting).
        let (locked_tx, locked) = mpsc::channel();
        let (release, release_rx) = mpsc::channel::<()>();
        let gate = s.spawn(move || {
            runtime().block_on(async {
                let mut conn = connect(dbr).await;
                sqlx::query("BEGIN").execute(&mut conn).await.unwrap();
                let gated = sqlx::query(
                    "INSERT INTO commands (stream, seq, at_us, command, schema_version) \
                     SELECT stream, head + 1, 0, 'gate', 1 FROM streams",
                )
                .execute(&mut conn)
                .await
                .unwrap()
                .rows_affected();
                assert!(gated > 0, "no stream to gate");
                locked_tx.send(()).unwrap();
                let _ = release_rx.recv();
                sqlx::query("ROLLBACK").execute(&mut conn).await.unwrap();
                conn.close().await.unwrap();
            });
        });
        locked.recv().unwrap();
        let held = s.spawn(|| raise(&a, 7));
        until_waiting(&db, 1, "the first daemon's append held at the gate");
        let port = free_port();
        let dir = tmp.path();
        let b = s.spawn(move || start(dir, port, dbr));
        until_waiting(
            &db,
            2,
            "the second daemon's restore waiting for that append",
        );
        release.send(()).unwrap();
        gate.join().unwrap();
        assert_eq!(held.join().unwrap().0, 200);
        let b = b.join().unwrap();
        // Loaded after the held append: both raises, at once.
        assert_eq!(units(&c, &b, "z"), 12);
        assert_eq!(units(&c, &a, "z"), 12);
    });
    db.drop_schema();
}
