//! Failover: three clustered daemons on one database, clients writing reservations through all
//! of them (non-holders forward to the lease holder), `kill -9` of the holder under load.
//! Another daemon takes the lease within a few seconds, and afterwards every acknowledged
//! reservation is there, exactly once (clients retry with their idempotency keys).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use super::*;

/// Lease time of the test cluster, in seconds.
const LEASE_SECS: u64 = 2;

on_both_stores!(
    failover_keeps_every_acknowledged_write_on_sqlite,
    failover_keeps_every_acknowledged_write_on_postgres,
    "e2e_failover",
    |dir, db| failover_keeps_every_acknowledged_write(dir, db)
);

/// The same with every write transaction SERIALIZABLE (as on CockroachDB and YugabyteDB).
#[cfg(berth_test_postgres)]
#[test]
fn failover_keeps_every_acknowledged_write_on_postgres_serializable() {
    let dir = site();
    let db = Db::postgres("e2e_failover_ser");
    failover_with(dir.path(), &db, "serializable");
    db.drop_schema();
}

fn failover_keeps_every_acknowledged_write(dir: &std::path::Path, db: &Db) {
    failover_with(dir, db, "read-committed");
}

fn node(dir: &std::path::Path, db: &Db, i: usize, isolation: &str) -> Daemon {
    let id = format!("n{i}");
    let lease = LEASE_SECS.to_string();
    start_env(
        dir,
        free_port(),
        db,
        &[
            ("BERTH_CLUSTER", "true"),
            // One calendar with one lease (partitions: `partitions.rs`).
            ("BERTH_CLUSTER_PARTITION_KEY", "none"),
            ("BERTH_NODE_ID", &id),
            ("BERTH_LEASE_SECS", &lease),
            ("BERTH_PG_ISOLATION", isolation),
        ],
    )
}

/// The calendar's lease: holder's node id and token.
fn holder(db: &Db) -> (String, u64) {
    db.block_on(|store| async move {
        let l = store.lease("calendar").await.unwrap().unwrap();
        (l.owner, l.token)
    })
}

/// One client: creates reservations through the daemons in turn, each under its own
/// idempotency key, retrying a key (on the next daemon) until it is acknowledged.
/// `zones` are taken in turn too.
pub(super) fn client_loop(
    i: usize,
    bases: Vec<String>,
    zones: Vec<String>,
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<Vec<(String, String, Instant)>>>,
) {
    let c = Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    // One end for every request: a retry must send the same body as its first attempt.
    let until = end();
    let mut turn = i;
    for n in 0.. {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let key = format!("c{i}-{n}");
        let t = Instant::now();
        loop {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "request {key} never acknowledged"
            );
            let base = &bases[turn % bases.len()];
            let zone = &zones[(n + i) % zones.len()];
            let body = json!({"zone": zone, "capacity": {"instances": "1"}, "end": until});
            turn += 1;
            let sent = c
                .post(format!("{base}/create-reservation"))
                .bearer_auth(TOKEN)
                .header("idempotency-key", &key)
                .json(&body)
                .send();
            if let Ok(r) = sent
                && r.status().as_u16() == 200
            {
                let v: Value = r.json().unwrap();
                let id = v["reservation-id"].as_str().unwrap().to_owned();
                acked.lock().unwrap().push((key, id, Instant::now()));
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn failover_with(dir: &std::path::Path, db: &Db, isolation: &str) {
    let c = client();
    let mut nodes: Vec<Daemon> = (0..3).map(|i| node(dir, db, i, isolation)).collect();
    // The first daemon took the lease at its start (another one may have taken it since, if
    // the machine stalled it past its lease); the others forward writes to the holder.
    let (first, token0) = holder(db);
    let h: usize = first.trim_start_matches('n').parse().unwrap();
    let other = (h + 1) % nodes.len();
    // A request already forwarded once is not forwarded again: the non-holder refuses it (the
    // holder would have served it).
    let r = c
        .post(format!("{}/increase-capacity", nodes[other].base))
        .bearer_auth(TOKEN)
        .header("x-berth-forwarded-by", "n2")
        .json(&json!({"zone": "fo", "capacity": {"instances": 1}}))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 503);
    let text = r.text().unwrap();
    assert!(text.contains("unavailable"), "{text}");
    let (s, v) = post(
        &c,
        &nodes[2],
        "/increase-capacity",
        json!({"zone": "fo", "capacity": {"instances": 100000}}),
    );
    assert_eq!(s, 200, "{v}");

    let bases: Vec<String> = nodes.iter().map(|d| d.base.clone()).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(Vec::new()));
    let clients: Vec<_> = (0..6)
        .map(|i| {
            let (bases, stop, acked) = (bases.clone(), Arc::clone(&stop), Arc::clone(&acked));
            std::thread::spawn(move || client_loop(i, bases, vec!["fo".into()], stop, acked))
        })
        .collect();
    let count = || acked.lock().unwrap().len();
    let t = Instant::now();
    while count() < 60 && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(count() >= 60, "only {} writes before the kill", count());
    let mut owner = nodes.remove(h);
    owner.child.kill().unwrap(); // SIGKILL, mid-load
    let killed = Instant::now();
    let _ = owner.child.wait();
    let before = count();
    // Writes resume once another daemon holds the lease.
    let t = Instant::now();
    while count() < before + 60 && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    stop.store(true, Ordering::Relaxed);
    for t in clients {
        t.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(
        acked.len() >= before + 60,
        "writes did not resume after the kill: {} before, {} after",
        before,
        acked.len()
    );
    // The stall: the longest stretch without an acknowledgement after the kill (from the
    // kill itself to the first write the new holder acknowledged, in practice).
    let mut times: Vec<Instant> = acked
        .iter()
        .map(|(_, _, at)| *at)
        .filter(|at| *at > killed)
        .collect();
    times.sort();
    let stall = std::iter::once(killed)
        .chain(times.iter().copied())
        .zip(times.iter().copied())
        .map(|(a, b)| b.duration_since(a))
        .max()
        .unwrap();
    eprintln!(
        "failover: longest stall after kill -9 of the holder {:.2} s (lease {LEASE_SECS} s); {} writes acknowledged, {before} before the kill",
        stall.as_secs_f64(),
        acked.len()
    );
    assert!(
        stall < Duration::from_secs(3 * LEASE_SECS + 2),
        "takeover took {stall:?}"
    );
    let (new_holder, token) = holder(db);
    assert!(
        new_holder != first && token > token0,
        "{first} (token {token0}) was killed; now {new_holder} holds token {token}"
    );
    // Every acknowledged reservation is there, once: keys map to distinct ids, and the live
    // reservations are exactly the acknowledged ones (clients finished every key they began).
    let by_key: BTreeMap<&str, &str> = acked
        .iter()
        .map(|(k, id, _)| (k.as_str(), id.as_str()))
        .collect();
    assert_eq!(by_key.len(), acked.len(), "a key was acknowledged twice");
    let ids: BTreeSet<String> = acked.iter().map(|(_, id, _)| id.clone()).collect();
    assert_eq!(ids.len(), acked.len(), "two keys got one reservation");
    for d in &nodes {
        let live = live_in(&c, d, "fo");
        assert_eq!(
            live,
            ids,
            "lost: {:?}; unacknowledged: {:?}",
            ids.difference(&live).collect::<Vec<_>>(),
            live.difference(&ids).collect::<Vec<_>>()
        );
    }
    for mut d in nodes {
        terminate(&mut d);
    }
}
