//! Partitioned calendars end to end: two clustered daemons on one database, one partition per
//! zone. The partitions' leases spread over both daemons; a write sent to the daemon that does
//! not own its zone is forwarded and succeeds; capacity queries merge every partition; after
//! `kill -9` of one daemon under load the other takes its partitions over and every
//! acknowledged reservation is still there, once.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use super::failover::client_loop;
use super::*;

/// Lease time of the test cluster, in seconds.
const LEASE_SECS: u64 = 2;
const ZONES: [&str; 4] = ["za", "zb", "zc", "zd"];

on_both_stores!(
    partitions_spread_forward_and_fail_over_on_sqlite,
    partitions_spread_forward_and_fail_over_on_postgres,
    "e2e_partitions",
    |dir, db| partitions_spread_forward_and_fail_over(dir, db)
);

fn node(dir: &std::path::Path, db: &Db, i: usize) -> Daemon {
    let id = format!("n{i}");
    let lease = LEASE_SECS.to_string();
    start_env(
        dir,
        free_port(),
        db,
        &[
            ("BERTH_CLUSTER", "true"),
            ("BERTH_CLUSTER_PARTITION_KEY", "zone"),
            ("BERTH_NODE_ID", &id),
            ("BERTH_LEASE_SECS", &lease),
        ],
    )
}

/// Holder of each partition lease (`calendar/<zone>`) that has not lapsed.
fn holders(db: &Db) -> BTreeMap<String, String> {
    db.block_on(|store| async move {
        let now = chrono::Utc::now();
        store
            .leases()
            .await
            .unwrap()
            .into_iter()
            .filter(|l| l.lease.starts_with("calendar/") && l.expires_at > now)
            .map(|l| (l.lease["calendar/".len()..].to_owned(), l.owner))
            .collect()
    })
}

