//! PostgreSQL only: a write whose transaction is still open when a reader needs the log's
//! final state. A daemon restarting after SIGKILL meets this when its predecessor had already
//! sent its commit: the database commits it after the new daemon read the log, and a write
//! nobody was answered appears later. `settled_head` waits for such a write; `head` does not.
//!
//! The open write is a real `append_commands`, held after it moved the stream's head: by an
//! uncommitted row of this test's at the sequence it appends (an append to a stream that
//! exists is one statement, which takes its table locks before any row lock), or, when it
//! creates the stream, by a lock this test takes on the `commands` table.

use std::sync::Arc;
use std::time::{Duration, Instant};

use berth_store::Store;
use sqlx::{Connection, PgConnection};

use crate::fixtures::{marker, postgres};

/// Backends waiting on a lock while holding one on this schema's `streams` table.
async fn waiting_on_streams(probe: &mut PgConnection) -> i64 {
    sqlx::query_scalar(
        "SELECT count(DISTINCT a.pid) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid \
         WHERE a.wait_event_type = 'Lock' AND l.relation = 'streams'::regclass",
    )
    .fetch_one(probe)
    .await
    .unwrap()
}

/// Polls until `n` backends wait on `streams`, or `done` says to stop looking.
async fn until_waiting(probe: &mut PgConnection, n: i64, what: &str, done: impl Fn() -> bool) {
    let t = Instant::now();
    while waiting_on_streams(probe).await < n && !done() {
        assert!(t.elapsed() < Duration::from_secs(30), "never saw {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Takes the gate for an append at `seq` of `stream` (which exists): the append blocks on the
/// gate's row after moving the head. Rolling the gate back lets it through.
async fn close_gate_at(gate: &mut PgConnection, stream: &str, seq: i64) {
    sqlx::query("BEGIN").execute(&mut *gate).await.unwrap();
    sqlx::query(
        "INSERT INTO commands (stream, seq, at_us, command, schema_version) VALUES ($1, $2, 0, 'gate', 1)",
    )
    .bind(stream)
    .bind(seq)
    .execute(&mut *gate)
    .await
    .unwrap();
}

/// Takes the gate for an append that creates its stream: it blocks on the gate after moving
/// the head, before committing.
async fn close_gate(gate: &mut PgConnection) {
    sqlx::query("BEGIN").execute(&mut *gate).await.unwrap();
    sqlx::query("LOCK TABLE commands IN SHARE ROW EXCLUSIVE MODE")
        .execute(&mut *gate)
        .await
        .unwrap();
}

/// Starts an append of two commands at `expected` and waits until it is held at the gate.
async fn held_append(
    store: &Arc<dyn Store>,
    probe: &mut PgConnection,
    stream: &'static str,
    expected: u64,
) -> tokio::task::JoinHandle<Result<u64, berth_store::StoreError>> {
    let s = Arc::clone(store);
    let writer = tokio::spawn(async move {
        s.append_commands(stream, expected, &[marker(2), marker(3)])
            .await
    });
    until_waiting(probe, 1, "the append held at the gate", || {
        writer.is_finished()
    })
    .await;
    assert!(!writer.is_finished(), "the append passed the gate");
    writer
}

/// Starts `settled_head` and checks it waits behind the held append.
async fn waiting_settle(
    store: &Arc<dyn Store>,
    probe: &mut PgConnection,
    stream: &'static str,
) -> tokio::task::JoinHandle<Result<u64, berth_store::StoreError>> {
    let s = Arc::clone(store);
    let settle = tokio::spawn(async move { s.settled_head(stream).await });
    until_waiting(probe, 2, "settled_head waiting", || settle.is_finished()).await;
    assert!(
        !settle.is_finished(),
        "settled_head answered {:?} while a write to `{stream}` was open",
        settle.await
    );
    settle
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn settled_head_waits_for_an_open_write() {
    let Some(pg) = postgres("settled_head").await else {
        return;
    };
    let store = Arc::clone(&pg.store);
    let mut probe = pg.raw().await;
    assert_eq!(
        store.append_commands("cal", 0, &[marker(1)]).await.unwrap(),
        1
    );

    // A write that commits: the settled head includes it, the plain head did not.
    let mut gate = pg.raw().await;
    close_gate_at(&mut gate, "cal", 2).await;
    let writer = held_append(&store, &mut probe, "cal", 1).await;
    assert_eq!(store.head("cal").await.unwrap(), 1);
    let settle = waiting_settle(&store, &mut probe, "cal").await;
    sqlx::query("ROLLBACK").execute(&mut gate).await.unwrap();
    assert_eq!(writer.await.unwrap().unwrap(), 3);
    assert_eq!(settle.await.unwrap().unwrap(), 3);
    let log = store.commands_since("cal", 1).await.unwrap();
    assert_eq!(log.iter().map(|c| c.seq).collect::<Vec<_>>(), [2, 3]);

    // A writer that dies (its backend terminated): the settled head is the one before it.
    close_gate_at(&mut gate, "cal", 4).await;
    let writer = held_append(&store, &mut probe, "cal", 3).await;
    let settle = waiting_settle(&store, &mut probe, "cal").await;
    let gate_pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut gate)
        .await
        .unwrap();
    let killed: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))",
    )
    .bind(gate_pid)
    .fetch_all(&mut probe)
    .await
    .unwrap();
    assert_eq!(
        killed,
        [true],
        "expected exactly the held append to wait on the gate"
    );
    assert!(writer.await.unwrap().is_err());
    assert_eq!(settle.await.unwrap().unwrap(), 3);
    sqlx::query("ROLLBACK").execute(&mut gate).await.unwrap();
    assert_eq!(store.head("cal").await.unwrap(), 3);

    // A write that creates its stream: waited for too.
    close_gate(&mut gate).await;
    let writer = held_append(&store, &mut probe, "fresh", 0).await;
    assert_eq!(store.head("fresh").await.unwrap(), 0);
    let settle = waiting_settle(&store, &mut probe, "fresh").await;
    sqlx::query("COMMIT").execute(&mut gate).await.unwrap();
    assert_eq!(writer.await.unwrap().unwrap(), 2);
    assert_eq!(settle.await.unwrap().unwrap(), 2);

    // Nothing open: the head at once, and a stream nobody wrote stays absent.
    assert_eq!(store.settled_head("cal").await.unwrap(), 3);
    assert_eq!(store.settled_head("nobody").await.unwrap(), 0);
    let streams: Vec<String> = store
        .streams("")
        .await
        .unwrap()
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    assert_eq!(streams, ["cal", "fresh"]);

    gate.close().await.unwrap();
    probe.close().await.unwrap();
    pg.drop_schema().await;
}