/// Waits until `ok` holds of the holders, or fails after `secs`.
fn wait_holders(
    db: &Db,
    secs: u64,
    what: &str,
    ok: impl Fn(&BTreeMap<String, String>) -> bool,
) -> BTreeMap<String, String> {
    let t = Instant::now();
    loop {
        let h = holders(db);
        if ok(&h) {
            return h;
        }
        assert!(t.elapsed() < Duration::from_secs(secs), "{what}: {h:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn partitions_spread_forward_and_fail_over(dir: &std::path::Path, db: &Db) {
    let c = client();
    let mut nodes: Vec<Daemon> = (0..2).map(|i| node(dir, db, i)).collect();
    for z in ZONES {
        let (s, v) = post(
            &c,
            &nodes[0],
            "/increase-capacity",
            json!({"zone": z, "capacity": {"instances": 100000}}),
        );
        assert_eq!(s, 200, "{v}");
    }
    // Both daemons own partitions (the inventory's zones are partitions too).
    let spread = wait_holders(db, 20, "leases did not spread", |h| {
        ZONES.iter().all(|z| h.contains_key(*z))
            && h.values().any(|o| o == "n0")
            && h.values().any(|o| o == "n1")
            && h.values()
                .filter(|o| *o == "n0")
                .count()
                .abs_diff(h.values().filter(|o| *o == "n1").count())
                <= 1
    });
    // A write through the daemon that does not own its zone is forwarded to the owner.
    let (zone, owner) = spread
        .iter()
        .find(|(z, _)| ZONES.contains(&z.as_str()))
        .map(|(z, o)| (z.clone(), o.clone()))
        .unwrap();
    let other = if owner == "n0" { 1 } else { 0 };
    // Both daemons publish the same map: each zone's holder with its URL and token.
    for d in &nodes {
        let (s, v) = get(&c, d, "/v1/cluster");
        assert_eq!((s, &v["partition_key"]), (200, &json!("zone")), "{v}");
        let rows: BTreeMap<String, String> = v["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["partition"].as_str().unwrap().to_owned(),
                    p["holder"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        for z in ZONES {
            assert_eq!(rows.get(z), spread.get(z), "{z}: {v}");
        }
        let row = v["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["partition"] == zone.as_str())
            .unwrap();
        let holder = if owner == "n0" { &nodes[0] } else { &nodes[1] };
        assert_eq!(row["url"], holder.base.as_str(), "{v}");
        assert!(row["token"].as_u64().is_some_and(|t| t >= 1), "{v}");
    }
    let r = c
        .post(format!("{}/create-reservation", nodes[other].base))
        .bearer_auth(TOKEN)
        .json(&json!({"zone": zone, "capacity": {"instances": "1"}, "end": end()}))
        .send()
        .unwrap();
    // The relayed answer names the holder, so a routing client refreshes its map.
    let forwarded_to = r
        .headers()
        .get("x-berth-forwarded-to")
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    assert_eq!(forwarded_to.as_deref(), Some(owner.as_str()));
    let (s, v): (u16, Value) = (r.status().as_u16(), r.json().unwrap());
    assert_eq!(s, 200, "{v}");
    let first = v["reservation-id"].as_str().unwrap().to_owned();
    // Sent straight to the holder, it is not forwarded.
    let r = c
        .post(format!(
            "{}/create-reservation",
            if owner == "n0" {
                &nodes[0].base
            } else {
                &nodes[1].base
            }
        ))
        .bearer_auth(TOKEN)
        .json(&json!({"zone": zone, "capacity": {"instances": "1"}, "end": end()}))
        .send()
        .unwrap();
    assert!(r.headers().get("x-berth-forwarded-to").is_none());
    assert_eq!(r.status().as_u16(), 200);
    let second = r.json::<Value>().unwrap()["reservation-id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(first.starts_with(&format!("{zone}:r")), "{first}");
    // Capacity queries merge every partition, on either daemon.
    for d in &nodes {
        let (s, v) = post(&c, d, "/query-capacity", json!({"capacity": "reserved"}));
        assert_eq!(s, 200, "{v}");
        let pools: Vec<&str> = v["collections"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p.as_str())
            .collect();
        for z in ZONES {
            let want = format!("ResourcePool:{z}/default");
            assert!(pools.contains(&want.as_str()), "{want} missing: {pools:?}");
        }
        assert_eq!(
            v["capacity"][format!("{zone}/default")]["instances"],
            2,
            "{v}"
        );
    }

    let bases: Vec<String> = nodes.iter().map(|d| d.base.clone()).collect();
    let zones: Vec<String> = ZONES.iter().map(|z| (*z).to_owned()).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(Vec::new()));
    let clients: Vec<_> = (0..4)
        .map(|i| {
            let (bases, zones, stop, acked) = (
                bases.clone(),
                zones.clone(),
                Arc::clone(&stop),
                Arc::clone(&acked),
            );
            std::thread::spawn(move || client_loop(i, bases, zones, stop, acked))
        })
        .collect();
    let count = || acked.lock().unwrap().len();
    let t = Instant::now();
    while count() < 40 && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(count() >= 40, "only {} writes before the kill", count());
    let mut victim = nodes.remove(0);
    victim.child.kill().unwrap(); // SIGKILL, mid-load
    let _ = victim.child.wait();
    let before = count();
    let t = Instant::now();
    while count() < before + 40 && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    stop.store(true, Ordering::Relaxed);
    assert!(
        count() >= before + 40,
        "writes did not resume after the kill: {before} before, {} after; holders {:?}\n{}",
        count(),
        holders(db),
        logs(dir)
    );
    for t in clients {
        t.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(
        acked.len() >= before + 40,
        "writes did not resume after the kill: {before} before, {} after; holders {:?}\n{}",
        acked.len(),
        holders(db),
        logs(dir)
    );
    // The survivor owns every partition.
    wait_holders(
        db,
        3 * LEASE_SECS + 5,
        "the survivor did not take over",
        |h| ZONES.iter().all(|z| h.get(*z).is_some_and(|o| o == "n1")),
    );
    let ids: BTreeSet<String> = acked.iter().map(|(_, id, _)| id.clone()).collect();
    assert_eq!(ids.len(), acked.len(), "two keys got one reservation");
    let mut live: BTreeSet<String> = ZONES
        .iter()
        .flat_map(|z| live_in(&c, &nodes[0], z))
        .collect();
    assert!(live.remove(&first), "{first} lost");
    assert!(live.remove(&second), "{second} lost");
    assert_eq!(
        live,
        ids,
        "lost: {:?}; unacknowledged: {:?}",
        ids.difference(&live).collect::<Vec<_>>(),
        live.difference(&ids).collect::<Vec<_>>()
    );
    eprintln!(
        "partitions: {} writes acknowledged over {} zones and 2 daemons, {before} before the kill; none lost",
        acked.len(),
        ZONES.len()
    );
    for mut d in nodes {
        terminate(&mut d);
    }
}
